"""A multi-stage ``cp.async`` software pipeline for ``scf.for`` loops that feed ``tt.dot``.

Pattern (the usual matmul main loop)::

    for k in range(lb, ub, step):            # iter args: ..., acc, ..., pa, ..., pb, ...
        a = tt.load(pa)                      # pa, pb: loop-carried pointer tiles
        b = tt.load(pb)
        acc = tt.dot(a, b, acc)              # fp16/bf16 in, fp32 accumulator
        pa, pb = pa + sa, pb + sb            # a cheap pure slice of pa (of pb) alone

With ``S = num_stages`` (``func.attrs['num_stages']``, default 3) shared memory holds
a ring of S (A, B) stages in the 128B-swizzled layout of ``rules_wgmma``.  The
prologue issues the first ``D`` tiles with 16-byte ``cp.async`` (one commit group
each); iteration ``i`` waits for group ``i`` (``cp.async.wait_group D-1``), fences,
crosses one barrier, issues tile ``i+D`` into the stage consumed ``S-D`` iterations
ago (predicated on that iteration existing), and runs the dot on stage ``i % S``:
Hopper ``wgmma`` (sm_90a, one group left in flight, so ``D = S-2``) or ``ldmatrix``
+ ``mma.sync`` (``D = S-1``).  The loop-carried pointers of the original loop are
still computed (their loads are gone); copies are issued through "ahead" pointer
tiles that the slice advances ``D`` iterations early.

An operand pointer tile may also be *computed* in the body (``offs_k = k * BK + arange``,
tutorial 09; block pointers, whose offsets are carried scalars advanced by
``tl.advance``): a cheap pure slice of the induction variable, scalar recurrences
(``pipeline.recurrences``) and loop-invariant values, evaluated for the iteration each
copy belongs to (``pipeline.IterSlice``: no shared-memory broadcast in the loop; the
recurrences stepped ``D`` times by their own update ops).
A masked load (``other`` absent or 0) is copied with ``src-size`` 0 (zero fill) for
chunks whose mask is false: its mask must be such a slice too, and be constant over
each 8-element chunk (analysis constancy).  Shapes the ring cannot hold, other masks,
or a vector width under 16 bytes keep the register path; ``rejections(func, arch)``
says why.

``CudaTuning.wgmma_inflight`` (runtime/options.py; on: one wgmma group stays in flight
across the loop edge; off: wait for all) and ``CudaTuning.ring_late_issue`` (on: with a
group in flight, copy the next tile after a second barrier, so the ring runs ``S-1``
tiles ahead; off: copy before the dot, ``S-2`` ahead).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from llvmlite import ir

from ...ir import ops
from . import types as T
from .layout import make_layout
from .lowering import Tile
from . import rules_wgmma as W

SMEM_LIMIT = 227 * 1024

# fence.proxy.async.shared::cta between the cp.async wait and the barrier before the stage's
# wgmma reads (each iteration, every thread).  Triton's cp.async + wgmma pipeline issues
# none there (its fence insertion covers shared-memory stores from registers, not cp.async
# copies); False: as Triton does.  Kept on: on the H200 dropping it made no measurable
# difference (tutorial 03 0.2355 vs 0.2336 ms, grouped GEMM 0.0857 vs 0.0854):
# ``CudaTuning.proxy_fence``.


@dataclass
class AsyncPlan:
    dot: object
    acc_pos: int
    loads: list         # [(LoadOp, iter position | None)]: A's, then B's (None: computed pointer)
    slices: list        # per load: body ops computing its next pointer (carried) or its
                        # pointer from the induction variable (computed)
    mask_slices: list   # per load: body ops computing its mask from the iv (None: no mask)
    a_shape: tuple
    b_shape: tuple
    kind: str           # 'f16' | 'bf16'
    consumer: str       # 'wgmma' | 'mma'
    layout: object      # MmaLayout of the accumulator
    stages: int
    inflight: int       # wgmma groups left in flight per iteration
    fold_add: object = None   # ``acc + dot(a, b, 0)``: this add is the dot into acc
    late_issue: bool = True   # with a wgmma group in flight: copy after the dot + a 2nd barrier
    recur: dict = None        # pipeline.recurrences: scalar iter args the slices may read

    @property
    def distance(self) -> int:
        """Tiles in flight ahead of the one consumed.  The stage written in iteration i
        was consumed in iteration i+D-S+1; an in-flight wgmma group still reads it
        unless the copy waits for that group in every warpgroup (late issue)."""
        return self.stages - 1 - (self.inflight if not self.late_issue else 0)

    @property
    def stage_bytes(self) -> int:
        return W.tile_bytes(self.a_shape) + W.tile_bytes(self.b_shape)


def _uses(block, value) -> int:
    n = 0
    for o in block.walk():
        n += sum(1 for v in o.operands if v is value)
    return n


def _slice(value, body_ops: set):
    """Body ops needed to compute ``value`` (None if one is not cheap and pure): the
    slice notion of :mod:`.pipeline`, broadcasts included."""
    from .pipeline import _PTR_OK, _slice as slice_
    return slice_(value, body_ops, _PTR_OK)


def _slice_using(body, value, allowed):
    """Slice of ``value`` whose only block-arg inputs are in ``allowed`` (else None)."""
    sl = _slice(value, set(body.ops))
    if sl is None:
        return None
    others = {a for a in body.args if a not in allowed}
    for o in sl:
        if any(v in others for v in o.operands):
            return None
    return sl


def _own_slice(body, j, term):
    """Ops computing the next pointer of iter arg ``j`` from that arg alone."""
    return _slice_using(body, term.values[j], {body.args[j + 1]})


def _mask_slice(body, ld, allowed):
    """Ops computing ``ld``'s mask from the block args ``allowed`` (the induction variable
    and scalar recurrences) and invariants (None: unmasked; False: a mask the ring cannot
    re-evaluate for a later iteration)."""
    if ld.mask is None:
        return None
    sl = _slice_using(body, ld.mask, allowed)
    return False if sl is None else sl


def _load_of(body, value, term, allowed):
    """(LoadOp, iter position) when ``value`` is a plain load of a carried pointer;
    (LoadOp, None) when the body computes its pointer from the block args ``allowed``
    (the induction variable, scalar recurrences such as block pointers' offsets) and
    loop-invariant values alone (a cheap pure slice, evaluated for any iteration)."""
    ld = value.op
    if not isinstance(ld, ops.LoadOp) or ld not in body.ops:
        return None
    if (ld.other is not None and not _is_zero(ld.other)) or ld.attrs.get("volatile"):
        return None
    if _uses(body, ld.result) != 1:
        return None
    pos = {a: i - 1 for i, a in enumerate(body.args) if i > 0}
    j = pos.get(ld.ptr)
    if j is None:
        if ld.ptr.op not in body.ops or _slice_using(body, ld.ptr, allowed) is None:
            return None
    return ld, j


def _no(lw, for_op, why: str):
    """Record why ``for_op`` keeps the register path (``lw.ring_rejects``); None."""
    lw.ring_rejects[for_op] = why
    return None


def rejections(func, arch: int, num_warps: int = 4, options=None) -> list:
    """Why each dot loop of ``func`` (an ir.Function ready for the cuda backend) does
    not take the cp.async ring: a list of (loop location, reason), for diagnosis
    (``options``: its ``cuda`` tuning is used; default as shipped)."""
    from ...analysis import analyze
    from .lowering import Lowering
    lw = Lowering(func, arch, num_warps, analyze(func), True, tuning=getattr(options, "cuda", None))
    prepare(lw)
    taken = {o for o in func.walk() if isinstance(o, ops.ForOp)
             and o in lw._async_plans and plan_for(lw, o) is not None}
    fallback = _versioned_fallbacks(func)
    out = []
    for o in func.walk():
        if isinstance(o, ops.ForOp) and o not in taken and fallback.get(o) not in taken:
            if o in lw.ring_rejects:
                out.append((o.loc, lw.ring_rejects[o]))
    return out


def _versioned_fallbacks(func) -> dict:
    """{fallback loop: fast loop} of the loops ``transforms.align_version`` versioned:
    ``scf.if {..., fast loop, yield} else {loop, yield}`` (the fallback runs only when
    the launch's values fail the tested alignment or range)."""
    out = {}
    for o in func.walk():
        if isinstance(o, ops.IfOp) and len(o.regions) == 2 and o.regions[1].blocks:
            then_ops, else_ops = o.regions[0].blocks[0].ops, o.regions[1].blocks[0].ops
            if len(else_ops) == 2 and isinstance(else_ops[0], ops.ForOp) and len(then_ops) >= 2 \
                    and isinstance(then_ops[-2], ops.ForOp):
                out[else_ops[0]] = then_ops[-2]
    return out


# Inside the body of a loop around a dot loop (a persistent or grouped GEMM's tile loop),
# the thread index is read again (an opaque ``mov %tid.x``) at the top of each iteration, so
# the per-thread index math of the body (pointer tiles, ring offsets, conversion addresses,
# the versioned fallback's scalar indices) is computed per tile where it is used instead of
# being hoisted by LLVM to the kernel entry and held in registers across every path.
# ``CudaTuning.fresh_tid`` (False: one thread index for the whole kernel, as before).


@contextmanager
def fresh_thread_ids(lw, loop_op):
    """While lowering the body of ``loop_op``: ``lw.tid``/``lane``/``warp`` from a fresh
    read of ``%tid.x`` when the plan says so (:func:`wants_fresh_tid`)."""
    if loop_op not in lw.plan.fresh_tid:
        yield
        return
    saved = (lw.tid, lw.lane, lw.warp)
    tid = lw.b.asm(ir.FunctionType(T.I32, []), "mov.u32 $0, %tid.x;", "=r", [], True)
    lw.tid, lw.lane, lw.warp = tid, lw.b.and_(tid, lw.i32(31)), lw.b.lshr(tid, lw.i32(5))
    try:
        yield
    finally:
        lw.tid, lw.lane, lw.warp = saved


def wants_fresh_tid(lw, loop_op) -> bool:
    """``CudaTuning.fresh_tid`` is on and the body of ``loop_op`` holds a dot loop."""
    return lw.tuning.fresh_tid and _holds_dot_loop(loop_op)


def _holds_dot_loop(loop_op) -> bool:
    return any(isinstance(o, ops.ForOp) and o is not loop_op and any(isinstance(x, ops.DotOp) for x in o.body.ops)
               for o in loop_op.walk())


def find_plan(lw, for_op):
    """The :class:`AsyncPlan` for ``for_op`` (structure, arch and shapes only), or None
    (a dot loop's reason recorded in ``lw.ring_rejects``)."""
    if not lw.pipeline or lw.sanitize or lw.facts is None or not lw.vectorize:
        return None
    if lw.arch < 80:
        return None
    body = for_op.body
    term = body.terminator
    if term is None:
        return None
    for i, v in enumerate(term.values):
        d, add = _dot_into(body, v.op, body.args[i + 1])
        if d is None or _uses(body, d.result) != 1:
            continue
        plan = _plan_dot(lw, for_op, d, i)
        if plan is not None:
            plan.fold_add = add
            return plan
    if for_op not in lw.ring_rejects and any(isinstance(o, ops.DotOp) for o in body.ops):
        _no(lw, for_op, "no tt.dot accumulates into a carried value alone (acc = dot(a, b, acc), "
                        "acc += dot(a, b)); operands must both be loads in the loop")
    return None


def _is_zero(value) -> bool:
    o = value.op
    while isinstance(o, (ops.SplatOp, ops.BroadcastOp, ops.CastOp)):    # 0 stays 0
        o = o.src.op
    return isinstance(o, ops.ConstantOp) and o.attrs.get("value") == 0


def _dot_into(body, o, acc):
    """(dot, None) for ``dot(a, b, acc)``; (dot, add) for ``acc + dot(a, b, 0)`` (either
    operand order, fp32), the form ``acc += tl.dot(a, b)`` takes; else (None, None)."""
    if isinstance(o, ops.DotOp) and o in body.ops and o.acc is acc:
        return o, None
    if not isinstance(o, ops.AddOp) or o not in body.ops or _uses(body, o.result) != 1:
        return None, None
    for x, y in ((o.lhs, o.rhs), (o.rhs, o.lhs)):
        d = y.op
        if x is acc and isinstance(d, ops.DotOp) and d in body.ops and _is_zero(d.acc):
            if body.ops.index(d) < body.ops.index(o):
                return d, o
    return None, None


def _plan_dot(lw, for_op, d, acc_pos):
    from .rules_mma import plan as mma_plan
    body, term = for_op.body, for_op.body.terminator
    at, bt, ct = d.a.type, d.b.type, d.acc.type
    if at.element != bt.element or at.element.name not in ("fp16", "bf16") or ct.element.name != "fp32":
        return _no(lw, for_op, f"dot {at.element} x {bt.element} -> {ct.element}: fp16/bf16 -> fp32 only")
    from .pipeline import recurrences
    rec = recurrences(body)
    allowed = {body.args[0]} | set(rec)
    la, lb = _load_of(body, d.a, term, allowed), _load_of(body, d.b, term, allowed)
    if la is None or lb is None or (la[1] is not None and la[1] == lb[1]):
        which = " and ".join(n for n, x in (("A", la), ("B", lb)) if x is None) or "A and B"
        return _no(lw, for_op, f"operand {which}: not a single-use load (other 0) through a carried "
                               "pointer or a pointer computed from the induction variable, scalar "
                               "recurrences and invariants")
    slices = [_own_slice(body, j, term) if j is not None else _slice_using(body, ld.ptr, allowed)
              for ld, j in (la, lb)]
    if any(s is None for s in slices):
        return _no(lw, for_op, "a carried pointer's update is not a cheap pure slice of itself")
    msl = [_mask_slice(body, ld, allowed) for ld, _ in (la, lb)]
    if any(m is False for m in msl):
        return _no(lw, for_op, "a mask is not a slice of the induction variable, recurrences and invariants")
    (M, K), (_, N) = at.shape, bt.shape
    if K % W.PANEL or N % W.PANEL or M % 16:
        return _no(lw, for_op, f"tile shape {M}x{N}x{K}: K and N multiples of 64, M of 16")
    threads = lw.threads
    for shape in (at.shape, bt.shape):
        lay = make_layout(shape, threads, max_vec=8)
        if lay.vec != 8 or not lay.exact:
            return _no(lw, for_op, f"operand {shape}: not whole 8-element chunks over {threads} threads")
    kind = "f16" if at.element.name == "fp16" else "bf16"
    if W.wgmma_fits(lw, M, N, K):
        consumer, ml = "wgmma", W.wgmma_layout(lw, M, N)
    else:
        ml = mma_plan(lw, at, bt, ct)
        if ml is None or ml.nt % 2:
            return _no(lw, for_op, "no mma.sync warp layout with paired n-tiles")
        consumer = "mma"
    stages = lw.func.attrs.get("num_stages")
    stages = 3 if stages is None else int(stages)
    inflight = int(lw.tuning.wgmma_inflight) if consumer == "wgmma" else 0
    plan = AsyncPlan(d, acc_pos, [la, lb], slices, msl, at.shape, bt.shape, kind, consumer, ml, stages, inflight)
    plan.recur = rec
    plan.late_issue = bool(inflight) and lw.tuning.ring_late_issue
    while plan.stages * plan.stage_bytes > SMEM_LIMIT and plan.stages > 2:
        plan.stages -= 1
    if plan.inflight and plan.distance < 1:
        plan.inflight = 0
    if plan.stages < 2 or plan.distance < 1 or plan.stages * plan.stage_bytes > SMEM_LIMIT:
        return _no(lw, for_op, f"{plan.stages} stages of {plan.stage_bytes} bytes: no ring")
    return plan


def prepare(lw):
    """Before lowering: plan every loop, and give the operand tiles of planned loops
    16-byte chunks (blocked layout with 8 elements per chunk)."""
    lw._async_plans.clear()
    for o in lw.func.walk():
        if isinstance(o, ops.ForOp):
            plan = find_plan(lw, o)
            if plan is not None:
                lw._async_plans[o] = plan
                for shape in (plan.a_shape, plan.b_shape):
                    lw._layouts[shape] = make_layout(shape, lw.threads, max_vec=8)
    if lw.tuning.coalesced_results:
        for shape in _scalar_result_shapes(lw):
            lw._layouts[shape] = make_layout(shape, lw.threads, max_vec=1)


# A planned dot loop's (M, N) result reaches memory through shared memory anyway (the
# accumulator's conversion to the blocked layout).  When every access of that shape is
# scalar (tutorial 08's C tile: ``c_ptr`` and ``ldc`` are loaded, so no alignment is
# proven and each element is its own 2-byte store) but contiguous along its rows, the
# shape is laid out one element per thread: a warp-wide store then writes 32 consecutive
# elements (64 bytes) instead of one element in every 4 over 256 bytes, the order Triton's
# coalescing gives such stores; the conversion reads the staging in that order at no
# extra cost.  ``CudaTuning.coalesced_results`` (False: chunks of 4 as before).


def _scalar_result_shapes(lw):
    """Accumulator shapes of the planned loops whose every load and store in the kernel
    is scalar but contiguous along the last dimension (not an operand shape)."""
    from .rules_memory import vector_width
    known = dict(lw._layouts)           # the checks' lw.layout lookups are not decisions
    try:
        return _scalar_shapes(lw, vector_width)
    finally:
        lw._layouts.clear()
        lw._layouts.update(known)


def _scalar_shapes(lw, vector_width):
    shapes = {tuple(p.dot.result.type.shape) for p in lw._async_plans.values()}
    shapes -= {s for p in lw._async_plans.values() for s in (p.a_shape, p.b_shape)}
    out = []
    for shape in shapes:
        accs = [o for o in lw.func.walk() if isinstance(o, (ops.LoadOp, ops.StoreOp))
                and tuple(o.ptr.type.shape) == shape]
        stores = [o for o in accs if isinstance(o, ops.StoreOp)]
        if not stores or len(shape) != 2 or lw.facts is None:
            continue
        infos = [lw.axis(o.ptr) for o in stores]
        if all(i is not None and i.contiguity[-1] >= 2 for i in infos) and all(
                vector_width(lw, o, o.ptr, o.mask, o.ptr.type.element.element) == 1 for o in accs):
            out.append(shape)
    return out


def plan_for(lw, for_op):
    """The loop's plan if its pointers also allow 16-byte copies (analysis facts)."""
    plan = lw._async_plans.get(for_op)
    if plan is None:
        return None
    from .rules_memory import vector_width
    term = for_op.body.terminator
    for ld, j in plan.loads:
        ptrs = (ld.ptr,) if j is None else (for_op.inits[j], for_op.body.args[j + 1], term.values[j])
        for pv in ptrs:
            if lw.layout(pv.type).vec != 8 or vector_width(lw, ld, pv, None, ld.ptr.type.element.element) != 8:
                return _no(lw, for_op, "an operand pointer is not proved 16-byte contiguous and aligned")
        if ld.mask is not None:
            info = lw.axis(ld.mask)
            if info is None or info.constancy[-1] % 8:
                return _no(lw, for_op, "a mask is not proved constant over 8-element chunks")
    return plan


# ---- the ring ----------------------------------------------------------------------
class RingStages:
    """Shared-memory stages of a ``cp.async`` ring and the recurrences that step its copy
    addresses (shared by :class:`Ring` and ``rows_ring``'s ring).  The stages live above
    the scratch shared memory that ops inside the loop use (broadcasts of masks, ...),
    which all start at offset 0: that size is known only once the loop is lowered, so the
    ring's offset is a placeholder constant filled in by :meth:`close` (LLVM folds it)."""
    OFFSET_NAME = "tj_ring_off"

    def __init__(self, lw, plan, body, recur):
        self.lw, self.plan = lw, plan
        base = lw.smem(0, align=1024)
        name = f"{self.OFFSET_NAME}{len(lw.module.globals)}"
        g = ir.GlobalVariable(lw.module, T.I32, name, addrspace=4)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(T.I32, 0)
        g.type = ir.PointerType(addrspace=4)
        self.off_var = g
        off = lw.b.load(g, typ=T.I32)
        off.align = 4
        self.base = lw.b.add(W.shared_addr(lw, base), off)
        self.saved_window = lw.smem_window
        lw.smem_window = 0
        self.recur, self.body = recur, body
        self.args = [body.args[0]] + list(recur)

    def slice_recurrences(self):
        """The recurrences' update slices (carried scalars such as block-pointer offsets)."""
        from .pipeline import IterSlice
        body, recur = self.body, self.recur
        self.rec = [(a, j, body.terminator.values[j]) for a, (j, _) in recur.items()]
        self.rec_eval = IterSlice(self.lw, body, set().union(set(), *[sl for _, sl in recur.values()]),
                                  self.args)

    def close(self):
        """Fix the ring's offset above the loop's scratch and reserve its bytes."""
        lw = self.lw
        size = self.plan.stages * self.plan.stage_bytes
        off = (lw.smem_window + 1023) // 1024 * 1024
        self.off_var.initializer = ir.Constant(T.I32, off)
        lw.smem(off + size, align=1024)
        lw.smem_window = None if self.saved_window is None else max(self.saved_window, off + size)

    def stage_addr(self, stage):
        return self.lw.b.add(self.base, self.lw.b.mul(stage, self.lw.i32(self.plan.stage_bytes)))

    def env(self, iv, tiles):
        """The slices' inputs at an iteration: the induction variable ``iv`` (LLVM scalar)
        and the recurrences' tiles ``tiles`` (iter position -> tile)."""
        out = {self.args[0]: Tile([iv], None)}
        out.update({a: tiles[j] for a, j, _ in self.rec})
        return out

    def step(self, env, step):
        """``env`` one iteration later (the recurrences' update slices under ``env``)."""
        iv = env[self.args[0]].scalar
        out = {self.args[0]: Tile([self.lw.b.add(iv, step)], None)}
        out.update({a: self.rec_eval.at(v, env) for a, _, v in self.rec})
        return out


class Ring(RingStages):
    """The matmul ring: A's and B's tiles of each stage, copied in 16-byte chunks."""

    def __init__(self, lw, plan, body):
        super().__init__(lw, plan, body, plan.recur or {})
        from .pipeline import IterSlice
        self.evals = [IterSlice(lw, body, (sl if j is None else set()) | (msl or set()), self.args)
                      for (_, j), sl, msl in zip(plan.loads, plan.slices, plan.mask_slices)]
        self.slice_recurrences()
        self.offsets = []          # per load: this thread's chunk offsets in a stage (reg, imm)
        extra = 0
        for shape in (plan.a_shape, plan.b_shape):
            self.offsets.append(_chunk_offsets(lw, lw.layout(shape), shape, extra))
            extra += W.tile_bytes(shape)

    def issue(self, body, tiles, stage, pred, env):
        """Copy the tiles of the iteration ``env`` (see :meth:`env`) into ``stage``:
        through the carried pointer tile of each load in ``tiles``, or (None) the load's
        pointer slice evaluated there."""
        lw = self.lw
        addr, at = self.stage_addr(stage), 0
        if lw.tuning.imm_offsets and isinstance(stage, ir.Constant):      # the prologue's stages
            addr, at = self.base, int(stage.constant) * self.plan.stage_bytes
        sixteen, zero = lw.i32(16), lw.i32(0)
        for (ld, _), ev, tile, offs in zip(self.plan.loads, self.evals, tiles, self.offsets):
            if tile is None:
                tile = ev.at(ld.ptr, env)
            masks = None if ld.mask is None else ev.at(ld.mask, env).regs
            for k, (off, imm) in enumerate(offs):
                nbytes = None if masks is None else lw.b.select(masks[k * 8], sixteen, zero)
                W.cp_async16(lw, lw.b.add(addr, off), tile.regs[k * 8], pred, nbytes, imm + at)
        W.cp_async_commit(lw)

    def advance(self, body, term, tiles):
        """The next pointer tiles of ``tiles`` (each carried load's slice, its arg bound to
        the tile; None for computed pointers)."""
        return [None if j is None else _evaluate(self.lw, body, sl, {body.args[j + 1]: t}, term.values[j])
                for (ld, j), sl, t in zip(self.plan.loads, self.plan.slices, tiles)]


def _chunk_offsets(lw, lay, shape, extra):
    """[(register, immediate)] byte offsets of this thread's 16-byte chunks of an (R, C)
    operand tile (layout ``lay``, 8 elements a chunk) in its swizzled stage, ``extra``
    bytes in.  When the program's threads cover whole rows (T*8 a multiple of C) and a
    thread's chunks lie a multiple of 8 rows apart, every chunk has the same panel and
    swizzle as the first: chunk k is the first's offset + k * rows * 128 bytes, one
    register and immediates (``CudaTuning.imm_offsets``); else one register each."""
    R, C = shape
    b = lw.b

    def offset(s0):
        e = lw.elem_index(lay, s0)
        r, c = b.udiv(e, lw.i32(C)), b.urem(e, lw.i32(C))
        return b.add(W.swizzled_offset(lw, r, b.lshr(c, lw.i32(3)), R), lw.i32(extra))
    span = lay.threads * lay.vec
    if lw.tuning.imm_offsets and lay.exact and lay.vec == 8 and span % C == 0 and (span // C) % 8 == 0:
        first = offset(0)
        return [(first, k * (span // C) * W.ROW_BYTES) for k in range(lay.nslots // 8)]
    return [(offset(s0), 0) for s0 in range(0, lay.nslots, 8)]


def _evaluate(lw, body, sl, bindings, value):
    """``value``'s tile with the body ops ``sl`` lowered under ``bindings`` (block arg ->
    tile); every binding and op result is restored afterwards."""
    keys = list(bindings) + [r for o in body.ops if o in sl for r in o.results]
    saved = {k: lw.values[k] for k in keys if k in lw.values}
    lw.values.update(bindings)
    for o in body.ops:
        if o in sl:
            lw.lower_op(o)
    out = lw.get(value)
    for k in keys:
        if k in saved:
            lw.values[k] = saved[k]
        else:
            lw.values.pop(k, None)
    return out


def _wrap(lw, s, stages):
    n = lw.b.add(s, lw.i32(1))
    return lw.b.select(lw.b.icmp_unsigned("==", n, lw.i32(stages)), lw.i32(0), n)


def _prologue(lw, op, ring, inits, bounds):
    """Issue the first ``D`` tiles (stages 0..D-1); returns the carried loads' pointer
    tiles ``D`` iterations on (None for computed pointers).  The slices' loop-invariant
    leaves are lowered here, before the loop (the recurrences' step included)."""
    from .rules_control import _loop_cond
    lb, ub, step, el = bounds
    body, term = op.body, op.body.terminator
    ahead = [None if j is None else inits[j] for _, j in ring.plan.loads]
    env = ring.env(lb, inits)
    for s in range(ring.plan.distance):
        ivs = env[body.args[0]].scalar
        ring.issue(body, ahead, lw.i32(s), _loop_cond(lw, ivs, ub, step, el), env)
        ahead = ring.advance(body, term, ahead)
        env = ring.step(env, step)
    return ahead


def lower_for(lw, op, plan):
    """Lower ``op`` (an ``scf.for`` matching ``plan``) as a cp.async ring pipeline."""
    from .rules_control import _flat, _flat_tiles, _loop_cond, _phis, _unflat, open_loop
    from .rules_mma import to_mma
    b = lw.b
    lw.arch_specific |= plan.consumer == "wgmma"
    lb, ub, step = (lw.get(v).scalar for v in (op.lb, op.ub, op.step))
    el = op.lb.type.element
    n = len(op.inits)
    inits = [to_mma(lw, lw.raw(v), plan.layout) if i == plan.acc_pos else lw.get(v)
             for i, v in enumerate(op.inits)]
    body, term = op.body, op.body.terminator
    lw.barrier()                                   # earlier readers of shared memory are done
    ring = Ring(lw, plan, body)
    D, S = plan.distance, plan.stages
    ahead = _prologue(lw, op, ring, inits, (lb, ub, step, el))
    if plan.consumer == "wgmma":        # the initial accumulator made once, before the loop
        acc = inits[plan.acc_pos]
        inits[plan.acc_pos] = Tile(W.fence_operands(lw, acc.regs), acc.layout)
    pre, head, bb, exit_, iv = open_loop(lw, "afor", lb)
    state = inits + [t for t in ahead if t is not None]
    phis = _phis(lw, _flat(state) + [lw.i32(0), lw.i32(D % S)], pre)
    rs, ws = phis[-2], phis[-1]
    b.cbranch(_loop_cond(lw, iv, ub, step, el), bb, exit_)
    b.position_at_end(bb)
    carried = _unflat(phis[:-2], state)
    held = iter(carried[n:])
    ahead_now = [None if t is None else next(held) for t in ahead]
    W.cp_async_wait(lw, D - 1)
    if plan.consumer == "wgmma" and lw.tuning.proxy_fence:
        W.fence_async_shared(lw)
    lw.barrier()

    def issue_next():
        env = ring.env(iv, carried[:n])
        for _ in range(D):
            env = ring.step(env, step)
        ivd = env[body.args[0]].scalar
        ring.issue(body, ahead_now, ws, _loop_cond(lw, ivd, ub, step, el), env)

    if not plan.late_issue:
        issue_next()
    ahead_next = [t for t in ring.advance(body, term, ahead_now) if t is not None]
    nxt = _lower_body(lw, op, plan, ring, iv, carried[:n], rs, issue_next if plan.late_issue else None)
    nxt = [t if i == plan.acc_pos else _flat_tiles(lw, [t])[0] for i, t in enumerate(nxt)]
    latch = b.block
    iv.add_incoming(b.add(iv, step), latch)
    for p, v in zip(phis, _flat(nxt + ahead_next) + [_wrap(lw, rs, S), _wrap(lw, ws, S)]):
        p.add_incoming(v, latch)
    b.branch(head)
    b.position_at_end(exit_)
    out = carried[:n]
    acc = out[plan.acc_pos]
    if plan.inflight:
        out[plan.acc_pos] = Tile(W.wgmma_wait(lw, 0, acc.regs), acc.layout)
    W.cp_async_wait(lw, 0)
    lw.barrier()
    ring.close()
    if plan.consumer == "wgmma":
        from .occupancy import note_ring
        note_ring(lw, op, [plan.dot], rows=False)
    return out


def _dead_ops(body, gone):
    """``gone`` plus the pure body ops whose results only feed ops that are gone (the
    replaced loads' masks and others: a broadcast costs barriers even when unused)."""
    users = {}
    for o in body.walk():
        for v in o.operands:
            users.setdefault(v, []).append(o)
    dead = set(gone)
    for o in reversed(body.ops):
        if o in dead or o.regions or not o.has_trait("pure"):
            continue
        if all(u in dead for r in o.results for u in users.get(r, [])):
            dead.add(o)
    return dead


def _lower_body(lw, op, plan, ring, iv, carried, rs, after_dot=None):
    """Lower the body with the planned loads gone and the dot reading ring stage ``rs``;
    ``after_dot`` (late issue) runs behind a barrier once every warpgroup has retired
    its previous wgmma group."""
    body = op.body
    for a, t in zip(body.args, [Tile([iv], None)] + carried):
        lw.values[a] = t
    lw._yielded = None
    skip = _dead_ops(body, {ld for ld, _ in plan.loads})
    for o in body.ops:
        if o in skip:
            continue
        if o is plan.dot:
            acc = carried[plan.acc_pos]
            consume = W.wgmma_consume if plan.consumer == "wgmma" else W.mma_consume
            regs = consume(lw, plan, ring.stage_addr(rs), acc.regs)
            lw.values[o.result] = Tile(regs, plan.layout)
            if after_dot is not None:
                lw.barrier()
                after_dot()
            continue
        if o is plan.fold_add:
            lw.values[o.result] = lw.values[plan.dot.result]
            continue
        lw.lower_op(o)
    out = lw._yielded
    lw._yielded = None
    return list(out)
