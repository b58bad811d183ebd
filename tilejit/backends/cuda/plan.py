"""The cuda planning stage: every code-generation decision of a kernel, made on the tile
IR before any LLVM IR is emitted, and printed as the stage ``cuda-plan``.

    plan = plan_kernel(lw)        # kernel.lower_kernel calls it first
    plan.loops[for_op]            # LoopPlan: the loop's strategy and why
    plan.access[load_or_store]    # elements per vector access (analysis/access.py)
    print_plan(lw)                # the stage's text (TILEJIT_DUMP_DIR, ``tilejit dump``)

The passes, in order: the branch loads hoisted (hoist_loads.py), the cp.async rings of
dot loops (async_pipeline.prepare: their operand layouts get 16-byte chunks), the
operand layouts of loop-free dot kernels (rules_mma.widen_operand_chunks), the
dim-0-first layouts of tiles accessed along dim 0 and the stores restaged from them
(dim_order.py), the rematerialisation plan of row reductions (remat.py), each ``scf.for``'s strategy
(:func:`plan_loop`: the choice among the cp.async ring, the row region and its cp.async
ring, mma accumulators with rotated loads, or plain code), the vector width of every
load and store (and, for scattered stores, the move to one element per thread:
scatter.wants_relayout), the layout of every dot (mma.sync -- also for an fp16/bf16
accumulator, widened: rules_mma.plan_half_acc --, or multiply-adds; the dots of a
cp.async ring are the ring's; a row region's dots that take A from registers:
_a_from_registers), the strategy of every tt.reduce
(rules_reduce.reduce_strategy), the full reductions of one block fused into one exchange
across warps (rules_reduce.plan_siblings) and the loops around dot loops whose bodies read the
thread index again (async_pipeline.fresh_thread_ids).  The register cap (occupancy.py)
depends on what the rings emitted and is decided after lowering; the printed stage
reports it.

The lowering rules read the plan (``lw.plan``) and decide none of this themselves.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ...ir import ops
from . import mma_rows, rows_ring
from .async_pipeline import _versioned_fallbacks, plan_for, prepare, wants_fresh_tid
from .dim_order import plan_dim0_layouts
from .hoist_loads import hoist_branch_loads
from .llvm_pipeline import plan_triton_pipeline
from .pipeline import _PTR_OK, IterSlice, _slice, plan_prefetch
from .remat import start as remat_start
from .rules_memory import vector_width
from .rules_mma import (_uses, plan_for_dot, plan_half_acc, plan_kmajor_loads, row_scaled_acc,
                        widen_operand_chunks)
from .rules_reduce import plan_siblings, reduce_strategy
from .scatter import wants_relayout


@dataclass
class LoopPlan:
    """How one ``scf.for`` is lowered.  ``strategy``: 'cp.async ring' (``ring``: an
    async_pipeline.AsyncPlan), 'row ring' (``row_ring``: rows_ring.RingPlan, inside the
    row region ``rows``), 'row region' (``rows``: mma_rows.RowPlan), 'mma accumulators'
    (``carry``: {iter position: MmaLayout} of accumulators fed only through a dot) or
    'plain'.  ``reason``: why the cp.async ring was not taken (None: taken, or no dot)."""
    strategy: str
    reason: str | None = None
    ring: object = None
    rows: object = None
    row_ring: object = None
    carry: dict = field(default_factory=dict)
    hoist_a: tuple = ()         # region dots whose invariant A fragments are read before the loop
    scaled: set = field(default_factory=set)        # accumulators (iter positions) scaled by a row vector in the dot
    prefetch: list = field(default_factory=list)    # [(load, iter position | pointer slice)]: rotated
    early: set = field(default_factory=set)         # body ops lowered before the rotated loads
    kmajor: dict = field(default_factory=dict)      # rotated load -> elements per K-major access
    direct: dict = field(default_factory=dict)      # load -> slice: pointer from its IterSlice
    widths: dict = field(default_factory=dict)      # (rotated load, pointer value) -> vector width

    def describe(self) -> str:
        """One line: the strategy and what it holds (``explain``)."""
        if self.ring is not None:
            r = self.ring
            return f"cp.async ring ({r.consumer}, {r.stages} stages, {r.distance} tiles ahead)"
        if self.row_ring is not None:
            rr = self.row_ring
            dots = "wgmma" if all(rl.wgmma for rl in rr.loads) else "mma.sync"
            return (f"row ring (softmax rows in the accumulator layout, the dots' B tiles in a "
                    f"{rr.stages}-stage cp.async ring, {dots})")
        parts = [self.strategy]
        if self.rows is not None:
            parts.append("softmax rows in the accumulator layout")
        if self.prefetch:
            parts.append(f"{len(self.prefetch)} load(s) rotated a tile ahead")
        if self.direct:
            parts.append(f"{len(self.direct)} load(s) addressed from the induction variable")
        return ", ".join(parts)

    @property
    def row_map(self) -> dict:
        """{iter position: RowLayout} of the carried row vectors (with accumulators only)."""
        return self.rows.rows if self.rows is not None and self.carry else {}


@dataclass
class CudaPlan:
    """The decisions for one kernel (``lw.plan``), keyed by the tile-IR ops they are for."""
    loops: dict = field(default_factory=dict)       # scf.for -> LoopPlan
    access: dict = field(default_factory=dict)      # load / store -> elements per access
    kmajor: dict = field(default_factory=dict)      # loop-free load -> elements per access along dim 0, loaded transposed
    dots: dict = field(default_factory=dict)        # tt.dot -> MmaLayout (mma.sync) or None (FMA)
    half_acc: dict = field(default_factory=dict)    # FMA tt.dot -> MmaLayout: fp16/bf16 accumulator on mma
    reductions: dict = field(default_factory=dict)  # tt.reduce -> (source Layout, (strategy, lanes))
    fused: dict = field(default_factory=dict)       # tt.reduce -> later full reductions lowered with it
    a_regs: dict = field(default_factory=dict)      # mma tt.dot -> why its A fragments come from registers
    relayout: dict = field(default_factory=dict)    # tt.store -> (pointer Layout, moved to one element per thread)
    restaged: dict = field(default_factory=dict)    # tt.store of a dim-0-first tile -> (row-major Layout, width): moved there first
    llvm_pipeline: str = ""                         # why LLVM O3 runs without the NVPTX target ('': with it)
    fresh_tid: set = field(default_factory=set)     # loops whose body reads %tid.x again (around dot loops)
    layouts: dict = field(default_factory=dict)     # shape -> Layout chosen by a pass (not the default)
    hoisted: int = 0                                # branch loads issued before their scf.if
    remat: object = None                            # remat.Remat (None: nothing recomputed)
    min_ctas: int = 0                               # .minnctapersm asked by the remat plan
    reg_cap: int | None = None                      # registers per thread (occupancy.py, after lowering)


# ---------------------------------------------------------------- the passes
def plan_kernel(lw) -> CudaPlan:
    """Every decision for ``lw.func`` (module docstring); fills ``lw``'s layout table,
    ``forced_ml`` and ``deferred`` as the strategies need."""
    p = CudaPlan()
    lw.plan = p
    if not lw.sanitize and lw.tuning.hoist_branch_loads:
        p.hoisted = hoist_branch_loads(lw.func)     # a branch's loads issued before it
    before = dict(lw._layouts)
    prepare(lw)                         # the cp.async rings' operand layouts
    widen_operand_chunks(lw)            # loop-free dot kernels: 16-byte operand loads
    layouts, p.restaged = plan_dim0_layouts(lw)     # tiles accessed along dim 0 (dim_order.py)
    lw._layouts.update(layouts)
    p.layouts = {s: l for s, l in lw._layouts.items() if before.get(s) is not l}
    attrs = set(lw.kernel.attributes)
    p.remat = remat_start(lw)           # recompute cheap values after reductions (remat.py)
    p.min_ctas = 2 if set(lw.kernel.attributes) - attrs else 0
    for o in lw.func.walk():
        if isinstance(o, ops.ForOp):
            p.loops[o] = plan_loop(lw, o)
            p.a_regs.update(_a_from_registers(lw, p.loops[o]))
        if isinstance(o, (ops.ForOp, ops.WhileOp)) and wants_fresh_tid(lw, o):
            p.fresh_tid.add(o)
    region = {o for lp in p.loops.values() if lp.rows is not None for o in lp.rows.ops}
    for o in lw.func.walk():
        if isinstance(o, (ops.LoadOp, ops.StoreOp)):
            p.access[o] = vector_width(lw, o, o.ptr, o.mask, o.ptr.type.element.element)
            if isinstance(o, ops.StoreOp):    # scattered: one element per thread (scatter.py)
                lay = lw.layout(o.ptr.type)
                p.relayout[o] = (lay, wants_relayout(lw, o.ptr, lay, p.access[o]))
        elif isinstance(o, ops.DotOp):     # a row region's dots: its forced layout
            p.dots[o] = plan_for_dot(lw, o)
            half = plan_half_acc(lw, o) if p.dots[o] is None else None
            if half is not None:
                p.half_acc[o] = half
        elif isinstance(o, ops.ReduceOp) and o in region:
            p.reductions[o] = (None, ("in the row region (mma_rows.py)", None))
        elif isinstance(o, ops.ReduceOp):
            lay = lw.layout(o.src.type)
            p.reductions[o] = (lay, reduce_strategy(lw, o, lay))
    p.fused = plan_siblings(lw, p.reductions, region, set())   # one exchange across warps
    p.llvm_pipeline = plan_triton_pipeline(lw)   # Triton's O3 for masked loads in loops
    p.kmajor = plan_kmajor_loads(lw, p.dots, p.a_regs)          # column-major dot operands
    return p


def plan_loop(lw, op) -> LoopPlan:
    """The strategy of one ``scf.for`` (see :class:`LoopPlan`)."""
    aplan = plan_for(lw, op)
    reason = lw.ring_rejects.get(op)
    if aplan is not None:
        return LoopPlan("cp.async ring", None, ring=aplan)
    rplan = mma_rows.plan_rows(lw, op) if lw.pipeline else None
    carry, scaled = _mma_carried(lw, op)
    lp = LoopPlan("mma accumulators" if carry else "plain", reason, carry=carry, scaled=scaled)
    if rplan is not None and carry:
        lp.rows, lp.strategy = rplan, "row region"
        lp.hoist_a = tuple(d for d in rplan.hoist if lw.forced_ml[d].nt % 2 == 0)
    elif rplan is not None:             # no carried accumulator: keep the usual dot layouts
        for d in rplan.forced:
            lw.forced_ml.pop(d, None)
    rows = lp.row_map
    if rows:                          # the dots' B tiles in a cp.async ring (rows_ring)
        ring = rows_ring.plan(lw, op, rplan, lp.hoist_a)
        if ring is not None:
            lp.row_ring, lp.strategy = ring, "row ring"
            return lp
    _plan_rotation(lw, op, lp)
    return lp


def _a_from_registers(lw, lp) -> dict:
    """{dot: reason} for a row region's dots (even n-tile count) whose A operand is not
    staged through shared memory by lower_dot_mma: read into fragments once before the
    loop (``hoist_a``), or a region tile whose m16n8 accumulator fragments are the m16k16
    A fragments (mma_rows.register_a)."""
    out = {}
    if lp.rows is None:
        return out
    for d in lp.rows.forced:
        ml = lw.forced_ml.get(d)
        if ml is None or ml.nt % 2:
            continue
        if d in lp.hoist_a:
            out[d] = "loop-invariant: fragments read once before the loop"
        elif ml.wn == 1 and d.a.op in lp.rows.ops and len(d.a.type.shape) == 2:
            out[d] = "a region tile: its accumulator fragments"
    return out


def _plan_rotation(lw, op, lp):
    """The rotated loads (requested an iteration ahead), their vector widths, the K-major
    ones and the loads whose pointers come from an IterSlice."""
    if not lp.carry or not lw.pipeline:
        return
    loads, early = plan_prefetch(op)
    rows = lp.row_map
    loads = [(ld, j) for ld, j in loads
             if isinstance(j, int) or (rows and lw.tuning.rotate_scalar_loads) or _wide(lw, ld)]
    if rows:
        _kmajor_loads(lw, op, lp.rows, loads, lp.kmajor)
    lp.prefetch, lp.early = loads, early
    lp.direct = _direct_loads(lw, op, {ld for ld, _ in loads})
    term = op.body.terminator
    for ld, j in loads:
        el = ld.ptr.type.element.element
        for pv in ((op.inits[j], term.values[j]) if isinstance(j, int) else (ld.ptr,)):
            lp.widths[(ld, pv)] = vector_width(lw, ld, pv, None, el)


def _mma_carried(lw, op):
    """({iter position: MmaLayout}, {scaled positions}) for accumulators fed only through a
    dot (acc = dot(a, b, acc)); a row-scaled accumulator's multiply (acc * v[:, None]) is
    deferred to the dot (``lw.deferred``)."""
    body = op.body
    term = body.terminator
    out, scaled_at = {}, set()
    if term is None:
        return out, scaled_at
    for i, v in enumerate(term.values):
        d = v.op
        if not isinstance(d, ops.DotOp):
            continue
        scaled = d.acc is not body.args[i + 1] and row_scaled_acc(op, d.acc, body.args[i + 1])
        if d.acc is body.args[i + 1] or scaled:
            ml = plan_for_dot(lw, d)
            if ml is not None:
                out[i] = ml
                if scaled:      # lower_dot_mma scales the rows itself
                    scaled_at.add(i)
                    lw.deferred[d.acc.op] = scaled
                    bc = scaled[1].op
                    if _uses(op, scaled[1]) == 1:
                        lw.deferred[bc] = None
    return out, scaled_at


def _kmajor_loads(lw, op, rplan, loads, out):
    """Into ``out``: the rotated loads that are the region dots' K-major B operands
    (mma_rows.kmajor_width: loaded transposed, in vectors)."""
    for ld, j in loads:
        w = 0 if isinstance(j, int) else mma_rows.kmajor_width(lw, op, rplan, ld, j)
        if w and iter_slice(lw, op, ld, j) is not None:
            out[ld] = w


def _wide(lw, ld):
    """A computed-pointer load is rotated only when it moves vectors: a scalar (strided)
    tile's addresses and values held across the body cost more registers than its
    latency costs time (the attention loop's transposed K spilled)."""
    return vector_width(lw, ld, ld.ptr, None, ld.ptr.type.element.element) > 1


def iter_slice(lw, op, ld, sl):
    """The (cached) IterSlice of ``ld``'s pointer (and mask) slice ``sl`` when every block
    arg it reads is a scalar (None otherwise)."""
    cache = lw.iter_slices
    if ld not in cache:
        body = op.body
        args = {x for o in sl for x in o.operands if any(x is a for a in body.args)}
        ok = all(not a.type.shape for a in args)
        cache[ld] = IterSlice(lw, body, sl, args or {body.args[0]}) if ok else None
    return cache[ld]


def _direct_loads(lw, op, rotated):
    """{load: slice} for the body's other loads whose pointer (and mask) the body computes
    by cheap pure slices of scalar block args and invariants: lowered through an
    IterSlice (no shared-memory broadcast in the loop)."""
    body = op.body
    body_ops = set(body.ops)
    out = {}
    for o in body.ops:
        if not isinstance(o, ops.LoadOp) or o in rotated or o.ptr.op not in body_ops:
            continue
        sl = _slice(o.ptr, body_ops, _PTR_OK)
        msl = set() if o.mask is None else _slice(o.mask, body_ops, _PTR_OK)
        if not sl or msl is None:
            continue
        if iter_slice(lw, op, o, sl | msl) is not None:
            out[o] = sl | msl
    return out


# ---------------------------------------------------------------- the printed stage
def _loc(op) -> str:
    loc = getattr(op, "loc", None)
    if loc is None or not getattr(loc, "line", 0):
        return "?"
    return f"{os.path.basename(str(loc.file))}:{loc.line}:{loc.col}"


def _ty(v) -> str:
    t = v.type
    return f"<{'x'.join(map(str, t.shape))}x{t.element}>" if t.shape else str(t)


def _access_ty(o) -> str:
    """``<shape x element>`` of a load's result or a store's value."""
    return _ty(o.result if isinstance(o, ops.LoadOp) else o.value)


def _load_name(ld) -> str:
    return f"tt.load {_ty(ld.result)} at {_loc(ld)}"


def _loop_lines(lp) -> list:
    out = []
    if lp.ring is not None:
        r = lp.ring
        out.append(f"ring: {r.consumer}, {r.stages} stages of {r.stage_bytes} B, {r.distance} ahead, "
                   f"{r.inflight} group(s) in flight, A {r.a_shape} B {r.b_shape} {r.kind}")
        for ld, j in r.loads:
            out.append(f"copy: {_load_name(ld)} ({'carried pointer' if j is not None else 'computed pointer'})")
    if lp.rows is not None:
        out.append(f"rows: {lp.rows.M} rows over {lp.rows.wm} warps, {len(lp.rows.ops)} ops in the region, "
                   f"carried rows at {sorted(lp.rows.rows)}")
        for d in lp.hoist_a:
            out.append(f"hoisted A: tt.dot at {_loc(d)}")
    if lp.row_ring is not None:
        rr = lp.row_ring
        out.append(f"row ring: {rr.stages} stages of {rr.stage_bytes} B, {rr.distance} ahead"
                   + (f", first dot an iteration ahead ({_loc(rr.first.dot)})" if rr.first is not None else "")
                   + (f", last dot in flight over the loop edge ({_loc(rr.inflight.dot)})"
                      if getattr(rr, "inflight", None) is not None else ""))
        for rl in rr.loads:
            out.append(f"copy: {_load_name(rl.load)} {'K-major' if rl.kmajor else 'N-major'} "
                       f"{rl.shape}, {rl.width} x 2 B per cp.async" + (", wgmma" if rl.wgmma else ", mma.sync"))
    for i, ml in sorted(lp.carry.items()):
        out.append(f"accumulator {i}: mma {ml.shape} warps {ml.wm}x{ml.wn}"
                   + (", its row scaling applied in the mma layout" if i in lp.scaled else ""))
    for ld, j in lp.prefetch:
        how = f"carried pointer {j}" if isinstance(j, int) else "computed pointer"
        w = "/".join(str(lp.widths[k]) for k in lp.widths if k[0] is ld)
        out.append(f"rotated: {_load_name(ld)} ({how}), width {w}"
                   + (f", K-major width {lp.kmajor[ld]}" if ld in lp.kmajor else ""))
    for ld in lp.direct:
        out.append(f"direct: {_load_name(ld)} (pointer from the induction variable)")
    return out


def plan_notes(p: CudaPlan) -> list:
    """The kernel-level decisions of ``p`` that ``explain`` reports, one line each."""
    out = []
    if p.hoisted:
        out.append(f"{p.hoisted} load(s) of a branch issued before it: the same addresses are "
                   "stored after it on every path (backends/cuda/hoist_loads.py)")
    if p.remat is not None:
        out.append(f"values recomputed after {len(p.remat.plan.points)} reduction(s) instead of held "
                   "across them (backends/cuda/remat.py)"
                   + (f"; .minnctapersm {p.min_ctas}: what stays held fits two CTAs per SM" if p.min_ctas else ""))
    return out


def print_plan(lw) -> str:
    """The ``cuda-plan`` stage: the plan of ``lw`` (after lowering: with the register cap)."""
    p, func = lw.plan, lw.func
    fallbacks = _versioned_fallbacks(func)
    lines = [f"cuda-plan @{func.name} (sm_{lw.arch}, {lw.num_warps} warps)"]
    for shape, lay in sorted(p.layouts.items(), key=lambda kv: str(kv[0])):
        lines.append(f"  layout {'x'.join(map(str, shape))}: {lay.vec}-element chunks"
                     + (" along dim 0, neighbouring threads along dim 0" if lay.dim0_first else ""))
    if p.hoisted:
        lines.append(f"  branch loads hoisted: {p.hoisted}")
    for o in func.walk():
        if isinstance(o, ops.ForOp) and o in p.loops:
            lp = p.loops[o]
            why = f" (no cp.async ring: {lp.reason})" if lp.reason else ""
            copy = ("the run-time fallback of a versioned loop: " if o in fallbacks else
                    "the fast copy of a versioned loop: " if o in fallbacks.values() else "")
            lines.append(f"  scf.for at {_loc(o)}: {copy}{lp.strategy}{why}")
            lines.extend("    " + s for s in _loop_lines(lp))
        if o in p.fresh_tid:
            lines.append(f"    {o.name} body: %tid.x read again at the top of each iteration")
        elif isinstance(o, ops.DotOp) and o in p.dots:
            ml = p.dots[o]
            m, k = o.a.type.shape[-2:]
            ring = next((lp.ring for lp in p.loops.values() if lp.ring is not None and lp.ring.dot is o), None)
            hl = p.half_acc.get(o)
            how = (f"in the loop's cp.async ring ({ring.consumer})" if ring is not None
                   else f"mma {ml.shape} warps {ml.wm}x{ml.wn}" if ml is not None
                   else f"mma {hl.shape} warps {hl.wm}x{hl.wn}, the {o.acc.type.element} accumulator "
                        "widened to fp32" if hl is not None
                   else "multiply-adds through shared memory")
            lines.append(f"  tt.dot {m}x{o.b.type.shape[-1]}x{k} {o.a.type.element} at {_loc(o)}: {how}")
            if o in p.a_regs:
                lines.append(f"    A from registers: {p.a_regs[o]}")
        elif isinstance(o, ops.ReduceOp) and o in p.reductions:
            strategy, lanes = p.reductions[o][1]
            lines.append(f"  tt.reduce {o.kind} {_ty(o.src)} axis {o.axis} at {_loc(o)}: {strategy}"
                         + (f", {lanes} lanes per row" if lanes else ""))
            for s in p.fused.get(o, ()):
                lines.append(f"    fused: tt.reduce {s.kind} at {_loc(s)} (its input is ready: "
                             "one exchange across warps for both)")
        elif isinstance(o, (ops.LoadOp, ops.StoreOp)) and o in p.access and o.ptr.type.shape:
            name = "tt.load" if isinstance(o, ops.LoadOp) else "tt.store"
            lines.append(f"  {name} {_access_ty(o)} at {_loc(o)}: width {p.access[o]}"
                         + (" (masked)" if o.mask is not None else ""))
            if o in p.kmajor:
                lines.append(f"    transposed: {p.kmajor[o]} elements per access along dim 0, "
                             "staged transposed for its dots (rules_mma.plan_kmajor_loads)")
            if o in p.relayout and p.relayout[o][1]:
                lines.append("    scattered: moved to one element per thread first (scatter.py)")
            if o in p.restaged:
                lines.append(f"    restaged: moved to the row-major layout through shared memory first, "
                             f"width {p.restaged[o][1]} there (dim_order.py)")
    if p.remat is not None:
        lines.append(f"  remat: values recomputed after {len(p.remat.plan.points)} reduction(s)"
                     + (f", .minnctapersm {p.min_ctas}" if p.min_ctas else ""))
    if p.reg_cap:
        lines.append(f"  register cap: .maxnreg {p.reg_cap} (two CTAs per SM; occupancy.py)")
    if p.llvm_pipeline:
        lines.append(f"  llvm: {p.llvm_pipeline}")
    return "\n".join(lines) + "\n"


__all__ = ["CudaPlan", "LoopPlan", "plan_kernel", "plan_loop", "plan_notes", "print_plan", "iter_slice"]
