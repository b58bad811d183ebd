"""``tt.atomic_rmw`` / ``tt.atomic_cas`` for the CPU backend: one LLVM ``atomicrmw`` or
``cmpxchg`` per masked-in lane, in lane order, emitted where the op stands (never
deferred); the old values go to a per-program buffer.  Programs on different
threads of the pool race through real atomic instructions."""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ..llvm.atomics import emit_cas, emit_rmw
from ..llvm.types import storage_type, to_storage, value_type, zero_of
from .lower import RULES, elem_of
from .sanitize import emit_check
from .tiles import BufTile, linear_index, strides_of


def _guarded(ctx, m, emit, dt):
    """``m ? emit() : 0`` with the atomic executed only where ``m`` holds."""
    if m is None:
        return emit()
    b = ctx.b
    pre = b.block
    then, merge = ctx.em.new_block("at.then"), ctx.em.new_block("at.merge")
    b.cbranch(m, then, merge)
    b.position_at_end(then)
    v = emit()
    then_end = b.block
    b.branch(merge)
    b.position_at_end(merge)
    phi = b.phi(v.type)
    phi.add_incoming(v, then_end)
    phi.add_incoming(zero_of(value_type(dt)), pre)
    return phi


def _lower(ctx, op, lane_fn, mask):
    """Run ``lane_fn(idx, lane) -> old`` for each lane (scalar: once) and bind the result."""
    t = op.result.type
    dt = t.element
    if t.is_scalar:
        ctx.set(op.result, _guarded(ctx, mask, lambda: lane_fn((), None), dt))
        return
    sty = storage_type(dt)
    buf = ctx.alloca(sty, t.numel)
    strides = strides_of(t.shape)

    def body(idx):
        lin = linear_index(ctx, idx, strides)
        m = elem_of(ctx, mask, idx) if mask is not None else None
        old = _guarded(ctx, m, lambda: lane_fn(idx, lin), dt)
        ctx.b.store(to_storage(ctx.b, old, dt), ctx.b.gep(buf, [lin], source_etype=sty))
    ctx.loop_nest(t.shape, body)
    ctx.set(op.result, BufTile(t.shape, dt, buf))


@RULES.register(ops.AtomicRMWOp)
def _atomic_rmw(ctx, op):
    dt = op.result.type.element
    ptr, val = ctx.get(op.ptr), ctx.get(op.val)
    mask = ctx.get(op.mask) if op.mask is not None else None

    def lane(idx, lin):
        p = elem_of(ctx, ptr, idx)
        emit_check(ctx, op, p, dt.itemsize, lin)
        return emit_rmw(ctx.b, op.kind, dt, p, elem_of(ctx, val, idx), op.sem)
    _lower(ctx, op, lane, mask)


@RULES.register(ops.AtomicCASOp)
def _atomic_cas(ctx, op):
    dt = op.result.type.element
    ptr, cmp, val = ctx.get(op.ptr), ctx.get(op.cmp), ctx.get(op.val)

    def lane(idx, lin):
        p = elem_of(ctx, ptr, idx)
        emit_check(ctx, op, p, dt.itemsize, lin)
        return emit_cas(ctx.b, dt, p, elem_of(ctx, cmp, idx), elem_of(ctx, val, idx), op.sem)
    _lower(ctx, op, lane, None)


@RULES.register(ops.InlineAsmOp)
def _inline_asm(ctx, op):
    raise NotImplementedError("tl.inline_asm_elementwise runs target assembly (PTX): only the cuda "
                              "backend can run it")
