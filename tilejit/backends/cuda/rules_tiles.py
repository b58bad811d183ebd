"""Lowering rules for ids, ranges, shape ops, hints, reductions and dot.

Shape ops that keep the element count (reshape, expand_dims) are free in the
blocked layout; broadcast and trans move elements between threads through shared
memory (:func:`exchange`).  Reductions combine a thread's slots, then a warp with
butterfly shuffles, then the warps through shared memory.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from ...ir.types import int32
from . import types as T
from .lowering import RULES, Tile

_AXIS = "xyz"


@RULES.register(ops.ProgramIdOp)
def _pid(lw, op):
    return [Tile([lw.sreg(f"ctaid.{_AXIS[op.axis]}")], None)]


@RULES.register(ops.NumProgramsOp)
def _nprog(lw, op):
    return [Tile([lw.sreg(f"nctaid.{_AXIS[op.axis]}")], None)]


@RULES.register(ops.ArangeOp)
def _arange(lw, op):
    ty = op.result.type
    lay = lw.layout(ty)
    regs = [lw.b.add(lw.elem_index(lay, s), lw.i32(op.start)) for s in range(lay.nslots)]
    return [Tile(regs, lay)]


@RULES.register(ops.SplatOp)
def _splat(lw, op):
    ty = op.result.type
    return [lw.tile_like(ty, [lw.get(op.src).scalar] * lw.nslots(ty))]


@RULES.register(ops.ReshapeOp, ops.ExpandDimsOp)
def _same_elements(lw, op):
    src = lw.get(op.src)
    ty = op.result.type
    if not ty.shape:                      # a one-element tile to a scalar
        return [Tile([src.regs[0]], None)]
    lay = lw.layout(ty)
    if src.layout is None:
        return [Tile([src.regs[0]] * lay.nslots, lay)]
    assert lay.nslots == src.layout.nslots
    return [Tile(src.regs, lay)]


@RULES.register(ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp)
def _hint(lw, op):
    return [lw.get(op.src)]


def exchange(lw, src: Tile, src_ty, dst_ty, src_flat_of):
    """Move elements through shared memory: slot s of the result holds source element
    ``src_flat_of(dst multi-index)`` (an i32 flat index).  Returns the result Tile."""
    el = src_ty.element
    mty, size = T.mem_type(el), T.mem_size(el)
    base = lw.smem(src_ty.numel * size)
    lw.barrier()
    for s, v in enumerate(src.regs):
        e = lw.elem_index(src.layout, s)
        v = lw.b.zext(v, T.I8) if mty == T.I8 and v.type == T.I1 else v
        lw.b.store(v, lw.smem_addr(base, lw.b.mul(e, lw.i32(size)))).align = size
    lw.barrier()
    lay = lw.layout(dst_ty)
    regs = []
    for s in range(lay.nslots):
        idx = lw.multi_index(dst_ty.shape, lw.elem_index(lay, s))
        f = src_flat_of(idx)
        v = lw.b.load(lw.smem_addr(base, lw.b.mul(f, lw.i32(size))), typ=mty)
        v.align = size
        regs.append(lw.b.icmp_unsigned("!=", v, ir.Constant(T.I8, 0)) if T.llvm_type(el) == T.I1 else v)
    return Tile(regs, lay)


@RULES.register(ops.BroadcastOp)
def _broadcast(lw, op):
    src, sty, dty = lw.get(op.src), op.src.type, op.result.type
    if sty.shape == dty.shape:
        return [src]
    if sty.numel == 1:
        return [lw.tile_like(dty, [src.regs[0]] * lw.nslots(dty))]

    def src_flat(idx):
        sidx = [i if d != 1 else lw.i32(0) for i, d in zip(idx, sty.shape)]
        return lw.flat_index(sty.shape, sidx)
    return [exchange(lw, src, sty, dty, src_flat)]


@RULES.register(ops.TransOp)
def _trans(lw, op):
    src, sty, dty = lw.get(op.src), op.src.type, op.result.type
    perm = list(op.perm)

    def src_flat(idx):
        sidx = [None] * len(perm)
        for i, p in enumerate(perm):
            sidx[p] = idx[i]
        return lw.flat_index(sty.shape, sidx)
    return [exchange(lw, src, sty, dty, src_flat)]
