"""tt.dot on tensor cores: ``mma.sync.m16n8k16`` (sm_80+) for fp16/bf16 inputs with
fp32 accumulation.

The accumulator lives in the mma fragment layout (:class:`MmaLayout`): the program's
warps form a ``wm x wn`` grid over the (M, N) tile, and each warp holds
``mt x nt`` fragments of 16x8, four fp32 values per thread each.  A loop-carried
accumulator stays in that layout across ``scf.for`` iterations (rules_control asks
:func:`plan_for_dot`); any other use converts it to the blocked layout through
shared memory (``Lowering.get``).  A and B go through shared memory each step
(rows padded by 16 bytes so fragment reads are free of bank conflicts).
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...ir import ops
from . import types as T
from .lowering import Tile

PAD = 8   # halves of padding per shared-memory row
FPAD = 8  # fp32 words of padding per row in layout conversions: the fragment accesses
          # (rows g, columns 2t) of a half-warp then fall in distinct banks


@dataclass(frozen=True)
class MmaLayout:
    shape: tuple
    wm: int
    wn: int

    @property
    def mt(self):
        return self.shape[0] // (16 * self.wm)

    @property
    def nt(self):
        return self.shape[1] // (8 * self.wn)

    @property
    def nslots(self):
        return self.mt * self.nt * 4

    vec = 1     # no runs of contiguous elements in a thread's slots (elementwise rules'
                # per-chunk shortcuts stay off when mma_rows lowers ops in this layout)


def plan(lw, a_ty, b_ty, acc_ty):
    """The MmaLayout for a dot, or None when mma.sync does not apply."""
    ael, bel, cel = a_ty.element, b_ty.element, acc_ty.element
    if lw.arch < 80 or ael != bel or ael.name not in ("fp16", "bf16") or cel.name != "fp32":
        return None
    (M, K), (_, N) = a_ty.shape, b_ty.shape
    if M % 16 or N % 8 or K % 16:
        return None
    best = None
    W = lw.num_warps
    wm = 1
    while wm <= W:
        wn = W // wm
        if M % (16 * wm) == 0 and N % (8 * wn) == 0:
            cost = M // wm + N // wn            # fragment loads per k-step, per warp
            if best is None or cost < best[0]:
                best = (cost, MmaLayout((M, N), wm, wn))
        wm *= 2
    return None if best is None else best[1]


def widen_operand_chunks(lw):
    """In a kernel without loops that runs a dot, each tile shape the kernel loads or
    stores gets 16-byte chunks for the narrowest element type accessed at that shape
    (16 elements per chunk for 1-byte tiles, 8 for 2-byte ones: a blocked layout whose
    chunks ``ld.global.v4`` / ``st.global.v4`` can move where the access plan proves
    the pointers contiguous and aligned, as Triton's coalescing gives 16 bytes per
    thread), and so do the 2-byte operand tiles of its dots.  layout.kernel_max_vec keeps
    4-element chunks for dot kernels; the mma path, its layout conversions and the
    multiply-add path (rules_reduce) take any blocked layout.  Loops leave the choice
    to their dot paths (async_pipeline.prepare)."""
    sizes = chunk_element_sizes(lw.func)
    if sizes is None:
        return
    for shape, size in sizes.items():
        lay = widened_layout(shape, lw.threads, size, lw.layout(shape))
        if lay is not None:
            lw._layouts[shape] = lay


def chunk_element_sizes(func):
    """shape -> the smallest element size (bytes) among the tiles of that shape that
    ``func`` loads, stores or multiplies in a dot (2-byte operands only); None when
    ``func`` has a loop or no dot."""
    sizes, dot = {}, False
    def note(ty):
        if ty.shape:
            el = ty.element.element if ty.element.is_ptr() else ty.element
            size = 8 if el.is_ptr() else max(1, el.bits // 8)
            shape = tuple(ty.shape)
            sizes[shape] = min(size, sizes.get(shape, size))
    for o in func.walk():
        if isinstance(o, (ops.ForOp, ops.WhileOp)):
            return None
        if isinstance(o, ops.DotOp):
            dot = True
            for ty in (o.a.type, o.b.type):
                if T.mem_size(ty.element) == 2:
                    note(ty)
        elif isinstance(o, (ops.LoadOp, ops.StoreOp)):
            note(o.ptr.type)
    return sizes if dot else None


def widened_layout(shape, threads, size, current):
    """The blocked layout of ``shape`` with 16-byte chunks of ``size``-byte elements when
    it is exact (every slot a distinct element) and wider than ``current``, else None."""
    from .layout import make_layout
    lay = make_layout(shape, threads, max_vec=max(1, 16 // size))
    if lay.exact and lay.vec > current.vec:
        return lay
    return None


def plan_kmajor_loads(lw, dots, a_regs) -> dict:
    """{load: elements per access} of a loop-free dot kernel's 2-D fp16/bf16 loads read
    only by mma dots (``dots``: tt.dot -> MmaLayout; as A or B, an even n-tile count, A
    not from registers: ``a_regs``) whose pointer is contiguous along dim 0 only (a
    column-major operand): loaded transposed, in vectors along dim 0
    (rules_memory.dim0_width; the pointer recomputed per slot in the layout of the
    reversed shape: rules_tiles.rematerialize), and staged so by :func:`lower_dot_mma`
    (A M-major, read by ``ldmatrix.trans``; B K-major, by plain ``ldmatrix``) -- as
    Triton moves a column-major operand.  ``CudaTuning.kmajor_operands``."""
    from .rules_memory import dim0_width
    from .rules_tiles import can_rematerialize
    if not lw.tuning.kmajor_operands or chunk_element_sizes(lw.func) is None:
        return {}
    users, shapes = {}, set()
    for o in lw.func.walk():
        for x in o.operands:
            users.setdefault(id(x), []).append(o)
        shapes.update(tuple(r.type.shape) for r in o.results if getattr(r.type, "shape", None))
    out = {}
    for ld in lw.func.walk():
        if (not isinstance(ld, ops.LoadOp) or ld.mask is not None or ld.other is not None
                or len(ld.ptr.type.shape) != 2 or T.mem_size(ld.ptr.type.element.element) != 2):
            continue
        uses = users.get(id(ld.result), [])
        if not uses or any(not isinstance(o, ops.DotOp) or dots.get(o) is None or o in a_regs
                           or dots[o].nt % 2 or o.acc is ld.result for o in uses):
            continue
        info = lw.axis(ld.ptr)
        if info is None or info.contiguity[1] > 1:
            continue
        rev = tuple(reversed(ld.ptr.type.shape))
        if rev not in shapes:       # a shape of its own: 16-byte chunks (widen_operand_chunks)
            lay = widened_layout(rev, lw.threads, 2, lw.layout(rev))
            if lay is not None:
                lw._layouts[rev] = lay
        w = dim0_width(lw, ld)
        if w and can_rematerialize(lw, ld.ptr, trans=True):
            out[ld] = w
    return out


def plan_for_dot(lw, dot_op):
    forced = lw.forced_ml.get(dot_op)     # mma_rows: a row region's dots
    if forced is not None:
        return forced
    return plan(lw, dot_op.a.type, dot_op.b.type, dot_op.acc.type)


def _uses(for_op, value):
    return sum(1 for o in for_op.body.walk() for x in o.operands if x is value)


def _row_vector(x):
    """The 1-D (M,) value ``v`` when ``x`` is broadcast(expand_dims(v, 1)), else None."""
    bc = x.op
    if not isinstance(bc, ops.BroadcastOp) or len(x.type.shape) != 2:
        return None
    ex = bc.src.op
    if not isinstance(ex, ops.ExpandDimsOp) or ex.attrs.get("axis") != 1:
        return None
    v = ex.src
    return v if tuple(v.type.shape) == (x.type.shape[0],) else None


def row_scaled_acc(for_op, acc, arg):
    """(arg, v): ``acc = arg * v[:, None]`` (fp32, used only once, by a dot in
    ``for_op``'s body), which the dot applies to the mma accumulator directly."""
    m = acc.op
    if not isinstance(m, ops.MulOp) or acc.type.element.name != "fp32" or _uses(for_op, acc) != 1:
        return None
    other = m.rhs if m.lhs is arg else (m.lhs if m.rhs is arg else None)
    if other is None or other is arg or _row_vector(other) is None:
        return None
    return arg, other


def _scaled_acc(lw, op, ml):
    """The deferred ``arg * v[:, None]`` accumulator of ``op``, in the mma layout."""
    from .mma_rows import RowLayout
    arg, other = lw.deferred[op.acc.op]
    vec = _row_vector(other)
    acc = to_mma(lw, lw.raw(arg), ml)
    rv = lw.raw(vec)
    if ml.wn == 1 and rv.layout == RowLayout(tuple(vec.type.shape), ml.wm):   # rows in registers
        return Tile([lw.b.fmul(reg, rv.regs[(i // (4 * ml.nt)) * 2 + (i % 4 >= 2)])
                     for i, reg in enumerate(acc.regs)], ml)
    v = lw.get(vec)
    base = lw.smem(ml.shape[0] * 4)
    lw.barrier()
    for s, x in enumerate(v.regs):           # replicated copies hold equal values
        lw.b.store(x, lw.smem_addr(base, lw.b.mul(lw.elem_index(v.layout, s), lw.i32(4)))).align = 4
    lw.barrier()
    rows = {}
    out = []
    for reg, (r, _) in zip(acc.regs, _coords(lw, ml)):
        if r not in rows:
            x = lw.b.load(lw.smem_addr(base, lw.b.mul(r, lw.i32(4))), typ=T.F32)
            x.align = 4
            rows[r] = x
        out.append(lw.b.fmul(reg, rows[r]))
    return Tile(out, ml)


def _coords(lw, ml):
    """(row, col) i32 values of every accumulator register of this thread."""
    b = lw.b
    g, t = b.lshr(lw.lane, lw.i32(2)), b.and_(lw.lane, lw.i32(3))
    M, N = ml.shape
    wr = b.udiv(lw.warp, lw.i32(ml.wn))
    wc = b.urem(lw.warp, lw.i32(ml.wn))
    r0 = b.add(b.mul(wr, lw.i32(M // ml.wm)), g)
    c0 = b.add(b.mul(wc, lw.i32(N // ml.wn)), b.mul(t, lw.i32(2)))
    out = []
    for mi in range(ml.mt):
        for ni in range(ml.nt):
            for c in range(4):
                out.append((b.add(r0, lw.i32(mi * 16 + (8 if c >= 2 else 0))),
                            b.add(c0, lw.i32(ni * 8 + (c & 1)))))
    return out


def _padded(lw, lay, s, N):
    """Byte offset of blocked slot ``s``'s fp32 element of an (M, N) tile with padded rows
    (computed per chunk, so that a chunk's slots stay adjacent and vectorize)."""
    j = s % lay.vec if N % lay.vec == 0 else 0
    e = lw.elem_index(lay, s - j)
    r, c = lw.b.udiv(e, lw.i32(N)), lw.b.urem(e, lw.i32(N))
    off = lw.b.mul(lw.b.add(lw.b.mul(r, lw.i32(N + FPAD)), c), lw.i32(4))
    return lw.b.add(off, lw.i32(4 * j)) if j else off


def _padded_addrs(lw, lay, N, base):
    """Shared addresses of every blocked slot's fp32 element of an (M, N) tile with padded
    rows at ``base``, as one per-thread address plus constants (None when a thread's
    repetitions are not whole rows apart): no per-slot index math for LLVM to share with,
    and hold across, the code after the conversion."""
    T_, V = lay.threads, lay.vec
    if not lay.exact or N % V or (T_ * V) % N:
        return None
    b = lw.b
    e0 = b.mul(lw.tid, lw.i32(V)) if V > 1 else lw.tid
    r0, c0 = b.udiv(e0, lw.i32(N)), b.urem(e0, lw.i32(N))
    p0 = lw.smem_addr(base, b.mul(b.add(b.mul(r0, lw.i32(N + FPAD)), c0), lw.i32(4)))
    rows = T_ * V // N
    return [lw.smem_addr(p0, lw.i32(((s // V) * rows * (N + FPAD) + s % V) * 4)) for s in range(lay.nslots)]


def to_mma(lw, tile: Tile, ml: MmaLayout) -> Tile:
    if isinstance(tile.layout, MmaLayout):
        if tile.layout == ml:
            return tile
        tile = to_flat(lw, tile)
    regs = tile.regs
    if all(isinstance(r, ir.Constant) and str(r) == str(regs[0]) for r in regs):
        return Tile([regs[0]] * ml.nslots, ml)
    M, N = ml.shape
    base = lw.smem(M * (N + FPAD) * 4)
    lw.barrier()
    for s, v in enumerate(regs):
        off = _padded(lw, tile.layout, s, N)
        lw.b.store(v, lw.smem_addr(base, off)).align = 4
    lw.barrier()
    out = []
    for r, c in _coords(lw, ml):
        off = lw.b.mul(lw.b.add(lw.b.mul(r, lw.i32(N + FPAD)), c), lw.i32(4))
        v = lw.b.load(lw.smem_addr(base, off), typ=T.F32)
        v.align = 4
        out.append(v)
    return Tile(out, ml)


def _acc_addrs(lw, ml, base):
    """Shared addresses of this thread's accumulator slots in a padded fp32 (M, N+FPAD)
    tile at ``base``: one per-thread address plus constant offsets (``_coords`` computed
    once), so that they stay one register rather than one each hoisted out of loops."""
    M, N = ml.shape
    b = lw.b
    g, t = b.lshr(lw.lane, lw.i32(2)), b.and_(lw.lane, lw.i32(3))
    r0 = b.add(b.mul(b.udiv(lw.warp, lw.i32(ml.wn)), lw.i32(M // ml.wm)), g)
    c0 = b.add(b.mul(b.urem(lw.warp, lw.i32(ml.wn)), lw.i32(N // ml.wn)), b.mul(t, lw.i32(2)))
    p0 = lw.smem_addr(base, b.mul(b.add(b.mul(r0, lw.i32(N + FPAD)), c0), lw.i32(4)))
    return [lw.smem_addr(p0, lw.i32(((mi * 16 + (8 if c >= 2 else 0)) * (N + FPAD) + ni * 8 + (c & 1)) * 4))
            for mi in range(ml.mt) for ni in range(ml.nt) for c in range(4)]


def to_flat(lw, tile: Tile) -> Tile:
    from .mma_rows import RowLayout, TransposedLayout, rows_to_flat
    ml = tile.layout
    if isinstance(ml, RowLayout):
        return rows_to_flat(lw, tile)
    if isinstance(ml, TransposedLayout):
        raise AssertionError("a transposed tile is converted by Lowering.get (it knows the value)")
    if not isinstance(ml, MmaLayout):
        return tile
    M, N = ml.shape
    base = lw.smem(M * (N + FPAD) * 4)
    lw.barrier()
    if lw.tuning.imm_offsets:
        for v, addr in zip(tile.regs, _acc_addrs(lw, ml, base)):
            lw.b.store(v, addr).align = 4
    else:
        for v, (r, c) in zip(tile.regs, _coords(lw, ml)):
            off = lw.b.mul(lw.b.add(lw.b.mul(r, lw.i32(N + FPAD)), c), lw.i32(4))
            lw.b.store(v, lw.smem_addr(base, off)).align = 4
    lw.barrier()
    lay = lw.layout(ml.shape)
    out = []
    addrs = _padded_addrs(lw, lay, N, base) if lw.tuning.imm_offsets else None
    for s in range(lay.nslots):
        addr = addrs[s] if addrs else lw.smem_addr(base, _padded(lw, lay, s, N))
        v = lw.b.load(addr, typ=T.F32)
        v.align = 4
        out.append(v)
    return Tile(out, lay)


def _stage(lw, base, off, tile, rows_stride):
    """Store a blocked (R, C) fp16/bf16 tile row-major with ``rows_stride`` halves per row."""
    lay = tile.layout
    C = lay.shape[1]
    vec = min(lay.vec, 8) if C % lay.vec == 0 else 1     # 16-byte stores at most
    ety = tile.regs[0].type
    for s0 in range(0, lay.nslots, vec):
        e = lw.elem_index(lay, s0)
        r, c = lw.b.udiv(e, lw.i32(C)), lw.b.urem(e, lw.i32(C))
        idx = lw.b.add(lw.b.mul(r, lw.i32(rows_stride)), c)
        addr = lw.smem_addr(base, lw.b.add(lw.i32(off), lw.b.mul(idx, lw.i32(2))))
        if vec == 1:
            lw.b.store(tile.regs[s0], addr).align = 2
            continue
        v = ir.Constant(ir.VectorType(ety, vec), None)
        for j in range(vec):
            v = lw.b.insert_element(v, tile.regs[s0 + j], lw.i32(j))
        lw.b.store(v, addr).align = 2 * vec


def _ld32(lw, base, half_index):
    v = lw.b.load(lw.smem_addr(base, lw.b.mul(half_index, lw.i32(2))), typ=T.I32)
    v.align = 4
    return v


def _ld16(lw, base, half_index):
    v = lw.b.load(lw.smem_addr(base, lw.b.mul(half_index, lw.i32(2))), typ=T.I16)
    v.align = 2
    return lw.b.zext(v, T.I32)


def _mma(lw, kind, a, bfrag, c):
    fty = ir.FunctionType(ir.LiteralStructType([T.F32] * 4), [T.I32] * 6 + [T.F32] * 4)
    asm = (f"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32 "
           "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};")
    res = lw.b.asm(fty, asm, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", list(a) + list(bfrag) + list(c), False)
    return [lw.b.extract_value(res, i) for i in range(4)]


def lower_dot_mma(lw, op, ml: MmaLayout, acc: Tile | None = None) -> Tile:
    """``op`` on tensor cores; ``acc``: its accumulator already in ``ml`` (fp32), else
    ``op.acc``'s."""
    from .mma_rows import register_a
    planned = acc is None and op in lw.plan.a_regs     # A from registers (plan.py)
    afr = register_a(lw, op, ml) if planned else None
    if afr is not None:
        return _dot_register_a(lw, op, ml, afr)
    (a, a_t), (b_, b_t) = _operand(lw, op.a), _operand(lw, op.b)
    if acc is None:
        acc = _scaled_acc(lw, op, ml) if op.acc.op in lw.deferred else to_mma(lw, lw.raw(op.acc), ml)
    (M, K), (_, N) = op.a.type.shape, op.b.type.shape
    sa, sb = (M if a_t else K) + PAD, (K if b_t else N) + PAD     # halves per staged row
    boff = ((K if a_t else M) * sa * 2 + 15) // 16 * 16
    base = lw.smem(boff + (N if b_t else K) * sb * 2)
    lw.barrier()
    _stage(lw, base, 0, a, sa)
    _stage(lw, base, boff, b_, sb)
    lw.barrier()
    kind = "f16" if op.a.type.element.name == "fp16" else "bf16"
    if ml.nt % 2 == 0:
        return Tile(_ldmatrix_dot(lw, ml, kind, (M, K, N), base, boff, list(acc.regs),
                                  b_kmajor=b_t, a_mmajor=a_t), ml)
    assert not (a_t or b_t), "plan_kmajor_loads: transposed operands need an even n-tile count"
    b = lw.b
    g, t = b.lshr(lw.lane, lw.i32(2)), b.and_(lw.lane, lw.i32(3))
    wr, wc = b.udiv(lw.warp, lw.i32(ml.wn)), b.urem(lw.warp, lw.i32(ml.wn))
    row0 = b.add(b.mul(wr, lw.i32(M // ml.wm)), g)
    col0 = b.add(b.mul(wc, lw.i32(N // ml.wn)), g)
    bbase = boff // 2
    regs = list(acc.regs)
    for ks in range(K // 16):
        afr = []
        for mi in range(ml.mt):
            r = b.add(row0, lw.i32(mi * 16))
            i00 = b.add(b.mul(r, lw.i32(sa)), b.add(b.mul(t, lw.i32(2)), lw.i32(ks * 16)))
            i10 = b.add(i00, lw.i32(8 * sa))
            afr.append([_ld32(lw, base, i00), _ld32(lw, base, i10),
                        _ld32(lw, base, b.add(i00, lw.i32(8))), _ld32(lw, base, b.add(i10, lw.i32(8)))])
        bfr = []
        for ni in range(ml.nt):
            col = b.add(col0, lw.i32(ni * 8))
            k0 = b.add(b.mul(t, lw.i32(2)), lw.i32(ks * 16))
            frag = []
            for dk in (0, 8):
                lo = b.add(lw.i32(bbase), b.add(b.mul(b.add(k0, lw.i32(dk)), lw.i32(sb)), col))
                hi = b.add(lo, lw.i32(sb))
                frag.append(b.or_(_ld16(lw, base, lo), b.shl(_ld16(lw, base, hi), lw.i32(16))))
            bfr.append(frag)
        for mi in range(ml.mt):
            for ni in range(ml.nt):
                i = (mi * ml.nt + ni) * 4
                regs[i:i + 4] = _mma(lw, kind, afr[mi], bfr[ni], regs[i:i + 4])
    return Tile(regs, ml)


def _operand(lw, value):
    """(blocked tile, transposed): a dot operand loaded transposed (plan_kmajor_loads)
    is staged as its transpose, from the blocked tile of the reversed shape."""
    from .mma_rows import TransposedLayout
    t = lw.raw(value)
    if isinstance(t.layout, TransposedLayout):
        return Tile(t.regs, t.layout.inner), True
    return lw.get(value), False


def plan_half_acc(lw, op):
    """The mma layout (fp32 accumulator) of a dot of fp16/bf16 operands with an fp16/bf16
    accumulator (``out_dtype``) lowered by :func:`lower_dot_mma_half_acc`, or None where
    mma does not apply (the planner's decision, plan.py: ``lw.plan.half_acc``)."""
    from ...ir.types import float32
    cel = op.acc.type.element
    if cel.name not in ("fp16", "bf16") or op.acc.op in lw.deferred:
        return None
    return plan(lw, op.a.type, op.b.type, op.acc.type.with_element(float32))


def lower_dot_mma_half_acc(lw, op, ml) -> Tile:
    """A dot with an fp16/bf16 accumulator on tensor cores (layout ``ml``, planned by
    :func:`plan_half_acc`): the accumulator widened to fp32, ``mma.sync`` with fp32
    accumulation, the sum rounded once to the accumulator's type -- the reference
    interpreter's semantics (products summed in fp32, one rounding)."""
    cel = op.acc.type.element
    acc = lw.get(op.acc)
    wide = Tile([ir.Constant(T.F32, float(v.constant)) if isinstance(v, ir.Constant)
                 else lw.b.fpext(v, T.F32) for v in acc.regs], acc.layout)
    out = to_flat(lw, lower_dot_mma(lw, op, ml, to_mma(lw, wide, ml)))
    return Tile([lw.b.fptrunc(v, T.llvm_type(cel)) for v in out.regs], out.layout)


def _dot_register_a(lw, op, ml, afr):
    """lower_dot_mma with the A fragments given (registers): only B is staged, N-major
    (rows of N+PAD halves, ldmatrix.trans) or, when it was loaded transposed
    (mma_rows.TransposedLayout), K-major (rows of K+PAD halves, plain ldmatrix)."""
    from .mma_rows import TransposedLayout
    acc = _scaled_acc(lw, op, ml) if op.acc.op in lw.deferred else to_mma(lw, lw.raw(op.acc), ml)
    (M, K), (_, N) = op.a.type.shape, op.b.type.shape
    kind = "f16" if op.a.type.element.name == "fp16" else "bf16"
    ring = lw.ring_b.get(op)             # rows_ring: B in a cp.async ring
    if ring is not None:
        from .rows_ring import ring_dot
        return Tile(ring_dot(lw, op, ml, afr, acc.regs, kind, ring), ml)
    bt = lw.raw(op.b)
    kmajor = isinstance(bt.layout, TransposedLayout)
    b_ = Tile(bt.regs, bt.layout.inner) if kmajor else lw.get(op.b)
    row = K + PAD if kmajor else N + PAD
    base = lw.smem((N if kmajor else K) * row * 2)
    lw.barrier()
    _stage(lw, base, 0, b_, row)
    lw.barrier()
    return Tile(_ldmatrix_dot(lw, ml, kind, (M, K, N), base, 0, list(acc.regs), afr, kmajor), ml)


def _a_reader(lw, ml, M, K, base, mmajor=False):
    """ks -> [mi] A fragments (4 i32) of a padded row-major (M, K) staging at ``base``
    (rows K+PAD halves), read by ``ldmatrix.x4`` when called; ``mmajor``: of a (K, M)
    staging (rows M+PAD halves), read by ``ldmatrix.x4.trans``."""
    from .rules_wgmma import ldmatrix_at, shared_addr
    b = lw.b
    wr = b.udiv(lw.warp, lw.i32(ml.wn))
    q, lr = b.lshr(lw.lane, lw.i32(3)), b.and_(lw.lane, lw.i32(7))
    if mmajor:      # matrix q: m-half q&1, k-half q>>1; lane row lr = k within the half
        sa = (M + PAD) * 2
        a_m = b.add(b.mul(wr, lw.i32(M // ml.wm)), b.mul(b.and_(q, lw.i32(1)), lw.i32(8)))
        a_k = b.add(lr, b.mul(b.lshr(q, lw.i32(1)), lw.i32(8)))
        a_addr = b.add(shared_addr(lw, base), b.add(b.mul(a_k, lw.i32(sa)), b.mul(a_m, lw.i32(2))))
        return lambda ks: [ldmatrix_at(lw, a_addr, ks * 16 * sa + mi * 32, True)
                           for mi in range(ml.mt)]
    sa = (K + PAD) * 2
    a_row = b.add(b.add(b.mul(wr, lw.i32(M // ml.wm)), lr), b.mul(b.and_(q, lw.i32(1)), lw.i32(8)))
    a_kc = b.lshr(q, lw.i32(1))
    a_addr = b.add(shared_addr(lw, base), b.add(b.mul(a_row, lw.i32(sa)), b.mul(a_kc, lw.i32(16))))
    return lambda ks: [ldmatrix_at(lw, a_addr, mi * 16 * sa + ks * 32, False)
                       for mi in range(ml.mt)]


def a_fragments(lw, ml, M, K, base):
    """[k-step][mi] A fragments of the staging at ``base`` (all read now)."""
    read = _a_reader(lw, ml, M, K, base)
    return [read(ks) for ks in range(K // 16)]


def _ldmatrix_dot(lw, ml, kind, mkn, base, boff, regs, afrags=None, b_kmajor=False, a_mmajor=False):
    """The k-steps of lower_dot_mma with fragments read by ``ldmatrix.x4`` (``.trans``
    for the K-major B): the lane/matrix mapping of rules_wgmma.mma_consume, on the
    padded row-major staging (A rows K+PAD halves, B rows N+PAD; 16-byte row chunks).
    ``afrags`` ([k-step][mi]) replaces the A reads when A is in registers; ``b_kmajor``:
    B is staged transposed (rows of K+PAD halves), read by plain ``ldmatrix.x4``;
    ``a_mmajor``: A is staged transposed (rows of M+PAD halves), read by ``.trans``."""
    from .rules_wgmma import ldmatrix_at, shared_addr
    M, K, N = mkn
    b = lw.b
    lane = lw.lane
    wc = b.urem(lw.warp, lw.i32(ml.wn))
    q, lr = b.lshr(lane, lw.i32(3)), b.and_(lane, lw.i32(7))
    s0 = shared_addr(lw, base)
    if b_kmajor:        # matrix q: n-tile q>>1, k-half q&1; lane row lr = n within the tile
        sb = (K + PAD) * 2
        b_n = b.add(b.add(b.mul(wc, lw.i32(N // ml.wn)), lr), b.mul(b.lshr(q, lw.i32(1)), lw.i32(8)))
        b_addr = b.add(s0, b.add(lw.i32(boff), b.add(b.mul(b_n, lw.i32(sb)),
                                                     b.mul(b.and_(q, lw.i32(1)), lw.i32(16)))))
        b_step = lambda ks, nj: ks * 32 + nj * 8 * sb      # noqa: E731
    else:
        sb = (N + PAD) * 2
        b_k = b.add(lr, b.mul(b.and_(q, lw.i32(1)), lw.i32(8)))
        b_nc = b.add(b.mul(wc, lw.i32(N // ml.wn // 8)), b.lshr(q, lw.i32(1)))
        b_addr = b.add(s0, b.add(lw.i32(boff), b.add(b.mul(b_k, lw.i32(sb)), b.mul(b_nc, lw.i32(16)))))
        b_step = lambda ks, nj: ks * 16 * sb + nj * 16     # noqa: E731
    read_a = _a_reader(lw, ml, M, K, base, a_mmajor) if afrags is None else afrags.__getitem__
    for ks in range(K // 16):
        afr = read_a(ks)
        bfr = []
        for nj in range(0, ml.nt, 2):
            r4 = ldmatrix_at(lw, b_addr, b_step(ks, nj), not b_kmajor)
            bfr += [r4[0:2], r4[2:4]]
        for mi in range(ml.mt):
            for ni in range(ml.nt):
                i = (mi * ml.nt + ni) * 4
                regs[i:i + 4] = _mma(lw, kind, afr[mi], bfr[ni], regs[i:i + 4])
    return regs
