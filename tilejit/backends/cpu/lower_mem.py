"""``tt.load`` / ``tt.store`` lowering for the CPU backend.

Default access shape: one scalar access per lane inside the consumer's loop, a
masked-off lane branching around its access (so it never touches memory), which
LLVM's loop vectorizer if-converts into masked vector loads/stores or gathers.

``access_width(ctx, op)`` is the plug-in point for analysis-driven vector
accesses (contiguity/divisibility facts from ``tilejit.analysis``): it returns the
number of consecutive lanes one access may cover; wider accesses are lowered by
``vectorize.py`` (vector loads/stores, one predicate per group).
"""
from __future__ import annotations

from ...ir import ops
from ..llvm.types import from_storage, storage_type, to_storage, zero_of, value_type
from .lower import RULES, elem_of
from .sanitize import emit_check
from .tiles import COST_LOAD, LazyTile, Tile, linear_index, merge_masks, strides_of, versioned
from .vectorize import lane_groups, lower_vector_load, lower_vector_store, plan_of


def access_width(ctx, op) -> int:
    """Consecutive lanes one access of ``op`` may cover (1: per-lane accesses),
    from the analysis facts of the function (``vectorize.plan_of``)."""
    return plan_of(ctx, op).width


def _align(dt) -> int:
    return max(1, dt.itemsize)


def emit_masked_load(ctx, p, m, other, dt, op=None, lane=None):
    """Load element type ``dt`` at ``p`` when ``m`` (i1 or None); else ``other``."""
    b = ctx.b
    sty = storage_type(dt)
    if m is None:
        emit_check(ctx, op, p, dt.itemsize, lane)
        ld = b.load(p, typ=sty)
        ld.align = _align(dt)
        return from_storage(b, ld, dt)
    if other is None:
        other = zero_of(value_type(dt))
    pre = b.block
    then = ctx.em.new_block("ld.then")
    merge = ctx.em.new_block("ld.merge")
    b.cbranch(m, then, merge)
    b.position_at_end(then)
    emit_check(ctx, op, p, dt.itemsize, lane)
    ld = b.load(p, typ=sty)
    ld.align = _align(dt)
    v = from_storage(b, ld, dt)
    then_end = b.block
    b.branch(merge)
    b.position_at_end(merge)
    phi = b.phi(v.type)
    phi.add_incoming(v, then_end)
    phi.add_incoming(other, pre)
    return phi


def emit_masked_store(ctx, p, v, m, dt, op=None, lane=None):
    b = ctx.b
    sv = to_storage(b, v, dt)
    if m is None:
        emit_check(ctx, op, p, dt.itemsize, lane)
        st = b.store(sv, p)
        st.align = _align(dt)
        return
    with b.if_then(m):
        emit_check(ctx, op, p, dt.itemsize, lane)
        st = b.store(sv, p)
        st.align = _align(dt)


@RULES.register(ops.LoadOp)
def _load(ctx, op):
    dt = op.result.type.element
    ptr = ctx.get(op.ptr)
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    if op.result.type.is_scalar:
        ctx.set(op.result, emit_masked_load(ctx, ptr, mask, other, dt, op))
        return
    strides = strides_of(op.result.type.shape)

    def fn(c, idx):
        p = elem_of(c, ptr, idx)
        lane = linear_index(c, idx, strides) if c.options.sanitize else None
        if mask is None or id(mask) in c.known_true:
            return emit_masked_load(c, p, None, None, dt, op, lane)
        o = elem_of(c, other, idx) if other is not None else None
        return emit_masked_load(c, p, elem_of(c, mask, idx), o, dt, op, lane)
    cost = COST_LOAD + sum(r.cost for r in (ptr, mask, other) if isinstance(r, Tile))
    masks = merge_masks(ptr, other, mask) + ((mask,) if isinstance(mask, Tile) else ())
    if access_width(ctx, op) > 1:       # vector loads (lazy: whole groups in the consumer)
        lower_vector_load(ctx, op, plan_of(ctx, op), fn, cost, masks)
        return
    ctx.define(op, LazyTile(op.result.type.shape, dt, fn, cost, masks))


@RULES.register(ops.StoreOp)
def _store(ctx, op):
    dt = op.value.type.element
    ptr = ctx.get(op.ptr)
    val = ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None
    if op.ptr.type.is_scalar:
        emit_masked_store(ctx, ptr, val, mask, dt, op)
        return
    if access_width(ctx, op) > 1:
        lower_vector_store(ctx, op, plan_of(ctx, op))
        return

    strides = strides_of(op.ptr.type.shape)

    def body(idx):
        p = elem_of(ctx, ptr, idx)
        v = elem_of(ctx, val, idx)
        known = mask is None or id(mask) in ctx.known_true
        lane = linear_index(ctx, idx, strides) if ctx.options.sanitize else None
        emit_masked_store(ctx, p, v, None if known else elem_of(ctx, mask, idx), dt, op, lane)
    masks = merge_masks(ptr, val, mask) + ((mask,) if isinstance(mask, Tile) else ())
    versioned(ctx, masks, lambda: lane_groups(ctx, op, op.ptr.type.shape, body))
