"""``tt.dot`` lowering rules.

A and B are materialized in the compute type (fp32, or fp64 for an fp64 accumulator;
fp16/bf16 inputs accumulate in fp32); float dots are emitted by the register-blocked
micro-kernel of ``dot_microkernel.py``, which packs B into column panels, reading B
where it lives when the load that produced it may be repeated at the dot
(``_direct_source``).  Integer dots use a plain loop nest.  ``dot(a, b, 0) + c`` is
folded into ``dot(a, b, c)``; when the dot's only user is the ``scf.yield`` of its
block, it writes straight into the loop-carried buffer (no extra copy).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.types import float32, float64
from ..llvm.casts import lower_cast
from ..llvm.types import I64, storage_type, to_storage, value_type
from .dot_microkernel import emit_float_dot
from .lower import RULES
from .tiles import BufTile, LazyTile, Tile, materialize, linear_index, strides_of


def _converted(ctx, tile, dt):
    """Materialized copy of ``tile`` with element type ``dt``."""
    if tile.dtype == dt:
        return materialize(ctx, tile)
    conv = LazyTile(tile.shape, dt, lambda c, idx: lower_cast(c.b, tile.elem(c, idx), tile.dtype, dt))
    return materialize(ctx, conv)


class DotTile(Tile):
    """``a @ b + acc`` evaluated when materialized (into its final buffer)."""

    def __init__(self, a: BufTile, b: BufTile, acc, out_dtype, cdt, b_src=None):
        super().__init__((a.shape[0], b.shape[1]), out_dtype)
        self.a, self.b, self.acc, self.cdt = a, b, acc, cdt
        self.b_src = b_src                   # B read where it lives (see _direct_source)
        self.cost = 1000

    def _elem(self, ctx, idx):
        raise AssertionError("DotTile must be materialized before use")

    def materialize_into(self, ctx, ptr, order=None):
        if order is not None and tuple(order) != tuple(range(len(self.shape))):
            _reordered(ctx, self, ptr, order)        # a carried slot laid out another way (lower_cf)
        elif self.cdt.kind == "float":
            _float_kernel(ctx, self, ptr)
        else:
            _int_kernel(ctx, self, ptr)


def _reordered(ctx, tile, ptr, order):
    """``tile`` (materialized row-major into a scratch buffer) copied into ``ptr``
    laid out ``order``."""
    tmp = ctx.alloca(storage_type(tile.dtype), tile.numel)
    tile.materialize_into(ctx, tmp)
    BufTile(tile.shape, tile.dtype, tmp).materialize_into(ctx, ptr, order)


def _float_kernel(ctx, d: DotTile, out_ptr):
    emit_float_dot(ctx, d, out_ptr, _SHAPE_OVERRIDE[0] if _SHAPE_OVERRIDE else None)


_SHAPE_OVERRIDE = []     # tests/experiments: a dot_microkernel.Shape forced on every float dot


def _int_kernel(ctx, d: DotTile, out_ptr):
    (M, K), N = d.a.shape, d.b.shape[1]
    cty = value_type(d.cdt)
    sty = storage_type(d.dtype)
    strides = strides_of((M, N))

    def body(idx):
        b = ctx.b
        i, j = idx
        acc0 = lower_cast(b, d.acc.elem(ctx, idx), d.acc.dtype, d.cdt)
        slot = ctx.alloca(cty)
        b.store(acc0, slot)

        def kbody(k):
            a = b.load(b.gep(d.a.ptr, [b.add(b.mul(i, ir.Constant(I64, K)), k)], source_etype=cty), typ=cty)
            x = b.load(b.gep(d.b.ptr, [b.add(b.mul(k, ir.Constant(I64, N)), j)], source_etype=cty), typ=cty)
            b.store(b.add(b.load(slot, typ=cty), b.mul(a, x)), slot)
        ctx.em.counted_loop(ir.Constant(I64, 0), ir.Constant(I64, K), name="k", body=kbody)
        res = lower_cast(b, b.load(slot, typ=cty), d.cdt, d.dtype)
        b.store(to_storage(b, res, d.dtype), b.gep(out_ptr, [linear_index(ctx, idx, strides)], source_etype=sty))
    ctx.loop_nest((M, N), body)


def _is_zero_const(v) -> bool:
    op = v.op
    return isinstance(op, ops.ConstantOp) and op.value == 0


def fold_add_into_dot(ctx, op, reps):
    """``dot(a, b, 0) + c`` (the dot's only use) -> ``dot(a, b, c)``; else None."""
    for i, r in enumerate(reps):
        if isinstance(r, DotTile) and r.acc is None:
            other = reps[1 - i]
            if not isinstance(other, Tile):
                return None
            if not isinstance(other, BufTile) and other.cost > 0:
                other = materialize(ctx, other)
            tile = DotTile(r.a, r.b, other, op.result.type.element, r.cdt, r.b_src)
            _bind(ctx, op, tile)
            return tile
    return None


def _direct_source(ctx, value, cdt):
    """``(addr(ctx, row, col) -> ptr, group)`` when dot operand ``value`` may be read
    where it lives instead of from its per-program copy: an unmasked, non-volatile
    ``tt.load`` of ``cdt`` elements whose vector plan makes every aligned group of
    ``group`` lanes of a row contiguous, followed in its block only by pure ops, loads
    and the terminator (nothing can write memory before the dot is evaluated, even
    when it is deferred to the block's yield).  Else None."""
    from .vectorize import plan_of
    ld = value.op
    if (not isinstance(ld, ops.LoadOp) or ld.mask is not None or ld.volatile
            or len(value.type.shape) != 2 or value.type.element != cdt):
        return None
    plan = plan_of(ctx, ld)
    if plan.width < 2 or plan.lane_mask:
        return None
    block = ld.parent
    after = block.ops[block.ops.index(ld) + 1:]
    if not all(o.has_trait("pure") or isinstance(o, ops.LoadOp) or o is block.terminator for o in after):
        return None
    ptr = ctx.get(ld.ptr)
    if not isinstance(ptr, Tile):
        return None

    def addr(c, row, col):
        return ptr.elem(c, (row, col if isinstance(col, ir.Value) else ir.Constant(I64, col)))
    return addr, plan.width


def _bind(ctx, op, tile):
    users = ctx.plan.user_ops(op.result)
    if len(users) == 1 and isinstance(users[0], ops.YieldOp) and users[0].parent is op.parent:
        ctx.set(op.result, tile)          # written by the yield into the carried buffer
    else:
        ctx.set(op.result, materialize(ctx, tile))


@RULES.register(ops.DotOp)
def _dot(ctx, op):
    acc_t = op.acc.type.element
    if acc_t.kind == "float":
        cdt = float64 if acc_t == float64 else float32
    else:
        cdt = acc_t
    a = _converted(ctx, ctx.get(op.a), cdt)
    bb = _converted(ctx, ctx.get(op.b), cdt)
    bsrc = _direct_source(ctx, op.b, cdt) if acc_t.kind == "float" else None
    users = ctx.plan.user_ops(op.result)
    if (acc_t.kind == "float" and _is_zero_const(op.acc) and len(users) == 1
            and isinstance(users[0], ops.AddOp) and users[0].parent is op.parent
            and users[0].lhs is not users[0].rhs):
        ctx.set(op.result, DotTile(a, bb, None, acc_t, cdt, bsrc))     # folded into the add
        return
    acc = ctx.get(op.acc)
    if not isinstance(acc, BufTile) and acc.cost > 0:
        acc = materialize(ctx, acc)
    _bind(ctx, op, DotTile(a, bb, acc, acc_t, cdt, bsrc))
