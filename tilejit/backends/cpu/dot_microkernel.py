"""The floating-point ``tl.dot`` micro-kernel of the CPU backend.

``C[M, N] = A[M, K] @ B[K, N] + acc`` on per-program buffers, in the compute type
(fp32, or fp64 for an fp64 accumulator): every element is one chain of fused
multiply-adds in K order starting from 0, then ``+ acc`` (the interpreter's order of
operations: ``matmul(a, b) + acc``), whatever the blocking.  Adding acc last also
keeps its loads off the start of each block's FMA chains.

* **Register blocking.** C is computed in blocks of ``mr`` rows x ``nvec`` vectors of
  ``vl`` lanes held in LLVM vector registers across the K loop: per k, ``nvec``
  vectors of B are loaded, each of the ``mr`` A elements is broadcast and FMA'd into
  its row.  ``mr * nvec`` accumulators hide the FMA latency (AVX2: 6 x 2 ymm = 12
  of 16 registers; AVX-512: 14 x 2 zmm = 28 of 32: the longer K loop body amortises
  each block's accumulator loads and stores, +4-10% over 8 x 2 on rocketlake,
  bench/results/cpu_matmul_notes.md).
* **Packed B.** B is copied once per dot, row by row, into contiguous ``K x nr``
  column panels, so a block streams one panel instead of ``K`` rows ``N`` elements
  apart (those map to a few L1 sets and evict each other).  When B's tile is an
  unmasked load of memory nothing writes before the dot (``lower_dot._direct_source``)
  the copy reads that memory itself: the load's per-program buffer is then never read
  and LLVM deletes it.  (fp16/bf16 operands arrive converted: ``lower_dot._converted``.)
* **Segmented dots.** A ``lower_dot_loop.SegmentedDot`` (``U`` iterations of a K
  loop as one dot) has ``parts``: its A segments are copied side by side into one
  ``M x K`` buffer and its B segments packed into one set of panels, each read
  where its load read it when it may be (``_reader``); the next tile prefetch then
  follows the first segment's B.
* **Shared operands.** With a ``dot_share`` site (``SegmentedDot.share``) an operand's
  packed copy lives in the chunk's slot of its trip and is filled only by the first
  program of the chunk that needs it (:meth:`FloatDot._shared`).  A shared A is then
  packed in row blocks, each block's rows interleaved k-major (element (r, k) of a
  block of ``rows`` rows at ``k * rows + r``; the copy transposes ``rows x vl``
  pieces with shuffles): a register block reads one sequential stream instead of
  ``mr`` rows ``K`` apart.  Measured (znver3, one thread, same process, ratio to
  numpy, 1024^3): 0.82x with the rows layout, 0.89x packed in blocks; the longer fused
  dots of ``lower_dot_loop.KC_SHARED_BYTES`` then gain too (0.92-0.99x), where with
  the rows layout they lost (0.90 -> 0.81x).
* **Loop order.** Panels outer, row blocks inner: the panel stays in L1 while A's
  rows stream past it.
* **Next tile prefetch.** When B is read in place, the first row block of each full
  panel prefetches (into L2) that panel's columns of the rows that follow the tile in
  memory: in the tutorial loop (``b_ptrs += BK * stride_bk``) those are the next K
  step's B tile, whose rows lie on pages the hardware prefetchers do not follow.  The
  address is a guess from the tile's row stride; a prefetch never faults and never
  changes a result.  Measured +1.7-2.6% on 1024^3 (znver3; cpu_matmul_notes.md).
* **Edges.** ``M % mr`` rows are one more block of fewer rows (a small remainder is
  merged with one full block and split in two: ``row_plan``); ``N % nr`` columns a
  last panel of full vectors plus one narrower vector.  Any M, N, K works.
* Tried and dropped (measured on znver3, bench/results/cpu_matmul_notes.md):
  prefetching both operand tiles into L1 spread over every block, and the next
  block's accumulator rows; reading A's broadcasts in place; packing the next panel
  inside the current panel's first block; padding the packed panels.
"""
from __future__ import annotations

from typing import NamedTuple

import llvmlite.ir as ir

from ...ir.types import float32
from ..llvm import intrinsics as intr
from ..llvm.casts import lower_cast
from ..llvm.types import F64, I64, storage_type, to_storage, value_type
from .tiles import BufTile

_FEATURES = []
_LINE = 64                   # bytes per cache line
_PREFETCH_LOCALITY = 2       # llvm.prefetch locality 2: prefetcht1 (L2; L1 holds the panel and A)
_I8P = ir.PointerType(ir.IntType(8))


def _i32(x):
    return ir.Constant(ir.IntType(32), x)


def host_features() -> dict:
    """The host CPU's LLVM feature flags (read once)."""
    if not _FEATURES:
        import llvmlite.binding as llvm
        _FEATURES.append(dict(llvm.get_host_cpu_features()))
    return _FEATURES[0]


class Shape(NamedTuple):
    vl: int          # lanes per vector
    nvec: int        # vectors per block row
    mr: int          # rows per block
    pack_b: bool     # copy B into K x nr panels first

    @property
    def nr(self) -> int:
        return self.vl * self.nvec


def choose_shape(M, N, K, cdt, feats=None) -> Shape:
    """The register block for an ``M x K @ K x N`` dot in compute type ``cdt`` on a
    CPU with LLVM features ``feats`` (default: the host's)."""
    feats = host_features() if feats is None else feats
    wide = bool(feats.get("avx512f"))
    vbytes = 64 if wide else (32 if feats.get("avx") else 16)
    vl = vbytes // (4 if cdt == float32 else 8)
    regs = 32 if wide else 16
    nvec = 2 if N >= 2 * vl else 1
    vl = min(vl, _floor_pow2(N))                 # small N: narrower vectors
    mr = min(M, _MAX_ROWS, max(1, (regs - nvec - 2) // nvec))
    return Shape(vl, nvec, mr, pack_b=K > 1 and M > mr)


_MAX_ROWS = 14      # rows per block: AVX-512's 32 registers give 14 x 2 zmm accumulators


def _floor_pow2(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def row_plan(M, mr):
    """``(full blocks of mr rows, [rows of each tail block])`` covering M rows.  A
    remainder much smaller than ``mr`` would leave its block few accumulators (the
    FMA latency exposed), so it is merged with one full block and split in two."""
    nfull, rem = divmod(M, mr)
    if rem == 0:
        return nfull, []
    if nfull and rem < mr - 2:
        total = rem + mr
        return nfull - 1, [total - total // 2, total // 2]
    return nfull, [rem]


def _widths(n, vl):
    """Vector widths covering ``n`` columns: full ``vl`` vectors then the remainder."""
    out = [vl] * (n // vl)
    if n % vl:
        out.append(n % vl)
    return out


def _c(x):
    return ir.Constant(I64, x)


def _elem_align(ty) -> int:
    """Element alignment: tile rows need not start on a vector boundary."""
    return 8 if ty == F64 else 4


def _vty(cty, w):
    return ir.VectorType(cty, w) if w > 1 else cty


def _splat(b, s, vty):
    if not isinstance(vty, ir.VectorType):
        return s
    v = b.insert_element(ir.Constant(vty, ir.Undefined), s, ir.Constant(ir.IntType(32), 0))
    return b.shuffle_vector(v, ir.Constant(vty, ir.Undefined),
                            ir.Constant(ir.VectorType(ir.IntType(32), vty.count), [0] * vty.count))


class _Panel(NamedTuple):
    """Columns ``[j0, j0 + sum(widths))`` of B: where row k's vectors are read."""
    j0: object           # i64 first column
    widths: tuple        # vector widths of one block row
    ptr: object          # panel base (packed) or B itself
    stride: int          # elements between consecutive k rows
    col: object          # column offset of the panel within ``ptr``'s rows


class FloatDot:
    """Emits ``out = a @ b + acc`` for one DotTile (see the module docstring)."""

    def __init__(self, ctx, d, out_ptr, shape: Shape | None = None):
        self.ctx, self.d, self.out = ctx, d, out_ptr
        self.parts = getattr(d, "parts", None)          # a SegmentedDot's K segments
        if self.parts:
            self.M, self.N = d.shape
            self.K = sum(p.a.shape[1] for p in self.parts)
        else:
            (self.M, self.K), self.N = d.a.shape, d.b.shape[1]
        self.cty = value_type(d.cdt)
        self.shape = shape or choose_shape(self.M, self.N, self.K, d.cdt)
        if self.parts:
            self.shape = self.shape._replace(pack_b=True)
        self.a_ptr = None if self.parts else d.a.ptr
        self.nrb, self.tails = row_plan(self.M, self.shape.mr)   # full row blocks, tail blocks

    # ---- driver ---------------------------------------------------------------
    def emit(self):
        s, N, K = self.shape, self.N, self.K
        nfull, tail = divmod(N, s.nr)
        share = getattr(self.d, "share", None) or (None, None, None)
        self.a_blocked = bool(self.parts) and share[0] is not None     # A packed in row blocks
        if self.parts:
            self.a_ptr = self._shared(share[0], share[2], self.M * K, self._copy_a)
        packed = self._shared(share[1], share[2], K * N, self._pack_b) if s.pack_b else None
        em = self.ctx.em
        if nfull:
            def full(jb):
                j0 = self.ctx.b.mul(jb, _c(s.nr))
                if packed is not None:
                    p = _Panel(j0, (s.vl,) * s.nvec, packed, s.nr, self.ctx.b.mul(jb, _c(K * s.nr)))
                else:
                    p = _Panel(j0, (s.vl,) * s.nvec, self.d.b.ptr, N, j0)
                self._rows(p, self._next_tile_prefetch(j0))
            em.counted_loop(_c(0), _c(nfull), name="dot.nb", body=full)
        if tail:
            j0 = _c(nfull * s.nr)
            widths = tuple(_widths(tail, s.vl))
            if packed is not None:
                p = _Panel(j0, widths, packed, tail, _c(nfull * s.nr * K))
            else:
                p = _Panel(j0, widths, self.d.b.ptr, N, j0)
            self._rows(p)

    def _rows(self, panel, side=None):
        """The row blocks of one panel; ``side(k)``, if given, is emitted in the K loop
        of the first block only."""
        mr, nfull = self.shape.mr, self.nrb
        sizes = ([mr] if nfull else []) + list(self.tails)
        i0 = 0
        if side is not None:                 # the first block peeled off the loop
            self._block(_c(0), sizes[0], panel, side)
            i0 = sizes[0]
        if nfull * mr > i0:
            self.ctx.em.counted_loop(_c(i0), _c(nfull * mr), _c(mr), name="dot.mb",
                                     body=lambda i: self._block(i, mr, panel))
        i0 = max(i0, nfull * mr)
        for rows, n in _runs(self.tails if nfull or side is None else self.tails[1:]):
            self._each_block(i0, rows, n, lambda i, rows=rows: self._block(i, rows, panel))
            i0 += rows * n

    def _each_block(self, i0, rows, n, body):
        """``body(first row)`` for ``n`` blocks of ``rows`` rows from row ``i0`` (a loop
        when there are several: less code)."""
        if n == 1:
            body(_c(i0))
        else:
            self.ctx.em.counted_loop(_c(i0), _c(i0 + rows * n), _c(rows), name="dot.tb", body=body)

    def _next_tile_prefetch(self, j0):
        """``side(k)`` prefetching the ``nr`` columns from ``j0`` of row ``K + k`` of B
        in place (the row stride taken from rows 0 and 1), or None without a B read in
        place (a SegmentedDot: its first segment's B, the rows after the last one's
        when the segments follow each other in memory, as the tutorial's do)."""
        direct, K = getattr(self.parts[0] if self.parts else self.d, "b_src", None), self.K
        share = getattr(self.d, "share", None)
        if direct is None or K < 2 or share and share[1]:     # B shared: read from its slot
            return None
        ctx, b = self.ctx, self.ctx.b
        ctx.elem_cache = {}
        p0 = b.ptrtoint(direct[0](ctx, _c(0), j0), I64)
        row = b.sub(b.ptrtoint(direct[0](ctx, _c(1), j0), I64), p0)
        ctx.elem_cache = {}
        esz = 8 if self.cty == F64 else 4
        span = self.shape.nr * esz
        offs = sorted(set(range(0, span, _LINE)) | {span - esz})     # every line, aligned or not

        def side(k):
            base = b.add(p0, b.mul(b.add(k, _c(K)), row))
            for o in offs:
                _prefetch(b, b.add(base, _c(o)))
        return side

    def _shared(self, site, j, count, fill):
        """A buffer of ``count`` elements filled by ``fill(buf)``: the program's own, or
        with a dot_share site the chunk's shared slot of iteration ``j``, filled only
        when no earlier program of the chunk did."""
        ctx, b = self.ctx, self.ctx.b
        own = ctx.alloca(self.cty, count)
        if site is None:
            fill(own)
            return own
        from . import dot_share
        use, hit, slot, tag = dot_share.lookup(ctx, site, j)
        buf = b.select(use, slot, own)
        with ctx.em.if_then(b.not_(hit)):
            fill(buf)
            with ctx.em.if_then(use):
                dot_share.mark(ctx, tag)
        ctx.elem_cache = {}
        return buf

    # ---- B packing --------------------------------------------------------------
    def _pack_b(self, buf):
        """Copy B (K x N, row-major) into panels of ``nr`` columns, each K x nr
        contiguous (the last panel ``N % nr`` wide) in ``buf``.  With ``d.b_src`` B
        is read where the kernel loaded it from (no intermediate copy)."""
        ctx, s, K, N = self.ctx, self.shape, self.K, self.N
        nfull, tail = divmod(N, s.nr)
        b = ctx.b

        def copy(k, j0, base, width, src, ks):
            ctx.elem_cache = {}          # element values memoised in one loop body only
            for off, w in zip(_offsets(_widths(width, s.vl)), _widths(width, s.vl)):
                ld = b.load(src(ks, j0, off), typ=_vty(self.cty, w))
                ld.align = _elem_align(self.cty)
                st = b.store(ld, b.gep(buf, [b.add(b.add(base, b.mul(k, _c(width))), _c(off))],
                                       source_etype=self.cty))
                st.align = _elem_align(self.cty)
            ctx.elem_cache = {}

        def row(k0, k, src):     # one row of B at a time: contiguous reads
            kk = b.add(k, _c(k0))
            if nfull:
                ctx.em.counted_loop(_c(0), _c(nfull), name="pack.nb", body=lambda jb: copy(
                    kk, b.mul(jb, _c(s.nr)), b.mul(jb, _c(K * s.nr)), s.nr, src, k))
            if tail:
                copy(kk, _c(nfull * s.nr), _c(nfull * s.nr * K), tail, src, k)

        for k0, kn, src in self._b_sources():
            ctx.em.counted_loop(_c(0), _c(kn), name="pack.k", body=lambda k, k0=k0, src=src: row(k0, k, src))

    def _b_sources(self):
        """``[(first row, rows, read(k, j0, off) -> ptr)]``: where B's rows come from
        (one source, or one per segment of a SegmentedDot)."""
        if not self.parts:
            return [(0, self.K, self._b_reader())]
        out, k0 = [], 0
        for p in self.parts:
            out.append((k0, p.a.shape[1], self._reader(p.b, p.b_src)))
            k0 += p.a.shape[1]
        return out

    def _copy_a(self, buf):
        """A SegmentedDot's A segments side by side in the row-major M x K ``buf``
        (each segment read where its load read it when it may be, see lower_dot).
        With A read in place, each row's copy also prefetches (into L2) the K
        elements that follow it in memory: in the tutorial loop the next fused dot's
        A, whose rows (a page or more apart) the hardware prefetchers lose track of
        (+1.5-4% on 1024^3 and 2048^3, Sapphire Rapids, cpu_matmul_notes.md)."""
        ctx, b, s, M, K = self.ctx, self.ctx.b, self.shape, self.M, self.K
        readers, k0 = [], 0
        for p in self.parts:
            readers.append((k0, p.a.shape[1], self._reader(p.a, p.a_src)))
            k0 += p.a.shape[1]

        def row(i):
            ctx.elem_cache = {}
            for k0, kn, src in readers:
                for off, w in zip(_offsets(_widths(kn, s.vl)), _widths(kn, s.vl)):
                    ld = b.load(src(i, _c(0), off), typ=_vty(self.cty, w))
                    ld.align = _elem_align(self.cty)
                    st = b.store(ld, b.gep(buf, [b.add(b.mul(i, _c(K)), _c(k0 + off))], source_etype=self.cty))
                    st.align = _elem_align(self.cty)
            if ahead is not None:            # the next fused dot's A: this row, K further
                base = b.ptrtoint(ahead(i, _c(0), 0), I64)
                for o in offs:
                    _prefetch(b, b.add(base, _c(K * esz + o)))
            ctx.elem_cache = {}
        esz = 8 if self.cty == F64 else 4
        offs = sorted(set(range(0, K * esz, _LINE)) | {K * esz - esz})   # every line, aligned or not
        ahead = readers[0][2] if self.parts[0].a_src is not None else None
        if not self.a_blocked:
            ctx.em.counted_loop(_c(0), _c(M), name="copy.a", body=row)
            return

        def group(i0, rows, k0, koff, w, src):
            """Columns ``koff .. koff + w`` of one segment of the block's rows."""
            ctx.elem_cache = {}
            vs = []
            for r in range(rows):
                ld = b.load(src(b.add(i0, _c(r)), koff, 0), typ=_vty(self.cty, w))
                ld.align = _elem_align(self.cty)
                vs.append(ld)
                if ahead is not None:        # the next fused dot's A (see above)
                    base = b.ptrtoint(ahead(b.add(i0, _c(r)), _c(0), 0), I64)
                    _prefetch(b, b.add(base, b.mul(b.add(koff, _c(K + k0)), _c(esz))))
            dst = b.add(b.mul(i0, _c(K)), b.mul(b.add(koff, _c(k0)), _c(rows)))
            _store_transposed(b, vs, w, b.gep(buf, [dst], source_etype=self.cty), self.cty)
            ctx.elem_cache = {}

        def block(i0, rows):
            for k0, kn, src in readers:
                nv = kn // s.vl
                if nv:
                    ctx.em.counted_loop(_c(0), _c(nv * s.vl), _c(s.vl), name="copy.ak",
                                        body=lambda kk, k0=k0, src=src: group(i0, rows, k0, kk, s.vl, src))
                for w in _widths(kn % s.vl, s.vl):
                    group(i0, rows, k0, _c(nv * s.vl), w, src)
        mr = s.mr
        if self.nrb:
            ctx.em.counted_loop(_c(0), _c(self.nrb * mr), _c(mr), name="copy.a", body=lambda i0: block(i0, mr))
        i0 = self.nrb * mr
        for rows, n in _runs(self.tails):
            self._each_block(i0, rows, n, lambda i, rows=rows: block(i, rows))
            i0 += rows * n

    def _reader(self, tile, direct):
        """``read(row, j0, off) -> ptr`` of ``tile``'s element (row, j0 + off): in
        place through ``direct`` (lower_dot._direct_source) when every vector of a
        copy lies in one contiguous group, else the tile's row-major buffer."""
        b = self.ctx.b
        if direct is not None and direct[1] % self.shape.vl == 0:
            addr = direct[0]
            return lambda k, j0, off: addr(self.ctx, k, b.add(j0, _c(off)))
        n = tile.shape[1]
        return lambda k, j0, off: b.gep(tile.ptr, [b.add(b.add(b.mul(k, _c(n)), j0), _c(off))],
                                        source_etype=self.cty)

    def _b_reader(self):
        """``read(k, j0, off) -> ptr`` of B element (k, j0 + off)."""
        return self._reader(self.d.b, getattr(self.d, "b_src", None))

    # ---- one register block --------------------------------------------------
    def _block(self, i0, rows, panel, side=None):
        ctx, cty, K = self.ctx, self.cty, self.K
        b, em = ctx.b, ctx.em
        ctx.elem_cache = {}
        offs = _offsets(panel.widths)
        vtys = [_vty(cty, w) for w in panel.widths]
        accs = [[ir.Constant(vt, None) for vt in vtys] for _ in range(rows)]     # acc added after
        if self.a_blocked:           # the block's rows interleaved: element (r, k) at k * rows + r
            arow = [b.gep(self.a_ptr, [b.add(b.mul(i0, _c(K)), _c(r))], source_etype=cty) for r in range(rows)]
        else:
            arow = [b.gep(self.a_ptr, [b.mul(b.add(i0, _c(r)), _c(K))], source_etype=cty) for r in range(rows)]
        bbase = b.gep(panel.ptr, [panel.col], source_etype=cty)
        pre = b.block
        head, body, done = em.new_block("k.head"), em.new_block("k.body"), em.new_block("k.done")
        b.branch(head)
        b.position_at_end(head)
        k = b.phi(I64)
        k.add_incoming(_c(0), pre)
        phis = [[b.phi(vt) for vt in vtys] for _ in range(rows)]
        for r in range(rows):
            for c, ph in enumerate(phis[r]):
                ph.add_incoming(accs[r][c], pre)
        b.cbranch(b.icmp_signed("<", k, _c(K)), body, done)
        b.position_at_end(body)
        brow = b.mul(k, _c(panel.stride))
        if side is not None:
            side(k)
        bv = []
        for o, vt in zip(offs, vtys):
            ld = b.load(b.gep(bbase, [b.add(brow, _c(o))], source_etype=cty), typ=vt)
            ld.align = _elem_align(cty)
            bv.append(ld)
        new = []
        for r in range(rows):
            a = b.load(b.gep(arow[r], [b.mul(k, _c(rows)) if self.a_blocked else k], source_etype=cty), typ=cty)
            splats = {}                  # one broadcast per vector type (less IR to optimise)
            new.append([intr.call_overloaded(b, "fma", [splats.get(str(vt)) or splats.setdefault(
                str(vt), _splat(b, a, vt)), x, ph]) for vt, x, ph in zip(vtys, bv, phis[r])])
        k.add_incoming(b.add(k, _c(1), flags=("nsw",)), b.block)
        for r in range(rows):
            for c, ph in enumerate(phis[r]):
                ph.add_incoming(new[r][c], b.block)
        b.branch(head)
        b.position_at_end(done)
        for r in range(rows):
            for c, (o, w) in enumerate(zip(offs, panel.widths)):
                v = phis[r][c]
                if self.d.acc is not None:
                    v = b.fadd(v, self._load_c(i0, r, panel.j0, o, w, vtys[c]))
                self._store_c(i0, r, panel.j0, o, w, v)
        ctx.elem_cache = {}

    def _load_c(self, i0, r, j0, o, w, vty):
        b, d = self.ctx.b, self.d
        acc = d.acc
        i, j = b.add(i0, _c(r)), b.add(j0, _c(o))
        if acc is None:
            return ir.Constant(vty, None)
        if isinstance(acc, BufTile) and acc.dtype == d.cdt:
            lin = b.add(b.mul(i, _c(acc.shape[1])), j)
            ld = b.load(b.gep(acc.ptr, [lin], source_etype=self.cty), typ=vty)
            ld.align = _elem_align(self.cty)
            return ld
        vals = [lower_cast(b, acc.elem(self.ctx, (i, b.add(j, _c(l)))), acc.dtype, d.cdt) for l in range(w)]
        if w == 1:
            return vals[0]
        v = ir.Constant(vty, ir.Undefined)
        for l, x in enumerate(vals):
            v = b.insert_element(v, x, ir.Constant(ir.IntType(32), l))
        return v

    def _store_c(self, i0, r, j0, o, w, v):
        b, d = self.ctx.b, self.d
        lin = b.add(b.mul(b.add(i0, _c(r)), _c(self.N)), b.add(j0, _c(o)))
        if d.dtype == d.cdt:
            st = b.store(v, b.gep(self.out, [lin], source_etype=self.cty))
            st.align = _elem_align(self.cty)
            return
        sty = storage_type(d.dtype)
        for l in range(w):
            x = b.extract_element(v, ir.Constant(ir.IntType(32), l)) if w > 1 else v
            x = to_storage(b, lower_cast(b, x, d.cdt, d.dtype), d.dtype)
            b.store(x, b.gep(self.out, [b.add(lin, _c(l))], source_etype=sty))


def _runs(sizes):
    """``[(size, count)]``: runs of equal sizes."""
    out = []
    for x in sizes:
        if out and out[-1][0] == x:
            out[-1] = (x, out[-1][1] + 1)
        else:
            out.append((x, 1))
    return out


def _concat(b, vs):
    """One vector holding the equal-typed vectors ``vs`` one after another (padded
    with undefined lanes to a power of two)."""
    while len(vs) > 1:
        if len(vs) % 2:
            vs = vs + [ir.Constant(vs[0].type, ir.Undefined)]
        n = vs[0].type.count
        mask = ir.Constant(ir.VectorType(ir.IntType(32), 2 * n), list(range(2 * n)))
        vs = [b.shuffle_vector(x, y, mask) for x, y in zip(vs[::2], vs[1::2])]
    return vs[0]


def _store_transposed(b, vs, w, dst, cty):
    """Store ``rows = len(vs)`` rows of ``w`` lanes k-major at ``dst``: lane ``kk`` of
    row ``r`` at ``kk * rows + r``."""
    rows = len(vs)
    if w == 1:
        for r, v in enumerate(vs):
            st = b.store(v, b.gep(dst, [_c(r)], source_etype=cty))
            st.align = _elem_align(cty)
        return
    whole = _concat(b, list(vs))
    mask = ir.Constant(ir.VectorType(ir.IntType(32), rows * w), [r * w + kk for kk in range(w) for r in range(rows)])
    t = b.shuffle_vector(whole, ir.Constant(whole.type, ir.Undefined), mask)
    st = b.store(t, dst)
    st.align = _elem_align(cty)


def _prefetch(b, addr):
    """``llvm.prefetch`` (read, ``_PREFETCH_LOCALITY``) of the i64 address ``addr``."""
    p = b.inttoptr(addr, _I8P)
    intr.call_overloaded(b, "prefetch", [p], ret=ir.VoidType(), overload_types=[p.type],
                         extra_args=[_i32(0), _i32(_PREFETCH_LOCALITY), _i32(1)])


def _offsets(widths):
    out, o = [], 0
    for w in widths:
        out.append(o)
        o += w
    return out


def emit_float_dot(ctx, d, out_ptr, shape: Shape | None = None) -> None:
    """Write ``d.a @ d.b + d.acc`` (a DotTile with BufTile operands in the compute
    type; ``d.b_src`` optionally where B can be read in place) into the row-major
    buffer ``out_ptr`` of ``d.dtype``."""
    FloatDot(ctx, d, out_ptr, shape).emit()


__all__ = ["Shape", "choose_shape", "emit_float_dot", "host_features"]
