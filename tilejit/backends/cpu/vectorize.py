"""Analysis-driven vector loads and stores for the CPU backend (issue 4).

``choose_facts(func, options) -> (facts, grid_bound)`` runs the analysis once per
compiled Function.  It first analyses under :data:`GRID_BOUND` (at most that many
programs per grid axis, so ``pid * BLOCK`` cannot wrap and ``x % N`` keeps its
runs) and without any grid assumption; when both give the same access plan for
every load and store the unbounded facts are used and no bound is recorded.
Otherwise the kernel is compiled under the bound, ``CPUKernel.launch`` compares
the grid with it (three int compares) and runs a variant compiled without the
bound when a launch exceeds it.

``plan_of(ctx, op) -> AccessPlan(width, align, lane_mask)`` for a tile load/store, the
analysis' access plan (``analysis/access.py``, shared with the cuda backend) under this
target's :data:`CPU_ACCESS` limits:

* ``width >= 2``, ``lane_mask`` False: every aligned group of ``width`` lanes of the
  last dimension addresses consecutive elements and has one mask value: one
  ``<width x T>`` access with ``align`` bytes per group, behind one predicate (the
  mask of the group's first lane);
* ``lane_mask`` True: the groups are contiguous but the mask varies within a group:
  ``llvm.masked.load`` / ``llvm.masked.store`` (masked-off lanes are never touched);
* ``width == 1``: per-lane accesses (lower_mem's gather/scatter loops).

A vector load the fusion plan lets defer (no write can intervene before its one
chain of users) stays lazy (``VecLoadTile``: whole groups where its consumer asks,
lanes otherwise), e.g. into the carried update of a looped reduction; any other
writes a per-program buffer (a ``BufTile``) at the load's position.  Vector stores
assemble each group's vector from the value's lanes.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...analysis.access import AccessLimits, AccessPlan, bounded_facts, element_bytes
from ...analysis.access import plan_access as _plan_access
from ...ir import ops
from ...ir.types import PointerType
from ..llvm.intrinsics import declare, type_suffix
from ..llvm.types import I1, I64, storage_type, to_storage
from . import streaming
from .tiles import BufTile, Tile, linear_index, merge_masks, strides_of, versioned

GRID_BOUND = (1 << 20, 1 << 20, 1 << 20)   # programs per axis assumed by bounded compiles
# x86-64 through LLVM: accesses up to one 512-bit vector, at any alignment, masked per
# lane (llvm.masked.load/store); bool tiles are bytes, pointer tiles stay per lane.
CPU_ACCESS = AccessLimits(max_bytes=64, aligned=False, lane_mask=True, bools=True, pointers=False)


def plan_access(facts, op) -> AccessPlan:
    """The access plan of a tile ``tt.load`` / ``tt.store`` under ``facts``."""
    return _plan_access(facts, op.ptr, op.mask, CPU_ACCESS)


def choose_facts(func, options, allow_bound: bool = True):
    """``(facts, grid_bound)`` for compiling ``func``: ``(None, None)`` when
    vectorisation is off (``options.vectorize`` False, or sanitize mode, whose
    per-lane checks need per-lane accesses)."""
    if not options.vectorize or options.sanitize:
        return None, None
    from ...analysis import analyze
    if not any(isinstance(op, (ops.LoadOp, ops.StoreOp)) for op in func.walk()):
        return None, None
    if not allow_bound:
        return analyze(func), None
    return bounded_facts(func, CPU_ACCESS, GRID_BOUND)


def plan_of(ctx, op) -> AccessPlan:
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


def _mark(ctx, inst):
    """Tag a vector store (``!tilejit.vst``) so tests can find it in the LLVM IR."""
    inst.set_metadata("tilejit.vst", ctx.module.add_metadata([]))
    return inst


def _masked_intrinsic(ctx, name, vty, args_tys, ret):
    fname = f"llvm.masked.{name}.{type_suffix(vty)}.p0"
    return declare(ctx.module, fname, ret, args_tys)


def _known_true(ctx, mask) -> bool:
    return mask is None or (isinstance(mask, Tile) and id(mask) in ctx.known_true) or \
        (not isinstance(mask, Tile) and isinstance(mask, ir.Constant) and mask.constant in (1, True))


# ---------------------------------------------------------------- lane groups as vectors
_VEC_OPS = (ops.AddOp, ops.SubOp, ops.MulOp, ops.AndOp, ops.OrOp, ops.XorOp)


def _plain(dt) -> bool:
    """Register type == storage type (no bool bytes, no bf16 bits)."""
    return not isinstance(dt, PointerType) and dt.kind in ("int", "uint", "float") and dt.name != "bf16"


def vec_of(ctx, rep, idx, width):
    """``<width x T>`` of lanes ``idx .. idx+width-1`` (last dim) of ``rep`` computed
    as vector code, or None (the caller then assembles the lanes one by one)."""
    if not isinstance(rep, Tile):
        return _splat(ctx.b, rep, width)
    f = getattr(rep, "vec", None)
    return f(ctx, idx, width) if f is not None else None


def attach_elementwise_vec(tile, op, reps, in_dtypes, out_dtype):
    """Let an elementwise lazy tile compute whole lane groups (plain arithmetic only)."""
    from ..llvm.scalar import lower_elementwise
    if not isinstance(op, _VEC_OPS) or not all(_plain(d) for d in list(in_dtypes) + [out_dtype]):
        return
    if isinstance(op, (ops.AndOp, ops.OrOp, ops.XorOp)) and out_dtype.kind == "float":
        return

    def vec(c, idx, width):
        args = [vec_of(c, r, idx, width) for r in reps]
        if any(a is None for a in args):
            return None
        return lower_elementwise(c.b, op, args, in_dtypes, out_dtype)
    tile.vec = vec


class VecLoadTile(Tile):
    """A lazy ``tt.load`` with a vector plan: vector code per lane group when its
    consumer asks (``vec``), per-lane loads otherwise, a vector loop when buffered."""

    def __init__(self, op, plan, ptr, mask, other, scalar_fn, cost, masks):
        super().__init__(op.result.type.shape, op.result.type.element)
        self.op, self.plan, self.ptr, self.mask, self.other = op, plan, ptr, mask, other
        self.scalar_fn, self.cost, self.masks = scalar_fn, cost, tuple(masks)

    def _elem(self, ctx, idx):
        groups = ctx.__dict__.get("_lane_groups")
        if groups is not None:           # inside lane_groups(): extract from the group vector
            hit, vec = groups[0].get(id(idx[-1])), groups[1].get(id(self))
            if hit is not None and vec is not None and all(a is b for a, b in zip(hit[0], idx)):
                return ctx.b.extract_element(vec, ir.Constant(I64, hit[1]))
        return self.scalar_fn(ctx, idx)

    def vec(self, ctx, idx, width):
        pw = self.plan.width
        if not _plain(self.dtype) or (pw % width and (width % pw or pw < 4)):
            return None
        if pw < width:          # shorter runs than the consumer's group (a permute's
            return _concat(ctx.b, [self.vec(ctx, _shifted(ctx, idx, j), pw)   # gather)
                                   for j in range(0, width, pw)])
        size = element_bytes(self.dtype, CPU_ACCESS)
        align = max(1, min(self.plan.align, width * size))
        sub = AccessPlan(width, align, self.plan.lane_mask)
        return _load_group(ctx, sub, self.ptr, self.mask, self.other, self.dtype, idx)

    def materialize_into(self, ctx, ptr, order=None) -> None:
        if order is not None and tuple(order) != tuple(range(len(self.shape))):
            return super().materialize_into(ctx, ptr, order)     # laid out another way: per lane
        _vector_load_loop(ctx, self.op, self.plan, self.ptr, self.mask, self.other, ptr)


def _shifted(ctx, idx, j):
    """``idx`` with its last index advanced by ``j`` lanes."""
    return idx if j == 0 else tuple(idx[:-1]) + (ctx.b.add(idx[-1], ir.Constant(I64, j), flags=("nuw", "nsw")),)


def _concat(b, parts):
    """One vector of the equal-width vectors ``parts``, in order (a tree of shuffles)."""
    while len(parts) > 1:
        n = parts[0].type.count
        sel = ir.Constant(ir.VectorType(ir.IntType(32), 2 * n), list(range(2 * n)))
        parts = [b.shuffle_vector(parts[i], parts[i + 1], sel) for i in range(0, len(parts), 2)]
    return parts[0]


def _load_group(ctx, plan, ptr, mask, other, dt, idx):
    """The vector of one lane group (register type == storage type)."""
    b = ctx.b
    W = plan.width
    vty = ir.VectorType(storage_type(dt), W)
    p = _elem(ctx, ptr, idx)
    fill = lambda: (ir.Constant(vty, None) if other is None  # noqa: E731
                    else _vector_of(ctx, other, _lanes(ctx, idx, W), vty.element))
    if _known_true(ctx, mask):
        v = b.load(p, typ=vty, name="vld")
        v.align = plan.align
        return v
    if plan.lane_mask:
        mvec = _vector_of(ctx, mask, _lanes(ctx, idx, W), I1)
        fn = _masked_intrinsic(ctx, "load", vty, [p.type, mvec.type, vty], vty)
        return b.call(fn, [p, mvec, fill()], name="vld")
    with b.if_else(_elem(ctx, mask, idx)) as (then, otherwise):
        with then:
            v = b.load(p, typ=vty, name="vld")
            v.align = plan.align
            then_end = b.block
        with otherwise:
            f = fill()
            else_end = b.block
    phi = b.phi(vty)
    phi.add_incoming(v, then_end)
    phi.add_incoming(f, else_end)
    return phi


# ---------------------------------------------------------------- loads
def lower_vector_load(ctx, op, plan: AccessPlan, scalar_fn=None, cost=0, masks=()) -> None:
    """``tt.load`` with a vector plan: a lazy :class:`VecLoadTile` (its consumer's
    vector loop loads whole groups) or, when the load must happen here, one vector
    access per group into a per-program buffer."""
    ptr = ctx.get(op.ptr)
    mask = ctx.get(op.mask) if op.mask is not None else None
    other = ctx.get(op.other) if op.other is not None else None
    if scalar_fn is not None and (_feeds_vector_store(ctx, op, plan)
                                  or not ctx.plan.must_materialize(op, None)):
        # deferred into its consumer's loop (FusionPlan: no write can intervene):
        # whole groups where the consumer asks (``vec``), lanes otherwise
        ctx.define(op, VecLoadTile(op, plan, ptr, mask, other, scalar_fn, cost, masks))
        return
    t = op.result.type
    buf = ctx.alloca(storage_type(t.element), max(1, _numel(t.shape)))
    _vector_load_loop(ctx, op, plan, ptr, mask, other, buf)
    ctx.set(op.result, BufTile(t.shape, t.element, buf))


def _feeds_vector_store(ctx, op, plan) -> bool:
    """Is the load consumed group-wise where it is deferred to: a single-use chain of
    vector arithmetic ending in a vector store whose groups lie inside the load's
    groups, or a chain of elementwise ops / addptr ending in a per-lane store (which
    then runs its lanes in groups, :func:`lane_groups`)?"""
    cur, vec_chain = op.result, _plain(op.result.type.element)
    for _ in range(64):
        users = ctx.plan.user_ops(cur)
        if len(users) != 1 or users[0].parent is not op.parent:
            return False
        u = users[0]
        if isinstance(u, ops.StoreOp):
            w = plan_of(ctx, u).width
            if w == 1:
                return _plain(op.result.type.element)
            return vec_chain and u.value is cur and plan.width % w == 0
        if not isinstance(u, (ops.ElementwiseOp, ops.AddPtrOp)) or u.result.type.shape != op.result.type.shape:
            return False
        vec_chain = vec_chain and isinstance(u, _VEC_OPS) and all(_plain(x.type.element) for x in u.operands)
        cur = u.result
    return False


def _group_loads(ctx, op) -> list:
    """The deferred vector loads (VecLoadTile) feeding per-lane store ``op`` through
    same-shape elementwise ops and addptr."""
    found, seen, stack = [], set(), [v for v in (op.ptr, op.value, op.mask) if v is not None]
    while stack:
        v = stack.pop()
        if v in seen or v.op is None or v.type.shape != op.ptr.type.shape:
            continue
        seen.add(v)
        if isinstance(v.op, ops.LoadOp):
            rep = ctx.values.get(v)
            if isinstance(rep, VecLoadTile):
                found.append(rep)
        elif isinstance(v.op, (ops.ElementwiseOp, ops.AddPtrOp)):
            stack.extend(v.op.operands)
    return found


def lane_groups(ctx, op, shape, body) -> None:
    """``ctx.loop_nest(shape, body)`` for a per-lane store; when deferred vector loads
    feed it, the last dimension runs in groups: each load is one vector access per
    group and its lanes are extracted (``VecLoadTile._elem``)."""
    tiles = _group_loads(ctx, op) if ctx.facts is not None and shape else []
    if not tiles:
        ctx.loop_nest(shape, body)
        return
    W = min(t.plan.width for t in tiles)

    def group(gidx):
        idx = _group_base(ctx, gidx, W)
        vecs = {}
        for t in tiles:
            v = t.vec(ctx, idx, W)
            if v is not None:
                vecs[id(t)] = v
        lanes = _lanes(ctx, idx, W)
        saved = ctx.__dict__.get("_lane_groups")
        ctx._lane_groups = ({id(li[-1]): (li, j) for j, li in enumerate(lanes)}, vecs)
        for li in lanes:
            body(li)
        ctx._lane_groups = saved
    ctx.loop_nest(tuple(shape[:-1]) + (shape[-1] // W,), group)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _vector_load_loop(ctx, op, plan, ptr, mask, other, buf) -> None:
    t = op.result.type
    dt, shape, W = t.element, t.shape, plan.width
    sty = storage_type(dt)
    vty = ir.VectorType(sty, W)
    strides = strides_of(shape)
    buf_align = min(64, W * max(1, element_bytes(dt, CPU_ACCESS) or 1))

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


# ---------------------------------------------------------------- stores
def lower_vector_store(ctx, op, plan: AccessPlan) -> None:
    """``tt.store`` as one vector access per group (the value's lanes assembled)."""
    dt = op.value.type.element
    shape, W = op.ptr.type.shape, plan.width
    ptr, val = ctx.get(op.ptr), ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None
    sty = storage_type(dt)
    vty = ir.VectorType(sty, W)

    def value(idx, lanes):
        v = vec_of(ctx, val, idx, W) if _plain(dt) else None
        if v is not None:
            return v
        return _vector_of(ctx, val, lanes, sty, lambda e: to_storage(ctx.b, e, dt), "vst.val")

    def body(gidx, stream=False):
        b = ctx.b
        idx = _group_base(ctx, gidx, W)
        p = _elem(ctx, ptr, idx)
        lanes = _lanes(ctx, idx, W)
        if _known_true(ctx, mask):
            st = _mark(ctx, b.store(value(idx, lanes), p))
            st.align = plan.align
            if stream:
                streaming.mark(ctx, st)
        elif plan.lane_mask:
            mvec = _vector_of(ctx, mask, lanes, I1)
            fn = _masked_intrinsic(ctx, "store", vty, [vty, p.type, mvec.type], ir.VoidType())
            _mark(ctx, b.call(fn, [value(idx, lanes), p, mvec]))
        else:
            with b.if_then(_elem(ctx, mask, idx)):
                _mark(ctx, b.store(value(idx, lanes), p)).align = plan.align
    def emit(stream=False):
        ctx.loop_nest(tuple(shape[:-1]) + (shape[-1] // W,), lambda gidx: body(gidx, stream))

    def versions():          # large launches run a variant streaming them (streaming.py)
        if streaming.eligible(ctx, op, plan, _known_true(ctx, mask)):
            streaming.emit_store(ctx, op, emit)
        else:
            emit()
    masks = merge_masks(ptr, val, mask) + ((mask,) if isinstance(mask, Tile) else ())
    versioned(ctx, masks, versions)


__all__ = ["CPU_ACCESS", "GRID_BOUND", "choose_facts", "plan_access", "plan_of",
           "lower_vector_load", "lower_vector_store"]
