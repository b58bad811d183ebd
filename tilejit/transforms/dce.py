"""Dead-code elimination.

Removes ops none of whose results are used and that have no effect: pure ops,
non-volatile ``tt.load`` (a dead load reads nothing anyone sees), and ``scf.for`` /
``scf.if`` whose regions hold only such ops.  Stores, asserts, prints, volatile loads,
``scf.while`` (whose termination is observable) and terminators are kept.  Unused
results of ``scf.for`` whose loop-carried value feeds only itself, and unused results
of ``scf.if``, are pruned so the code computing them can die too.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.core import Block, Function, Op
from .rewrite import has_side_effects, use_counts


def _release(op: Op, counts: dict) -> None:
    for inner in op.walk():
        for v in inner.operands:
            counts[id(v)] -= 1


def _dead(op: Op, counts: dict) -> bool:
    return all(counts.get(id(r), 0) == 0 for r in op.results) and not has_side_effects(op)


def _carried_value_is_dead(body, i: int, yld: Op) -> bool:
    """Loop-carried value ``i`` only feeds effect-free ops whose values only reach
    ``yield`` position ``i`` (so with the result unused, the whole chain is dead)."""
    slice_ = {id(body.args[1 + i])}
    for op in body.ops:
        nested = [v for r in op.regions for inner in r.walk() for v in inner.operands]
        if any(id(v) in slice_ for v in nested):
            return False
        hit = [v for v in op.operands if id(v) in slice_]
        if not hit:
            continue
        if op is yld:
            if any(id(v) in slice_ for j, v in enumerate(yld.values) if j != i):
                return False
        elif op.regions or has_side_effects(op):
            return False
        else:
            slice_.update(id(r) for r in op.results)
    return True


def _prune_for(op: Op, counts: dict) -> None:
    body = op.regions[0].blocks[0]
    yld = body.ops[-1] if body.ops else None
    if not isinstance(yld, ops.YieldOp) or len(yld.values) != len(op.results):
        return
    keep = [counts.get(id(r), 0) > 0 or not _carried_value_is_dead(body, i, yld)
            for i, r in enumerate(op.results)]
    if all(keep):
        return
    for i, k in enumerate(keep):
        if not k:
            counts[id(yld.values[i])] -= 1
            counts[id(op.inits[i])] -= 1
    op.slots["inits"] = [v for v, k in zip(op.inits, keep) if k]
    yld.slots["values"] = [v for v, k in zip(yld.values, keep) if k]
    body.args = [body.args[0]] + [a for a, k in zip(body.args[1:], keep) if k]
    op.results = [r for r, k in zip(op.results, keep) if k]
    _reindex(body.args)
    _reindex(op.results)


def _prune_if(op: Op, counts: dict) -> None:
    keep = [counts.get(id(r), 0) > 0 for r in op.results]
    if all(keep):
        return
    for region in op.regions:
        for block in region.blocks:
            yld = block.ops[-1] if block.ops else None
            if not isinstance(yld, ops.YieldOp) or len(yld.values) != len(keep):
                return
    for region in op.regions:
        for block in region.blocks:
            yld = block.ops[-1]
            for v, k in zip(yld.values, keep):
                if not k:
                    counts[id(v)] -= 1
            yld.slots["values"] = [v for v, k in zip(yld.values, keep) if k]
    op.results = [r for r, k in zip(op.results, keep) if k]
    op.attrs["result_types"] = [r.type for r in op.results]
    _reindex(op.results)


def _reindex(values) -> None:
    for i, v in enumerate(values):
        v.index = i


def _dce_block(block: Block, counts: dict) -> int:
    removed = 0
    kept_rev = []
    for op in reversed(block.ops):
        n_results = len(op.results)
        if isinstance(op, ops.ForOp):
            _prune_for(op, counts)
        elif isinstance(op, ops.IfOp):
            _prune_if(op, counts)
        removed += n_results - len(op.results)
        if _dead(op, counts):
            _release(op, counts)
            op.parent = None
            removed += 1
            continue
        for region in op.regions:
            for inner in reversed(region.blocks):
                removed += _dce_block(inner, counts)
        kept_rev.append(op)
    block.ops = kept_rev[::-1]
    return removed


def dce(func: Function) -> Function:
    """Pass: remove dead ops (see the module docstring)."""
    counts = use_counts(func)
    while _dce_block(func.block, counts):
        counts = use_counts(func)
    return func
