"""``tt.gather`` and ``tt.histogram`` lowering (``ops.GatherOp``, ``ops.HistogramOp``).

Gather: the source tile is materialized (a lazy one is evaluated once, not once per
output element), then one loop nest over the output reads ``src`` at the index taken
from ``index`` along the axis; an index outside ``[0, n)`` reads element 0 and yields 0.
Histogram: a zeroed int32 buffer of ``num_bins`` counts and one loop over the input,
branch-free: a value outside the bins, or a masked-off lane, adds 0 to bin 0."""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ..llvm.types import I32, I64, storage_type, to_storage
from .lower import RULES
from .tiles import BufTile, linear_index, materialize, merge_masks, strides_of, versioned


def _to_i64(b, v, dtype):
    """An integer element as i64: sign-extended for signed types, else zero-extended."""
    if v.type.width == 64:
        return v
    return b.sext(v, I64) if dtype.is_int_signed() else b.zext(v, I64)


def _inside(b, k, n):
    """(i1: ``0 <= k < n``, ``k`` where so and 0 elsewhere) for an i64 ``k`` (an unsigned
    compare: a negative signed index is far above ``n``)."""
    ok = b.icmp_unsigned("<", k, ir.Constant(I64, n))
    return ok, b.select(ok, k, ir.Constant(I64, 0))


@RULES.register(ops.GatherOp)
def _gather(ctx, op):
    src = materialize(ctx, ctx.get(op.src))
    index = ctx.get(op.index)
    ity, rty, axis = op.index.type.element, op.result.type, op.axis
    n = op.src.type.shape[axis]
    sty = storage_type(rty.element)
    buf = ctx.alloca(sty, rty.numel)
    strides = strides_of(rty.shape)

    def body(idx):
        b = ctx.b
        ok, k = _inside(b, _to_i64(b, index.elem(ctx, idx), ity), n)
        v = to_storage(b, src.elem(ctx, idx[:axis] + (k,) + idx[axis + 1:]), rty.element)
        v = b.select(ok, v, ir.Constant(v.type, 0))
        b.store(v, b.gep(buf, [linear_index(ctx, idx, strides)], source_etype=sty))
    versioned(ctx, merge_masks(index), lambda: ctx.loop_nest(rty.shape, body))
    ctx.set(op.result, BufTile(rty.shape, rty.element, buf))


@RULES.register(ops.HistogramOp)
def _histogram(ctx, op):
    x = ctx.get(op.src)
    mask = ctx.get(op.mask) if op.mask is not None else None
    nb, dt = op.num_bins, op.src.type.element
    buf = ctx.alloca(I32, nb)
    ctx.loop_nest((nb,), lambda idx: ctx.b.store(ir.Constant(I32, 0), ctx.b.gep(buf, [idx[0]], source_etype=I32)))

    def body(idx):
        b = ctx.b
        ok, k = _inside(b, _to_i64(b, x.elem(ctx, idx), dt), nb)
        if mask is not None:
            ok = b.and_(ok, mask.elem(ctx, idx))
        p = b.gep(buf, [k], source_etype=I32)
        b.store(b.add(b.load(p, typ=I32), b.zext(ok, I32)), p)
    versioned(ctx, merge_masks(x, *(() if mask is None else (mask,))), lambda: ctx.loop_nest(x.shape, body))
    ctx.set(op.result, BufTile((nb,), op.result.type.element, buf))
