"""Shared machinery of the passes: constants, use counts, and a forward rewrite driver.

A rewrite rule is ``rule(op, rw) -> list[Value] | None``: it may create new ops with
``rw.create(...)`` (inserted just before ``op``, with ``op``'s location) and returns the
values that replace ``op``'s results, or None to keep ``op``.  The driver walks every
block in order (definitions dominate uses in structured IR), remaps operands of later
ops, erases replaced ops, and repeats until nothing changes.
"""
from __future__ import annotations

from typing import Callable

from ..ir import ops
from ..ir.core import Block, Function, Op, RuleTable, Value
from ..ir.types import TileType, int_range

NOT_CONST = object()


def constant_of(v: Value):
    """The uniform value of ``v`` when it is an ``arith.constant`` or a splat of one
    (every element equal), else ``NOT_CONST``."""
    op = v.op
    if isinstance(op, ops.ConstantOp):
        return op.value
    if isinstance(op, ops.SplatOp):
        return constant_of(op.src)
    return NOT_CONST


def is_int_type(t: TileType) -> bool:
    return t.element.kind in ("int", "uint", "bool")


def int_constant_of(v: Value):
    """The integer value of a uniform integer constant, normalized to its type's range,
    or None (also None when the stored value is outside the type's range)."""
    if not is_int_type(v.type):
        return None
    c = constant_of(v)
    if c is NOT_CONST or c is None or isinstance(c, float):
        return None
    try:
        c = int(c)
    except (TypeError, ValueError):
        return None
    lo, hi = int_range(v.type.element)
    return c if lo <= c <= hi else None


class Rewriter:
    """Creates ops in front of the op being rewritten."""

    def __init__(self):
        self.pending: list[Op] = []
        self.loc = None

    def create(self, op_cls, **kwargs) -> Op:
        slots, attrs = {}, {}
        names = {n for n, _o, _v in op_cls.slot_names()}
        for k, v in kwargs.items():
            (slots if k in names else attrs)[k] = v
        for name, optional, variadic in op_cls.slot_names():
            slots.setdefault(name, [] if variadic else None)
        full = {**op_cls.ATTR_DEFAULTS, **attrs}
        op = op_cls(slots, attrs, op_cls.infer_types(slots, full), self.loc)
        op.verify()
        self.pending.append(op)
        return op

    def value(self, op_cls, **kwargs) -> Value:
        return self.create(op_cls, **kwargs).result

    def constant(self, value, type: TileType) -> Value:
        return self.value(ops.ConstantOp, value=value, type=type)


def _resolve(mapping: dict, v: Value) -> Value:
    while id(v) in mapping:
        v = mapping[id(v)]
    return v


def apply_rules(func: Function, rules: Callable[[Op, Rewriter], list | None],
                max_iterations: int = 20) -> bool:
    """Run ``rules`` over every op until a fixed point; True when anything changed."""
    changed_any = False
    for _ in range(max_iterations):
        mapping: dict[int, Value] = {}
        changed = _rewrite_block(func.block, rules, mapping)
        changed_any |= changed
        if not changed:
            break
    return changed_any


def _rewrite_block(block: Block, rules, mapping) -> bool:
    changed = False
    new_ops: list[Op] = []
    for op in block.ops:
        op.replace_operands(lambda v: _resolve(mapping, v))
        for region in op.regions:
            for inner in region.blocks:
                changed |= _rewrite_block(inner, rules, mapping)
        rw = Rewriter()
        rw.loc = op.loc
        replacement = rules(op, rw)
        for new in rw.pending:
            new.parent = block
            new_ops.append(new)
        if replacement is None:
            new_ops.append(op)
            continue
        assert len(replacement) == len(op.results), op
        created = {id(r) for n in rw.pending for r in n.results}
        for old, new in zip(op.results, replacement):
            assert old.type == new.type, (op, old.type, new.type)
            if id(new) in created and not new.name_hint:
                new.name_hint = old.name_hint
            mapping[id(old)] = new
        op.parent = None
        changed = True
    block.ops = new_ops
    return changed


def table_rules(table: RuleTable):
    """A rules callable dispatching on the op class through ``table`` (no rule: keep)."""
    def rules(op: Op, rw: Rewriter):
        try:
            rule = table.lookup(type(op))
        except NotImplementedError:
            return None
        return rule(op, rw)
    return rules


# --------------------------------------------------------------------------
# uses and side effects
# --------------------------------------------------------------------------
def use_counts(func: Function) -> dict[int, int]:
    counts: dict[int, int] = {}
    for op in func.walk():
        for v in op.operands:
            counts[id(v)] = counts.get(id(v), 0) + 1
    return counts


def has_side_effects(op: Op) -> bool:
    """True when ``op`` (or anything nested in it) must be kept even if unused."""
    for inner in op.walk():
        if inner.has_trait("terminator"):
            if inner is op:
                return True
            continue
        if inner.has_trait("pure"):
            continue
        if isinstance(inner, ops.LoadOp) and not inner.volatile:
            continue
        if isinstance(inner, (ops.ForOp, ops.IfOp)):
            continue
        return True
    return False
