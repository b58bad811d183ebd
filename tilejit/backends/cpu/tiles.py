"""Tile values inside one program of the CPU backend.

A scalar IR value is an LLVM SSA value.  A tile is a :class:`Tile`:

* :class:`BufTile` — materialized in a per-program buffer (row-major, storage type);
  :class:`OrderedBufTile` the same with another axis order;
* :class:`LazyTile` — an element generator ``fn(ctx, idx)`` evaluated inside the
  loop of whichever consumer forces it, so chains of elementwise and shape ops are
  fused into that consumer's loop with no block-sized temporary in between.

``idx`` is a tuple of i64 LLVM values, one per dimension of the tile's shape.
``ctx.loop_nest(shape, body)`` emits nested counted loops (innermost over the last,
contiguous dimension, so LLVM's loop vectorizer sees unit-stride buffers;
``order=`` nests the axes in another order, outermost first).
Within one loop body, generated elements are memoised per (tile, idx) so shared
subexpressions are emitted once.
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

from ...backends.llvm.types import I64, from_storage, storage_type, to_storage

COST_ARITH, COST_MATH, COST_LOAD = 1, 20, 100
MATERIALIZE_COST = 20


def strides_of(shape, order=None) -> list[int]:
    """Element strides of a buffer of ``shape`` whose axes are laid out ``order``
    (outermost first; default row-major, the last axis contiguous)."""
    order = range(len(shape)) if order is None else order
    out, s = [0] * len(shape), 1
    for d in reversed(tuple(order)):
        out[d] = s
        s *= shape[d]
    return out


class Tile:
    """A tile of ``shape`` with element type ``dtype`` (an ir DType/PointerType)."""

    cost = 0
    masks = ()          # masks of the loads fused into this tile (see versioned())

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def elem(self, ctx, idx):
        """LLVM value of the element at ``idx`` (memoised within the current loop body)."""
        key = (id(self), tuple(id(i) for i in idx))
        cache = ctx.elem_cache
        hit = cache.get(key)
        if hit is not None:
            return hit[0]
        v = self._elem(ctx, idx)
        cache[key] = (v, self, idx)          # keep objects alive so ids stay unique
        return v

    def _elem(self, ctx, idx):
        raise NotImplementedError

    def materialize_into(self, ctx, ptr, order=None) -> None:
        """Write every element into the buffer ``ptr``, laid out ``order`` (outermost
        axis first; default row-major) and written in that order."""
        sty = storage_type(self.dtype)
        strides = strides_of(self.shape, order)

        def body(idx):
            v = to_storage(ctx.b, self.elem(ctx, idx), self.dtype)
            ctx.b.store(v, ctx.b.gep(ptr, [linear_index(ctx, idx, strides)], source_etype=sty))
        versioned(ctx, self.masks, lambda: ctx.loop_nest(self.shape, body, order=order))


class BufTile(Tile):
    """A tile stored row-major in ``ptr`` (storage type of its dtype)."""

    def __init__(self, shape, dtype, ptr):
        super().__init__(shape, dtype)
        self.ptr = ptr
        self.strides = strides_of(self.shape)

    def _elem(self, ctx, idx):
        sty = storage_type(self.dtype)
        p = ctx.b.gep(self.ptr, [linear_index(ctx, idx, self.strides)], source_etype=sty)
        return from_storage(ctx.b, ctx.b.load(p, typ=sty), self.dtype)

    def elem_linear(self, ctx, lin):
        sty = storage_type(self.dtype)
        return from_storage(ctx.b, ctx.b.load(ctx.b.gep(self.ptr, [lin], source_etype=sty), typ=sty), self.dtype)


class OrderedBufTile(Tile):
    """A tile stored in ``ptr`` with its axes laid out ``order`` (outermost first, not
    row-major): e.g. a loop-carried accumulator whose loads run along axis 0
    (``lower_cf.carried_order``).  Not a :class:`BufTile`, so code that needs a
    row-major buffer (dot operands, reshapes, vector groups along the last axis)
    reads it element by element or copies it."""

    def __init__(self, shape, dtype, ptr, order):
        super().__init__(shape, dtype)
        self.ptr, self.order = ptr, tuple(order)
        self.strides = strides_of(self.shape, self.order)

    _elem = BufTile._elem


class LazyTile(Tile):
    """A tile computed element by element by ``fn(ctx, idx)`` where it is consumed."""

    def __init__(self, shape, dtype, fn, cost=COST_ARITH, masks=()):
        super().__init__(shape, dtype)
        self.fn = fn
        self.cost = cost
        self.masks = tuple(masks)

    def _elem(self, ctx, idx):
        return self.fn(ctx, idx)


def linear_index(ctx, idx, strides):
    b = ctx.b
    lin = None
    for i, s in zip(idx, strides):
        term = i if s == 1 else b.mul(i, ir.Constant(I64, s), flags=("nsw", "nuw"))
        lin = term if lin is None else b.add(lin, term, flags=("nsw", "nuw"))
    return lin if lin is not None else ir.Constant(I64, 0)


def materialize(ctx, tile: Tile) -> BufTile:
    """A BufTile holding ``tile`` (the tile itself when already buffered)."""
    if isinstance(tile, BufTile):
        return tile
    ptr = ctx.alloca(storage_type(tile.dtype), tile.numel)
    tile.materialize_into(ctx, ptr)
    return BufTile(tile.shape, tile.dtype, ptr)


def merge_masks(*reps) -> tuple:
    """Union (by identity, in order) of the ``masks`` of tiles among ``reps``."""
    out, seen = [], set()
    for r in reps:
        for m in getattr(r, "masks", ()):
            if id(m) not in seen:
                seen.add(id(m))
                out.append(m)
    return tuple(out)


def versioned(ctx, masks, emit) -> None:
    """Emit ``emit()`` twice behind a runtime test: once for when every cheap mask
    in ``masks`` is all true (those masks then count as known true, so the fused
    loads and stores are unmasked and vectorize to plain vector moves), once as is."""
    import llvmlite.ir as ir
    from ...backends.llvm.types import I1
    cheap = [m for m in masks if isinstance(m, Tile) and m.cost < COST_LOAD
             and id(m) not in ctx.known_true]
    if not cheap:
        emit()
        return
    b = ctx.b
    slot = ctx.alloca(I1)
    b.store(ir.Constant(I1, 1), slot)
    shapes = {}                                  # one loop nest per mask shape
    for m in cheap:
        tests = _extreme_tests(ctx, m)
        if tests is None:
            shapes.setdefault(m.shape, []).append(m)
            continue
        ctx.elem_cache = {}
        for rep, idx in tests:                   # a monotone compare: one element decides
            b.store(b.and_(b.load(slot, typ=I1), rep.elem(ctx, tuple(ir.Constant(I64, i) for i in idx))), slot)
        ctx.elem_cache = {}

    def all_true(idx, group):
        v = b.load(slot, typ=I1)
        for m in group:
            v = b.and_(v, m.elem(ctx, idx))
        b.store(v, slot)
    for shape, group in shapes.items():
        ctx.loop_nest(shape, lambda idx, group=group: all_true(idx, group))
    with b.if_else(b.load(slot, typ=I1)) as (all_true, otherwise):
        with all_true:
            saved = set(ctx.known_true)
            ctx.known_true.update(id(m) for m in cheap)
            emit()
            ctx.known_true = saved
        with otherwise, ctx.em.cold_path():
            emit()


_ORDER = ("lt", "le", "gt", "ge")


def _extreme_tests(ctx, mask):
    """``[(tile, idx)]`` whose elements are all true exactly when every element of
    ``mask`` is, or None.  A mask built (through ``&``, broadcasts and expand_dims)
    from integer compares ``x < n`` / ``x >= lo`` ... where, by the analysis facts,
    one side is constant over the tile and the other is constant but along one axis,
    along which it increases by exactly one per step without wrapping (contiguity):
    the compare holds everywhere iff it holds at that axis's last (``<``, ``<=``) or
    first (``>``, ``>=``) element."""
    facts = getattr(ctx, "facts", None)
    if facts is None:
        return None
    for v, r in list(ctx.values.items()):
        if r is mask:
            tests = _tests_of(ctx, facts, v)
            if tests is not None:
                return tests
    return None


def _tests_of(ctx, facts, v):
    from ...ir import ops
    op = v.op
    if isinstance(op, ops.AndOp):
        a, c = _tests_of(ctx, facts, op.lhs), _tests_of(ctx, facts, op.rhs)
        return None if a is None or c is None else a + c
    if isinstance(op, (ops.BroadcastOp, ops.ExpandDimsOp)):
        return _tests_of(ctx, facts, op.src)
    if not isinstance(op, ops.CmpOp) or op.pred not in _ORDER or not v.type.shape:
        return None
    if op.lhs.type.element.kind not in ("int", "uint"):
        return None
    rep = ctx.values.get(v)
    if not isinstance(rep, Tile):
        return None
    shape = tuple(v.type.shape)
    up = _rising_axis(facts, op.lhs, shape)
    pred = op.pred
    if up is None or not _uniform(facts, op.rhs, shape):
        up = _rising_axis(facts, op.rhs, shape)          # n > x is x < n
        if up is None or not _uniform(facts, op.lhs, shape):
            return None
        pred = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[pred]
    idx = [0] * len(shape)
    if up >= 0 and pred in ("lt", "le"):
        idx[up] = shape[up] - 1
    return [(rep, tuple(idx))]


def _uniform(facts, v, shape) -> bool:
    k = facts.axis(v).constancy
    return len(k) == len(shape) and all(k[d] >= shape[d] for d in range(len(shape)))


def _rising_axis(facts, v, shape):
    """-1 when ``v`` is constant over the tile; ``d`` when it is constant along every
    other axis and contiguous (one run, no wrap) along ``d``; else None."""
    info = facts.axis(v)
    if len(info.constancy) != len(shape):
        return None
    varying = [d for d in range(len(shape)) if info.constancy[d] < shape[d]]
    if not varying:
        return -1
    if len(varying) == 1 and info.contiguity[varying[0]] >= shape[varying[0]]:
        return varying[0]
    return None
