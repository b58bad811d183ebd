"""Software prefetch of a dot's next operand tiles (CPU backend).

In the usual matmul loop ``for k: a = tl.load(a_ptrs); ...; a_ptrs += BK * stride``
each iteration's tiles are rows of a few cache lines thousands of bytes apart; the
hardware prefetchers do not follow them across pages, so every iteration starts
with a stall on a fresh tile.  When a dot operand is a ``tt.load`` of a pointer tile
carried by the enclosing ``scf.for`` and advanced by one uniform offset per
iteration (``lower_cf.uniform_ptr_step``), the micro-kernel prefetches the next
iteration's tile (current pointers + step) a few rows per register block, so the
misses overlap with the FMAs.

Only addresses are computed: a prefetch never faults and never changes a result,
so an address past the end of an array (last iteration, masked lanes) is harmless.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import llvmlite.ir as ir

from ...ir import ops
from ..llvm import intrinsics as intr
from ..llvm.types import I32, I64, storage_type

LINE = 64                    # bytes per cache line
LOCALITY = 3                 # llvm.prefetch locality (3: all levels, prefetcht0)


class RowPrefetch(NamedTuple):
    """Prefetch source rows of one operand: ``addr(ctx, row, col) -> ptr`` of
    element (row, col) of its next tile; ``rows`` x ``cols`` elements of ``esz`` bytes."""
    rows: int
    cols: int
    esz: int
    addr: Callable

    def emit_row(self, ctx, row):
        """Prefetch every cache line of tile row ``row`` (an i64 < rows)."""
        per_line = max(1, LINE // self.esz)
        for col in range(0, self.cols, per_line):
            prefetch(ctx.b, self.addr(ctx, row, col))


def prefetch(b, p, rw=0):
    """``llvm.prefetch`` of pointer ``p`` into the data cache (``rw`` 1: for a write)."""
    intr.call_overloaded(b, "prefetch", [p], ret=ir.VoidType(), overload_types=[p.type],
                         extra_args=[ir.Constant(I32, rw), ir.Constant(I32, LOCALITY), ir.Constant(I32, 1)])


def next_tile(ctx, value) -> RowPrefetch | None:
    """A RowPrefetch for dot operand ``value`` (an IR value) when it is loaded from a
    loop-carried pointer tile with a uniform step; else None."""
    from .lower_cf import uniform_ptr_step
    ld = value.op
    if not isinstance(ld, ops.LoadOp) or len(value.type.shape) != 2:
        return None
    ptr = ld.ptr
    if not ptr.is_block_arg or ptr.index == 0:
        return None
    region = ptr.owner.parent
    loop = region.parent if region is not None else None
    if not isinstance(loop, ops.ForOp) or loop.body is not ptr.owner:
        return None
    step = uniform_ptr_step(loop, ptr.index - 1)
    if step is None:
        return None
    step = _scalar_i64(ctx, step)
    rep = ctx.values.get(ptr)
    if step is None or rep is None or not hasattr(rep, "elem"):
        return None
    pointee = ptr.type.element.element
    sty = storage_type(pointee)

    def addr(c, row, col):
        p = rep.elem(c, (row, ir.Constant(I64, col)))
        return c.b.gep(p, [step], source_etype=sty)
    rows, cols = value.type.shape
    return RowPrefetch(rows, cols, max(1, pointee.bits // 8), addr)


def _scalar_i64(ctx, v, depth=0):
    """``v`` (a Python int or a scalar integer IR value) as an i64 at the builder's
    position, lowering constant/add/sub/mul chains not lowered yet; None if unknown."""
    if isinstance(v, int):
        return ir.Constant(I64, v)
    el = v.type.element
    if not v.type.is_scalar or el.kind not in ("int", "uint"):
        return None
    x = ctx.values.get(v)
    if isinstance(x, ir.Value) and isinstance(x.type, ir.IntType):
        if x.type.width == 64:
            return x
        return ctx.b.sext(x, I64) if el.kind == "int" else ctx.b.zext(x, I64)
    op = v.op
    if isinstance(op, ops.ConstantOp) and isinstance(op.value, (int, bool)):
        return ir.Constant(I64, int(op.value))
    binops = {ops.AddOp: "add", ops.SubOp: "sub", ops.MulOp: "mul"}
    name = binops.get(type(op))
    if name is None or depth > 4:
        return None
    lhs, rhs = _scalar_i64(ctx, op.lhs, depth + 1), _scalar_i64(ctx, op.rhs, depth + 1)
    if lhs is None or rhs is None:
        return None
    return getattr(ctx.b, name)(lhs, rhs)
