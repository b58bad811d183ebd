"""Interpreter rules for ``tt.gather`` and ``tt.histogram`` (``ops.GatherOp``,
``ops.HistogramOp``): numpy's indexing, the reference the backends are checked against."""
from __future__ import annotations

import numpy as np

from ..ir import ops
from .rules import RULES


@RULES.register(ops.GatherOp)
def _gather(ctx, op, vals):
    src, index = np.asarray(vals[0]), np.asarray(vals[1])
    n = src.shape[op.axis]
    k = index.astype(np.int64) if index.dtype != np.uint64 else index
    inside = (k >= 0) & (k < n)
    out = np.take_along_axis(src, np.where(inside, k, 0).astype(np.int64), axis=op.axis)
    return [np.where(inside, out, np.zeros((), src.dtype)).astype(src.dtype)]


@RULES.register(ops.HistogramOp)
def _histogram(ctx, op, vals):
    x = np.asarray(vals[0])
    keep = (x >= 0) & (x < op.num_bins) if x.dtype != np.bool_ else np.ones(x.shape, bool)
    if op.mask is not None:
        keep &= np.asarray(vals[1]).astype(bool)
    return [np.bincount(x[keep].astype(np.int64), minlength=op.num_bins).astype(np.int32)]
