"""Why a kernel took the paths it took: ``TILEJIT_EXPLAIN=1`` / ``python -m tilejit explain``.

``explain(kernel, func) -> str`` reports, for each load, store, dot and reduction of a
compiled kernel, the path taken and, where a faster one was not, the fact that was not
proven and the source expression it was lost at (``file:line:col``)::

    matmul_kernel (cuda sm_90, facts for grids of at most (1048576, 65535, 65535) programs)
      t.py:118:12 tl.load <64x128xfp16>: 8 lanes x 2 B per access (16-byte aligned)
      t.py:120:22 tl.dot 128x128x64: cp.async ring (versioned at run time: 0 <= ... )

* Loads and stores: the widest access the analysis proves (``analysis.vector.access_plan``,
  up to 16 bytes); when narrower than 16 bytes, the first missing fact: contiguity along the
  last dimension, alignment, or a mask constant over the group.  The fact is traced back
  through the ops that compute the pointer (or mask) to the op that lost it (``%``/``//`` of
  a dividend that may be negative, a non-specialised argument, ...).
* Dots (cuda): the cp.async ring or the register path, with ``async_pipeline``'s reason,
  and the strategy the planning stage (``backends/cuda/plan.py``) gave the dot's loop
  (a row region and its ring, mma accumulators with loads rotated a tile ahead, ...).
* Reductions: the reduced shape and axis.
* Kernel-level decisions of the cuda plan: branch loads hoisted, values recomputed after
  reductions (``CompiledKernel.plan_notes``), the register cap.
The backend's own layout may use fewer lanes than proven; the report says what is proven.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.core import Value
from ..ir.types import PointerType

VECTOR_BYTES = 16


def _loc(op) -> str:
    loc = getattr(op, "loc", None)
    if loc is None or not getattr(loc, "line", 0):
        return "<unknown>"
    return f"{loc.file}:{loc.line}:{loc.col}"


def _esize(ptr: Value) -> int:
    el = ptr.type.element.element
    return 8 if isinstance(el, PointerType) else max(1, el.bits // 8)


def _fact_text(facts, v: Value) -> str:
    f = facts.fact(v)
    rng = f"range [{f.range[0]}, {f.range[1]}] " if f.range is not None else ""
    a = f.axis
    return f"{rng}contig {list(a.contiguity)} div {list(a.divisibility)} const {list(a.constancy)}"


# ---------------------------------------------------------------- tracing a lost fact
def _lacks(facts, v: Value, field: str, want: int) -> bool:
    """Whether ``v`` lacks runs of ``want`` along its last dimension (``contiguity``: an
    operand constant over the run counts as having it) or ``want`` divisibility."""
    a = facts.axis(v)
    if field == "contiguity":
        return a.contiguity[-1] < want and a.constancy[-1] < want
    if field == "constancy":
        return a.constancy[-1] < want
    return a.divisibility[-1] < want


def _blame(facts, v: Value, field: str, want: int, seen=None):
    """The op (or argument) closest to the sources that lacks the fact while every operand
    it reads has it: where the fact was lost."""
    seen = set() if seen is None else seen
    seen.add(v)
    o = v.op
    if o is None:                      # a loop-carried value: where its first value came from
        loop = getattr(getattr(v.owner, "parent", None), "parent", None)
        if isinstance(loop, ops.ForOp) and v.index > 0 and loop.inits[v.index - 1] not in seen:
            init = loop.inits[v.index - 1]
            if _lacks(facts, init, field, want):
                return _blame(facts, init, field, want, seen)
        return v
    if o.regions or (field == "constancy" and isinstance(o, ops.CmpOp)):
        return v if o.regions else o      # a compare's runs come from both sides: it is the culprit
    for x in o.operands:
        if x in seen or not x.type.shape and field != "divisibility":
            continue
        if (x.type.shape or field == "divisibility") and _lacks(facts, x, field, want):
            return _blame(facts, x, field, want, seen)
    return o


def _why(facts, culprit) -> str:
    if isinstance(culprit, Value):           # an argument or a block argument
        name = culprit.name_hint or "a value"
        if culprit.op is None and culprit.owner is not None and not culprit.type.shape:
            return (f"argument `{name}` ({_fact_text(facts, culprit)}): not specialised as a "
                    "multiple of 16 / 16-byte aligned at this launch")
        return f"`{name}` ({_fact_text(facts, culprit)})"
    text = f"{culprit.name} at {_loc(culprit)}"
    if isinstance(culprit, (ops.RemOp, ops.IDivOp)):
        rng = facts.range(culprit.lhs)
        if rng is not None and rng[0] < 0:
            sym = "%" if isinstance(culprit, ops.RemOp) else "//"
            return (f"{text}: `x {sym} n` keeps runs only for x >= 0 (it truncates toward zero) "
                    f"and x may be negative (range [{rng[0]}, {rng[1]}])")
    args = "; ".join(f"operand {i}: {_fact_text(facts, x)}" for i, x in enumerate(culprit.operands))
    if isinstance(culprit, ops.CmpOp):
        loose = _unaligned_args(facts, culprit.lhs) + _unaligned_args(facts, culprit.rhs)
        if loose:
            args += "; a bound that is a multiple of 16 would keep runs: " + ", ".join(sorted(set(loose))) + \
                " not specialised as one"
    return f"{text} ({args})"


def _unaligned_args(facts, v: Value) -> list:
    """Kernel arguments the computation of ``v`` reads whose known divisibility is below 16
    (equal-to-1 arguments excluded): what an alignment proof would need specialised."""
    params = {a.value for a in facts.func.arguments}
    out, seen, stack = [], set(), [v]
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        o = x.op
        if o is None:
            if x in params and facts.axis(x).divisibility[0] < VECTOR_BYTES and facts.range(x) != (1, 1):
                out.append(f"`{x.name_hint}`")
            continue
        if not o.regions:
            stack.extend(o.operands)
    return sorted(set(out))


# ---------------------------------------------------------------- per op
def _access(facts, op, name: str) -> str:
    from .vector import access_plan
    ptr, mask = op.ptr, op.mask
    shape = ptr.type.shape
    e = _esize(ptr)
    lanes = max(1, VECTOR_BYTES // e)
    head = f"{_loc(op)} {name} <{'x'.join(map(str, shape))}x{ptr.type.element.element}>"
    if facts is None:
        return f"{head}: scalar accesses (no analysis: vectorize off or sanitize mode)"
    plan = access_plan(facts, ptr, mask, max_lanes=lanes)
    path = f"{plan.width} lane{'s' if plan.width > 1 else ''} x {e} B per access ({plan.align}-byte aligned)"
    if plan.width * e >= VECTOR_BYTES or shape[-1] < lanes:
        return f"{head}: {path}"
    want = lanes
    misses = []
    if _lacks(facts, ptr, "contiguity", want):
        why = _why(facts, _blame(facts, ptr, "contiguity", want))
        misses.append(f"contiguity {want} along the last dimension not proven, lost at {why}")
    if facts.axis(ptr).divisibility[-1] < VECTOR_BYTES:
        args = _unaligned_args(facts, ptr)
        misses.append("16-byte alignment not proven: " + (
            ", ".join(args) + " not specialised as 16-byte aligned / multiples of 16 (a launch value "
            "that is not, or a do_not_specialize argument)" if args else
            "lost at " + _why(facts, _blame(facts, ptr, "divisibility", VECTOR_BYTES))))
    if mask is not None and _lacks(facts, mask, "constancy", want):
        why = _why(facts, _blame(facts, mask, "constancy", want))
        misses.append(f"the mask is not proven constant over {want} lanes, lost at {why}")
    return f"{head}: {path}" + "".join(f"; {m}" for m in misses)


def _planned(kernel, facts, op, text) -> str:
    """The backend's planned width where it is narrower than the proven one, and why."""
    planned = (getattr(kernel, "access_widths", None) or {}).get(op)
    if planned is None or facts is None or f": {planned} lane" in text:
        return ""
    from .access import plan_access
    limits = getattr(kernel, "access_limits", None)
    why = "a chunk of the thread's layout holds fewer elements"
    if limits is not None and limits.aligned and plan_access(facts, op.ptr, op.mask, limits).width <= planned:
        why = "a vector access needs an address aligned to its size"
    return f"; planned: {planned} per access ({why})"


def _enclosing_loop(op):
    blk = op.parent
    while blk is not None:
        owner = getattr(getattr(blk, "parent", None), "parent", None)     # block -> region -> op
        if owner is None or isinstance(owner, ops.ForOp):
            return owner
        blk = owner.parent
    return None


def _dot(op, ring, plans=None) -> str:
    """The dot's path: the cp.async ring, or why not; with the cuda plan's loop strategies
    (``plans``: ``{scf.for: LoopPlan}``), the strategy its loop took."""
    m, k = op.a.type.shape[-2:]
    n = op.b.type.shape[-1]
    head = f"{_loc(op)} tl.dot {m}x{n}x{k}"
    loop = _enclosing_loop(op)
    lp = (plans or {}).get(loop)
    if lp is not None and lp.rows is not None:
        return f"{head}: {lp.describe()}"
    if ring is None:
        return f"{head}"
    if loop is None or loop not in ring:
        return f"{head}: register path (not a loop the cp.async ring handles)"
    why = ring[loop]
    text = f"{head}: {'cp.async ring' if why is None else 'register path: ' + why}"
    return text + (f"; planned: {lp.describe()}" if lp is not None and why is not None else "")


def explain(kernel, func) -> str:
    """The report for ``kernel`` (compiled from ``func``)."""
    facts = getattr(kernel, "facts", None)
    backend = getattr(kernel, "backend_name", "")
    bound = getattr(kernel, "grid_bound", None)
    head = f"{func.name} ({backend}" + (f", facts for grids of at most {bound} programs" if bound else "") + ")"
    lines = [head]
    ring = getattr(kernel, "ring", None)
    for op in func.walk():
        if isinstance(op, (ops.LoadOp, ops.StoreOp)) and op.ptr.type.shape:
            text = _access(facts, op, "tl.load" if isinstance(op, ops.LoadOp) else "tl.store")
            lines.append("  " + text + _planned(kernel, facts, op, text))
        elif isinstance(op, ops.DotOp):
            lines.append("  " + _dot(op, ring, getattr(kernel, "loop_plans", None)))
        elif isinstance(op, ops.ReduceOp):
            shape = "x".join(map(str, op.src.type.shape))
            lines.append(f"  {_loc(op)} reduce {op.kind} over axis {op.axis} of <{shape}>")
    versioned = func.attrs.get("align_versioned")
    if versioned:
        lines.append(f"  {versioned} dot loop(s) versioned at run time on alignment / range tests "
                     "(transforms/align_version.py): the fast copy is reported with its loads")
    cap = getattr(kernel, "reg_cap", None)
    if cap:
        lines.append(f"  registers capped at {cap} per thread for two CTAs per SM: every dot on the "
                     "expected path runs in a wgmma ring (backends/cuda/occupancy.py)")
    lines.extend("  " + note for note in getattr(kernel, "plan_notes", ()))
    return "\n".join(lines)


def print_explanation(kernel, func, file=None) -> None:
    """Print :func:`explain`'s report (stderr by default); never fails a compile."""
    import sys
    try:
        text = explain(kernel, func)
    except Exception as e:        # a diagnosis must not break the kernel it explains
        text = f"{func.name}: no explanation ({type(e).__name__}: {e})"
    print("tilejit explain: " + text, file=file or sys.stderr)
