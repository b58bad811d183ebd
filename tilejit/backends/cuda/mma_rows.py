"""Row regions of a dot loop kept in the mma accumulator layout (register path).

Fused attention's loop computes ``qk = dot(q, k)``, then a row softmax (``max`` and
``sum`` over the last axis, elementwise math with row vectors broadcast along it),
then ``dot(p, v, acc * alpha[:, None])``.  Lowered tile by tile, every step between
the two dots left the mma layout (shared-memory round trips and barriers).  Here the
dots of such a loop use the warp layout ``wm = num_warps, wn = 1`` (one warp owns
whole rows: 16 * mt of them), and the ops between them stay in registers:

* 2-D tiles (M, N') in :class:`~.rules_mma.MmaLayout` ``((M, N'), W, 1)``;
* row vectors (M,) / (M, 1) in :class:`RowLayout`: each thread holds its rows
  ``warp * M/W + lane/4 + 16 mi + 8 h`` (slot ``2 mi + h``), replicated over the quad;
* elementwise ops work slot by slot (the generic rules, with the operands bound to
  their region tiles); ``broadcast(expand_dims(row, 1))`` is free (register reuse);
  a last-axis reduction combines the thread's slots of a row, then the quad with two
  butterfly shuffles (no shared memory, no barrier);
* a dot whose A operand is a region tile takes its fragments from registers (the
  accumulator fragment of m16n8 is the A fragment of m16k16); a loop-invariant A
  (``q``) is read into fragments once, before the loop (rules_mma).

Loop-carried row vectors (``m_i``, ``l_i``) stay in RowLayout across iterations.
Any other consumer reads a region value through ``Lowering.get``, which converts it
to the blocked layout: the region is an optimisation only, never a requirement.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...ir import ops
from . import types as T
from .lowering import RULES, Tile


# A row-region loop has registers to spare (attention: 166 -> 205 with K held): its
# strided (scalar) computed-pointer loads are rotated a tile ahead too (rules_control;
# ``CudaTuning.rotate_scalar_loads``, runtime/options.py, as are the switches below).
# Such a load feeding only region dots as B, contiguous along the dot's K, is loaded
# transposed in vectors and staged K-major (kmajor_width).  ON since an H200 run
# (bench/attn_rows_variants.py, tutorial 06 Z4 H32 N4096 D64: 5.10 -> 3.06 ms, causal
# 2.90 -> 1.94 ms; tests/e2e/test_attention_rows.py covers it switched on and off):
# ``kmajor_b``.  (Staging all B operands together at the top of the body, one barrier pair
# per iteration, was correct but slower on the H200 -- 3.56 against 3.06 ms non-causal --
# and was deleted.)
# 2-D integer / boolean values built from aranges, splats and constants (causal masks)
# join the region, computed at each slot's (row, column) (mma_index.py): ``index_tiles``.
# ON since an H200 run (bench/attn_rows_variants.py "index tiles" against "wgmma": tutorial
# 06 causal 1.352 -> 1.147 ms, its band loop now in rows_ring's ring and the kernel under
# the register cap; non-causal 1.984 -> 1.964 ms; same max error; the cuda e2e tests of
# tests/e2e/test_attention_rows.py passed with it on).


@dataclass(frozen=True)
class RowLayout:
    """A row vector (shape (M,) or (M, 1)) held by the mma warp layout ``wm x 1``."""
    shape: tuple
    wm: int

    @property
    def mt(self):
        return self.shape[0] // (16 * self.wm)

    @property
    def nslots(self):
        return 2 * self.mt

    vec = 1     # as MmaLayout: no runs of contiguous elements in a thread's slots


@dataclass
class RowPlan:
    wm: int
    M: int
    ops: set          # ops lowered by lower_region
    rows: dict        # {iter position: RowLayout} of carried row vectors
    hoist: list       # dots whose A operand is loop-invariant (fragments read before the loop)
    forced: list      # the loop's dots (their layout recorded in lw.forced_ml)


def _mma_layout(shape, wm):
    from .rules_mma import MmaLayout
    return MmaLayout(tuple(shape), wm, 1)


def _dot_fits(lw, d, M, W):
    ael, bel, cel = d.a.type.element, d.b.type.element, d.acc.type.element
    (m, k), (_, n) = d.a.type.shape, d.b.type.shape
    return (ael == bel and ael.name in ("fp16", "bf16") and cel.name == "fp32" and m == M
            and k % 16 == 0 and n % 16 == 0)


def _uniform(x):
    o = x.op
    return isinstance(o, (ops.SplatOp, ops.ConstantOp)) and bool(x.type.shape)


def _propagate(body, M, seeds, index_tiles=False):
    """(kinds, marked ops): kind 'T' (M, N') mma tile, 'R' (M,) row, 'R1' (M, 1) row;
    ``index_tiles``: ``CudaTuning.index_tiles``."""
    kinds = dict(seeds)
    marked = set()

    def kind(x):
        return kinds.get(x) or ("U" if _uniform(x) else None)
    from .mma_index import is_index
    memo, users = {}, {}
    for o in body.walk():
        for x in o.operands:
            users.setdefault(x, []).append(o)
    for o in body.ops:
        if o.regions or not o.results:
            continue
        r = o.results[0]
        shape = tuple(r.type.shape)
        if (index_tiles and not isinstance(o, ops.DotOp) and len(shape) == 2 and shape[0] == M
                and shape[1] % 8 == 0 and is_index(r, memo)
                and all(isinstance(u, ops.ElementwiseOp) and not isinstance(u, ops.AddPtrOp)
                        for u in users.get(r, []))):
            kinds[r] = "T"          # evaluated at the mma layout's coordinates (mma_index)
            marked.add(o)
            continue
        if isinstance(o, ops.DotOp):
            kinds[r] = "T"          # lowered by the dot rule, in the (forced) mma layout
        elif isinstance(o, ops.ElementwiseOp) and not isinstance(o, ops.AddPtrOp):
            ks = [kind(x) for x in o.operands]
            if any(x.type.element.is_ptr() for x in list(o.operands) + [r]):
                continue
            want = ("T" if len(shape) == 2 and shape[0] == M and shape[1] % 8 == 0 and shape != (M, 1)
                    else "R" if shape == (M,) else "R1" if shape == (M, 1) else None)
            if want and want in ks and all(k in (want, "U") for k in ks):
                kinds[r] = want
                marked.add(o)
        elif isinstance(o, ops.ExpandDimsOp) and o.attrs.get("axis") == 1 and kind(o.src) == "R":
            kinds[r] = "R1"
            marked.add(o)
        elif (isinstance(o, ops.BroadcastOp) and kind(o.src) == "R1" and len(shape) == 2
              and shape[1] % 8 == 0):
            kinds[r] = "T"
            marked.add(o)
        elif (isinstance(o, ops.ReduceOp) and kind(o.src) == "T" and o.axis == 1
              and o.kind in ("sum", "max", "min") and o.src.type.element.kind != "bool"):
            kinds[r] = "R"
            marked.add(o)
    return kinds, marked


def plan_rows(lw, for_op):
    """The :class:`RowPlan` of ``for_op`` (register path), or None.  Records the forced
    ``wm = num_warps, wn = 1`` layout of the loop's dots in ``lw.forced_ml``."""
    from .rules_mma import row_scaled_acc
    W = lw.num_warps
    body = for_op.body
    term = body.terminator
    if lw.arch < 80 or term is None:
        return None
    dots = [o for o in body.ops if isinstance(o, ops.DotOp)]
    if not dots:
        return None
    M = dots[0].a.type.shape[0]
    if M % (16 * W) or not all(_dot_fits(lw, d, M, W) for d in dots):
        return None
    seeds = {}
    for i, v in enumerate(term.values):
        arg = body.args[i + 1]
        d = v.op
        if isinstance(d, ops.DotOp) and d in dots and (d.acc is arg or row_scaled_acc(for_op, d.acc, arg)):
            seeds[arg] = "T"
    cand = {i: a for i, a in enumerate(body.args[1:]) if tuple(a.type.shape) == (M,)
            and not a.type.element.is_ptr()}
    while True:
        kinds, marked = _propagate(body, M, {**seeds, **{a: "R" for a in cand.values()}},
                                    lw.tuning.index_tiles)
        bad = [i for i in cand if kinds.get(term.values[i]) != "R"]
        if not bad:
            break
        for i in bad:
            del cand[i]
    useful = any(isinstance(o, ops.ReduceOp) for o in marked) or any(kinds.get(d.a) == "T" for d in dots)
    if not useful:
        return None
    body_vals = {r for o in body.walk() for r in o.results} | set(body.args)
    hoist = [d for d in dots if d.a not in body_vals]
    forced = lw.forced_ml
    for d in dots:
        forced[d] = _mma_layout(d.acc.type.shape, W)
    return RowPlan(W, M, marked, {i: RowLayout((M,), W) for i in cand}, hoist, dots)


# ---- per-thread coordinates and conversions ------------------------------------------
def row_of(lw, lay, slot):
    """i32 row index held in ``slot`` of a RowLayout (or of an mma tile's fragment)."""
    b = lw.b
    M = lay.shape[0]
    mi, h = divmod(slot, 2)
    r0 = b.add(b.mul(lw.warp, lw.i32(M // lay.wm)), b.lshr(lw.lane, lw.i32(2)))
    return b.add(r0, lw.i32(mi * 16 + h * 8))


def rows_to_flat(lw, tile: Tile) -> Tile:
    """A RowLayout tile in the blocked layout of its shape (through shared memory)."""
    from .rules_reduce import _mem, _reg
    lay = tile.layout
    M = lay.shape[0]
    el_ty = tile.regs[0].type
    size = 1 if el_ty == T.I1 else _bytes(el_ty)
    mty = T.I8 if el_ty == T.I1 else el_ty
    base = lw.smem((M + lw.threads) * size)
    lw.barrier()
    lead = lw.b.icmp_unsigned("==", lw.b.and_(lw.lane, lw.i32(3)), lw.i32(0))
    junk = lw.b.add(lw.tid, lw.i32(M))
    for s, v in enumerate(tile.regs):
        idx = lw.b.select(lead, row_of(lw, lay, s), junk)
        lw.b.store(_mem(lw, v), lw.smem_addr(base, lw.b.mul(idx, lw.i32(size)))).align = size
    lw.barrier()
    out = lw.layout(lay.shape)
    regs = []
    for s in range(out.nslots):
        x = lw.b.load(lw.smem_addr(base, lw.b.mul(lw.elem_index(out, s), lw.i32(size))), typ=mty)
        x.align = size
        regs.append(_reg(lw, x, el_ty))
    return Tile(regs, out)


def to_rows(lw, tile: Tile, lay: RowLayout) -> Tile:
    """A tile of shape (M,) or (M, 1) in ``lay`` (through shared memory if needed)."""
    from .rules_reduce import _mem, _reg
    if tile.layout == lay:
        return tile
    if tile.layout is None or all(isinstance(r, ir.Constant) and str(r) == str(tile.regs[0])
                                  for r in tile.regs):
        return Tile([tile.regs[0]] * lay.nslots, lay)
    if isinstance(tile.layout, RowLayout):
        return Tile(tile.regs, lay)
    from .rules_mma import to_flat
    tile = to_flat(lw, tile)
    el_ty = tile.regs[0].type
    mty = T.I8 if el_ty == T.I1 else el_ty
    size = 1 if el_ty == T.I1 else _bytes(el_ty)
    M = lay.shape[0]
    base = lw.smem(M * size)
    lw.barrier()
    for s, v in enumerate(tile.regs):      # replicated copies write equal values
        a = lw.smem_addr(base, lw.b.mul(lw.elem_index(tile.layout, s), lw.i32(size)))
        lw.b.store(_mem(lw, v), a).align = size
    lw.barrier()
    regs = []
    for s in range(lay.nslots):
        x = lw.b.load(lw.smem_addr(base, lw.b.mul(row_of(lw, lay, s), lw.i32(size))), typ=mty)
        x.align = size
        regs.append(_reg(lw, x, el_ty))
    return Tile(regs, lay)


def _bytes(ty):
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    return {T.F16: 2, T.BF16: 2, T.F32: 4, T.F64: 8}[ty]


# ---- region rules ----------------------------------------------------------------------
def _layout_for(lw, value):
    shape = tuple(value.type.shape)
    wm = lw.num_warps
    if len(shape) == 1 or shape[1:] == (1,):
        return RowLayout(shape, wm)
    return _mma_layout(shape, wm)


def region_tile(lw, x, lay) -> Tile:
    """Operand ``x`` in the region layout ``lay`` (uniform values replicated; anything
    else converted, which is correct but slow: the plan avoids it)."""
    from .rules_mma import to_mma
    t = lw.values[x]
    if t.layout == lay:
        return t
    o = x.op
    if isinstance(o, ops.SplatOp):
        return Tile([lw.get(o.src).scalar] * lay.nslots, lay)
    if isinstance(o, ops.ConstantOp):
        return Tile([T.const(x.type.element, o.value)] * lay.nslots, lay)
    if isinstance(lay, RowLayout):
        return to_rows(lw, t, lay)
    return to_mma(lw, t, lay)


def lower_region(lw, op):
    """Lower a region op of a :class:`RowPlan` in the mma / row layouts."""
    lay = _layout_for(lw, op.results[0])
    if lw.tuning.index_tiles and not isinstance(lay, RowLayout):
        from .mma_index import index_tile, is_index
        if is_index(op.results[0]):
            return [index_tile(lw, op.results[0], lay)]
    if isinstance(op, ops.ExpandDimsOp):
        src = region_tile(lw, op.src, RowLayout(tuple(op.src.type.shape), lay.wm))
        return [Tile(src.regs, lay)]
    if isinstance(op, ops.BroadcastOp):
        src = region_tile(lw, op.src, RowLayout(tuple(op.src.type.shape), lay.wm))
        return [Tile([src.regs[mi * 2 + (c >= 2)] for mi in range(lay.mt) for _ in range(lay.nt)
                      for c in range(4)], lay)]
    if isinstance(op, ops.ReduceOp):
        return [_reduce(lw, op, region_tile(lw, op.src, _mma_layout(op.src.type.shape, lay.wm)), lay)]
    keys = list(op.operands)
    saved = {k: lw.values[k] for k in keys}
    tiles = [region_tile(lw, x, lay) for x in keys]
    for x, t in zip(keys, tiles):
        lw.values[x] = t
    lw.keep_layout = True
    try:
        out = RULES.lookup(type(op))(lw, op)
    finally:
        lw.keep_layout = False
        for k, t in saved.items():
            lw.values[k] = t
    return out


def _tree(lw, kind, el, vals):
    from .rules_reduce import combine
    while len(vals) > 1:
        nxt = [combine(lw, kind, el, vals[i], vals[i + 1]) for i in range(0, len(vals) - 1, 2)]
        vals = nxt + ([vals[-1]] if len(vals) % 2 else [])
    return vals[0]


def _reduce(lw, op, src: Tile, lay: RowLayout) -> Tile:
    """Last-axis reduction of an mma tile (wn = 1): a thread's values of a row, then
    the quad (lanes 4g .. 4g+3 hold row g) by two butterfly shuffles."""
    from .rules_reduce import combine
    ml = src.layout
    el = op.src.type.element
    out = []
    for mi in range(ml.mt):
        for h in range(2):
            vals = [src.regs[(mi * ml.nt + ni) * 4 + 2 * h + j] for ni in range(ml.nt) for j in range(2)]
            acc = _tree(lw, op.kind, el, vals)
            for m in (1, 2):
                acc = combine(lw, op.kind, el, acc, lw.shfl_xor(acc, m))
            out.append(acc)
    return Tile(out, lay)


def register_a(lw, op, ml):
    """A fragments of ``op`` ([k-step][mi] -> 4 i32) from a region tile in registers
    (the m16n8 accumulator fragments of n-tiles 2ks, 2ks+1 form the m16k16 A
    fragment), or None."""
    hoisted = lw.hoisted_a.get(op)
    if hoisted is not None:
        return hoisted
    t = lw.values.get(op.a)
    M, K = op.a.type.shape
    if t is None or ml.wn != 1 or t.layout != _mma_layout((M, K), ml.wm):
        return None
    b = lw.b
    vty = ir.VectorType(t.regs[0].type, 2)
    nt = K // 8

    def pack(lo, hi):
        v = b.insert_element(ir.Constant(vty, None), lo, lw.i32(0))
        return b.bitcast(b.insert_element(v, hi, lw.i32(1)), T.I32)
    out = []
    for ks in range(K // 16):
        row = []
        for mi in range(ml.mt):
            r0 = (mi * nt + 2 * ks) * 4
            r1 = r0 + 4
            g = t.regs
            row.append([pack(g[r0], g[r0 + 1]), pack(g[r0 + 2], g[r0 + 3]),
                        pack(g[r1], g[r1 + 1]), pack(g[r1 + 2], g[r1 + 3])])
        out.append(row)
    return out


def hoist_a(lw, dots):
    """Before the loop: stage each loop-invariant A operand of ``dots`` (the plan's: a
    RowPlan's ``hoist`` with an even n-tile count) once and read its fragments
    (``ldmatrix.x4``) for every k-step; the dot uses them from registers.  A later loop
    of the same block with a dot on the same A (causal attention's second loop, on
    ``q``) reuses the fragments: they dominate it, and ``q`` itself need not stay live
    across the first loop."""
    from .rules_mma import PAD, _stage, a_fragments
    hoisted = lw.hoisted_a
    made = lw.__dict__.setdefault("_hoisted_by_value", {})
    for d in dots:
        ml = lw.forced_ml[d]
        key = (d.a, ml, _loop_block(d))
        if key[2] is not None and key in made:
            hoisted[d] = made[key]
            continue
        M, K = d.a.type.shape
        a = lw.get(d.a)
        base = lw.smem(M * (K + PAD) * 2)
        lw.barrier()
        _stage(lw, base, 0, a, K + PAD)
        lw.barrier()
        hoisted[d] = made[key] = a_fragments(lw, ml, M, K, base)


def _loop_block(d):
    """The block holding the loop whose body holds ``d`` (None: not found)."""
    body = d.parent
    loop = getattr(getattr(body, "parent", None), "parent", None)
    return getattr(loop, "parent", None)


# ---- K-major B operands -----------------------------------------------------------------
@dataclass(frozen=True)
class TransposedLayout:
    """A 2-D tile of shape (R, C) held as its transpose: ``inner`` is the blocked layout of
    (C, R) (the K-major B operand of a region dot, loaded along its contiguous dim 0)."""
    inner: object

    @property
    def nslots(self):
        return self.inner.nslots

    vec = 1


_KMAJOR_SLICE_OK = (ops.AddPtrOp, ops.AddOp, ops.SubOp, ops.MulOp, ops.CastOp)


def kmajor_width(lw, for_op, plan, ld, sl):
    """Elements per access when the rotated load ``ld`` (pointer slice ``sl``) feeds only
    region dots as their B operand and its pointer is contiguous along dim 0 (the
    dot's K): it is then loaded transposed, in vectors along dim 0 (0: keep it)."""
    if (not lw.tuning.kmajor_b or lw.facts is None or not lw.vectorize or lw.sanitize or ld.mask is not None
            or ld.other is not None or len(ld.ptr.type.shape) != 2):
        return 0
    from .pipeline import _PTR_OK
    if any(not isinstance(o, _KMAJOR_SLICE_OK + _PTR_OK) for o in sl):
        return 0
    uses = [o for o in for_op.body.walk() if any(x is ld.result for x in o.operands)]
    if not uses or any(not isinstance(o, ops.DotOp) or o not in plan.forced or o.a is ld.result
                       or o.acc is ld.result for o in uses):
        return 0
    if any(lw.forced_ml[o].nt % 2 for o in uses):
        return 0
    from .rules_memory import dim0_width
    return dim0_width(lw, ld)


def transposed_to_flat(lw, tile, value_shape, el):
    """A TransposedLayout tile back in the blocked layout of ``value_shape``."""
    from ...ir.types import TileType
    from .pipeline import _transpose_tile
    inner = Tile(tile.regs, tile.layout.inner)
    return _transpose_tile(lw, inner, el, tuple(reversed(value_shape)))
