"""Which dimension of a 2-D tile runs across neighbouring threads: the planner's choice of
dim-0-first layouts (layout.Layout ``dim0_first``) for tiles whose memory accesses run
along dim 0.

The blocked layout puts neighbouring threads on neighbouring elements of the last
dimension.  Where a tile's loads and stores move along dim 0 instead -- Inductor's
reductions over a non-last axis (``x.mean(0)``, ``x.amax(1)`` of a ``[B, N, C]`` tensor: a
``[XBLOCK, R0_BLOCK]`` tile whose XBLOCK elements are the contiguous ones, reduced over
its last axis), a column-major operand -- a warp's scalar access then spans 32 rows, one
sector each.  Triton's coalescing orders such a tile's dims by the pointer's contiguity
(``order = [0, 1]``); here a whole shape is given the dim-0-first layout when every
access of that shape (those in loops, where there are any) moves along dim 0 and does
not move along dim 1 -- or, for a transposing copy, when its loads do and its stores move
along dim 1 in vectors: those stores are then restaged row-major through shared memory.

"Moves along dim 0" is a fact about the pointer, from the analysis: :func:`runs` -- along
a dimension of ``n`` elements, the pointer is split into at most ``p`` pieces on each of
which it steps by exactly one element (``step`` 1) or is constant (``step`` 0).  The
analysis' contiguity ``c`` gives ``n / c`` pieces of step 1; its constancy, pieces of step
0; sums add steps and pieces; ``x % k`` and ``x // k`` by a constant ``k`` add at most
``n // k + 1`` breaks (``xindex % 513`` over 64 rows: two pieces, where the contiguity is 1
because a block may wrap).  A dimension whose pointer steps by one element in pieces of
:data:`MIN_RUN` elements on average or more (a warp's scalar access then spans at most
32 / MIN_RUN runs, not 32 rows), with longer runs than along dim 1, is the one the access
moves along.  The choice only places elements on threads: a wrong guess costs speed,
never correctness (every rule indexes elements through ``Lowering.elem_index``).
"""
from __future__ import annotations

import math

from ...analysis.access import element_bytes, plan_access
from ...ir import ops
from .layout import make_dim0_layout, make_layout
from .occupancy import in_loop
from .rules_memory import CUDA_ACCESS
from .rules_tiles import can_rematerialize

MIN_RUN = 2        # elements per piece (on average) for a dimension to count as contiguous
_DEPTH = 12        # definitions followed from a pointer at most


def runs(facts, v, d, depth=0):
    """``(step, pieces)`` of ``v`` along its dim ``d`` (see the module docstring), or
    None (no such description known)."""
    ty = v.type
    n = ty.shape[d]
    info = facts.axis(v)
    if info.constancy[d] >= n:
        return 0, 1
    c = info.contiguity[d]
    if c > 1:
        return 1, -(-n // c)
    op = v.op
    if op is None or depth > _DEPTH:
        return None
    if isinstance(op, (ops.AddOp, ops.AddPtrOp)):
        a, b = (runs(facts, x, d, depth + 1) for x in op.operands)
        if a is None or b is None or a[0] + b[0] > 1:
            return None
        return a[0] + b[0], a[1] + b[1] - 1
    if isinstance(op, ops.MulOp):
        for x, k in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            kv = _constant(facts, k)
            r = runs(facts, x, d, depth + 1)
            if kv is not None and r is not None and (r[0] == 0 or kv == 1):
                return r
            if kv == 0:
                return 0, 1
        return None
    if isinstance(op, (ops.RemOp, ops.IDivOp)):
        k = _constant(facts, op.rhs)
        r = runs(facts, op.lhs, d, depth + 1)
        if k is None or k <= 0 or r is None:
            return None
        pieces = r[1] + n // k + 1
        return (r[0] if isinstance(op, ops.RemOp) else 0), pieces
    if isinstance(op, ops.BroadcastOp):
        if op.src.type.shape[d] == 1:
            return 0, 1
        return runs(facts, op.src, d, depth + 1)
    if isinstance(op, ops.ExpandDimsOp):
        if d == op.axis:
            return 0, 1
        return runs(facts, op.src, d - (d > op.axis), depth + 1)
    if isinstance(op, (ops.CastOp, ops.HintOp)) and op.operands[0].type.shape == ty.shape:
        src = op.operands[0]
        if isinstance(op, ops.CastOp) and getattr(src.type.element, "bits", 64) < ty.element.bits:
            return None             # a narrower integer may wrap where the wider does not
        return runs(facts, src, d, depth + 1)
    return None


def _constant(facts, v):
    """The integer value of ``v`` when the analysis proves it one constant (else None)."""
    rng = facts.range(v)
    if rng is None or rng[0] != rng[1]:
        return None
    return int(rng[0])


def moves_along_dim0(facts, op) -> bool:
    """Whether the 2-D access ``op`` moves along dim 0: its pointer steps by one element
    along dim 0 in pieces of :data:`MIN_RUN` elements or more (on average), and along
    dim 1 it does not (no contiguity there)."""
    ptr = op.ptr
    R, C = ptr.type.shape
    if facts.axis(ptr).contiguity[1] > 1:
        return False
    r0 = runs(facts, ptr, 0)
    r1 = runs(facts, ptr, 1)
    if r0 is None or r0[0] != 1 or R < MIN_RUN * r0[1]:
        return False
    return r1 is None or r1[0] != 1 or C * r0[1] < R * r1[1]


def dim0_width(facts, op, max_lanes: int) -> int:
    """Elements per vector access of the 2-D access ``op`` along dim 0 in chunks of
    ``max_lanes`` (at most 16 bytes): its pointer contiguous along dim 0 over whole chunks
    (contiguity), each chunk's first address aligned to the access (divisibility), its
    mask one value over a chunk (constancy along dim 0); 1 otherwise."""
    size = element_bytes(op.ptr.type.element.element, CUDA_ACCESS)
    if size is None:
        return 1
    info = facts.axis(op.ptr)
    c, div = info.contiguity[0], info.divisibility[0]
    m = facts.axis(op.mask).constancy[0] if op.mask is not None else c
    w = min(max_lanes, c, max(1, 16 // size))
    while w > 1 and (c % w or m % w or div % (w * size) or op.ptr.type.shape[0] % w):
        w //= 2
    return w


def plan_dim0_layouts(lw):
    """``(layouts, restaged)``: {shape: dim-0-first Layout} for the 2-D shapes (both dims
    above 1) whose deciding accesses -- those in loops, where there are any -- all move
    along dim 0 (:func:`moves_along_dim0`), or all but stores that move along dim 1
    (a transposing copy: the loads decide); and {store: (row-major Layout, elements per
    access)} for those stores (:func:`_row_store`: restaged through shared memory).  The
    chunks along dim 0 are as wide as the widest vector access of a deciding access
    (:func:`dim0_width`; Triton's coalescing takes the widest too).  Nothing for kernels
    with ``tt.dot`` (their operand layouts are the dot paths'), without the analysis,
    under the sanitizer, or with ``CudaTuning.dim0_layouts`` off."""
    if lw.facts is None or lw.sanitize or not lw.vectorize or not lw.tuning.dim0_layouts:
        return {}, {}
    by_shape = {}
    for o in lw.func.walk():
        if isinstance(o, ops.DotOp):
            return {}, {}
        if isinstance(o, (ops.LoadOp, ops.StoreOp)):
            shape = o.ptr.type.shape
            if len(shape) == 2 and min(shape) > 1:
                by_shape.setdefault(shape, []).append(o)
    layouts, restaged = {}, {}
    for shape, accesses in by_shape.items():
        looped = [o for o in accesses if in_loop(o)]
        deciding = looped or accesses
        if math.prod(shape) < 32:
            continue
        along = [o for o in deciding if moves_along_dim0(lw.facts, o)]
        rows = {o: _row_store(lw, o) for o in deciding if o not in along}
        if not any(isinstance(o, ops.LoadOp) for o in along) and len(along) < len(deciding):
            continue                    # the loads do not move along dim 0: nothing to restage for
        if not along or any(r is None for r in rows.values()):
            continue
        vec = max(dim0_width(lw.facts, o, shape[0]) for o in along)
        layouts[shape] = make_dim0_layout(shape, lw.threads, vec)
        restaged.update(rows)
    return layouts, restaged


def _row_store(lw, op):
    """(row-major Layout, elements per access) when ``op`` is a store that moves along
    dim 1 in vectors of two elements or more and whose pointer and mask can be recomputed
    in that layout (rules_tiles.rematerialize); None otherwise (``CudaTuning.dim0_row_stores``
    off: always)."""
    if not isinstance(op, ops.StoreOp) or not lw.tuning.dim0_row_stores:
        return None
    size = element_bytes(op.ptr.type.element.element, CUDA_ACCESS)
    if size is None:
        return None
    lay = make_layout(op.ptr.type.shape, lw.threads, max(1, 16 // size))
    w = plan_access(lw.facts, op.ptr, op.mask, CUDA_ACCESS, max_lanes=lay.vec).width
    if w < 2 or not all(v is None or can_rematerialize(lw, v) for v in (op.ptr, op.mask)):
        return None
    return lay, w


__all__ = ["MIN_RUN", "dim0_width", "moves_along_dim0", "plan_dim0_layouts", "runs"]
