"""Runtime alignment versioning of dot loops (``align_version``).

A ``scf.for`` whose ``tt.dot`` operands are loaded through pointers the axis analysis
cannot prove 16-byte aligned (base pointers and leading dimensions read from memory,
as in Triton's grouped GEMM tutorial) is versioned at run time::

    %ok = (ptr as i64) & 15 == 0  and  ld & (T-1) == 0  and ...     (one test per root)
    %r = scf.if %ok {
        %p' = tt.multiple_of %p {values = (16,)}     # exactly what %ok just tested
        %ld' = tt.multiple_of %ld {values = (T,)}
        ... the pure ops between the roots and the loop, cloned on the hinted roots ...
        scf.yield (scf.for ... the loop, cloned ...)
    } else {
        scf.yield (the original loop)
    }

*Roots* are scalar (shape ``()``) pointer or integer values defined outside the loop
that the dot operand loads' pointers (and masks) depend on through pure ops, whose
known divisibility is below the target: 16 bytes for pointers, ``T = 16 // e``
elements for integers (``e`` the smallest operand element size in bytes: 8 for
fp16/bf16), the least stride that keeps every row of the operand tile 16-byte aligned.
Integer roots are tested with ``x & (T-1) == 0`` (two's complement: exact for negative
values too), pointer roots on their address.  The hints claim exactly what the branch
condition has just checked, so the analysis facts (and the claim checker) stay sound
for aligned and misaligned inputs alike.

*Range roots*: signed scalar integers defined outside the loop whose range is not inside
``[0, 2**(bits-2))`` (tutorial 03's ``pid_n * BLOCK_SIZE_N``, whose ``% N`` keeps its runs
only when non-negative: truncating remainder).  They are tested with ``0 <= x <= 2**(bits-2)
- 1`` and claimed with ``tj.assume_range`` (``ops.AssumeRangeOp``); the bound leaves room
to add tile offsets without wrapping.

The loop is versioned only when it pays: with the hinted roots the analysis must give
every dot operand load that lacked one a 16-byte access plan (``analysis.vector``);
roots the plan does not need are dropped (one analysis per root).  A loop that needs
nothing, or that hints cannot help, is left as it was.

Both backends run the pass (``cuda/backend.py``, ``cpu/backend.py``), each with its
``AccessLimits`` (``analysis.access.plan_access`` decides the plans): the cuda one's
(``CUDA_ACCESS``) need 16-byte aligned groups; the cpu one's (``CPU_ACCESS``) vector
accesses take any alignment, so only range roots are tested, a plan is any vector
grouping of at least 16 bytes, and a
loop is versioned when at least one dot operand load gains one (tutorial 03's B tile:
per-lane loads with an ``srem`` each, otherwise).  The backends run it when
``Options.align_version`` is on (``TILEJIT_ALIGN_VERSION=0``: off; it needs ``vectorize``
and no sanitize mode); ``func.attrs['align_versioned']`` records how many loops it
versioned (a function already versioned is not versioned again).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import ops
from ..ir.core import Block, Function, Op, Region, Value
from ..ir.types import PointerType, int64, int_range

DONE = "align_versioned"
VECTOR_BYTES = 16


# ---------------------------------------------------------------- what needs versioning
def _esize(ld) -> int:
    el = ld.ptr.type.element.element
    return 8 if isinstance(el, PointerType) else max(1, el.bits // 8)


def plan_ok(facts, ld, limits=None) -> bool:
    """Whether ``ld`` has a 16-byte access plan: vector groups of 16 bytes, 16-byte
    aligned (``limits`` None or ``limits.aligned``: PTX); under a target whose vector
    accesses take any alignment (``limits.aligned`` False: the cpu backend) groups of at
    least 16 bytes under ``limits`` (``analysis.access.plan_access``)."""
    e = _esize(ld)
    if limits is not None:              # the target's own access plan (analysis/access.py)
        from ..analysis.access import plan_access
        p = plan_access(facts, ld.ptr, ld.mask, limits)
        return p.width * e >= VECTOR_BYTES and (not limits.aligned or p.align % VECTOR_BYTES == 0)
    from ..analysis.vector import access_plan
    p = access_plan(facts, ld.ptr, ld.mask, max_lanes=max(1, VECTOR_BYTES // e))
    return p.width * e >= VECTOR_BYTES and p.align % VECTOR_BYTES == 0


def _dot_loads(loop) -> list:
    """The loads in ``loop``'s body that feed a ``tt.dot`` there as its a/b operand."""
    body = loop.body
    mine = set(body.ops)
    out = []
    for o in body.ops:
        if isinstance(o, ops.DotOp):
            for v in (o.a, o.b):
                ld = v.op
                if isinstance(ld, ops.LoadOp) and ld in mine and ld not in out:
                    out.append(ld)
    return out


def _lacking(facts, loop, limits=None) -> list:
    """Dot operand loads of ``loop`` without a 16-byte plan that a wider alignment could give."""
    out = []
    for ld in _dot_loads(loop):
        shape = ld.ptr.type.shape
        if shape and shape[-1] * _esize(ld) >= VECTOR_BYTES and not plan_ok(facts, ld, limits):
            out.append(ld)
    return out


def _is_root_type(v: Value) -> bool:
    el = v.type.element
    return v.type.shape == () and (isinstance(el, PointerType) or el.kind in ("int", "uint"))


def _target(v: Value, int_target: int) -> int:
    """The divisibility a root is tested for (``int_target`` 1: none, range roots only)."""
    if isinstance(v.type.element, PointerType):
        return VECTOR_BYTES if int_target > 1 else 1
    return int_target


def find_roots(facts, loop, loads, int_target: int) -> list:
    """[(root, divisibility)]: scalars defined outside ``loop`` that ``loads``' pointers
    and masks depend on through pure ops (loop-carried values through their initial
    and next values), whose known divisibility is below the target."""
    inside = set(loop.walk())
    inside_blocks = {b for o in inside for r in o.regions for b in r.blocks}
    body = loop.body
    roots, seen = {}, set()
    stack = [ld.ptr for ld in loads] + [ld.mask for ld in loads if ld.mask is not None]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.owner is body:      # the induction variable, or a loop-carried value
            i = v.index
            stack += [loop.lb, loop.step] if i == 0 else [loop.inits[i - 1], body.terminator.values[i - 1]]
            continue
        o = v.op
        if _is_root_type(v):
            rng = facts.range(v)
            if rng is not None and rng[0] == rng[1]:
                continue                                  # a constant: testing it proves nothing new
            t = _target(v, int_target)
            need = [t] if facts.axis(v).divisibility[0] % t else []
            need += [r for r in [_range_target(v)] if r and not _within(facts.range(v), r)]
            if not need:
                continue                                  # aligned and bounded enough already
            if (o not in inside) if o is not None else (v.owner not in inside_blocks):
                roots.update({(v, spec): spec for spec in need})   # defined outside the loop
                continue
        if o is None or o.regions or not o.has_trait("pure"):
            continue
        stack.extend(o.operands)
    return sorted([(v, spec) for (v, _), spec in roots.items()],
                  key=lambda kv: _order_key(kv[0]) + (isinstance(kv[1], tuple),))


def _range_target(v: Value):
    """The range ``(0, 2**(bits-2) - 1)`` a signed scalar integer root is tested against:
    non-negative (so ``//``, ``%`` by it keep their runs) with room for tile offsets."""
    el = v.type.element
    if isinstance(el, PointerType) or el.kind != "int":
        return None
    return (0, (1 << (el.bits - 2)) - 1)


def _within(rng, bounds) -> bool:
    return rng is not None and bounds[0] <= rng[0] and rng[1] <= bounds[1]


def _order_key(v: Value):
    """A deterministic order: by source location, then by value kind."""
    o = v.op if v.op is not None else v.owner
    loc = getattr(o, "loc", None)
    return (getattr(loc, "line", 0), getattr(loc, "col", 0), v.index, str(v.type))


# ---------------------------------------------------------------- cloning
def clone_op(op: Op, vmap: dict) -> Op:
    """A copy of ``op`` (and its regions) whose operands are looked up in ``vmap``;
    the copy's results (and block arguments) are added to ``vmap``."""
    slots = {}
    for name, _opt, variadic in op.slot_names():
        v = op.slots.get(name)
        if variadic:
            slots[name] = [vmap.get(x, x) for x in (v or ())]
        else:
            slots[name] = None if v is None else vmap.get(v, v)
    regions = [_clone_region(r, vmap) for r in op.regions]
    new = type(op)(slots, dict(op.attrs), [r.type for r in op.results], op.loc, regions)
    for a, b in zip(op.results, new.results):
        b.name_hint = a.name_hint
        vmap[a] = b
    return new


def _clone_region(region: Region, vmap: dict) -> Region:
    new = Region()
    for blk in region.blocks:
        nb = Block([a.type for a in blk.args], [a.name_hint for a in blk.args])
        for a, b in zip(blk.args, nb.args):
            vmap[a] = b
        for o in blk.ops:
            nb.append(clone_op(o, vmap))
        new.add_block(nb)
    return new


def _outer_slice(loop, roots) -> set:
    """Ops outside ``loop`` on a pure path from a root to a value the loop uses."""
    inside = set(loop.walk())
    used = {v for o in loop.walk() for v in o.operands}
    rootset = set(roots)
    memo = {}

    def depends(v) -> bool:
        if v in rootset:
            return True
        o = v.op
        if o is None or o in inside or o.regions or not o.has_trait("pure"):
            return False
        if o not in memo:
            memo[o] = False                  # (acyclic; guards re-entry)
            memo[o] = any([depends(x) for x in o.operands])     # every operand: no short cut
        return memo[o]

    for v in used:
        depends(v)
    return {o for o, d in memo.items() if d}


def _clone_slice(values, slice_ops: set, vmap: dict, block: Block) -> None:
    """Append to ``block`` copies of the ``slice_ops`` that ``values`` need, operands first."""
    done = set()
    stack = [(v, False) for v in values]
    while stack:
        v, ready = stack.pop()
        o = v.op
        if o is None or o not in slice_ops or o in done:
            continue
        if ready:
            done.add(o)
            block.append(clone_op(o, vmap))
            continue
        stack.append((v, True))
        stack.extend((x, False) for x in o.operands)


# ---------------------------------------------------------------- versioning
@dataclass
class Versioned:
    """One versioned loop: undo() puts the original loop back."""

    func: Function
    loop: Op
    if_op: Op
    cond_ops: list
    fast_loop: Op
    hints: list = field(default_factory=list)     # [(root, MultipleOfOp)]
    vmap: dict = field(default_factory=dict)
    outs: list = field(default_factory=list)      # the loop results the scf.if yields

    def fast_load(self, ld):
        """The fast version's copy of the original loop's load ``ld``."""
        return self.vmap[ld.result].op

    def undo(self) -> None:
        blk = self.if_op.parent
        i = blk.ops.index(self.if_op)
        for o in self.cond_ops + [self.if_op]:
            blk.ops.remove(o)
        self.loop.parent = blk
        blk.ops.insert(i - len(self.cond_ops), self.loop)
        _replace_uses(self.func, dict(zip(self.if_op.results, self.outs)))


def _replace_uses(func: Function, mapping: dict) -> None:
    for o in func.walk():
        if any(v in mapping for v in o.operands):
            o.replace_operands(lambda v: mapping.get(v, v))


def _make(cls, loc, result_types=None, **kw) -> Op:
    slots, attrs = {}, {}
    names = {n for n, _o, _v in cls.slot_names()}
    for k, v in kw.items():
        (slots if k in names else attrs)[k] = v
    for name, optional, variadic in cls.slot_names():
        slots.setdefault(name, [] if variadic else None)
    full = {**cls.ATTR_DEFAULTS, **attrs}
    op = cls(slots, attrs, result_types if result_types is not None else cls.infer_types(slots, full), loc)
    op.verify()
    return op


def _condition(roots, loc) -> list:
    """Ops computing ``all(root % div == 0)`` (the last op's result is the i1)."""
    out, tests = [], []

    def add(o):
        out.append(o)
        return o.result

    for r, spec in roots:
        if isinstance(spec, tuple):          # lo <= r <= hi
            lo = add(_make(ops.ConstantOp, loc, value=spec[0], type=r.type))
            hi = add(_make(ops.ConstantOp, loc, value=spec[1], type=r.type))
            ge = add(_make(ops.CmpOp, loc, lhs=r, rhs=lo, pred="ge"))
            le = add(_make(ops.CmpOp, loc, lhs=r, rhs=hi, pred="le"))
            tests.append(add(_make(ops.AndOp, loc, lhs=ge, rhs=le)))
            continue
        x = r
        if isinstance(r.type.element, PointerType):
            x = add(_make(ops.CastOp, loc, src=r, to=int64))
        low = add(_make(ops.ConstantOp, loc, value=spec - 1, type=x.type))
        zero = add(_make(ops.ConstantOp, loc, value=0, type=x.type))
        masked = add(_make(ops.AndOp, loc, lhs=x, rhs=low))
        tests.append(add(_make(ops.CmpOp, loc, lhs=masked, rhs=zero, pred="eq")))
    acc = tests[0]
    for t in tests[1:]:
        acc = add(_make(ops.AndOp, loc, lhs=acc, rhs=t))
    return out


def _hint_op(src, spec, loc) -> Op:
    """The claim the branch has just tested: ``tt.multiple_of`` (an alignment) or
    ``tj.assume_range`` (bounds)."""
    if isinstance(spec, tuple):
        return _make(ops.AssumeRangeOp, loc, src=src, values=tuple(spec))
    return _make(ops.MultipleOfOp, loc, src=src, values=(spec,))


def _claim_nothing(h: Op) -> tuple:
    """Values that make hint ``h`` claim nothing (to test whether it is needed)."""
    if isinstance(h, ops.AssumeRangeOp):
        return int_range(h.result.type.element)
    return (1,)


def version_loop(func: Function, loop, roots) -> Versioned:
    """Replace ``loop`` by ``if (roots aligned) {hinted clone} else {loop}`` (in place)."""
    loc = loop.loc
    blk = loop.parent
    cond_ops = _condition(roots, loc)
    used = {v for o in func.walk() for v in o.operands}
    keep = [i for i, r in enumerate(loop.results) if r in used]   # results nobody reads stay inside
    types = [loop.results[i].type for i in keep]
    if_op = ops.IfOp({"cond": cond_ops[-1].result}, {"result_types": list(types)}, list(types), loc)
    then_b, else_b = if_op.regions[0].block, if_op.regions[1].block
    vmap, hints = {}, []
    for r, spec in roots:      # a root tested twice (alignment and range) gets both hints
        h = _hint_op(vmap.get(r, r), spec, loc)
        h.result.name_hint = r.name_hint
        then_b.append(h)
        vmap[r] = h.result
        hints.append((r, h))
    needed = {v for o in loop.walk() for v in o.operands}
    _clone_slice(needed, _outer_slice(loop, [r for r, _ in roots]), vmap, then_b)
    fast = clone_op(loop, vmap)
    then_b.append(fast)
    then_b.append(_make(ops.YieldOp, loc, values=[fast.results[i] for i in keep]))
    i = blk.ops.index(loop)
    blk.ops[i:i + 1] = cond_ops + [if_op]
    for o in cond_ops + [if_op]:
        o.parent = blk
    else_b.append(loop)
    outs = [loop.results[i] for i in keep]
    else_b.append(_make(ops.YieldOp, loc, values=list(outs)))
    for a, b in zip(outs, if_op.results):
        b.name_hint = a.name_hint
    _replace_uses(func, dict(zip(outs, if_op.results)))
    else_b.ops[-1].slots["values"] = outs       # (the line above rewrote this yield too)
    return Versioned(func, loop, if_op, cond_ops, fast, hints, vmap, outs)


# ---------------------------------------------------------------- the pass
def _analyze(func):
    from ..analysis import analyze
    return analyze(func)        # a failure: AnalysisError naming the kernel


def _gained(facts, v: Versioned, loads, limits=None) -> frozenset:
    """The ``loads`` whose fast copies have a plan under ``facts``."""
    if facts is None:
        return frozenset()
    return frozenset(ld for ld in loads if plan_ok(facts, v.fast_load(ld), limits))


def _pays(gained, loads, limits=None) -> bool:
    """16-byte aligned targets (PTX): every lacking load must gain its plan (the fast copy
    has a different shape of pipeline); the cpu (``limits.aligned`` False): any load."""
    if limits is not None and not limits.aligned:
        return bool(gained)
    return len(gained) == len(loads)


def _try_loop(func: Function, loop, loads, roots, limits=None):
    """Version ``loop`` on the fewest of ``roots`` that still pay; None when none pays."""
    v = version_loop(func, loop, roots)
    gained = _gained(_analyze(func), v, loads, limits)
    if not _pays(gained, loads, limits):
        v.undo()
        return None
    keep = list(roots)
    if len(roots) > 1:
        for r, h in v.hints:
            full = h.attrs["values"]
            h.attrs["values"] = _claim_nothing(h)
            if _gained(_analyze(func), v, loads, limits) == gained:
                keep = [kv for kv in keep if not (kv[0] is r and _same_kind(kv[1], h))]
            else:
                h.attrs["values"] = full
    if len(keep) == len(roots):
        return v
    v.undo()
    return version_loop(func, loop, keep)


def _same_kind(spec, h: Op) -> bool:
    return isinstance(spec, tuple) == isinstance(h, ops.AssumeRangeOp)


def candidates(func: Function, facts, limits=None) -> list:
    """[(loop, lacking loads, roots)] for every loop worth trying (under ``limits`` whose
    accesses take any alignment: range roots only)."""
    out = []
    for o in func.walk():
        if not isinstance(o, ops.ForOp):
            continue
        loads = _lacking(facts, o, limits)
        if not loads:
            continue
        int_target = max(1, VECTOR_BYTES // min(_esize(ld) for ld in loads))
        if limits is not None and not limits.aligned:
            int_target = 1
        roots = find_roots(facts, o, loads, int_target)
        if roots:
            out.append((o, loads, roots))
    return out


def version_loops(func: Function, facts=None, limits=None) -> list:
    """Version the dot loops of ``func`` that runtime-checked alignment lets take
    16-byte vector loads (in place; see the module docstring).  ``limits``: the target's
    ``analysis.access.AccessLimits`` (None: 16-byte aligned accesses, the cuda backend's
    rule).  Returns the :class:`Versioned` loops (empty when nothing pays or ``func`` was
    versioned before)."""
    if DONE in func.attrs:
        return []
    if not any(isinstance(o, ops.DotOp) for o in func.walk()):
        return []
    facts = facts if facts is not None else _analyze(func)
    todo = candidates(func, facts, limits) if facts is not None else []
    done = []
    for loop, loads, roots in todo:
        v = _try_loop(func, loop, loads, roots, limits)
        if v is not None:
            done.append(v)
    if done:
        func.attrs[DONE] = len(done)
    return done


def align_version(func: Function, facts=None, limits=None) -> Function:
    """The pass form of :func:`version_loops`: returns ``func``."""
    version_loops(func, facts, limits)
    return func
