"""Interpreter rule for ``tt.combine_reduce``: the reference order of the reduction.

Each round of the pairwise tree (see ``ops.CombineReduceOp``) runs the combine block
once on whole arrays: the block's scalar ops are elementwise numpy rules, so the
pairs ``(x[i], x[i + s])`` of every output lane are combined at once, and each
element is exactly what one scalar call would give."""
from __future__ import annotations

import numpy as np

from ..ir import ops
from .rules import RULES


def tree_rounds(n: int):
    """(lo indices, hi indices) per round of the pairwise tree over ``n`` elements."""
    s = 1
    while s < n:
        lo = np.arange(0, n - s, 2 * s)
        yield lo, lo + s
        s *= 2


@RULES.register(ops.CombineReduceOp)
def _combine_reduce(ctx, op, vals):
    xs = [np.array(np.moveaxis(np.asarray(v), op.axis, -1)) for v in vals]
    observer, ctx.observer = ctx.observer, None   # the block's values are per-round arrays
    try:
        for lo, hi in tree_rounds(xs[0].shape[-1]):
            res = ctx.run_block(op.body, [x[..., lo] for x in xs] + [x[..., hi] for x in xs])
            for x, r in zip(xs, res):
                x[..., lo] = r
    finally:
        ctx.observer = observer
    outs = [x[..., 0] for x in xs]
    return [o if o.ndim else o[()] for o in outs]
