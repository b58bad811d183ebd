"""Axis-info rules for casts, shape ops, memory, reductions and hints."""
from __future__ import annotations

from math import gcd

from ..ir import ops
from .axisinfo import AXIS_RULES, _info, _unknown_like
from .lattice import (AxisInfo, all_div, elem_div, elem_step, fits, is_int_type, is_ptr_type,
                      shape_of, wrap_contiguity)


# ---------------------------------------------------------------- casts
def _constancy_only(A: AxisInfo) -> list:
    return [_info([1] * A.rank, [1] * A.rank, A.constancy)]


def _int_to_int(A: AxisInfo, rng, src_ty, dst_ty) -> list:
    """Value conversion / reinterpretation between integer types: the value is kept
    when it fits, else it is reduced modulo 2**bits (runs may break at a wrap)."""
    if dst_ty.element.kind == "bool":
        return _constancy_only(A)
    if rng is not None and fits(rng, dst_ty):
        return [A]
    cs, vs = [], []
    for d in range(A.rank):
        c, v = A.contiguity[d], A.divisibility[d]
        c2 = wrap_contiguity(c, v, dst_ty)
        cs.append(c2)
        vs.append(v if c2 == c else gcd(v, c2))
    return [_info(cs, vs, A.constancy)]


def _ptr_reinterpret(A: AxisInfo, src_step: int, dst_step: int) -> list:
    """Same addresses counted in other units: runs survive only for equal steps."""
    if src_step == dst_step:
        return [A]
    return [_info([1] * A.rank, [elem_div(A, d, 1, src_step) for d in range(A.rank)],
                  A.constancy)]


@AXIS_RULES.register(ops.CastOp, ops.BitcastOp)
def _cast(op, ctx, exact):
    A = ctx.axis(op.src)
    src_ty, dst_ty = op.src.type, op.result.type
    src_int, dst_int = is_int_type(src_ty), is_int_type(dst_ty)
    src_ptr, dst_ptr = is_ptr_type(src_ty), is_ptr_type(dst_ty)
    if src_int and dst_int:
        return _int_to_int(A, ctx.range(op.src), src_ty, dst_ty)
    if src_ptr or dst_ptr:
        if (src_ptr or src_int) and (dst_ptr or dst_int) and dst_ty.element.kind != "bool":
            return _ptr_reinterpret(A, elem_step(src_ty), elem_step(dst_ty))
    return _constancy_only(A)


# ---------------------------------------------------------------- shapes
@AXIS_RULES.register(ops.SplatOp)
def _splat(op, ctx, exact):
    A = ctx.axis(op.src)
    shape = shape_of(op.result.type)
    return [_info([1] * len(shape), [A.divisibility[0]] * len(shape), shape)]


@AXIS_RULES.register(ops.BroadcastOp)
def _broadcast(op, ctx, exact):
    A = ctx.axis(op.src)
    src, dst = shape_of(op.src.type), shape_of(op.result.type)
    step = elem_step(op.result.type)
    cs, vs, ks = [], [], []
    for d, (m, n) in enumerate(zip(src, dst)):
        if m == 1 and n != 1:
            cs.append(1)
            vs.append(elem_div(A, d, 1, step))
            ks.append(n)
        else:
            cs.append(A.contiguity[d])
            vs.append(A.divisibility[d])
            ks.append(A.constancy[d])
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.ExpandDimsOp)
def _expand_dims(op, ctx, exact):
    A = ctx.axis(op.src)
    step = elem_step(op.result.type)
    if not op.src.type.shape:       # scalar -> shape (1,)
        return [_info([1], [all_div(A, step)], [1])]
    cs, vs, ks = list(A.contiguity), list(A.divisibility), list(A.constancy)
    cs.insert(op.axis, 1)
    vs.insert(op.axis, all_div(A, step))
    ks.insert(op.axis, 1)
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.TransOp)
def _trans(op, ctx, exact):
    A = ctx.axis(op.src)
    return [_info([A.contiguity[p] for p in op.perm], [A.divisibility[p] for p in op.perm],
                  [A.constancy[p] for p in op.perm])]


def _squeeze(shape, info: AxisInfo):
    keep = [d for d, n in enumerate(shape) if n != 1]
    return [shape[d] for d in keep], [info.dim(d) for d in keep]


@AXIS_RULES.register(ops.ReshapeOp)
def _reshape(op, ctx, exact):
    A = ctx.axis(op.src)
    step = elem_step(op.result.type)
    src, dst = shape_of(op.src.type), shape_of(op.result.type)
    every = all_div(A, step)
    src_dims, src_facts = _squeeze(src, A)
    dst_dims = [n for n in dst if n != 1]
    if src_dims == dst_dims:        # only unit dimensions added or removed
        it = iter(src_facts)
        facts = [(1, every, 1) if n == 1 else next(it) for n in dst]
        return [_info(*zip(*facts))]
    # general row-major reshape: only the innermost runs survive, via the flat order
    last = len(src) - 1
    cf, kf = gcd(A.contiguity[last], src[last]), gcd(A.constancy[last], src[last])
    vf = elem_div(A, last, cf, step)
    m = dst[-1]
    c, k = gcd(cf, m), gcd(kf, m)
    v = vf if c == cf else gcd(vf, c * step)
    r = len(dst)
    return [_info([1] * (r - 1) + [c], [every] * (r - 1) + [v], [1] * (r - 1) + [k])]


# ---------------------------------------------------------------- memory, reductions
@AXIS_RULES.register(ops.LoadOp)
def _load(op, ctx, exact):
    """Equal addresses under an equal mask read equal values (``other`` too)."""
    ks = list(ctx.axis(op.ptr).constancy)
    for extra in (op.mask, op.other):
        if extra is not None:
            ks = [gcd(k, e) for k, e in zip(ks, ctx.axis(extra).constancy)]
    return [_info([1] * len(ks), [1] * len(ks), ks)]


@AXIS_RULES.register(ops.AtomicRMWOp, ops.AtomicCASOp, ops.InlineAsmOp, ops.CombineReduceOp)
def _atomic(op, ctx, exact):
    """Old values of atomics (equal addresses see different values), inline
    assembly results and reductions with a combine region: nothing known."""
    return _unknown_like(op)


@AXIS_RULES.register(ops.GatherOp, ops.HistogramOp)
def _gathered(op, ctx, exact):
    """Gathered elements and histogram counts: nothing known."""
    return _unknown_like(op)


@AXIS_RULES.register(ops.ReduceOp)
def _reduce(op, ctx, exact):
    A = ctx.axis(op.src)
    keep = [d for d in range(A.rank) if d != op.axis]
    if not keep:
        v = all_div(A) if op.kind in ("sum", "max", "min", "xor_sum") else 1
        return [_info([1], [v], [1])]
    ks = [A.constancy[d] for d in keep]      # equal slices reduce to equal values
    if op.kind in ("max", "min") and is_int_type(op.src.type):
        # max_i(s_i + j) == max_i(s_i) + j: runs along other dims survive
        cs = [A.contiguity[d] for d in keep]
        vs = [A.divisibility[d] for d in keep]   # the result is one of the run starts
        return [_info(cs, vs, ks)]
    if op.kind in ("sum", "xor_sum", "max", "min"):
        vs = [elem_div(A, d, 1) for d in keep]
        return [_info([1] * len(keep), vs, ks)]
    return [_info([1] * len(keep), [1] * len(keep), ks)]


@AXIS_RULES.register(ops.DotOp)
def _dot(op, ctx, exact):
    return _unknown_like(op)


# ---------------------------------------------------------------- hints
_HINT_FIELD = {ops.MultipleOfOp: "divisibility", ops.MaxContiguousOp: "contiguity",
               ops.MaxConstancyOp: "constancy"}


def _deferred(op, ctx) -> bool:
    """A hint whose only use is another hint: its claim is made by that one
    (``max_contiguous(multiple_of(x, 16), 16)`` claims runs of 16 starting at a
    multiple of 16, while ``multiple_of(x, 16)`` alone would claim every element)."""
    uses = ctx.uses(op.result)
    return len(uses) == 1 and type(uses[0]) in _HINT_FIELD


def _pick(values, d):
    return values[min(d, len(values) - 1)]


@AXIS_RULES.register(ops.AssumeRangeOp)
def _assume_range(op, ctx, exact):
    """A range claim keeps the axis facts of its source (the range rule narrows it)."""
    return [ctx.axis(op.src)]


@AXIS_RULES.register(ops.HintOp)
def _hint(op, ctx, exact):
    if _deferred(op, ctx):
        return [ctx.axis(op.src)]
    hints, src = {}, op
    while type(src) in _HINT_FIELD and (src is op or _deferred(src, ctx)):
        vals = src.values if isinstance(src.values, (list, tuple)) else [src.values]
        hints.setdefault(_HINT_FIELD[type(src)], [int(x) for x in vals])
        base = src.src
        src = base.op
    A = ctx.axis(base)
    step = elem_step(op.result.type)
    cs, vs, ks = list(A.contiguity), list(A.divisibility), list(A.constancy)
    for d in range(A.rank):
        if "contiguity" in hints:
            cs[d] = _pick(hints["contiguity"], d)
            vs[d] = elem_div(A, d, cs[d], step)
        if "constancy" in hints:
            ks[d] = _pick(hints["constancy"], d)
        if "divisibility" in hints:
            vs[d] = max(vs[d], _pick(hints["divisibility"], d))
    return [_info(cs, vs, ks)]
