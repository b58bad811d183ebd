"""Control-flow helpers on top of ``llvmlite.ir.IRBuilder``, for every target: counted
loops (``counted_loop``; scf.for's head and test: ``open_loop``, ``loop_condition``),
allocas hoisted to the entry block, conditional regions."""
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
        self.cold = 0                    # > 0: emitting a rarely taken path (``cold_path``)
        self.keep_cold_loops_rolled = False   # set by the CPU backend (llvm/binding.py ``rolled_cold_loops``)

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
        def one(i, _carried):
            body(i)
            return ()
        counted_loop(self.b, self.fn, start, stop, one, step=step, name=name, unroll=not self.cold)

    @contextmanager
    def cold_path(self):
        """Emit a rarely taken path (a versioned tile op's masked copy): with
        ``keep_cold_loops_rolled``, its loops are marked ``llvm.loop.unroll.disable``, as
        LLVM's unrolling would multiply its code and the time to optimize and compile it."""
        step = 1 if self.keep_cold_loops_rolled else 0
        self.cold += step
        try:
            yield
        finally:
            self.cold -= step


def open_loop(b: ir.IRBuilder, fn: ir.Function, prefix: str, start):
    """Head, body and exit blocks of a loop entered from the current block; leaves the
    builder in the head after creating the induction variable's phi (``start`` from the
    preheader).  Returns (preheader, head, body, exit, iv)."""
    pre = b.block
    head = fn.append_basic_block(f"{prefix}.head")
    body = fn.append_basic_block(f"{prefix}.body")
    exit_ = fn.append_basic_block(f"{prefix}.exit")
    b.branch(head)
    b.position_at_end(head)
    iv = b.phi(start.type, name=prefix)
    iv.add_incoming(start, pre)
    return pre, head, body, exit_, iv


def loop_condition(b: ir.IRBuilder, iv, stop, step, signed: bool = True):
    """``iv`` is still inside ``range(start, stop, step)`` (scf.for's test, as the
    interpreter runs it): ``iv < stop`` for a positive step, ``iv > stop`` for a negative
    one, chosen at run time when ``step`` is not a constant.  An unsigned step is positive."""
    cmp = b.icmp_signed if signed else b.icmp_unsigned
    if not signed:
        return cmp("<", iv, stop)
    if isinstance(step, ir.Constant):
        return cmp("<", iv, stop) if step.constant > 0 else cmp(">", iv, stop)
    pos = b.icmp_signed(">", step, ir.Constant(step.type, 0))
    return b.select(pos, cmp("<", iv, stop), cmp(">", iv, stop))


def no_unroll_metadata(module: ir.Module):
    """The ``llvm.loop`` node that keeps LLVM from unrolling a loop (one per module)."""
    md = getattr(module, "_no_unroll_md", None)
    if md is None:
        disable = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
        md = module.add_metadata([disable, disable])
        md.operands = (md, disable)          # a loop id refers to itself
        module._no_unroll_md = md
    return md


def counted_loop(b: ir.IRBuilder, fn: ir.Function, start, stop, body, step=None, carried=(),
                 name="i", nonempty=False, unroll=True):
    """``for i in range(start, stop, step)`` (``step`` positive, 1 by default) with the
    loop-carried LLVM values ``carried``: ``body(i, values)`` emits one iteration at the
    builder and returns the next values.  Returns the values after the loop.
    ``nonempty``: the loop runs at least once, so the test is at the bottom (one block).
    ``unroll=False``: LLVM must not unroll it (``no_unroll_metadata``)."""
    ty = start.type
    step = step if step is not None else ir.Constant(ty, 1)
    pre = b.block
    head = fn.append_basic_block(name + ".head")
    loop = head if nonempty else fn.append_basic_block(name + ".body")
    exit_ = fn.append_basic_block(name + ".exit")
    b.branch(head)
    b.position_at_end(head)
    iv = b.phi(ty, name=name)
    iv.add_incoming(start, pre)
    phis = []
    for v in carried:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    if not nonempty:
        b.cbranch(b.icmp_signed("<", iv, stop), loop, exit_)
        b.position_at_end(loop)
    nxt = list(body(iv, phis))
    following = b.add(iv, step, name=name + ".next", flags=("nsw",))
    latch = b.block
    iv.add_incoming(following, latch)
    for p, v in zip(phis, nxt):
        p.add_incoming(v, latch)
    if nonempty:
        back = b.cbranch(b.icmp_signed("<", following, stop), head, exit_)
    else:
        back = b.branch(head)
    if not unroll:
        back.set_metadata("llvm.loop", no_unroll_metadata(fn.module))
    b.position_at_end(exit_)
    return nxt if nonempty else phis


def _size_of(ty) -> int:
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    if isinstance(ty, ir.VectorType):
        return ty.count * _size_of(ty.element)
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}.get(type(ty), 8)


def const_i64(x: int) -> ir.Constant:
    return ir.Constant(I64, x)
