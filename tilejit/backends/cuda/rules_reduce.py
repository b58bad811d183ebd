"""Lowering rules for tt.reduce and tt.dot."""
from __future__ import annotations

from ...ir import ops
from ..llvm.capabilities import NVPTX
from ..llvm.reductions import identity
from . import types as T
from .lowering import RULES, Tile

_BIG = 2**31 - 1


def _identity(kind, el):
    return identity(kind, el, NVPTX)


def _is_nan(b, x):
    return b.fcmp_unordered("uno", x, x)


def combine(lw, kind, el, a, b_):
    """Combine two partial results; arg* partials are (value, index) pairs."""
    b = lw.b
    if kind == "sum":
        return b.fadd(a, b_) if T.is_float(el) else b.add(a, b_)
    if kind == "xor_sum":
        return b.xor(a, b_)
    if kind in ("max", "min"):
        if T.is_float(el):   # NaN is ignored (fmax/fmin), as the interpreter's reduce
            name = "llvm.maxnum" if kind == "max" else "llvm.minnum"
            return lw.call(f"{name}.{a.type.intrinsic_name}", a.type, [a, b_])
        pred = ">" if kind == "max" else "<"
        c = b.icmp_unsigned(pred, a, b_) if T.is_unsigned(el) else b.icmp_signed(pred, a, b_)
        return b.select(c, a, b_)
    (av, ai), (bv, bi) = a, b_
    pred = ">" if kind == "argmax" else "<"
    if T.is_float(el):      # NaNs were replaced by the identity on intake (arg_intake)
        better = b.fcmp_ordered(pred, bv, av)
        same = b.fcmp_ordered("==", bv, av)
    else:
        better = b.icmp_unsigned(pred, bv, av) if T.is_unsigned(el) else b.icmp_signed(pred, bv, av)
        same = b.icmp_unsigned("==", bv, av)
    take = b.or_(better, b.and_(same, b.icmp_signed("<", bi, ai)))
    return (b.select(take, bv, av), b.select(take, bi, ai))


def arg_intake(lw, kind, el, x):
    """argmax/argmin ignore NaN (unless all are NaN: then index 0), as the interpreter."""
    if not T.is_float(el) or kind not in ("argmax", "argmin"):
        return x
    return lw.b.select(_is_nan(lw.b, x), _identity(kind, el), x)


def _pick(lw, cond, x, y):
    if isinstance(x, tuple):
        return tuple(lw.b.select(cond, a, c) for a, c in zip(x, y))
    return lw.b.select(cond, x, y)


def _shfl(lw, x, m):
    if isinstance(x, tuple):
        return tuple(lw.shfl_xor(v, m) for v in x)
    return lw.shfl_xor(x, m)


def _reduce_all(lw, op, src: Tile, el):
    """Reduce every element of a 1-D tile to a scalar (uniform in all threads)."""
    kind, lay = op.kind, src.layout
    arg = kind in ("argmax", "argmin")
    ident = _identity(kind, el)
    acc = (ident, lw.i32(_BIG)) if arg else ident
    for s, v in enumerate(src.regs):
        x = (arg_intake(lw, kind, el, v), lw.elem_index(lay, s)) if arg else v
        y = combine(lw, kind, el, acc, x)
        own = lw.owned(lay, s)
        acc = y if own is None else _pick(lw, own, y, acc)
    m = 16
    while m >= 1:
        acc = combine(lw, kind, el, acc, _shfl(lw, acc, m))
        m //= 2
    if lw.num_warps > 1:
        acc = _across_warps(lw, kind, el, acc, arg)
    return acc[1] if arg else acc


def _across_warps(lw, kind, el, acc, arg):
    vals = acc if arg else (acc,)
    sizes = [T.mem_size(el)] + ([4] if arg else [])
    W = lw.num_warps
    base = lw.smem(W * sum(sizes) + 16)
    offs = [0, W * sizes[0]]
    _publish_per_warp(lw, base, vals, offs, sizes)
    level = []
    for w in range(W):
        parts = [_warp_value(lw, base, v, off, sz, w) for v, off, sz in zip(vals, offs, sizes)]
        level.append(tuple(parts) if arg else parts[0])
    return _pairwise(lw, kind, el, level)


def _pairwise(lw, kind, el, level):
    """The warps' values ``level`` combined pairwise: a chain log2(W) deep, not W
    (32 warps: 5, not 31).  One order for every reduction across warps, fused or not,
    so fusing siblings never changes a result's bits."""
    while len(level) > 1:
        pairs = [combine(lw, kind, el, level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = pairs + level[len(level) - len(level) % 2:]
    return level[0]


def _publish_per_warp(lw, base, vals, offs, sizes):
    """Lane 0 of each warp stores its ``vals`` at ``base + off + warp * size`` (one
    array per value), between two barriers."""
    lw.barrier()

    def write():
        for v, off, sz in zip(vals, offs, sizes):
            a = lw.smem_addr(base, lw.b.add(lw.i32(off), lw.b.mul(lw.warp, lw.i32(sz))))
            lw.b.store(_mem(lw, v), a).align = sz
    lw.guarded(lw.b.icmp_unsigned("==", lw.lane, lw.i32(0)), write)
    lw.barrier()


def _warp_value(lw, base, v, off, sz, w):
    """Warp ``w``'s published value of the array at ``off`` (typed like ``v``)."""
    x = lw.b.load(lw.smem_addr(base, lw.i32(off + w * sz)), typ=_mem(lw, v).type)
    x.align = sz
    return _reg(lw, x, v.type)


def _mem(lw, v):
    return lw.b.zext(v, T.I8) if v.type == T.I1 else v


def _reg(lw, v, ty):
    return lw.b.trunc(v, T.I1) if ty == T.I1 else v


def _row_lanes(op, lay):
    """Lanes sharing one row when reducing the last axis of an exact blocked tile whose
    rows are whole chunks spread over an aligned group of lanes (else None)."""
    sty = op.src.type
    K = sty.shape[-1]
    if (op.axis != len(sty.shape) - 1 or op.kind not in ("sum", "max", "min", "xor_sum")
            or sty.element.kind == "bool" or lay is None or not lay.exact or K % lay.vec
            or lay.dim0_first):
        return None
    lanes = K // lay.vec
    return lanes if lanes <= 32 and lanes & (lanes - 1) == 0 else None


def _reduce_rows(lw, op, src: Tile, el, lanes):
    """Last-axis reduction in registers: each thread combines its chunk, a butterfly over
    the row's lanes finishes the row, and the row's first lane publishes it."""
    kind, lay, K = op.kind, src.layout, op.src.type.shape[-1]
    mty, size = T.mem_type(el), T.mem_size(el)
    rows = []
    for r in range(lay.reps):
        acc = src.regs[r * lay.vec]
        for j in range(1, lay.vec):
            acc = combine(lw, kind, el, acc, src.regs[r * lay.vec + j])
        m = lanes // 2
        while m >= 1:
            acc = combine(lw, kind, el, acc, lw.shfl_xor(acc, m))
            m //= 2
        rows.append((lw.b.udiv(lw.elem_index(lay, r * lay.vec), lw.i32(K)), acc))
    nrow = op.result.type.numel
    base = lw.smem((nrow + lw.threads) * size)
    lw.barrier()
    # the row's first lane publishes it; the others write to a private junk slot (no branch)
    lead = lw.b.icmp_unsigned("==", lw.b.and_(lw.lane, lw.i32(lanes - 1)), lw.i32(0))
    junk = lw.b.add(lw.tid, lw.i32(nrow))
    for row, v in rows:
        idx = row if lanes == 1 else lw.b.select(lead, row, junk)
        lw.b.store(_mem(lw, v), lw.smem_addr(base, lw.b.mul(idx, lw.i32(size)))).align = size
    lw.barrier()
    out = lw.layout(op.result.type)
    regs = []
    for s in range(out.nslots):
        x = lw.b.load(lw.smem_addr(base, lw.b.mul(lw.elem_index(out, s), lw.i32(size))), typ=mty)
        x.align = size
        regs.append(_reg(lw, x, T.llvm_type(el)))
    return Tile(regs, out)


# ``CudaTuning.row_butterflies`` (Inductor's ``[XBLOCK, R0_BLOCK]`` reductions over axis 1): a block of one
# row is reduced like a 1-D tile (_reduce_all, siblings fused: _whole in _reduce), rows spanning whole warps by _reduce_wide_rows; OFF, both
# take the general path below (every output slot walks its staged row: 2048 shared-memory loads per thread
# and reduction for Inductor's softmax at XBLOCK=1, R0_BLOCK=2048, 16 warps: the PTX of the row that ran at
# 0.02x Triton on an H200, 2026-12-03; A/B: bench/bench_corpus_cuda.py --only inductor_softmax, with and
# without TILEJIT_CUDA_TUNING=row_butterflies=0).
# PTX tests: tests/unit/test_cuda_ptx_row_reduce.py; e2e: tests/e2e/test_row_block_reductions.py.
def _wide_row_lanes(op, lay):
    """Lanes sharing one row when reducing the last axis of an exact blocked tile whose
    rows are whole chunks spread over whole warps (a multiple of 32 lanes; else None)."""
    sty = op.src.type
    K = sty.shape[-1]
    if (op.axis != len(sty.shape) - 1 or sty.element.kind == "bool"
            or lay is None or not lay.exact or K % lay.vec or lay.dim0_first):
        return None
    lanes = K // lay.vec
    return lanes if lanes > 32 and lanes % 32 == 0 else None


def _warp_units(lw, op, src: Tile, el, rpr):
    """Per (row piece, warp) partials: each thread combines the ``rpr`` repetitions of its
    chunk that lie in one row, then a butterfly over the warp (arg*: (value, index in the
    row) pairs, the lower index winning ties, so the order does not matter)."""
    kind, lay = op.kind, src.layout
    arg = kind in ("argmax", "argmin")
    K = op.src.type.shape[-1]
    span = rpr * lay.vec
    units = []
    for q in range(lay.reps // rpr):
        acc = None
        for s in range(q * span, (q + 1) * span):
            x = src.regs[s]
            if arg:
                x = (arg_intake(lw, kind, el, x), lw.b.urem(lw.elem_index(lay, s), lw.i32(K)))
            acc = x if acc is None else combine(lw, kind, el, acc, x)
        for m in (16, 8, 4, 2, 1):
            acc = combine(lw, kind, el, acc, _shfl(lw, acc, m))
        units.append(acc if arg else (acc,))
    return units


def _reduce_wide_rows(lw, op, src: Tile, el, lanes):
    """Last-axis reduction of rows spanning whole warps: :func:`_warp_units` (a thread's
    chunks of one row combined when a row covers whole repetitions of the block), lane 0
    of each warp publishes its partials, and every output slot combines its row's ``G``
    partials in warp order."""
    kind, lay = op.kind, src.layout
    arg = kind in ("argmax", "argmin")
    W = lay.threads // 32
    rpr = lanes // lay.threads if lanes % lay.threads == 0 else 1
    units = _warp_units(lw, op, src, el, rpr)
    G = lanes // 32 // rpr                       # partials per row
    n = op.result.type.numel * G
    sizes = [T.mem_size(el)] + ([4] if arg else [])
    offs = [0, (n * sizes[0] + 7) // 8 * 8]
    base = lw.smem(offs[1] + n * 4 if arg else n * sizes[0])
    lw.barrier()

    def write():
        for q, vals in enumerate(units):
            idx = lw.b.add(lw.i32(q * W), lw.warp)
            for v, off, sz in zip(vals, offs, sizes):
                a = lw.smem_addr(base, lw.b.add(lw.i32(off), lw.b.mul(idx, lw.i32(sz))))
                lw.b.store(_mem(lw, v), a).align = sz
    lw.guarded(lw.b.icmp_unsigned("==", lw.lane, lw.i32(0)), write)
    lw.barrier()
    out = lw.layout(op.result.type)
    regs = []
    for s in range(out.nslots):
        first = lw.b.mul(lw.elem_index(out, s), lw.i32(G))
        acc = None
        for i in range(G):          # unrolled: G = lanes / 32 below a block, else its warps
            at = lw.b.add(first, lw.i32(i))
            parts = []
            for v, off, sz in zip(units[0], offs, sizes):
                x = lw.b.load(lw.smem_addr(base, lw.b.add(lw.i32(off), lw.b.mul(at, lw.i32(sz)))),
                              typ=_mem(lw, v).type)
                x.align = sz
                parts.append(_reg(lw, x, v.type))
            x = tuple(parts) if arg else parts[0]
            acc = x if acc is None else combine(lw, kind, el, acc, x)
        regs.append(acc[1] if arg else acc)
    return Tile(regs, out)


def _dim0_groups(op, lay):
    """(L, P) when reducing the last axis of a 2-D dim-0-first tile (layout.py) whose
    threads cover whole columns: ``L = R / vec`` chunks per column, ``T % L == 0``, so
    every repetition of a thread holds the same ``vec`` rows and ``P`` threads (or, for
    ``L < 32``, warps after a butterfly over the lanes of one row) hold a partial of each
    row (else None)."""
    sty = op.src.type
    if (lay is None or not lay.dim0_first or len(sty.shape) != 2 or op.axis != 1 or not lay.exact
            or op.kind not in ("sum", "max", "min", "xor_sum")):
        return None
    L = sty.shape[0] // lay.vec
    if lay.threads % L or L & (L - 1):
        return None
    return L, (lay.threads // L if L >= 32 else lay.threads // 32)


def _reduce_dim0_rows(lw, op, src: Tile, el, L, P):
    """Last-axis reduction of a dim-0-first tile (:func:`_dim0_groups`): each thread
    combines its repetitions (one row per slot of a chunk), a butterfly over the lanes
    holding the same rows (``L < 32``), then the ``P`` partials of each row through shared
    memory, combined in order by every output slot."""
    kind, lay = op.kind, src.layout
    R, V = op.src.type.shape[0], lay.vec
    accs = []
    for j in range(V):
        acc = src.regs[j]
        for r in range(1, lay.reps):
            acc = combine(lw, kind, el, acc, src.regs[r * V + j])
        m = L
        while m < 32:
            acc = combine(lw, kind, el, acc, lw.shfl_xor(acc, m))
            m *= 2
        accs.append(acc)
    out = lw.layout(op.result.type)
    mty, size = T.mem_type(el), T.mem_size(el)
    base = lw.smem(P * R * size)
    lw.barrier()
    part = lw.b.udiv(lw.tid, lw.i32(L)) if L >= 32 else lw.warp
    row0 = lw.b.mul(lw.b.urem(lw.tid, lw.i32(L)), lw.i32(V))
    first = lw.b.add(lw.b.mul(part, lw.i32(R)), row0)

    def write():
        for j, v in enumerate(accs):
            a = lw.smem_addr(base, lw.b.mul(lw.b.add(first, lw.i32(j)), lw.i32(size)))
            lw.b.store(_mem(lw, v), a).align = size
    lw.guarded(None if L >= 32 else lw.b.icmp_unsigned("<", lw.lane, lw.i32(L)), write)
    lw.barrier()
    regs = []
    for s in range(out.nslots):
        i = lw.elem_index(out, s)
        level = []
        for p in range(P):
            x = lw.b.load(lw.smem_addr(base, lw.b.mul(lw.b.add(i, lw.i32(p * R)), lw.i32(size))), typ=mty)
            x.align = size
            level.append(_reg(lw, x, T.llvm_type(el)))
        regs.append(_pairwise(lw, kind, el, level))
    return Tile(regs, out)


def reduce_strategy(lw, op, lay):
    """How ``op`` (a tt.reduce of a tile in layout ``lay``) is lowered: ``(strategy, lanes)``
    with strategy 'whole block' (_reduce_all, siblings fused), 'row lanes' (_reduce_rows:
    ``lanes`` lanes per row), 'wide rows' (_reduce_wide_rows), 'dim-0 rows'
    (_reduce_dim0_rows: a dim-0-first tile, layout.py) or 'general' (through shared memory)
    -- the planner's decision (plan.py: ``lw.plan.reductions``)."""
    if _whole(lw, op):
        return "whole block", None
    lanes = _row_lanes(op, lay)
    if lanes is not None:
        return "row lanes", lanes
    lanes = _wide_row_lanes(op, lay) if lw.tuning.row_butterflies else None
    if lanes is not None:
        return "wide rows", lanes
    if _dim0_groups(op, lay) is not None:
        return "dim-0 rows", None
    return "general", None


def _reduce_axis(lw, op, src: Tile, el, how):
    """Reduction over one axis: the planned strategy ``how`` (reduce_strategy); the
    general one through shared memory."""
    sty, rty, axis, kind = op.src.type, op.result.type, op.axis, op.kind
    strategy, lanes = how
    if strategy == "row lanes":
        return _reduce_rows(lw, op, src, el, lanes)
    if strategy == "wide rows":
        return _reduce_wide_rows(lw, op, src, el, lanes)
    if strategy == "dim-0 rows":
        return _reduce_dim0_rows(lw, op, src, el, *_dim0_groups(op, src.layout))
    arg = kind in ("argmax", "argmin")
    mty, size = T.mem_type(el), T.mem_size(el)
    K = sty.shape[axis]
    inner = 1
    for d in sty.shape[axis + 1:]:
        inner *= d
    base = lw.smem(sty.numel * size)
    lw.barrier()
    for s, v in enumerate(src.regs):
        a = lw.smem_addr(base, lw.b.mul(lw.elem_index(src.layout, s), lw.i32(size)))
        lw.b.store(_mem(lw, v), a).align = size
    lw.barrier()
    lay = lw.layout(rty)
    n = 1 if lay is None else lay.nslots
    regs = []
    for s in range(n):
        e = lw.i32(0) if lay is None else lw.elem_index(lay, s)
        outer, inn = lw.b.udiv(e, lw.i32(inner)), lw.b.urem(e, lw.i32(inner))
        start = lw.b.add(lw.b.mul(outer, lw.i32(K * inner)), inn)
        ident = _identity(kind, el)
        init = [ident, lw.i32(_BIG)] if arg else [ident]

        def body(k, vals, start=start):
            off = lw.b.add(start, lw.b.mul(k, lw.i32(inner)))
            x = lw.b.load(lw.smem_addr(base, lw.b.mul(off, lw.i32(size))), typ=mty)
            x.align = size
            x = arg_intake(lw, kind, el, _reg(lw, x, T.llvm_type(el)))
            r = combine(lw, kind, el, tuple(vals) if arg else vals[0], (x, k) if arg else x)
            return list(r) if arg else [r]
        res = lw.counted_loop(K, body, init)
        regs.append(res[1] if arg else res[0])
    return Tile(regs, lay)


@RULES.register(ops.ReduceOp)
def _reduce(lw, op):
    src = lw.get(op.src)
    el = op.src.type.element
    if src.layout is None:
        raise NotImplementedError("tt.reduce of a scalar")
    lay, how = lw.plan.reductions.get(op, (None, None))     # planned for ``lay`` (plan.py)
    if how is None or src.layout != lay:        # arrived in another layout than planned for:
        how = ("whole block", None) if _whole(lw, op) else ("general", None)   # no lane groups
    if how[0] == "whole block":
        sibs = _lowered_siblings(lw, op, src)
        if sibs:
            outs = _reduce_all_fused(lw, [op] + sibs)
            for o, r in zip(sibs, outs[1:]):
                lw.deferred[o] = None           # lowered here (lower_op skips it)
                lw.values[o.result] = _whole_tile(lw, o, r)
            return [_whole_tile(lw, op, outs[0])]
        return [_whole_tile(lw, op, _reduce_all(lw, op, src, el))]
    return [_reduce_axis(lw, op, src, el, how)]


def _whole(lw, op):
    """``op`` reduces its whole block: a 1-D tile, or (``CudaTuning.row_butterflies``) one
    whose other dims are all 1 (Inductor's ``XBLOCK = 1`` rows)."""
    return len(op.src.type.shape) == 1 or (lw.tuning.row_butterflies and op.result.type.numel == 1)


def _whole_tile(lw, op, r):
    """The result of a whole-block reduction: a scalar, or ``r`` in every slot of the
    one-element result tile."""
    lay = lw.layout(op.result.type)
    return Tile([r] * (1 if lay is None else lay.nslots), lay)


# Full reductions of one block whose inputs are all ready are done together: the
# per-thread and in-warp steps of each, then one exchange across warps (one barrier
# pair) for all of them.  Each result is combined in the same order as alone.
# ``CudaTuning.fuse_siblings``: ON since an H200 run: tests/e2e/test_fused_reductions.py passed (bit-identical
# to the reductions one by one) and tutorial 05's LN backward dx was not slower (0.1124 -> 0.1117 ms, within
# noise: that kernel is bandwidth-bound); it issues fewer barriers (five sums: 10 -> 2) and fewer
# conversions (LN dx: 64 fewer cvt).  PTX tests: tests/unit/test_cuda_ptx_remat.py.
_FUSABLE = ("sum", "max", "min", "xor_sum")


def plan_siblings(lw, reductions, region, taken) -> dict:
    """The planner's fusion of full reductions (plan.py: ``lw.plan.fused``): {tt.reduce:
    (later full reductions of its block lowered with it, in program order)}.  A sibling is
    a later 'whole block' reduction of the same block and planned layout whose input is
    defined before the first one, up to the first op with regions or side effects; none
    of them in a row region.  ``reductions``: plan.reductions; ``taken``: ops already
    fused into an earlier group (filled here)."""
    out = {}
    if not lw.tuning.fuse_siblings:
        return out
    order = {o: i for i, o in enumerate(lw.func.walk())}
    for op, (lay, how) in reductions.items():
        if op in taken or how[0] != "whole block" or not _fusable(op, region):
            continue
        block = op.parent
        sibs = []
        for o in block.ops[block.ops.index(op) + 1:]:
            if o.regions or o.has_trait("side_effect") or o.has_trait("writes_memory"):
                break
            if (not isinstance(o, ops.ReduceOp) or o in taken or not _fusable(o, region)
                    or reductions.get(o, (None, ("",)))[1][0] != "whole block"
                    or reductions[o][0] != lay or not _defined_before(lw, o.src, op, order)):
                continue
            sibs.append(o)
        if sibs:
            out[op] = tuple(sibs)
            taken.update(sibs)
    return out


def _fusable(op, region):
    return op.kind in _FUSABLE and op.parent is not None and op not in region


def _defined_before(lw, v, op, order):
    """``v`` is lowered before ``op``: an argument, or the result of an earlier op that
    its consumer does not lower itself (``lw.deferred``)."""
    d = v.op
    return d is None or (d in order and order[d] < order[op] and d not in lw.deferred)


def _lowered_siblings(lw, op, src):
    """``op``'s planned siblings (``lw.plan.fused``), each input made again first when
    remat.py recomputes it; one whose tile arrived in another layout than ``src``'s (an
    mma accumulator) is reduced on its own."""
    out = []
    for o in lw.plan.fused.get(op, ()):
        if lw.remat is not None:
            lw.remat.before(o)          # its input made again if it is stale (remat.py)
        t = lw.values[o.src]
        if t.layout == src.layout and len(t.regs) == len(src.regs):
            out.append(o)
    return out


def _reduce_all_fused(lw, rops):
    """:func:`_reduce_all` of several reductions of one layout at once."""
    srcs = [lw.get(o.src) for o in rops]
    els = [o.src.type.element for o in rops]
    lay = srcs[0].layout
    accs = []
    for o, src, el in zip(rops, srcs, els):
        acc = _identity(o.kind, el)
        for s, v in enumerate(src.regs):
            y = combine(lw, o.kind, el, acc, v)
            own = lw.owned(lay, s)
            acc = y if own is None else _pick(lw, own, y, acc)
        accs.append(acc)
    m = 16
    while m >= 1:
        accs = [combine(lw, o.kind, el, a, _shfl(lw, a, m)) for o, el, a in zip(rops, els, accs)]
        m //= 2
    if lw.num_warps == 1:
        return accs
    W = lw.num_warps
    sizes = [T.mem_size(el) for el in els]
    offs, at = [], 0
    for sz in sizes:
        offs.append(at)
        at += (W * sz + 7) // 8 * 8
    base = lw.smem(at + 16)
    _publish_per_warp(lw, base, accs, offs, sizes)
    outs = []
    for o, el, v, off, sz in zip(rops, els, accs, offs, sizes):
        level = [_warp_value(lw, base, v, off, sz, w) for w in range(W)]
        outs.append(_pairwise(lw, o.kind, el, level))
    return outs


@RULES.register(ops.DotOp)
def _dot(lw, op):
    """acc + a @ b: a and b go to shared memory; each thread computes its acc slots
    with fp32 (or integer) multiply-adds."""
    from .rules_elementwise import cast_value
    from .rules_mma import lower_dot_mma, lower_dot_mma_half_acc
    ml = lw.plan.dots[op]               # mma.sync layout, or None (plan.py)
    if ml is not None:
        return [lower_dot_mma(lw, op, ml)]
    half = lw.plan.half_acc.get(op)     # fp16/bf16 accumulator on mma (plan.py)
    if half is not None:
        return [lower_dot_mma_half_acc(lw, op, half)]
    a, b_, acc = lw.get(op.a), lw.get(op.b), lw.get(op.acc)
    (M, K), (_, N) = op.a.type.shape, op.b.type.shape
    ael, bel, cel = op.a.type.element, op.b.type.element, op.acc.type.element
    asz, bsz = T.mem_size(ael), T.mem_size(bel)
    boff = (M * K * asz + 15) // 16 * 16
    base = lw.smem(boff + K * N * bsz)
    lw.barrier()
    for tile, el, sz, off in ((a, ael, asz, 0), (b_, bel, bsz, boff)):
        for s, v in enumerate(tile.regs):
            e = lw.elem_index(tile.layout, s)
            addr = lw.smem_addr(base, lw.b.add(lw.i32(off), lw.b.mul(e, lw.i32(sz))))
            lw.b.store(v, addr).align = sz
    lw.barrier()
    lay = acc.layout
    rows, cols = [], []
    for s in range(lay.nslots):
        i, j = lw.multi_index((M, N), lw.elem_index(lay, s))
        rows.append(lw.b.mul(i, lw.i32(K * asz)))
        cols.append(lw.b.add(lw.i32(boff), lw.b.mul(j, lw.i32(bsz))))
    work = cel if T.is_float(cel) and cel.bits >= 32 else cel
    fl = T.is_float(cel)
    if fl and cel.bits < 32:
        from ...ir.types import float32 as work
    init = [cast_value(lw, v, cel, work) for v in acc.regs]

    def body(k, vals):
        out = []
        ka, kb = lw.b.mul(k, lw.i32(asz)), lw.b.mul(k, lw.i32(N * bsz))
        for s, v in enumerate(vals):
            x = lw.b.load(lw.smem_addr(base, lw.b.add(rows[s], ka)), typ=T.llvm_type(ael))
            y = lw.b.load(lw.smem_addr(base, lw.b.add(cols[s], kb)), typ=T.llvm_type(bel))
            x, y = cast_value(lw, x, ael, work), cast_value(lw, y, bel, work)
            if fl:
                out.append(lw.call(f"llvm.fma.{x.type.intrinsic_name}", x.type, [x, y, v]))
            else:
                out.append(lw.b.add(v, lw.b.mul(x, y)))
        return out
    res = lw.counted_loop(K, body, init)
    return [Tile([cast_value(lw, v, work, cel) for v in res], lay)]
