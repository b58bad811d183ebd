"""A ``cp.async`` ring for the B operands of a row-region loop's dots (mma_rows).

Fused attention's loop (``qk = dot(q, k)``, softmax rows, ``acc = dot(p, v, acc)``) on
the register path loads K's and V's tiles into registers a tile ahead and stages each
under its own barrier pair (4 ``bar.sync`` per iteration, the tiles held in registers
across the body).  Here both B tiles are copied straight to shared memory by
``cp.async``, ``D = S-1`` iterations ahead, into a ring of ``S = num_stages`` stages of
128-byte-swizzled tiles (``rules_wgmma``'s layout); each iteration waits for its group,
crosses ONE barrier (after it every warp is done with the stage the next copy
overwrites: the one read in the previous iteration), issues the copies of iteration
``i + D`` (predicated on that iteration existing) and runs its dots on stage ``i % S``,
the fragments read by ``ldmatrix.x4`` (the A fragments stay as the row region makes
them: ``q``'s read once before the loop, ``p``'s from the first dot's accumulator).

A B tile contiguous along the dot's N (V) is stored (K, N) and read by
``ldmatrix.trans``; one contiguous along the dot's K (K's transposed block, order
(0, 1)) is stored K-major as (N, K) (its pointer tile evaluated transposed,
``IterSlice.at(trans=True)``) and read by plain ``ldmatrix``.  The copies move the
blocked layout's chunks (4 or 8 elements: 8- or 16-byte ``cp.async``); with
``CudaTuning.ring_wide_copies`` the ring lays out its pointer tiles' shapes (where no
tile of that shape was laid out before) in 8-element chunks: one 16-byte
``cp.async.cg`` per chunk, as Triton copies these tiles (tutorial 06: 4 copies per thread
and iteration instead of 8 ``.ca`` of 8 bytes; the causal kernel's 52 bytes of spills gone).

Conditions (``plan``): the loop has a row plan with a carried accumulator; every
region dot's B is a single-use unmasked load whose pointer the body computes by a
cheap pure slice of the induction variable, scalar recurrences (block pointers'
offsets) and invariants; its A comes from registers (hoisted or a region tile); the
stored tile's contiguous dim is a multiple of 64 (128-byte rows); the body writes no
memory.  Anything else keeps the register path.  ``CudaTuning.row_ring`` switches it (on;
off, the PTX is the register path's).
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...ir import ops
from . import types as T
from .async_pipeline import RingStages
from .lowering import Tile
from .occupancy import note_ring, ring_cap

# Row-region loops copy their dots' B tiles with cp.async into a ring (this module).  ON
# since an H200 run (bench/attn_rows_variants.py, tutorial 06 Z4 H32 N4096 D64: 3.09 ->
# 2.75 ms, causal 1.95 -> 1.71 ms; the cuda e2e attention / ring / tutorial tests and
# test_cuda_gpu_dot with it on: 216 passed).  The switches below are ``CudaTuning``'s
# row_ring, ring_rotate_first, ring_wgmma, ring_occupancy.
# The loop's first dot (loop-invariant A and accumulator, e.g. ``qk = dot(q, k)``) is
# computed one iteration ahead, at the top of the body, from the next stage (its tile
# waited for one iteration earlier): its mma.sync are issued before this iteration's
# softmax, which does not depend on them, so the tensor cores overlap the softmax.  ON
# since an H200 run (tutorial 06: ring 2.87 -> 2.58 ms, causal 1.82 -> 1.75 ms; 156 cuda
# e2e attention / ring / non-pow2 / masked tests passed with it on).
# On sm_90a, with one 16-row tile per warp (M = 16 * num_warps), the ring's dots run as
# Hopper ``wgmma`` with A from registers (q's hoisted fragments, p's from the region;
# per warp the m16k16 fragments of mma.sync) and B by descriptor from the swizzled stage
# (K-major: imm-trans-b 0; N-major: 1); the accumulator is the same MmaLayout.  ON since
# an H200 run (tutorial 06: 2.49 -> 2.29 ms, causal 1.69 -> 1.35 ms; Triton 1.21 / 0.71 ms
# in the same call; 176 cuda e2e attention / ring / non-pow2 / masked tests passed with it on).
# A kernel whose every dot runs in wgmma rings holds little besides the accumulators: its
# registers are capped for two CTAs per SM, one's softmax overlapping the other's wgmma
# (Triton's tutorial-06 kernel: 123 registers, 2 CTAs/SM): occupancy.py decides, for this
# ring and async_pipeline's (``ring_occupancy``).  Under the cap the loop's first dot is
# computed in order, not an iteration ahead: with ``index_tiles`` (causal: both loops in
# rings) ahead ran ptxas out of registers (208 bytes of spills, every wgmma serialized);
# in order, on an H200, tutorial 06 causal 1.147 ms and non-causal 1.964 ms, against
# 1.984 ms for the non-causal kernel with the first dot ahead.
SMEM_LIMIT = 227 * 1024


@dataclass
class RingLoad:
    dot: object
    load: object
    sl: frozenset       # body ops computing the load's pointer
    kmajor: bool        # contiguous along the dot's K: stored (N, K)
    width: int          # elements per cp.async
    shape: tuple        # stored tile (rows, contiguous)
    offset: int = 0     # bytes into a stage
    wgmma: bool = False     # consumed by wgmma (A from registers, B by descriptor)


@dataclass
class RingPlan:
    loads: list
    stages: int
    recur: dict
    first: object = None    # the RingLoad of the first dot, computed an iteration ahead
    inflight: object = None  # the RingLoad of the last dot, its wgmma group left in flight

    @property
    def distance(self):
        return self.stages - 1

    @property
    def stage_bytes(self):
        return sum(ld.shape[0] * ld.shape[1] * 2 for ld in self.loads)


def _copy_layout(lw, shape):
    """The blocked layout the ring's pointer tile of ``shape`` will be held in: with
    ``CudaTuning.ring_wide_copies``, 8-element (16-byte) chunks where no tile of that
    shape was laid out yet (:func:`plan` fixes it only when the ring is taken), else the
    kernel's layout of ``shape``."""
    from .layout import make_layout
    if lw.tuning.ring_wide_copies and shape not in lw._layouts:
        return make_layout(shape, lw.threads, max_vec=8)
    return lw.layout(shape)


def _width(lw, ld, dim, shape):
    """Elements per copy of ``ld``'s chunks along its contiguous ``dim`` (0: no copy),
    the pointer tile held in the blocked layout of ``shape`` (the stored tile)."""
    lay = _copy_layout(lw, shape)
    if lay is None or not lay.exact:
        return 0
    info = lw.axis(ld.ptr)
    if info is None:
        return 0
    contig, div = info.contiguity[dim], info.divisibility[dim]
    w = min(lay.vec, contig, 8)
    while w > 1 and (div % (w * 2) or shape[1] % w or contig % w or lay.vec % w):
        w //= 2
    return w if w >= 2 else 0


def _load_plan(lw, for_op, rplan, d, allowed):
    from .pipeline import _PTR_OK, _slice
    body = for_op.body
    ld = d.b.op
    if (not isinstance(ld, ops.LoadOp) or ld not in body.ops or ld.mask is not None
            or ld.other is not None or ld.attrs.get("volatile") or len(ld.ptr.type.shape) != 2):
        return None
    if sum(1 for o in body.walk() for x in o.operands if x is ld.result) != 1:
        return None
    if ld.ptr.type.element.element.name not in ("fp16", "bf16"):
        return None
    sl = _slice(ld.ptr, set(body.ops), _PTR_OK)
    if not sl:
        return None
    args = set(body.args)
    if any(x in args and x not in allowed for o in sl for x in o.operands):
        return None
    K, N = ld.ptr.type.shape
    for kmajor, dim, shape in ((False, 1, (K, N)), (True, 0, (N, K))):
        if shape[1] % 64 or shape[0] % 8:
            continue
        w = _width(lw, ld, dim, shape)
        if w:
            return RingLoad(d, ld, frozenset(sl), kmajor, w, shape)
    return None


def plan(lw, for_op, rplan, hoisted=()):
    """The :class:`RingPlan` of a row-region loop (``rplan``; ``hoisted``: its dots whose
    A fragments are read before the loop), or None."""
    from .pipeline import _writes, recurrences
    if (not lw.tuning.row_ring or rplan is None or lw.arch < 80 or lw.facts is None or not lw.vectorize
            or lw.sanitize or not lw.pipeline or _writes(for_op)):
        return None
    body = for_op.body
    body_vals = {r for o in body.walk() for r in o.results}
    rec = recurrences(body)
    allowed = {body.args[0]} | set(rec)
    loads = []
    for d in rplan.forced:
        ml = lw.forced_ml.get(d)
        if ml is None or ml.wn != 1 or ml.nt % 2:
            return None
        if d not in rplan.hoist and not (d.a in body_vals and d.a.op in rplan.ops):
            return None
        rl = _load_plan(lw, for_op, rplan, d, allowed)
        if rl is None:
            return None
        loads.append(rl)
    if not loads:
        return None
    for rl in loads:                    # the layouts the widths were planned with
        lw._layouts.setdefault(rl.shape, _copy_layout(lw, rl.shape))
    stages = lw.func.attrs.get("num_stages")
    stages = 3 if stages is None else int(stages)
    p = RingPlan(loads, max(2, stages), rec)
    if lw.tuning.ring_wgmma and lw.arch == 90 and lw.num_warps in (4, 8) and all(
            lw.forced_ml[rl.dot].mt == 1 and rl.dot.b.type.shape[1] <= 256 for rl in loads):
        for rl in loads:
            rl.wgmma = True
        lw.arch_specific = True
    while p.stages > 2 and p.stages * p.stage_bytes > SMEM_LIMIT // 2:
        p.stages -= 1
    off = 0
    for rl in loads:
        rl.offset = off
        off += rl.shape[0] * rl.shape[1] * 2
    p.first = _first_dot(lw, for_op, p, body_vals, hoisted)
    p.inflight = _last_dot_inflight(lw, for_op, p)
    return p


def _last_dot_inflight(lw, for_op, p):
    """The RingLoad of the body's last dot when its wgmma group may stay in flight across
    the loop edge (``CudaTuning.wgmma_inflight``), retired by the next iteration's first
    wait: every dot in the ring as wgmma, none run ahead, the last dot's result yielded
    as is, and its carried value read by no op before the body's first dot (nor by it)."""
    if not lw.tuning.wgmma_inflight or p.first is not None or not all(rl.wgmma for rl in p.loads):
        return None
    body = for_op.body
    dots = [o for o in body.ops if isinstance(o, ops.DotOp)]
    rl = next((rl for rl in p.loads if dots and rl.dot is dots[-1]), None)
    if rl is None or len(dots) < 2:
        return None
    vals = list(body.terminator.values)
    if vals.count(rl.dot.result) != 1:
        return None
    arg = body.args[vals.index(rl.dot.result) + 1]
    for o in body.ops[:body.ops.index(dots[0]) + 1]:
        if any(x is arg for x in _reads(o)):
            return None
    return rl


def _reads(op):
    return [x for o in op.walk() for x in o.operands]


def _first_dot(lw, for_op, p, body_vals, hoisted):
    """The RingLoad of the body's first dot when it may run an iteration ahead: its A
    fragments hoisted, its accumulator loop-invariant, three stages or more."""
    if not lw.tuning.ring_rotate_first or p.stages < 3:
        return None
    if all(rl.wgmma for rl in p.loads) and ring_cap(lw) is not None:
        return None     # under the register cap (occupancy.py) two score tiles spill
    d = next(o for o in for_op.body.ops if isinstance(o, ops.DotOp))
    rl = next((rl for rl in p.loads if rl.dot is d), None)
    if (rl is None or d not in hoisted or d.acc in body_vals
            or d.acc.op in lw.deferred):
        return None
    return rl


# ---- copies -------------------------------------------------------------------------
def cp_async(lw, dst_addr, src_ptr, pred, nbytes):
    """``@pred cp.async.{cg,ca}.shared.global [dst], [src], nbytes``."""
    src = lw.b.ptrtoint(src_ptr, T.I64)
    cache = "cg" if nbytes == 16 else "ca"
    fty = ir.FunctionType(T.VOID, [T.I32, T.I64, T.I1])
    lw.b.asm(fty, f"@$2 cp.async.{cache}.shared.global [$0], [$1], {int(nbytes)};",
             "r,l,b,~{memory}", [dst_addr, src, pred], True)


class _Ring(RingStages):
    """The stages of the region dots' B tiles (async_pipeline.RingStages)."""
    OFFSET_NAME = "tj_rring_off"

    def __init__(self, lw, plan, body):
        from .pipeline import IterSlice
        from .rules_wgmma import swizzled_offset
        super().__init__(lw, plan, body, plan.recur)
        self.slice_recurrences()
        wg = all(rl.wgmma for rl in plan.loads)     # (measured on the wgmma ring only)
        self.evals = [IterSlice(lw, body, rl.sl, self.args, remat_leaves=wg and lw.tuning.ring_remat_leaves,
                                split_offsets=wg and lw.tuning.ring_split_offsets) for rl in plan.loads]
        self.offsets = []           # per load: [(slot, byte offset in the stage)]
        b = lw.b
        for rl in plan.loads:
            R, C = rl.shape
            lay = lw.layout(rl.shape)
            offs = []
            for s in range(0, lay.nslots, rl.width):
                e = lw.elem_index(lay, s)
                r, c = b.udiv(e, lw.i32(C)), b.urem(e, lw.i32(C))
                o = swizzled_offset(lw, r, b.lshr(c, lw.i32(3)), R)
                o = b.add(o, b.shl(b.and_(c, lw.i32(7)), lw.i32(1)))
                offs.append((s, b.add(o, lw.i32(rl.offset))))
            self.offsets.append(offs)

    def issue(self, stage, pred, env):
        """Copy every B tile of the iteration ``env`` into ``stage`` (one commit group)."""
        lw = self.lw
        addr = self.stage_addr(stage)
        for rl, ev, offs in zip(self.plan.loads, self.evals, self.offsets):
            tile = ev.at(rl.load.ptr, env, trans=rl.kmajor)
            for s, off in offs:
                cp_async(lw, lw.b.add(addr, off), tile.regs[s], pred, rl.width * 2)
        _void_asm(lw, "cp.async.commit_group;")


def _void_asm(lw, text):
    lw.b.asm(ir.FunctionType(T.VOID, []), text, "~{memory}", [], True)


# ---- the dots ---------------------------------------------------------------------------
def ring_dot(lw, op, ml, afr, acc_regs, kind, where):
    """``acc + A @ B`` with A's fragments ``afr`` ([k-step][mi]) and B read from its ring
    tile at ``where`` = (i32 shared address, RingLoad) by ``ldmatrix.x4``."""
    from .rules_mma import _mma
    from .rules_wgmma import _ldmatrix_x4, swizzled_offset
    addr, rl = where[:2]
    if rl.wgmma:
        return wgmma_dot(lw, op, afr, acc_regs, kind, addr, rl, wait=len(where) < 3 or where[2])
    (M, K), (_, N) = op.a.type.shape, op.b.type.shape
    b = lw.b
    q, lr = b.lshr(lw.lane, lw.i32(3)), b.and_(lw.lane, lw.i32(7))
    regs = list(acc_regs)
    for ks in range(K // 16):
        bfr = []
        for nj in range(0, ml.nt, 2):
            if rl.kmajor:       # matrix q: n-tile q>>1, k-half q&1; lane row lr = n
                n = b.add(b.add(lr, b.mul(b.lshr(q, lw.i32(1)), lw.i32(8))), lw.i32(nj * 8))
                off = swizzled_offset(lw, n, b.add(b.and_(q, lw.i32(1)), lw.i32(2 * ks)), N)
            else:               # matrix q: k-half q&1, n-tile q>>1; lane row lr = k
                k = b.add(b.add(lr, b.mul(b.and_(q, lw.i32(1)), lw.i32(8))), lw.i32(ks * 16))
                off = swizzled_offset(lw, k, b.add(b.lshr(q, lw.i32(1)), lw.i32(nj)), K)
            r4 = _ldmatrix_x4(lw, b.add(addr, off), not rl.kmajor)
            bfr += [r4[0:2], r4[2:4]]
        for mi in range(ml.mt):
            for ni in range(ml.nt):
                i = (mi * ml.nt + ni) * 4
                regs[i:i + 4] = _mma(lw, kind, afr[ks][mi], bfr[ni], regs[i:i + 4])
    return regs


def wgmma_dot(lw, op, afr, acc_regs, kind, addr, rl, wait=True):
    """``acc + A @ B`` by ``wgmma.mma_async m64nNk16`` per k-step, A from registers
    (``afr[ks][0]``: this warp's m16k16 fragment), B by descriptor from its swizzled tile
    at ``addr``; one commit group, waited for (``wait``) with the results threaded."""
    from .rules_wgmma import ROW_BYTES, PANEL, _desc, _desc_hi, desc_at, wgmma_wait
    (M, K), (_, N) = op.a.type.shape, op.b.type.shape
    b = lw.b
    nreg = N // 2
    if rl.kmajor:       # (N, K) rows of 128 bytes per 64-wide K panel: like wgmma's K-major A
        hi, tb = _desc_hi(16, 8 * ROW_BYTES), 0
        start = lambda k0: (k0 // PANEL) * N * ROW_BYTES + (k0 % PANEL) * 2   # noqa: E731
    else:               # (K, N): N-major, LBO = the next 64 columns' panel
        hi, tb = _desc_hi(K * ROW_BYTES, 8 * ROW_BYTES), 1
        start = lambda k0: k0 * ROW_BYTES                                     # noqa: E731
    outs = ",".join(f"${i}" for i in range(nreg))
    asm = (f"wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{kind}.{kind} {{{outs}}}, "
           f"{{${nreg},${nreg + 1},${nreg + 2},${nreg + 3}}}, ${nreg + 4}, 1, 1, 1, {tb};")
    cons = ",".join(["=f"] * nreg + ["r"] * 4 + ["l"] + [str(i) for i in range(nreg)])
    fty = ir.FunctionType(ir.LiteralStructType([T.F32] * nreg), [T.I32] * 4 + [T.I64] + [T.F32] * nreg)
    regs = list(acc_regs)
    _void_asm(lw, "wgmma.fence.sync.aligned;")
    base = _desc(lw, addr, hi)          # the k-steps' descriptors: constant adds to it
    for ks in range(K // 16):
        desc = desc_at(lw, base, start(ks * 16))
        res = b.asm(fty, asm, cons, list(afr[ks][0]) + [desc] + regs, True)
        regs = [b.extract_value(res, i) for i in range(nreg)]
    _void_asm(lw, "wgmma.commit_group.sync.aligned;")
    return wgmma_wait(lw, 0, regs) if wait else regs


# ---- the loop ---------------------------------------------------------------------------
def lower_for(lw, op, plan, inits, carry, rows):
    """Lower the row-region loop ``op`` with its dots' B tiles in a cp.async ring;
    ``inits`` are the iter args' tiles (accumulators in the mma layout, carried rows in
    RowLayout); returns the loop results' tiles."""
    from .rules_control import _flat, _loop_cond, _phis, _unflat, open_loop
    b = lw.b
    lb, ub, step = (lw.get(v).scalar for v in (op.lb, op.ub, op.step))
    el = op.lb.type.element
    body, n = op.body, len(op.inits)
    D, S = plan.distance, plan.stages
    lw.barrier()                        # earlier readers of shared memory are done
    ring = _Ring(lw, plan, body)
    extra = _prologue(lw, ring, plan, body, inits, (lb, ub, step, el))
    pending = _pending_pos(op, plan)
    if pending is not None:             # made once before the loop (rules_wgmma.fence_operands)
        from .rules_wgmma import fence_operands
        inits = list(inits)
        inits[pending] = Tile(fence_operands(lw, inits[pending].regs), inits[pending].layout)
    pre, head, bb, exit_, iv = open_loop(lw, "rfor", lb)
    phis = _phis(lw, _flat(inits + extra) + [lw.i32(0), lw.i32(D % S)], pre)
    rs, ws = phis[-2], phis[-1]
    b.cbranch(_loop_cond(lw, iv, ub, step, el), bb, exit_)
    b.position_at_end(bb)
    carried = _unflat(phis[:-2], inits + extra)
    _void_asm(lw, f"cp.async.wait_group {D - 1 - (plan.first is not None)};")
    if _fenced(lw, plan):               # the copies visible to wgmma's async proxy
        _void_asm(lw, "fence.proxy.async.shared::cta;")
    lw.barrier()
    env = ring.env(iv, carried)
    for _ in range(D):
        env = ring.step(env, step)
    more = _loop_cond(lw, env[body.args[0]].scalar, ub, step, el)
    if pending is None:
        ring.issue(ws, more, env)
    nxt = _iteration(lw, op, plan, ring, iv, carried, rs, carry, rows, pending)
    if pending is not None:             # every warp past its first wait: the previous
        lw.barrier()                    # iteration's groups retired, its stage free
        ring.issue(ws, more, env)
    latch = b.block
    iv.add_incoming(b.add(iv, step), latch)
    for p, v in zip(phis, _flat(nxt) + [_wrap(lw, rs, S), _wrap(lw, ws, S)]):
        p.add_incoming(v, latch)
    b.branch(head)
    b.position_at_end(exit_)
    out = carried[:n]
    if pending is not None:
        from .rules_wgmma import wgmma_wait
        out[pending] = Tile(wgmma_wait(lw, 0, out[pending].regs), out[pending].layout)
    _void_asm(lw, "cp.async.wait_group 0;")
    lw.barrier()
    ring.close()
    if all(rl.wgmma for rl in plan.loads):
        note_ring(lw, op, [rl.dot for rl in plan.loads], rows=True)
    return out


def _pending_pos(op, plan):
    """The iter arg position carrying the in-flight last dot's result (None: none)."""
    if plan.inflight is None:
        return None
    return list(op.body.terminator.values).index(plan.inflight.dot.result)


def _fenced(lw, plan) -> bool:
    """A ``fence.proxy.async`` after the copies' wait: wgmma reads the ring and
    ``CudaTuning.proxy_fence`` is on (as for async_pipeline's ring; Triton issues none)."""
    return lw.tuning.proxy_fence and any(rl.wgmma for rl in plan.loads)


def _prologue(lw, ring, plan, body, inits, bounds):
    """Issue the first ``D`` iterations' copies; with the first dot ahead, wait for the
    first tile and return [its result] (the extra carried value), else []."""
    from .rules_control import _loop_cond
    lb, ub, step, el = bounds
    D = plan.distance
    env = ring.env(lb, inits)
    for s in range(D):                  # iterations 0 .. D-1
        ring.issue(lw.i32(s), _loop_cond(lw, env[body.args[0]].scalar, ub, step, el), env)
        env = ring.step(env, step)
    if plan.first is None:
        return []
    _void_asm(lw, f"cp.async.wait_group {D - 1};")
    if _fenced(lw, plan):
        _void_asm(lw, "fence.proxy.async.shared::cta;")
    lw.barrier()
    return [_first(lw, ring, plan.first, lw.i32(0))]


def _iteration(lw, op, plan, ring, iv, carried, rs, carry, rows, pending=None):
    """The body's ops (the ring's loads gone, the dots reading stage ``rs``; the first
    dot's next result computed first when it runs ahead); returns the next carried
    tiles (the iter args', then the first dot's)."""
    from .rules_control import _flat_tiles, _private
    from .rules_mma import to_mma
    from .mma_rows import to_rows
    b, n, first = lw.b, len(op.inits), plan.first
    stage = ring.stage_addr(rs)
    gone = {rl.load: rl.sl for rl in plan.loads}
    extra = []
    if first is not None:               # the next iteration's first dot, then this one's
        extra = [_first(lw, ring, first, _wrap(lw, rs, plan.stages), wait=False)]
        lw.values[first.dot.result] = carried[n]
        gone[first.dot] = frozenset()
    lw.ring_b.update(
        {rl.dot: (b.add(stage, lw.i32(rl.offset)), rl) + ((False,) if rl is plan.inflight else ())
         for rl in plan.loads})
    nxt = _lower_body(lw, op, iv, carried[:n], gone, _private, pending)
    for rl in plan.loads:
        lw.ring_b.pop(rl.dot, None)
    nxt = [to_mma(lw, t, carry[i]) if i in carry else to_rows(lw, t, rows[i]) if i in rows
           else _flat_tiles(lw, [t])[0] for i, t in enumerate(nxt)]
    if extra and first.wgmma:           # its group retired (after this iteration's dots)
        from .rules_wgmma import wgmma_wait
        extra = [Tile(wgmma_wait(lw, 0, extra[0].regs), extra[0].layout)]
    return nxt + extra


def _first(lw, ring, rl, stage, wait=True):
    """The first dot's result (mma layout) from its B tile in ring ``stage`` (a wgmma
    group left in flight unless ``wait``)."""
    from .rules_mma import to_mma
    d = rl.dot
    ml = lw.forced_ml[d]
    kind = "f16" if d.a.type.element.name == "fp16" else "bf16"
    acc = to_mma(lw, lw.raw(d.acc), ml)
    addr = lw.b.add(ring.stage_addr(stage), lw.i32(rl.offset))
    return Tile(ring_dot(lw, d, ml, lw.hoisted_a[d], acc.regs, kind, (addr, rl, wait)), ml)


def _wrap(lw, s, stages):
    nxt = lw.b.add(s, lw.i32(1))
    return lw.b.select(lw.b.icmp_unsigned("==", nxt, lw.i32(stages)), lw.i32(0), nxt)


def _lower_body(lw, op, iv, carried, gone, private, pending=None):
    """Lower the body without the ring's loads (and the pointer ops only they read); the
    iter arg at ``pending`` (an in-flight wgmma group's result) is waited for just
    before the first op that reads it."""
    body = op.body
    lw._yielded = None
    for a, t in zip(body.args, [Tile([iv], None)] + carried):
        lw.values[a] = t
    skip = set(gone)
    for ld, sl in gone.items():
        if sl:
            skip |= private(body, ld, set(sl))
    arg = None if pending is None else body.args[pending + 1]
    for o in body.ops:
        if arg is not None and any(x is arg for x in _reads(o)):
            from .rules_wgmma import wgmma_wait
            t = lw.values[arg]
            lw.values[arg] = Tile(wgmma_wait(lw, 0, t.regs), t.layout)
            arg = None
        if o not in skip:
            lw.lower_op(o)
    out = lw._yielded
    lw._yielded = None
    return list(out)
