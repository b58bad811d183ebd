"""Control-flow helpers on top of ``llvmlite.ir.IRBuilder`` (target independent):
counted loops, allocas hoisted to the entry block, conditional regions."""
from __future__ import annotations

from contextlib import contextmanager

import llvmlite.ir as ir

from .types import I64


class FunctionEmitter:
    """Owns an LLVM function being built: the builder, an entry block for allocas."""

    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.entry = fn.append_basic_block("entry")
        self.body = fn.append_basic_block("body")
        self.b = ir.IRBuilder(self.body)
        self._alloca_b = ir.IRBuilder(self.entry)
        self.frame_bytes = 0             # approximate stack bytes of all allocas

    def finish_entry(self):
        """Terminate the entry (alloca) block by branching to the body."""
        self._alloca_b.position_at_end(self.entry)
        self._alloca_b.branch(self.body)

    def alloca(self, ty: ir.Type, count: int = 1, align: int = 64, name: str = ""):
        """Stack memory for ``count`` values of ``ty``, allocated once in the entry block."""
        ptr = self._alloca_b.alloca(ty, size=ir.Constant(I64, count) if count != 1 else None,
                                    name=name)
        ptr.align = align
        self.frame_bytes += count * max(1, _size_of(ty))
        ptr.type = ir.PointerType()      # opaque ``ptr`` (llvmlite types allocas as T*)
        return ptr

    def new_block(self, name: str) -> ir.Block:
        return self.fn.append_basic_block(name)

    @contextmanager
    def if_then(self, cond):
        """Emit the body only when ``cond`` (i1) holds; continue after it."""
        with self.b.if_then(cond):
            yield

    def counted_loop(self, start, stop, step=None, name="i", body=None):
        """``for i in range(start, stop, step)`` with i64 (or start's type) induction,
        step positive; ``body(i)`` emits the loop body at the builder."""
        b = self.b
        ty = start.type
        step = step if step is not None else ir.Constant(ty, 1)
        pre = b.block
        header = self.new_block(name + ".head")
        loop = self.new_block(name + ".body")
        exit_ = self.new_block(name + ".exit")
        b.branch(header)
        b.position_at_end(header)
        iv = b.phi(ty, name=name)
        iv.add_incoming(start, pre)
        b.cbranch(b.icmp_signed("<", iv, stop), loop, exit_)
        b.position_at_end(loop)
        body(iv)
        nxt = b.add(iv, step, name=name + ".next", flags=("nsw",))
        iv.add_incoming(nxt, b.block)
        b.branch(header)
        b.position_at_end(exit_)
        return iv


def _size_of(ty) -> int:
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    if isinstance(ty, ir.VectorType):
        return ty.count * _size_of(ty.element)
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}.get(type(ty), 8)


def const_i64(x: int) -> ir.Constant:
    return ir.Constant(I64, x)
