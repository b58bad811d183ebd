"""Launch-time bounds of a kernel's loads, stores and atomics, in terms of the launch's
grid and the values of its integer arguments (``n``, strides), masks included.

For each access whose address is a pointer argument plus offsets computed from
program ids, grid sizes, ``tl.arange``, constants, integer arguments and ``scf.for``
induction variables only (no value read from memory, none carried from one iteration
to the next), :func:`accesses` keeps the slice of the IR that computes its offsets and
its mask (once per compiled kernel).  At a launch:

* :func:`requirements` bounds the bytes each such access may touch, from the kernel's
  base pointer, by the range rules of the analysis (``analysis/ranges.py``) with the
  grid and the integer arguments' values known.  A mask narrows it: where an active
  lane needs ``x < n`` (``<=``, ``>``, ``>=``, ``==``, conjunctions with ``&``), ``x``
  is at most ``n - 1`` in every lane the access touches.  The bound is an
  over-approximation: an array that covers it needs no further check (cached per
  grid and argument values; the repeated-launch paths compare two numbers per array).
* Otherwise :func:`find_violation` looks for a lane that *certainly* leaves every
  array of the launch: it splits the grid into boxes of programs, drops boxes whose
  bound fits, and evaluates the few programs left exactly with the interpreter's rules
  (the reference semantics, int32 wrap-around included); loop iterations are
  searched like programs where the launch fixes the loop's bounds.  Only such a lane
  is reported (``OutOfBoundsError`` before anything runs); a bound that does not fit
  but has no witness is not an error (the access may well stay inside).  Witnesses
  are sought only for accesses every program performs (in the kernel's top block or
  in ``scf.for`` bodies there, no ``device_assert`` or early ``return`` that could
  stop a program first) with masks the launch determines.

The narrowing is sound lane by lane: a value compared in the mask is narrowed only
where it reaches the address through elementwise ops, splats, broadcasts and
expand_dims of the access's rank (each lane reads the element the mask tested), or when
it is a scalar (the same in every lane).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..analysis.lattice import is_int_type, type_range, unknown_axis
from ..analysis.ranges import RANGE_RULES, add_range, mul_range, sub_range
from ..ir import ops

_MEMORY = (ops.LoadOp, ops.StoreOp, ops.AtomicRMWOp, ops.AtomicCASOp)
_PTR_SHAPE = (ops.SplatOp, ops.BroadcastOp, ops.ExpandDimsOp)
# ops that keep each lane's element where it is (lane L reads its operands at L,
# or at the broadcast position of L)
_LANE_OPS = (ops.ElementwiseOp, ops.BroadcastOp, ops.SplatOp, ops.ExpandDimsOp, ops.HintOp,
             ops.ConstantOp, ops.ArangeOp, ops.ProgramIdOp, ops.NumProgramsOp)
_NARROW = {"lt": (-1, 1), "le": (0, 0), "gt": (1, -1), "ge": (0, 0)}
_CACHE_LIMIT = 256        # launch keys remembered per kernel before the cache starts over
_BOX_BUDGET = 256         # boxes of programs bounded per search
_EXACT_BUDGET = 48        # programs evaluated exactly per search


class Access(NamedTuple):
    param: str            # the pointer argument (IR argument name)
    op: object            # the load / store / atomic
    ptr: object           # its address tile
    mask: object          # its mask, or None
    order: tuple          # the ops of the slice, in program order
    steps: object         # the slice prepared for bounding (:class:`Steps`)
    scalars: tuple        # integer arguments the slice reads (IR argument names)
    rank: int             # rank of the address tile
    unmasked_grid: bool   # no mask, no argument: what sanitize-mode versioning covered
    exact: bool           # every program performs it and its mask is launch-determined


# ------------------------------------------------------------------ the slices
def accesses(kernel) -> list:
    """The accesses of ``kernel`` this module bounds (cached on the kernel)."""
    got = getattr(kernel, "_tj_arg_accesses", None)
    if got is None:
        func = getattr(kernel, "func", None)
        got = _collect(func) if func is not None else []
        kernel._tj_arg_accesses = got
    return got


def _collect(func) -> list:
    args = {id(a.value): a for a in func.arguments}
    position = {id(op): i for i, op in enumerate(func.walk())}
    stops = any(isinstance(op, ops.DeviceAssertOp) or (
        isinstance(op, ops.ReturnOp) and op.parent is not func.block) for op in func.walk())
    out = []
    for op in func.walk():
        if not isinstance(op, _MEMORY):
            continue
        base, chain = _pointer_chain(op.ptr)
        if base is None or id(base) not in args:
            continue
        offsets = [c.offset for c in chain if isinstance(c, ops.AddPtrOp)]
        mask = getattr(op, "mask", None)
        sl, opaque_off = _slice(offsets, args, base)
        if opaque_off:
            continue                         # an offset read from memory, carried, ...
        msl, opaque_mask = _slice([mask] if mask is not None else [], args, base)
        sl.update(msl)
        sl.update((id(c), c) for c in chain)
        order = tuple(sorted(sl.values(), key=lambda o: position[id(o)]))
        used = [v for o in order for v in _ins(o)] + [mask]
        scalars = tuple(sorted({args[id(v)].name for v in used if v is not None
                                and id(v) in args and v is not base}))
        exact = not stops and not opaque_mask and _runs_always(op, func, sl)
        out.append(Access(args[id(base)].name, op, op.ptr, mask, order,
                          Steps(order, mask, len(op.ptr.type.shape)), scalars,
                          len(op.ptr.type.shape),
                          mask is None and not scalars, exact))
    return out


def _pointer_chain(v):
    """(the argument ``v`` addresses, the addptr and shape ops on the way), or (None, [])."""
    chain = []
    while v.op is not None:
        op = v.op
        if isinstance(op, ops.AddPtrOp):
            chain.append(op)
            v = op.ptr
        elif isinstance(op, _PTR_SHAPE):
            chain.append(op)
            v = op.src
        else:
            return None, []
    return v, chain


def _evaluable(op) -> bool:
    return not op.regions and not isinstance(op, (ops.InlineAsmOp, ops.DotOp)) and not (
        op.has_trait("reads_memory") or op.has_trait("writes_memory")
        or op.has_trait("side_effect"))


def _loop_of(v):
    """The ``scf.for`` whose induction variable ``v`` is, or None."""
    block = v.owner
    region = getattr(block, "parent", None)
    loop = getattr(region, "parent", None)
    if isinstance(loop, ops.ForOp) and loop.body is block and block.args[0] is v:
        return loop
    return None


def _ins(op):
    """The values a slice op reads (a loop: its bounds only)."""
    return (op.lb, op.ub, op.step) if isinstance(op, ops.ForOp) else op.operands


def _outs(op):
    """The values a slice op defines (a loop: its induction variable)."""
    return (op.induction_var,) if isinstance(op, ops.ForOp) else op.results


def _runs_always(op, func, loops) -> bool:
    """Whether ``op`` runs in every program, once per iteration of the loops of
    ``loops`` around it (nothing else around it)."""
    block = op.parent
    while block is not func.block:
        loop = getattr(getattr(block, "parent", None), "parent", None)
        if not isinstance(loop, ops.ForOp) or loop.body is not block or id(loop) not in loops:
            return False
        block = loop.parent
    return True


def _slice(roots, args, base):
    """(id -> op of the evaluable ops ``roots`` are computed by, ids of the values
    whose ranges are unknown there)."""
    ops_, opaque, stack, seen = {}, set(), list(roots), set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        op = v.op
        if op is None:
            loop = _loop_of(v)
            if loop is not None:             # an induction variable: bounded by its loop
                ops_[id(loop)] = loop
                stack += [loop.lb, loop.ub, loop.step]
                continue
            a = args.get(id(v))
            if a is None or v is base or v.type.element.is_ptr() or v.type.shape:
                opaque.add(id(v))
            continue
        if not _evaluable(op):
            opaque.add(id(v))
            continue
        ops_[id(op)] = op
        stack.extend(x for x in op.operands if x is not None)
    return ops_, opaque


# ------------------------------------------------------------------ bounds
class Steps:
    """A slice prepared for bounding: per op its range rule and results (ids, whether
    integer, type range); the ranges of the values it reads but does not compute; the
    users of each value; the pointer steps (addptr, shape ops)."""

    def __init__(self, order, mask=None, rank=0):
        made = {id(v) for op in order for v in _outs(op)}
        self.initial = {}
        self.values = {}
        self.users: dict = {}
        self.loops = [op for op in order if isinstance(op, ops.ForOp)]
        self.loop_index = {id(op): j for j, op in enumerate(self.loops)}
        for op in order:
            for x in _ins(op):
                self.values[id(x)] = x
                self.users.setdefault(id(x), []).append(op)
                if id(x) not in made:
                    self.initial[id(x)] = type_range(x.type)
        self.ranges, self.pointers = [], []
        for op in order:
            for v in _outs(op):
                self.values[id(v)] = v
            if isinstance(op, ops.ForOp):
                iv = op.induction_var
                self.ranges.append((op, _loop_rule, [(id(iv), type_range(iv.type))]))
                continue
            if op.results and op.result.type.element.is_ptr():
                if isinstance(op, ops.AddPtrOp):
                    self.pointers.append((id(op.result), id(op.ptr), id(op.offset),
                                          _pointee_bytes(op.ptr.type)))
                elif isinstance(op, _PTR_SHAPE):
                    self.pointers.append((id(op.result), id(op.src), None, 0))
                continue
            rule = _pid_rule if isinstance(op, ops.ProgramIdOp) else RANGE_RULES.lookup(type(op))
            outs = [(id(v), type_range(v.type) if is_int_type(v.type) else None)
                    for v in op.results]
            self.ranges.append((op, rule, outs))
        self.tests = _mask_tests(mask)
        self.spread = {}
        for t in self.tests:
            for v in (t.lhs, t.rhs):
                self.spread[id(v)] = _spread(v, self.users, rank)


class _Ranges:
    """What the range rules see: the ranges computed so far, the grid."""

    grid_bound = None

    def __init__(self, grid, r, box=None, steps=None):
        self.grid = grid
        self.r = r
        self.box = box
        self.steps = steps

    def range(self, v):
        try:
            return self.r[id(v)]
        except KeyError:
            return type_range(v.type)

    def axis(self, v):
        return unknown_axis(v.type)


def _pid_rule(op, ctx):
    """A program id: the programs of the box."""
    return [ctx.box[op.axis]]


def _loop_rule(op, ctx):
    """An induction variable: the iterations of the box when it names them (the loop's
    start and step known), else every value the loop can give it."""
    lb, ub, st = ctx.range(op.lb), ctx.range(op.ub), ctx.range(op.step)
    if lb is None or ub is None or st is None:
        return [type_range(op.induction_var.type)]
    j = 3 + ctx.steps.loop_index[id(op)]
    k = ctx.box[j] if len(ctx.box) > j else None
    if k is not None and lb[0] == lb[1] and st[0] == st[1]:
        a, b = lb[0] + k[0] * st[0], lb[0] + k[1] * st[0]
        return [(min(a, b), max(a, b))]
    if st[0] > 0:
        return [(lb[0], max(lb[0], ub[1] - 1))]
    if st[1] < 0:
        return [(min(lb[1], ub[0] + 1), lb[1])]
    return [(min(lb[0], ub[0] + 1), max(lb[1], ub[1] - 1))]


def _pointee_bytes(ptr_type) -> int:
    el = ptr_type.element.element
    return 8 if el.is_ptr() else max(1, el.itemsize)


def _ranges(steps, grid, box, values, pins):
    """Ranges of the integer values of a slice (:class:`Steps`) for programs in
    ``box`` (None when the pinned ranges leave no lane active)."""
    r = dict(steps.initial)
    for v, x in values:
        r[id(v)] = (int(x), int(x)) if is_int_type(v.type) else None
    ctx = _Ranges(grid, r, box, steps)
    for op, rule, outs in steps.ranges:
        got = rule(op, ctx)
        for (vid, tr), e in zip(outs, got):
            if e is None or tr is None:
                r[vid] = None
                continue
            rng = e if tr[0] <= e[0] and e[1] <= tr[1] else tr
            pin = pins.get(vid)
            if pin is not None:
                rng = (max(rng[0], pin[0]), min(rng[1], pin[1]))
                if rng[0] > rng[1]:
                    return None
            r[vid] = rng
    return r


def _narrow(op, r, pins) -> None:
    """Pin the operands of comparison ``op`` (true in every active lane)."""
    a, b = r.get(id(op.lhs)), r.get(id(op.rhs))
    if a is None or b is None or not op.lhs.type.element.is_int():
        return
    if op.pred == "eq":
        both = (max(a[0], b[0]), min(a[1], b[1]))
        new = ((op.lhs, both), (op.rhs, both))
    elif op.pred in ("lt", "le"):
        d = 1 if op.pred == "lt" else 0
        new = ((op.lhs, (a[0], b[1] - d)), (op.rhs, (a[0] + d, b[1])))
    elif op.pred in ("gt", "ge"):
        d = 1 if op.pred == "gt" else 0
        new = ((op.lhs, (b[0] + d, a[1])), (op.rhs, (b[0], a[1] - d)))
    else:
        return
    for v, (lo, hi) in new:
        old = pins.get(id(v))
        pins[id(v)] = (lo, hi) if old is None else (max(old[0], lo), min(old[1], hi))


def _mask_tests(mask):
    """The comparisons true in every active lane of an access under ``mask``: through
    ``&``, splats and broadcasts of the same rank."""
    out, stack = [], [mask] if mask is not None else []
    while stack:
        m = stack.pop()
        op = m.op
        if op is None or op.regions:
            continue
        if isinstance(op, ops.AndOp) and op.result.type.element.kind == "bool":
            stack += [op.lhs, op.rhs]
        elif isinstance(op, ops.BroadcastOp) and len(op.src.type.shape) == len(m.type.shape):
            stack.append(op.src)
        elif isinstance(op, ops.SplatOp):
            stack.append(op.src)
        elif isinstance(op, ops.CmpOp) and op.lhs.type.element.is_int():
            out.append(op)
    return out


def _spread(v, users, rank) -> list:
    """Ids of the values a range known for ``v`` in the access's active lanes holds
    for too: ``v`` and what it is splat or broadcast from, while each is a scalar or
    reaches the address with every lane in place (``[]``: none)."""
    out = []
    while v is not None:
        if v.type.shape and (len(v.type.shape) != rank or not _lane_local(v, users, rank)):
            break
        out.append(id(v))
        op = v.op
        if op is not None and (isinstance(op, (ops.SplatOp, ops.HintOp)) or (
                isinstance(op, ops.BroadcastOp) and len(op.src.type.shape) == rank)):
            v = op.src
        else:
            v = None
    return out


def _pins(steps, r) -> dict:
    """id -> range every lane the access touches has for that value (from its mask)."""
    pins: dict = {}
    for op in steps.tests:
        _narrow(op, r, pins)
    out: dict = {}
    for vid, rng in pins.items():
        for x in steps.spread.get(vid, ()):
            old = out.get(x)
            out[x] = rng if old is None else (max(old[0], rng[0]), min(old[1], rng[1]))
    return out


def _lane_local(v, users, rank) -> bool:
    """Whether every op computed from ``v`` keeps lanes in place at rank ``rank``."""
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        for op in users.get(id(x), ()):
            if id(op) in seen:
                continue
            seen.add(id(op))
            if not isinstance(op, _LANE_OPS) or any(len(r.type.shape) != rank for r in op.results):
                return False
            stack.extend(op.results)
    return True


def _active_ranges(steps, grid, box, values):
    """Ranges of a slice in the active lanes of its accesses (the mask's comparisons
    narrowing) over the programs of ``box``; None when no lane is active."""
    r = _ranges(steps, grid, box, values, {})
    if r is not None and steps.tests:
        pins = _pins(steps, r)
        if pins:
            r = _ranges(steps, grid, box, values, pins)
    return r


def _pointer_interval(acc, r):
    """[lo, hi) bytes from the base pointer of ``acc`` given the ranges ``r``."""
    iv: dict = {}
    for res, src, off, size in acc.steps.pointers:
        lo, hi = iv.get(src, (0, 0))
        if off is None:
            iv[res] = (lo, hi)
            continue
        o = r.get(off)
        if o is None:
            return (-2 ** 63, 2 ** 63)
        iv[res] = (lo + o[0] * size, hi + o[1] * size)
    lo, hi = iv.get(id(acc.ptr), (0, 0))
    return lo, hi + _pointee_bytes(acc.ptr.type)


def interval(acc, grid, box, values):
    """[lo, hi) bytes from the base pointer that ``acc`` touches in the programs of
    ``box`` (per axis (first, last)), or None when no lane of them is active."""
    r = _active_ranges(acc.steps, grid, box, values)
    return None if r is None else _pointer_interval(acc, r)


# ------------------------------------------------------------------ witnesses
class Violation(NamedTuple):
    access: Access
    program: tuple
    lane: int
    offset: int           # bytes from the base pointer
    address: int
    loops: tuple          # (name, value) of the induction variables in that iteration


def _exact(func, acc, grid, pid, ivs, values, base, buffers):
    """The first active lane of program ``pid`` (in the loop iteration where the
    induction variables have the values ``ivs``, id -> int) whose element lies outside
    every buffer, evaluated with the interpreter's rules; a :class:`Violation` or None."""
    from ..interpreter import numerics as nm
    from ..interpreter.driver import Context, _rule_for
    from ..interpreter.memory import Memory
    ctx = Context(func, grid, Memory([]))
    ctx.pid = pid
    env = {id(v): nm.to_scalar(x, v.type.element) for v, x in values}
    root = acc.ptr
    while root.op is not None:
        root = root.op.ptr if isinstance(root.op, ops.AddPtrOp) else root.op.src
    env[id(root)] = np.uint64(0)
    try:
        with np.errstate(all="ignore"):
            for op in acc.order:
                if isinstance(op, ops.ForOp):
                    iv = op.induction_var
                    env[id(iv)] = nm.to_scalar(ivs[id(iv)], iv.type.element)
                    continue
                res = _rule_for(op)(ctx, op, [env[id(v)] for v in op.operands])
                for v, x in zip(op.results, res):
                    env[id(v)] = x
    except Exception:         # division by zero and the like: no verdict
        return None
    shape = acc.ptr.type.shape
    offs = np.broadcast_to(np.asarray(env[id(acc.ptr)], np.uint64), shape).view(np.int64).ravel()
    active = (np.broadcast_to(np.asarray(env[id(acc.mask)], bool), shape).ravel()
              if acc.mask is not None else np.ones(offs.shape, bool))
    addr = offs + np.int64(base)
    size = np.int64(_pointee_bytes(acc.ptr.type))
    inside = np.zeros(offs.shape, bool)
    for b in buffers:
        if b.nbytes > 0:
            inside |= (addr >= b.address) & (addr + size <= b.address + b.nbytes)
    bad = np.flatnonzero(active & ~inside)
    if not bad.size:
        return None
    lane = int(bad[0])
    loops = tuple((op.induction_var.name_hint or "iv", ivs[id(op.induction_var)])
                  for op in acc.steps.loops)
    return Violation(acc, pid, lane, int(offs[lane]), int(addr[lane]), loops)


def _iterations(acc, grid, values):
    """(lb, step, trip count) of each loop around ``acc`` whose bounds the launch
    fixes (the same in every program), or None when one is not fixed."""
    r = _ranges(acc.steps, grid, tuple((0, g - 1) for g in grid), values, {})
    out = []
    for loop in acc.steps.loops:
        lb, ub, st = (r.get(id(x)) for x in (loop.lb, loop.ub, loop.step))
        if None in (lb, ub, st) or lb[0] != lb[1] or ub[0] != ub[1] or st[0] != st[1] \
                or st[0] == 0:
            return None
        out.append((lb[0], st[0], len(range(lb[0], ub[0], st[0]))))
    return out


def find_violation(func, acc, grid, values, base, span, buffers):
    """A lane of ``acc`` in a launch over ``grid`` certainly outside every buffer, or
    None: boxes of programs (and loop iterations) whose bound fits ``span`` ([lo, hi)
    bytes of the base argument's array) are dropped, single programs left are
    evaluated exactly."""
    loops = _iterations(acc, grid, values)
    if loops is None or any(n == 0 for _lb, _st, n in loops):
        return None
    boxes = [tuple((0, g - 1) for g in grid) + tuple((0, n - 1) for _lb, _st, n in loops)]
    nboxes = nexact = 0
    while boxes:
        box = boxes.pop()
        nboxes += 1
        if nboxes > _BOX_BUDGET:
            return None
        iv = interval(acc, grid, box, values)
        if iv is None or (span[0] <= iv[0] and iv[1] <= span[1]):
            continue
        axis = max(range(len(box)), key=lambda a: box[a][1] - box[a][0])
        first, last = box[axis]
        if first == last:
            nexact += 1
            if nexact > _EXACT_BUDGET:
                return None
            ivs = {id(op.induction_var): lb + st * box[3 + j][0]
                   for j, (op, (lb, st, _n)) in enumerate(zip(acc.steps.loops, loops))}
            got = _exact(func, acc, grid, tuple(b[0] for b in box[:3]), ivs, values, base,
                         buffers)
            if got is not None:
                return got
            continue
        mid = (first + last) // 2
        for part in ((first, mid), (mid + 1, last)):
            boxes.append(box[:axis] + (part,) + box[axis + 1:])
    return None


# ------------------------------------------------------------------ at a launch
class Plan(NamedTuple):
    checks: tuple         # (access, parameter index)
    scalars: tuple        # (IR argument value, parameter index) of every argument read
    groups: tuple         # (Steps of the union of their slices, [(access, index)]) per mask


def plan(kernel, names) -> Plan:
    """The accesses of ``kernel`` checked at its launches (cached on the kernel)."""
    got = getattr(kernel, "_tj_arg_plan", None)
    if got is None or got[0] is not names:
        func = getattr(kernel, "func", None)
        index = {n: i for i, n in enumerate(names)}
        args = {a.name: a.value for a in func.arguments} if func is not None else {}
        checks, scalars = [], {}
        for acc in accesses(kernel):
            if acc.param in index and all(s in index for s in acc.scalars):
                checks.append((acc, index[acc.param]))
                scalars.update((s, (args[s], index[s])) for s in acc.scalars)
        got = (names, Plan(tuple(checks), tuple(scalars[s] for s in sorted(scalars)),
                           _groups(func, checks)))
        kernel._tj_arg_plan = got
    return got[1]


def _groups(func, checks) -> tuple:
    """The checked accesses grouped by mask, each group's slices bounded together."""
    if not checks:
        return ()
    position = {id(op): i for i, op in enumerate(func.walk())}
    by_mask: dict = {}
    for acc, i in checks:
        by_mask.setdefault(id(acc.mask), []).append((acc, i))
    out = []
    for members in by_mask.values():
        union = {id(o): o for acc, _i in members for o in acc.order}
        order = tuple(sorted(union.values(), key=lambda o: position[id(o)]))
        acc0 = members[0][0]
        out.append((Steps(order, acc0.mask, acc0.rank), members))
    return tuple(out)


def _memo(kernel, attr):
    cache = getattr(kernel, attr, None)
    if cache is None or len(cache) >= _CACHE_LIMIT:
        cache = {}
        setattr(kernel, attr, cache)
    return cache


def requirements(kernel, grid, names, vals):
    """[(access, parameter index, lo, hi)]: the bytes [lo, hi) from each checked
    access's base pointer it may touch in a launch over ``grid`` with the values
    ``vals`` (one per parameter); accesses with no active lane are left out."""
    p = plan(kernel, names)
    key = (grid, tuple(vals[i] for _v, i in p.scalars))
    cache = _memo(kernel, "_tj_arg_need")
    got = cache.get(key)
    if got is None:
        values = [(v, vals[i]) for v, i in p.scalars]
        box = tuple((0, g - 1) for g in grid)
        got = []
        for steps, members in p.groups:
            r = _active_ranges(steps, grid, box, values)
            if r is None:
                continue
            for acc, i in members:
                iv = _pointer_interval(acc, r)
                got.append((acc, i, iv[0], iv[1]))
        cache[key] = got
    return got


def per_param(kernel, grid, names, vals) -> list:
    """[(parameter index, lo, hi)]: :func:`requirements` merged per argument."""
    merged: dict = {}
    for _acc, i, lo, hi in requirements(kernel, grid, names, vals):
        old = merged.get(i)
        merged[i] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
    return [(i, lo, hi) for i, (lo, hi) in merged.items()]


def span(v):
    """([lo, hi) bytes around element 0 that array ``v`` spans, element 0's address)."""
    if type(v) is np.ndarray and v.flags.c_contiguous:
        return (0, v.nbytes), None
    from .arrays import describe
    info = describe(v)
    if info is None:
        return (0, 0), None
    return (info.lo - info.address, info.lo + info.nbytes - info.address), info.address


_TENSOR_TYPES: dict = {}      # type -> whether a torch tensor type (memo)


def _tensor_type(tp) -> bool:
    got = _TENSOR_TYPES.get(tp)
    if got is None:
        from .arrays import is_torch_type
        got = _TENSOR_TYPES[tp] = is_torch_type(tp) and hasattr(tp, "is_contiguous")
    return got


def fits(v, lo, hi) -> bool:
    """Whether array ``v`` spans the bytes [lo, hi) from its element 0."""
    tp = type(v)
    if tp is np.ndarray and v.flags.c_contiguous:
        return 0 <= lo and hi <= v.nbytes
    if _tensor_type(tp) and v.is_contiguous():               # host or device tensors
        return 0 <= lo and hi <= v.numel() * v.element_size()
    s = span(v)[0]
    return s[0] <= lo and hi <= s[1]


def check_launch(kernel, kernel_name, grid, names, vals, buffers) -> bool:
    """The launch check of argument-dependent bounds: raise ``OutOfBoundsError``
    (before anything runs) for a lane certainly outside every array of the launch.
    Returns whether a bound that did not fit belongs to an unmasked access bounded by
    the grid alone (the launcher then runs the sanitize-mode variant, as before)."""
    need = requirements(kernel, grid, names, vals)
    bad = [(acc, i) for acc, i, lo, hi in need if not fits(vals[i], lo, hi)]
    if not bad:
        return False
    p = plan(kernel, names)
    spans = {i: span(vals[i]) for _a, i in bad}
    given = tuple((names[i], vals[i]) for _v, i in p.scalars)
    key = (grid, given, tuple(sorted((i, s[0]) for i, s in spans.items())))
    clean = _memo(kernel, "_tj_arg_clean")
    if key not in clean:
        values = [(v, vals[i]) for v, i in p.scalars]
        for acc, i in bad:
            if not acc.exact:
                continue
            s, base = spans[i]
            if base is None:
                from .arrays import numpy_address
                base = numpy_address(vals[i])
            got = find_violation(kernel.func, acc, grid, values, base, s, buffers)
            if got is not None:
                raise _error(kernel_name, got, names[i], vals[i], s, grid, given)
        clean[key] = True
    return any(acc.unmasked_grid for acc, _i in bad)


def _error(kernel_name, w: Violation, param, arr, s, grid, given):
    from ..errors import OutOfBoundsError
    acc = w.access
    size = _pointee_bytes(acc.ptr.type)
    what = {ops.LoadOp: "load", ops.StoreOp: "store"}.get(type(acc.op), "atomic")
    where = (f"{s[0] - w.offset} bytes before its start" if w.offset < s[0] else
             f"{w.offset - s[1]} bytes past its end" if w.offset >= s[1] else
             "across its end" if w.offset + size > s[1] else "inside its span")
    shape = getattr(arr, "shape", None)
    shape = tuple(shape) if shape is not None else "?"
    args = "".join(f", {n}={v!r}" for n, v in given)
    args += "".join(f", in the iteration where {n} = {v}" for n, v in w.loops)
    msg = (f"launch check: the {what} through argument '{param}' reaches element "
           f"{w.offset // size} (lane {w.lane}), {where}: the array passed for '{param}' "
           f"has shape {shape} ({s[1] - s[0]} bytes) and no other argument holds that "
           f"address; refused before the launch (grid {tuple(grid)}{args}); fix the "
           "offsets or the mask of this access, or pass a larger array")
    return OutOfBoundsError(msg, kernel=kernel_name, loc=acc.op.loc, program_id=w.program,
                            lane=w.lane, address=w.address)


# ------------------------------------------------------------------ int32 offsets
def offsets_in_range(kernel, ops_, grid, names, vals) -> bool:
    """Whether the exact results of the int32 offset ops ``ops_`` (launch_checks.
    offset_ops) stay within int32 in a launch over ``grid`` with the values ``vals``:
    their operands computed from program ids, aranges, constants and integer arguments
    only, bounded with the grid and the arguments known."""
    func = kernel.func
    args = {id(a.value): a for a in func.arguments}
    index = {n: i for i, n in enumerate(names)}
    got = getattr(kernel, "_tj_offset_slices", None)
    if got is None:
        position = {id(op): i for i, op in enumerate(func.walk())}
        got = []
        for op in ops_:
            sl, opaque = _slice([op.lhs, op.rhs], args, None)
            order = tuple(sorted(sl.values(), key=lambda o: position[id(o)]))
            used = {id(v) for o in order for v in o.operands} | {id(op.lhs), id(op.rhs)}
            scalars = tuple(a for vid, a in args.items() if vid in used)
            got.append(None if opaque or any(a.name not in index for a in scalars)
                       else (op, Steps(order), scalars))
        kernel._tj_offset_slices = got
    if any(x is None for x in got):
        return False
    exact = {ops.AddOp: add_range, ops.SubOp: sub_range, ops.MulOp: mul_range}
    box = tuple((0, g - 1) for g in grid)
    for op, steps, scalars in got:
        values = [(a.value, vals[index[a.name]]) for a in scalars]
        ctx = _Ranges(grid, _ranges(steps, grid, box, values, {}))
        a, b = ctx.range(op.lhs), ctx.range(op.rhs)
        if a is None or b is None:
            return False
        lo, hi = exact[type(op)](a, b)
        if lo < -2 ** 31 or hi > 2 ** 31 - 1:
            return False
    return True
