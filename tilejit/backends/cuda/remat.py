"""Rematerialisation across reductions: hold narrow loaded tiles, not wide values.

A row reduction (``tt.reduce`` of a tile) is where a kernel's register pressure
peaks: every value computed before it and read after it stays live through its
shuffles and barriers.  When such values are cheap elementwise functions of narrower
tiles (tutorial 05's layer-norm backward holds ``xhat``, ``w * dy`` and ``dy`` in
fp32 -- 96 registers per thread at 32 elements -- across its two row sums, all three
made from fp16 loads: 48), the lowering keeps the narrow inputs and computes the
values again after the reduction, just before their first use there.

:func:`plan` (before lowering) finds, per reduction ``R`` in a block, the *chain*
values live across ``R`` (results of cheap elementwise ops of that block, defined
before ``R``, read after it), their *leaves* (the operands the chains start from) and
whether the registers held across ``R`` shrink by at least ``CudaTuning.remat_min_saving`` per
thread (half of it where that is a quarter of what the plain lowering holds there:
:func:`min_saving`).  :class:`Remat` (driven by ``Lowering.lower_op``) marks those values stale
once ``R`` is lowered and, before an op of the same block that reads one (directly or
inside its regions), lowers their chains again with the ordinary rules, the leaves'
registers first copied through an opaque ``mov`` (inline PTX with side effects) so
that LLVM cannot merge the new computation with the old one.  Results are unchanged:
the same ops run on the same values.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from ...ir.types import PointerType
from . import types as T
from .layout import Layout


CHEAP = (ops.AddOp, ops.SubOp, ops.MulOp, ops.MinOp, ops.MaxOp, ops.NegOp, ops.AbsOp,
         ops.FmaOp, ops.SelectOp, ops.CastOp, ops.BitcastOp, ops.AndOp, ops.OrOp, ops.XorOp)
_FREE = (ops.SplatOp, ops.ConstantOp, ops.ArangeOp)     # leaves that cost (almost) nothing


def _regs(lw, v) -> float:
    """32-bit registers per thread that holding ``v`` costs (predicates: none)."""
    ty = v.type
    if not ty.shape:
        return 0.0
    el = ty.element
    if isinstance(el, PointerType):
        per = 2.0
    elif el.bits == 1:
        return 0.0
    else:
        per = max(el.bits, 16) / 32
    return lw.nslots(ty) * per


def _chain(v, before: set) -> bool:
    o = v.op
    return o is not None and o in before and isinstance(o, CHEAP) and bool(v.type.shape) \
        and not (v.type.element.bits == 1 and not isinstance(v.type.element, PointerType))


def _free(v) -> bool:
    """A leaf that costs (almost) nothing to hold or to make again: a scalar, a splat,
    a constant, an arange."""
    return not v.type.shape or (v.op is not None and isinstance(v.op, _FREE))


def _closure(v, before: set):
    """(chain values, leaves) that ``v`` is computed from."""
    chain, leaves, stack = set(), set(), [v]
    while stack:
        x = stack.pop()
        if x in chain:
            continue
        chain.add(x)
        for u in x.op.operands:
            (stack.append(u) if _chain(u, before) else leaves.add(u))
    return chain, leaves


def _used(op) -> set:
    """Values ``op`` reads, its nested ops included."""
    return {u for o in op.walk() for u in o.operands}


class Plan:
    """``points``: reduction -> (chain values, leaves); ``uses``: op -> chain values it reads."""

    def __init__(self):
        self.points, self.uses = {}, {}
        self.after = 0.0        # registers per thread still held across the worst point
        self.before = 0.0       # the same without the plan (the plain lowering's worst point)


def _plan_point(lw, block, i, plan):
    before = set(block.ops[:i])
    later = [_used(o) for o in block.ops[i + 1:]]
    live = set().union(*later) if later else set()
    live = {v for v in live if v.op in before}
    cands = {v for v in live if _chain(v, before)}
    closures = {v: _closure(v, before) for v in cands}
    cands = {v for v in cands if any(not _free(u) for u in closures[v][1])}   # made from loads, ...
    if not cands:
        return
    chain = set().union(*(closures[v][0] for v in cands))
    leaves = set().union(*(closures[v][1] for v in cands))
    held = sum(_regs(lw, v) for v in cands)
    new = sum(_regs(lw, u) for u in leaves if u not in live and not _free(u))
    # what stays held across R (free values and pointer tiles -- contiguous ones are a
    # base and offsets -- left out)
    rest = sum(_regs(lw, v) for v in live - cands
               if not _free(v) and not isinstance(v.type.element, PointerType))
    if held - new < min_saving(lw.tuning.remat_min_saving, rest + held):
        return
    plan.after = max(plan.after, rest + new)
    plan.before = max(plan.before, rest + held)
    plan.points[block.ops[i]] = (frozenset(chain), frozenset(leaves))
    for o, used in zip(block.ops[i + 1:], later):
        if used & cands:
            plan.uses.setdefault(o, set()).update(used & chain)


def min_saving(least: int, before: float) -> float:
    """Registers per thread a plan must save at a point where the plain lowering holds
    ``before``: ``least`` (``CudaTuning.remat_min_saving``), or half of it where that is
    still a quarter of what is held -- programs per SM step at 32/40/48/56/64 registers
    (256 threads), so a small saving counts in a kernel that holds little (Liger's
    RMSNorm forward, 16 bf16 per thread: x held in fp32 across its sum, 8 registers
    saved of 24 -- 48 -> 40 registers, 5 -> 6 programs per SM)."""
    return min(least, max(least / 2, before / 4))


def plan(lw):
    """The remat plan of ``lw.func`` (None when off -- ``CudaTuning.remat_reductions`` --
    or nothing qualifies)."""
    if not lw.tuning.remat_reductions:
        return None
    p = Plan()
    blocks = [lw.func.block] + [b for o in lw.func.walk() for r in o.regions for b in r.blocks]
    for block in blocks:
        for i, o in enumerate(block.ops):
            if isinstance(o, ops.ReduceOp) and o.src.type.shape and o not in lw.region_ops:
                _plan_point(lw, block, i, p)
    return p if p.points else None


def _opaque_word(lw, v):
    """``v`` (32 or 64 bits) through an opaque ``mov``."""
    b = lw.b
    bits = 64 if v.type in (T.I64, T.F64) else 32
    ity = ir.IntType(bits)
    x = v if v.type == ity else b.bitcast(v, ity)
    c = "l" if bits == 64 else "r"
    r = b.asm(ir.FunctionType(ity, [ity]), f"mov.b{bits} $0, $1;", f"={c},{c}", [x], True)
    return r if v.type == ity else b.bitcast(r, v.type)


def opaque_tile(lw, tile):
    """A copy of ``tile`` whose registers LLVM cannot identify with the originals
    (None when the tile is not a plain blocked one or holds no such registers)."""
    regs = tile.regs
    if not isinstance(tile.layout, Layout) or all(r is regs[0] for r in regs):
        return None
    ty = regs[0].type
    if any(r.type != ty or isinstance(r, ir.Constant) for r in regs):
        return None
    if ty in (T.F32, T.I32, T.F64, T.I64):
        return type(tile)([_opaque_word(lw, r) for r in regs], tile.layout)
    if ty in (T.F16, T.BF16, T.I16) and len(regs) % 2 == 0:
        out, b = [], lw.b
        for k in range(0, len(regs), 2):
            vec = ir.Constant(ir.VectorType(ty, 2), None)
            for j in range(2):
                vec = b.insert_element(vec, regs[k + j], lw.i32(j))
            w = _opaque_word(lw, b.bitcast(vec, T.I32))
            back = b.bitcast(w, ir.VectorType(ty, 2))
            out.extend(b.extract_element(back, lw.i32(j)) for j in range(2))
        return type(tile)(out, tile.layout)
    return None


class Remat:
    """Lowering-time state of a :class:`Plan`."""

    def __init__(self, lw, p: Plan):
        self.lw, self.plan = lw, p
        self.stale, self.leaves = set(), set()
        self.copies = {}        # leaf -> its opaque copy (this point's)

    def before(self, op):
        for v in self.plan.uses.get(op, ()):
            if v in self.stale:
                self._refresh(v)

    def after(self, op):
        point = self.plan.points.get(op)
        if point is not None:
            chain, leaves = point
            self.stale |= chain
            self.leaves = {u for u in leaves if not _free(u)}   # copied once, on first use
            self.copies = {}

    def _ok(self, v) -> bool:
        t = self.lw.values.get(v)
        return t is not None and (t.layout is None or isinstance(t.layout, Layout))

    def _refresh(self, v):
        from .lowering import RULES
        lw, op = self.lw, v.op
        if not all(self._ok(u) for u in op.operands) or not self._ok(v):
            self.stale.discard(v)
            return
        saved = {}
        for u in op.operands:
            if u in self.stale:
                self._refresh(u)
            elif u in self.leaves:
                if u not in self.copies:
                    self.copies[u] = opaque_tile(lw, lw.values[u])
                if self.copies[u] is not None and u not in saved:
                    saved[u] = lw.values[u]
                    lw.values[u] = self.copies[u]
        try:
            results = RULES.lookup(type(op))(lw, op)
        finally:
            lw.values.update(saved)     # the copies serve the chains only: a leaf from an
        lw.values[v] = results[0]       # enclosing block keeps its own registers there
        self.stale.discard(v)


def start(lw):
    """The :class:`Remat` state for ``lw`` (None when off, when the kernel has a
    ``tt.dot`` -- its loops have their own layouts -- or when nothing qualifies)."""
    if not lw.tuning.remat_reductions or any(isinstance(o, ops.DotOp) for o in lw.func.walk()):
        return None
    p = plan(lw)
    if p is None:
        return None
    from .occupancy import launch_chose
    cap = min(255, 65536 // (2 * lw.threads))
    if lw.tuning.remat_occupancy and p.after <= cap / 2 < p.before and not launch_chose(lw):
        # ptxas spends registers freely up to its limit; the plan made room for two
        # programs per SM (what it still holds across a reduction is at most half of
        # their budget, where the plain lowering held more), this asks ptxas to keep to
        # it (256 threads: 128 registers).  Where the plain lowering already held at most
        # half, the request only loosens ptxas (Liger's LayerNorm forward, 16 bf16 per
        # thread: 47 registers without it, 63 with it: 5 -> 4 programs per SM)
        lw.kernel.attributes.add('"nvvm.minctasm"="2"')
    return Remat(lw, p)
