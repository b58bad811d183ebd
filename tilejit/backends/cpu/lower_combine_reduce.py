"""``tt.combine_reduce`` lowering: the source tiles are stored axis-major into one
buffer per operand (``buf[k * L + lane]``, ``L`` output lanes), then each round of the
op's pairwise tree (``ops.CombineReduceOp``: stride ``s``, ``x[i] = combine(x[i],
x[i + s])`` for ``i = 0, 2s, ...`` while ``i + s < n``) is a loop over ``i`` around a
loop over the lanes, with the combine block lowered inline on scalars.  The lane loop
is contiguous and elementwise, so LLVM vectorizes it across output lanes.  Row 0 of
each buffer is the result."""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ..llvm.types import I64, from_storage, storage_type, to_storage
from .lower import RULES, LoweringError
from .tiles import BufTile, Tile, linear_index, merge_masks, strides_of, versioned


def _fill(ctx, op, reps, bufs, lanes):
    axis = op.axis
    ostrides = strides_of(op.results[0].type.shape)
    L = ir.Constant(I64, lanes)

    def body(idx):
        b = ctx.b
        lane = linear_index(ctx, tuple(idx[:axis]) + tuple(idx[axis + 1:]), ostrides)
        at = b.add(b.mul(idx[axis], L, flags=("nuw", "nsw")), lane, flags=("nuw", "nsw"))
        for rep, buf, v in zip(reps, bufs, op.srcs):
            dt = v.type.element
            b.store(to_storage(b, rep.elem(ctx, idx), dt), b.gep(buf, [at], source_etype=storage_type(dt)))
    versioned(ctx, merge_masks(*reps), lambda: ctx.loop_nest(op.srcs[0].type.shape, body))


def _combine_at(ctx, op, bufs, lo, hi):
    """``buf[lo] = combine(buf[lo], buf[hi])`` for every operand's buffer."""
    b, body = ctx.b, op.body
    dts = [v.type.element for v in op.srcs]
    ptrs = [[b.gep(buf, [at], source_etype=storage_type(dt)) for buf, dt in zip(bufs, dts)] for at in (lo, hi)]
    for arg, p, dt in zip(body.args, ptrs[0] + ptrs[1], dts + dts):
        ctx.set(arg, from_storage(b, b.load(p, typ=storage_type(dt)), dt))
    for o in body.ops[:-1]:
        ctx.lower_op(o)
    for v, p, dt in zip(body.ops[-1].operands, ptrs[0], dts):
        b.store(to_storage(b, ctx.get(v), dt), p)


def _rounds(ctx, op, bufs, n, lanes):
    L = ir.Constant(I64, lanes)
    s = 1
    while s < n:
        count, step = (n - s + 2 * s - 1) // (2 * s), s

        def pair(t, step=step):
            b = ctx.b
            lo = b.mul(t, ir.Constant(I64, 2 * step * lanes), flags=("nuw", "nsw"))
            if lanes == 1:
                _combine_at(ctx, op, bufs, lo, b.add(lo, ir.Constant(I64, step), flags=("nuw", "nsw")))
                return
            hi = b.add(lo, ir.Constant(I64, step * lanes), flags=("nuw", "nsw"))
            ctx.em.counted_loop(ir.Constant(I64, 0), L, name="cr.lane", body=lambda j: _combine_at(
                ctx, op, bufs, ctx.b.add(lo, j, flags=("nuw", "nsw")), ctx.b.add(hi, j, flags=("nuw", "nsw"))))
        ctx.em.counted_loop(ir.Constant(I64, 0), ir.Constant(I64, count), name="cr.pair", body=pair)
        s *= 2


@RULES.register(ops.CombineReduceOp)
def _combine_reduce(ctx, op):
    reps = [ctx.get(v) for v in op.srcs]
    if not all(isinstance(r, Tile) for r in reps):
        raise LoweringError(f"{op.loc}: tt.combine_reduce of a scalar")
    n = op.srcs[0].type.shape[op.axis]
    out_shape = op.results[0].type.shape
    lanes = max(1, op.results[0].type.numel)
    bufs = [ctx.alloca(storage_type(v.type.element), n * lanes) for v in op.srcs]
    _fill(ctx, op, reps, bufs, lanes)
    ctx.elem_cache = {}
    _rounds(ctx, op, bufs, n, lanes)
    for r, buf in zip(op.results, bufs):
        dt = r.type.element
        if r.type.is_scalar:
            ctx.set(r, from_storage(ctx.b, ctx.b.load(buf, typ=storage_type(dt)), dt))
        else:
            ctx.set(r, BufTile(out_shape, dt, buf))
