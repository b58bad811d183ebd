"""Common-subexpression elimination over structured regions.

Only pure ops without regions are merged (``tt.load`` never is: it reads memory).  An
op is replaced by an identical earlier op (same class, operands, attributes and result
types) that dominates it: one in the same block before it, or in an enclosing block
before the op that contains it.  Ops inside a region are never offered to code outside
it or to a sibling region.
"""
from __future__ import annotations

import math

from ..ir.core import Block, Function, Op
from .rewrite import _resolve


def freeze(x):
    """A hashable key for an attribute value that tells 0, 0.0, False, -0.0 and NaN apart."""
    if isinstance(x, float):
        return ("float", "nan" if math.isnan(x) else x.hex())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(freeze(v) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, freeze(v)) for k, v in x.items()))
    try:
        hash(x)
    except TypeError:
        return ("repr", repr(x))
    return (type(x).__name__, x)


def op_key(op: Op):
    slots = []
    for name, _opt, variadic in op.slot_names():
        v = op.slots.get(name)
        if variadic:
            slots.append(tuple(id(x) for x in v or ()))
        else:
            slots.append(None if v is None else id(v))
    attrs = tuple(sorted((k, freeze(v)) for k, v in op.attrs.items()))
    return (type(op), tuple(slots), attrs, tuple(r.type for r in op.results))


def is_cse_candidate(op: Op) -> bool:
    return op.has_trait("pure") and not op.regions and bool(op.results)


def _cse_block(block: Block, scopes: list[dict], mapping: dict) -> int:
    table: dict = {}
    scopes.append(table)
    removed = 0
    kept = []
    for op in block.ops:
        op.replace_operands(lambda v: _resolve(mapping, v))
        if is_cse_candidate(op):
            key = op_key(op)
            prior = next((s[key] for s in reversed(scopes) if key in s), None)
            if prior is not None:
                for old, new in zip(op.results, prior.results):
                    mapping[id(old)] = new
                op.parent = None
                removed += 1
                continue
            table[key] = op
        for region in op.regions:
            for inner in region.blocks:
                removed += _cse_block(inner, scopes, mapping)
        kept.append(op)
    block.ops = kept
    scopes.pop()
    return removed


def cse(func: Function) -> Function:
    """Pass: merge identical pure ops (scoped by region dominance)."""
    _cse_block(func.block, [], {})
    return func
