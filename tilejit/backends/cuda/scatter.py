"""Scattered stores issued one element per thread per instruction, as Triton does.

The blocked layout gives each thread ``V`` consecutive elements, so a warp-wide store
of one slot covers elements ``V`` apart.  When the axis analysis says a store's
pointers are not contiguous (so no vector store is possible anyway), the pointers,
values and mask are moved through shared memory to the ``V = 1`` layout first, and
every warp-wide store then covers 32 consecutive elements of the tile -- the order
Triton's coalescing pass produces, which the H200 retires measurably faster for the
#741 scatter.  Results are unchanged: the same (address, value, mask) triples are
stored, by other threads.
"""
from __future__ import annotations

from llvmlite import ir

from . import types as T
from .layout import make_layout

SLOT_BYTES = 8            # every register class goes through 8-byte slots
MAX_SMEM = 32 * 1024


def wants_relayout(lw, ptr_value, lay, width) -> bool:
    """Relayout a store whose chunks would be stored slot by slot anyway."""
    if width != 1 or lay is None or lay.vec == 1 or not lay.exact or lw.sanitize or lay.dim0_first:
        return False                # (a dim-0-first tile's chunks run along dim 0: dim_order.py)
    if lw.facts is None or lay.numel % lay.threads or lay.numel * SLOT_BYTES > MAX_SMEM:
        return False
    info = lw.axis(ptr_value)
    return info is not None and info.contiguity[-1] == 1


def _move(lw, base, src, dst, regs):
    """``regs`` (held in layout ``src``) as held in layout ``dst``."""
    b = lw.b
    lw.barrier()                     # earlier users of the shared buffer are done
    for s, v in enumerate(regs):
        off = b.mul(lw.elem_index(src, s), lw.i32(SLOT_BYTES))
        b.store(v, lw.smem_addr(base, off)).align = SLOT_BYTES
    lw.barrier()
    out = []
    for s in range(dst.nslots):
        off = b.mul(lw.elem_index(dst, s), lw.i32(SLOT_BYTES))
        out.append(b.load(lw.smem_addr(base, off), typ=regs[0].type))
    return out


def relayout(lw, lay, ptrs, vals, masks):
    """(layout, ptrs, vals, masks) of the same store in the one-element-per-thread layout."""
    dst = make_layout(lay.shape, lay.threads, max_vec=1)
    base = lw.smem(lay.numel * SLOT_BYTES)
    ptrs = _move(lw, base, lay, dst, ptrs)
    vals = _move(lw, base, lay, dst, vals)
    if masks[0] is not None:
        wide = [lw.b.zext(m, T.I8) for m in masks]
        masks = [lw.b.icmp_unsigned("!=", m, ir.Constant(T.I8, 0)) for m in _move(lw, base, lay, dst, wide)]
    else:
        masks = [None] * dst.nslots
    return dst, ptrs, vals, masks
