"""``tt.gather`` and ``tt.histogram`` on CUDA, through shared memory (as Triton lowers
them): the shared memory a tile needs is its own size, not the product of the two
sizes that a comparison against every element (the language composition these ops
replace) materialized -- 8 MB for Triton's ``test_gather[[128, 64], [256, 64]]``.

Gather: each thread stores its slots of ``src`` at their flat index (a replicated slot
stores the same value again), a barrier, then each output slot reads ``src`` at its own
multi-index with the coordinate along the axis taken from ``index`` (0 where that index
is outside ``[0, n)``).  Histogram: the ``num_bins`` int32 counts are zeroed by the
threads in turn, a barrier, each owned slot of the input inside the bins (and the mask)
adds 1 with a shared-memory ``atomicrmw``, a barrier, then each output slot reads its bin."""
from __future__ import annotations

import math

from llvmlite import ir

from ...ir import ops
from . import types as T
from .layout import Layout
from .lowering import RULES, Tile
from .rules_reduce import _mem, _reg


def _inside(lw, v, dt, n):
    """(i1: ``0 <= v < n``, ``v`` there and 0 elsewhere, as i32) of an integer register."""
    b = lw.b
    w = v if v.type.width == 64 else (b.sext(v, T.I64) if dt.is_int_signed() else b.zext(v, T.I64))
    ok = b.icmp_unsigned("<", w, ir.Constant(T.I64, n))
    return ok, b.trunc(b.select(ok, w, ir.Constant(T.I64, 0)), T.I32)


def _blocked(tile, what):
    """``tile``, whose layout must be a blocked one (any chunking: each slot's flat index
    comes from the tile's own layout)."""
    if not isinstance(tile.layout, Layout):
        raise NotImplementedError(f"{what} in a {type(tile.layout).__name__}, not a blocked layout")
    return tile


@RULES.register(ops.GatherOp)
def _gather(lw, op):
    sty, rty, axis = op.src.type, op.result.type, op.axis
    src = _blocked(lw.get(op.src), "gather source")
    index = _blocked(lw.get(op.index), "gather index")
    el, ity = sty.element, op.index.type.element
    size = T.mem_size(el)
    base = lw.smem(sty.numel * size)
    lw.barrier()                    # earlier users of the scratch are done with it
    for slot, r in enumerate(src.regs):
        at = lw.b.mul(lw.elem_index(src.layout, slot), lw.i32(size))
        lw.b.store(_mem(lw, r), lw.smem_addr(base, at)).align = size
    lw.barrier()
    n, m = sty.shape[axis], rty.shape[axis]
    inner = math.prod(sty.shape[axis + 1:])
    regs = []
    for slot, k in enumerate(index.regs):
        b = lw.b
        e = lw.elem_index(index.layout, slot)
        ok, kk = _inside(lw, k, ity, n)
        outer = b.udiv(e, lw.i32(m * inner))
        at = b.add(b.mul(outer, lw.i32(n * inner)), b.mul(kk, lw.i32(inner)))
        if inner > 1:
            at = b.add(at, b.urem(e, lw.i32(inner)))
        x = b.load(lw.smem_addr(base, b.mul(at, lw.i32(size))), typ=T.mem_type(el))
        x.align = size
        x = _reg(lw, x, T.llvm_type(el))
        regs.append(b.select(ok, x, ir.Constant(x.type, 0)))
    return [Tile(regs, index.layout)]


@RULES.register(ops.HistogramOp)
def _histogram(lw, op):
    sty, rty, nb = op.src.type, op.result.type, op.num_bins
    x = _blocked(lw.get(op.src), "histogram input")
    mask = None if op.mask is None else _blocked(lw.get(op.mask), "histogram mask")
    if mask is not None and mask.layout != x.layout:
        raise NotImplementedError("histogram mask in a layout other than its input's")
    base = lw.smem(nb * 4)
    lw.barrier()

    def zero(j, vals):
        b = lw.b
        at = lw.tid if j is None else b.add(b.mul(j, lw.i32(lw.threads)), lw.tid)
        lw.guarded(None if nb % lw.threads == 0 else b.icmp_unsigned("<", at, lw.i32(nb)),
                   lambda: b.store(lw.i32(0), lw.smem_addr(base, b.mul(at, lw.i32(4)))))
        return vals
    rounds = -(-nb // lw.threads)
    if rounds > 1:
        lw.counted_loop(rounds, zero, [])
    else:
        zero(None, [])
    lw.barrier()
    for slot, v in enumerate(x.regs):
        ok, k = _inside(lw, v, sty.element, nb)
        own = lw.owned(x.layout, slot)
        if own is not None:
            ok = lw.b.and_(ok, own)
        if mask is not None:
            ok = lw.b.and_(ok, mask.regs[slot])
        addr = lw.smem_addr(base, lw.b.mul(k, lw.i32(4)))
        lw.guarded(ok, lambda a=addr: lw.b.atomic_rmw("add", a, lw.i32(1), "monotonic"))
    lw.barrier()
    lay = lw.layout(rty)
    regs = []
    for slot in range(lay.nslots):
        r = lw.b.load(lw.smem_addr(base, lw.b.mul(lw.elem_index(lay, slot), lw.i32(4))), typ=T.I32)
        r.align = 4
        regs.append(r)
    return [Tile(regs, lay)]
