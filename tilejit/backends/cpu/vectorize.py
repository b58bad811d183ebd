"""Analysis-driven vector loads and stores for the CPU backend (issue 4).

``choose_facts(func, options) -> (facts, grid_bound)`` runs the analysis once per
compiled Function.  It first analyses under :data:`GRID_BOUND` (at most that many
programs per grid axis, so ``pid * BLOCK`` cannot wrap and ``x % N`` keeps its
runs) and without any grid assumption; when both give the same access plan for
every load and store the unbounded facts are used and no bound is recorded.
Otherwise the kernel is compiled under the bound, ``CPUKernel.launch`` compares
the grid with it (three int compares) and runs a variant compiled without the
bound when a launch exceeds it.

``plan_of(ctx, op) -> VecPlan(width, align, lane_mask)`` for a tile load/store:

* ``width >= 2``, ``lane_mask`` False: every aligned group of ``width`` lanes of the
  last dimension addresses consecutive elements and has one mask value (the
  analysis' ``access_plan``): one ``<width x T>`` access with ``align`` bytes per
  group, behind one predicate (the mask of the group's first lane);
* ``lane_mask`` True: the groups are contiguous but the mask varies within a group:
  ``llvm.masked.load`` / ``llvm.masked.store`` (masked-off lanes are never touched);
* ``width == 1``: per-lane accesses (lower_mem's gather/scatter loops).

Vector loads write a per-program buffer (a ``BufTile``) at the load's position;
vector stores assemble each group's vector from the value's lanes.
"""
from __future__ import annotations

from typing import NamedTuple

import llvmlite.ir as ir

from ...ir import ops
from ...ir.types import PointerType
from ..llvm.intrinsics import declare, type_suffix
from ..llvm.types import I1, I64, storage_type, to_storage
from .tiles import BufTile, Tile, linear_index, merge_masks, strides_of, versioned

GRID_BOUND = (1 << 20, 1 << 20, 1 << 20)   # programs per axis assumed by bounded compiles
MAX_VECTOR_BYTES = 64                     # widest access: one 512-bit vector


class VecPlan(NamedTuple):
    width: int
    align: int
    lane_mask: bool


SCALAR = VecPlan(1, 1, False)


def _itemsize(pointee) -> int | None:
    """Bytes of one element, or None when the element type is not vectorised."""
    if isinstance(pointee, PointerType):
        return None
    if pointee.kind == "bool":
        return 1
    return pointee.bits // 8 if pointee.bits >= 8 else None


def plan_access(facts, op) -> VecPlan:
    """The vector plan of a tile ``tt.load`` / ``tt.store`` under ``facts``."""
    from ...analysis.vector import access_plan
    ty = op.ptr.type
    if facts is None or ty.is_scalar:
        return SCALAR
    size = _itemsize(ty.element.element)
    if size is None:
        return SCALAR
    lanes = MAX_VECTOR_BYTES // size
    p = access_plan(facts, op.ptr, op.mask, lanes)
    lane_mask = False
    if p.width < 2 and op.mask is not None:
        p = access_plan(facts, op.ptr, None, lanes)
        lane_mask = True
    if p.width < 2:
        return SCALAR
    return VecPlan(p.width, max(1, min(p.align, p.width * size)), lane_mask)


def _plans(func, facts) -> list:
    return [plan_access(facts, op) for op in func.walk() if isinstance(op, (ops.LoadOp, ops.StoreOp))]


def choose_facts(func, options, allow_bound: bool = True):
    """``(facts, grid_bound)`` for compiling ``func``: ``(None, None)`` when
    vectorisation is off (``options.vectorize`` False, or sanitize mode, whose
    per-lane checks need per-lane accesses)."""
    if not options.vectorize or options.sanitize:
        return None, None
    from ...analysis import analyze
    if not any(isinstance(op, (ops.LoadOp, ops.StoreOp)) for op in func.walk()):
        return None, None
    free = analyze(func)
    if not allow_bound:
        return free, None
    bounded = analyze(func, grid_bound=GRID_BOUND)
    if _plans(func, bounded) == _plans(func, free):
        return free, None
    return bounded, GRID_BOUND


def plan_of(ctx, op) -> VecPlan:
    cache = ctx.__dict__.setdefault("_vec_plans", {})
    plan = cache.get(op)
    if plan is None:
        plan = cache[op] = plan_access(getattr(ctx, "facts", None), op)
    return plan


# ---------------------------------------------------------------- helpers
def _elem(ctx, rep, idx):
    return rep.elem(ctx, idx) if isinstance(rep, Tile) else rep


def _lanes(ctx, idx, width):
    """The index tuples of the ``width`` lanes of the group starting at ``idx``."""
    b = ctx.b
    out = [idx]
    for j in range(1, width):
        out.append(tuple(idx[:-1]) + (b.add(idx[-1], ir.Constant(I64, j), flags=("nuw", "nsw")),))
    return out


def _vector_of(ctx, rep, lanes, ety, conv=None, name=""):
    """``<len(lanes) x ety>`` from the lanes of ``rep`` (a tile or a scalar)."""
    b = ctx.b
    if not isinstance(rep, Tile):
        return _splat(b, conv(rep) if conv else rep, len(lanes), name)
    vec = ir.Constant(ir.VectorType(ety, len(lanes)), ir.Undefined)
    for j, li in enumerate(lanes):
        e = rep.elem(ctx, li)
        vec = b.insert_element(vec, conv(e) if conv else e, ir.Constant(I64, j), name=name)
    return vec


def _splat(b, v, n, name=""):
    vty = ir.VectorType(v.type, n)
    one = b.insert_element(ir.Constant(vty, ir.Undefined), v, ir.Constant(I64, 0))
    return b.shuffle_vector(one, ir.Constant(vty, ir.Undefined),
                            ir.Constant(ir.VectorType(ir.IntType(32), n), [0] * n), name=name)


def _group_base(ctx, idx, width):
    b = ctx.b
    start = b.mul(idx[-1], ir.Constant(I64, width), flags=("nuw", "nsw"))
    return tuple(idx[:-1]) + (start,)


def _masked_intrinsic(ctx, name, vty, args_tys, ret):
    fname = f"llvm.masked.{name}.{type_suffix(vty)}.p0"
    return declare(ctx.module, fname, ret, args_tys)


def _known_true(ctx, mask) -> bool:
    return mask is None or (isinstance(mask, Tile) and id(mask) in ctx.known_true) or \
        (not isinstance(mask, Tile) and isinstance(mask, ir.Constant) and mask.constant in (1, True))


# ---------------------------------------------------------------- loads
def lower_vector_load(ctx, op, plan: VecPlan) -> None:
    """``tt.load`` as one vector access per group into a per-program buffer."""
    t = op.result.type
    dt, shape, W = t.element, t.shape, plan.width
    ptr = ctx.get(op.ptr)
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    sty = storage_type(dt)
    vty = ir.VectorType(sty, W)
    numel = 1
    for s in shape:
        numel *= s
    buf = ctx.alloca(sty, numel)
    strides = strides_of(shape)
    buf_align = min(64, W * max(1, _itemsize(dt) or 1))

    def fill(lanes):
        if other is None:
            return ir.Constant(vty, None)
        return _vector_of(ctx, other, lanes, sty, lambda e: to_storage(ctx.b, e, dt))

    def body(gidx):
        b = ctx.b
        idx = _group_base(ctx, gidx, W)
        p = _elem(ctx, ptr, idx)
        dst = b.gep(buf, [linear_index(ctx, idx, strides)], source_etype=sty)
        if _known_true(ctx, mask):
            v = b.load(p, typ=vty, name="vld")
            v.align = plan.align
            b.store(v, dst).align = buf_align
        elif plan.lane_mask:
            lanes = _lanes(ctx, idx, W)
            mvec = _vector_of(ctx, mask, lanes, I1)
            fn = _masked_intrinsic(ctx, "load", vty, [p.type, mvec.type, vty], vty)
            v = b.call(fn, [p, mvec, fill(lanes)], name="vld")
            b.store(v, dst).align = buf_align
        else:
            with b.if_else(_elem(ctx, mask, idx)) as (then, otherwise):
                with then:
                    v = b.load(p, typ=vty, name="vld")
                    v.align = plan.align
                    b.store(v, dst).align = buf_align
                with otherwise:
                    b.store(fill(_lanes(ctx, idx, W)), dst).align = buf_align
    emit = lambda: ctx.loop_nest(tuple(shape[:-1]) + (shape[-1] // W,), body)  # noqa: E731
    if plan.lane_mask:       # run-time fast path: all lanes in, plain vector loads
        versioned(ctx, (mask,) if isinstance(mask, Tile) else (), emit)
    else:
        emit()
    ctx.set(op.result, BufTile(shape, dt, buf))


# ---------------------------------------------------------------- stores
def lower_vector_store(ctx, op, plan: VecPlan) -> None:
    """``tt.store`` as one vector access per group (the value's lanes assembled)."""
    dt = op.value.type.element
    shape, W = op.ptr.type.shape, plan.width
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None
    sty = storage_type(dt)
    vty = ir.VectorType(sty, W)

    def body(gidx):
        b = ctx.b
        idx = _group_base(ctx, gidx, W)
        p = _elem(ctx, ptr, idx)
        lanes = _lanes(ctx, idx, W)
        if _known_true(ctx, mask):
            b.store(_vector_of(ctx, val, lanes, sty, lambda e: to_storage(b, e, dt), "vst.val"), p).align = plan.align
        elif plan.lane_mask:
            mvec = _vector_of(ctx, mask, lanes, I1)
            v = _vector_of(ctx, val, lanes, sty, lambda e: to_storage(b, e, dt), "vst.val")
            fn = _masked_intrinsic(ctx, "store", vty, [vty, p.type, mvec.type], ir.VoidType())
            b.call(fn, [v, p, mvec])
        else:
            with b.if_then(_elem(ctx, mask, idx)):
                b.store(_vector_of(ctx, val, lanes, sty, lambda e: to_storage(b, e, dt), "vst.val"), p).align = plan.align
    masks = merge_masks(ptr, val, mask) + ((mask,) if isinstance(mask, Tile) else ())
    versioned(ctx, masks, lambda: ctx.loop_nest(tuple(shape[:-1]) + (shape[-1] // W,), body))


__all__ = ["GRID_BOUND", "VecPlan", "choose_facts", "plan_access", "plan_of",
           "lower_vector_load", "lower_vector_store"]
