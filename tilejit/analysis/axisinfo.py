"""Axis-info transfer rules (contiguity, divisibility, constancy per dimension).

``rule(op, ctx, exact) -> [AxisInfo per result]``; ``exact`` holds the exact
(unwrapped) result bounds from the range rules.  The rules follow Triton's
AxisInfo analysis but are sound: where a fact depends on the sign of a value
(truncating division and remainder, subtraction of a contiguous value, negation,
shifts) the operand ranges decide, and a result that may wrap around only keeps
the runs that provably do not straddle a wrap boundary.  When in doubt: 1.

Notation: ``A = ctx.axis(lhs)``; ``elem_div(A, d, g)`` is the divisibility of the
elements at multiples of ``g`` along ``d`` (see ``lattice``).
"""
from __future__ import annotations

from math import gcd

from ..ir import ops
from ..ir.core import RuleTable
from .lattice import (AxisInfo, all_div, elem_div, elem_step, fits, gcdn, is_int_type,
                      pow2div, shape_of, wrap_contiguity)
from .ranges import min_nonzero_abs

AXIS_RULES = RuleTable("axis analysis")


def _info(cs, vs, ks) -> AxisInfo:
    return AxisInfo(tuple(cs), tuple(vs), tuple(ks))


def _rank(v) -> int:
    return len(shape_of(v.type))


def _wrapped(exact, ty) -> bool:
    return is_int_type(ty) and exact is not None and not fits(exact, ty)


def _after_wrap(c: int, v: int, ty) -> tuple:
    """(contiguity, divisibility) left when the result may wrap around."""
    c2 = wrap_contiguity(c, v, ty)
    return c2, (v if c2 == c else gcd(v, c2))


def _unknown_like(op) -> list:
    return [_info((1,) * _rank(r), (1,) * _rank(r), (1,) * _rank(r)) for r in op.results]


# ---------------------------------------------------------------- generic
@AXIS_RULES.register(ops.Op)
def _unknown(op, ctx, exact):
    """Fallback for ops without a specific rule: nothing known."""
    return _unknown_like(op)


@AXIS_RULES.register(ops.ElementwiseOp)
def _elementwise(op, ctx, exact):
    """Any deterministic elementwise op keeps the runs where all operands are
    constant (floats, math functions, fma, not, umulhi, ...)."""
    ty = op.result.type
    ks = []
    for d in range(_rank(op.result)):
        ks.append(gcdn(*[ctx.axis(v).constancy[d] for v in op.operands]))
    return [_info([1] * len(ks), [1] * len(ks), ks)] if ty else []


# ---------------------------------------------------------------- sources
@AXIS_RULES.register(ops.ConstantOp)
def _constant(op, ctx, exact):
    shape = shape_of(op.result.type)
    return [_info([1] * len(shape), [1] * len(shape), shape)]   # ints: normalize() knows more


@AXIS_RULES.register(ops.ArangeOp)
def _arange(op, ctx, exact):
    n = op.end - op.start
    return [_info([n], [pow2div(op.start, 1 << 32)], [1])]


@AXIS_RULES.register(ops.ProgramIdOp, ops.NumProgramsOp)
def _scalar_unknown(op, ctx, exact):
    return [_info([1], [1], [1])]


# ---------------------------------------------------------------- add / sub / addptr
def _add_like(ctx, a, b, ty, exact, sub=False, step=1, scale=1):
    A, B = ctx.axis(a), ctx.axis(b)
    wrapped = _wrapped(exact, ty)
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        if sub:
            c = gcd(A.contiguity[d], B.constancy[d])
        else:
            c = max(gcd(A.constancy[d], B.contiguity[d]), gcd(A.contiguity[d], B.constancy[d]))
        v = gcd(elem_div(A, d, c, step), elem_div(B, d, c) * scale)
        if wrapped:
            c, v = _after_wrap(c, v, ty)
        cs.append(c)
        vs.append(v)
        ks.append(gcd(A.constancy[d], B.constancy[d]))
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.AddOp)
def _add(op, ctx, exact):
    if not is_int_type(op.result.type):
        return _elementwise(op, ctx, exact)
    return _add_like(ctx, op.lhs, op.rhs, op.result.type, exact[0])


@AXIS_RULES.register(ops.SubOp)
def _sub(op, ctx, exact):
    if not is_int_type(op.result.type):
        return _elementwise(op, ctx, exact)
    return _add_like(ctx, op.lhs, op.rhs, op.result.type, exact[0], sub=True)


@AXIS_RULES.register(ops.AddPtrOp)
def _addptr(op, ctx, exact):
    step = elem_step(op.result.type)
    return _add_like(ctx, op.ptr, op.offset, op.result.type, None, step=step, scale=step)


# ---------------------------------------------------------------- mul / div / rem
def _const(ctx, v):
    r = ctx.range(v)
    return r[0] if r is not None and r[0] == r[1] else None


@AXIS_RULES.register(ops.MulOp)
def _mul(op, ctx, exact):
    if not is_int_type(op.result.type):
        return _elementwise(op, ctx, exact)
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    ca, cb = _const(ctx, op.lhs), _const(ctx, op.rhs)
    if cb == 1:
        return [A]
    if ca == 1:
        return [B]
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        cs.append(1)
        vs.append(elem_div(A, d, 1) * elem_div(B, d, 1))
        ks.append(gcd(A.constancy[d], B.constancy[d]))
    return [_info(cs, vs, ks)]


def _aligned_run(A, d, block, bdiv):
    """Length of the aligned sub-runs of A's contiguous runs that start at a
    multiple of themselves and of ``bdiv``, inside blocks of ``block``."""
    return gcdn(A.contiguity[d], A.divisibility[d], block, bdiv)


@AXIS_RULES.register(ops.IDivOp)
def _idiv(op, ctx, exact):
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    ra = ctx.range(op.lhs)
    cb = _const(ctx, op.rhs)
    if cb == 1:
        return [A]
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        k = gcd(A.constancy[d], B.constancy[d])
        if ra[0] >= 0:   # truncation == floor only on non-negative dividends (triton #7749)
            k = max(k, _aligned_run(A, d, B.constancy[d], elem_div(B, d, 1)))
        ea = elem_div(A, d, 1)
        p = abs(cb) if cb else 0
        v = ea // p if p and p & (p - 1) == 0 and ea >= p else 1
        cs.append(1)
        vs.append(v)
        ks.append(k)
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.RemOp)
def _rem(op, ctx, exact):
    if not is_int_type(op.result.type):
        return _elementwise(op, ctx, exact)
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    ra, rb = ctx.range(op.lhs), ctx.range(op.rhs)
    minb = min_nonzero_abs(rb, all_div(B)) or 1
    if max(abs(ra[0]), abs(ra[1])) < minb:      # a % b == a (b == 0 is undefined)
        return [A]
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        c = 1
        if ra[0] >= 0:   # C remainder of a negative run is not a run (triton #7749)
            c = _aligned_run(A, d, B.constancy[d], elem_div(B, d, 1))
        cs.append(c)
        vs.append(gcd(elem_div(A, d, c), elem_div(B, d, c)))
        ks.append(gcd(A.constancy[d], B.constancy[d]))
    return [_info(cs, vs, ks)]


# ---------------------------------------------------------------- shifts
def _shift_amount(ctx, op):
    """(lo, hi) of a defined shift amount, or None."""
    rb = ctx.range(op.rhs)
    bits = op.result.type.element.bits
    return rb if 0 <= rb[0] and rb[1] < bits else None


@AXIS_RULES.register(ops.ShlOp)
def _shl(op, ctx, exact):
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    sh = _shift_amount(ctx, op)
    if sh == (0, 0):
        return [A]
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        cs.append(1)
        vs.append(elem_div(A, d, 1) << sh[0] if sh else 1)
        ks.append(gcd(A.constancy[d], B.constancy[d]))
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.ShrOp)
def _shr(op, ctx, exact):
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    sh = _shift_amount(ctx, op)
    if sh == (0, 0):
        return [A]
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        k = gcd(A.constancy[d], B.constancy[d])
        v = 1
        if sh:
            v = max(1, elem_div(A, d, 1) >> sh[1])
            if sh[0] == sh[1]:   # floor division by 2**s: aligned runs are constant, any sign
                k = max(k, _aligned_run(A, d, 1 << sh[0], 1 << sh[0]))
        cs.append(1)
        vs.append(v)
        ks.append(k)
    return [_info(cs, vs, ks)]


# ---------------------------------------------------------------- bitwise / min / max
def _low_mask(x):
    """2**m for a mask x == 2**m - 1 (m >= 1), else None."""
    return x + 1 if x is not None and x > 0 and (x + 1) & x == 0 else None


@AXIS_RULES.register(ops.AndOp)
def _and(op, ctx, exact):
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    if _const(ctx, op.rhs) == -1:
        return [A]
    if _const(ctx, op.lhs) == -1:
        return [B]
    x, m = op.lhs, _low_mask(_const(ctx, op.rhs))
    if m is None:
        x, m = op.rhs, _low_mask(_const(ctx, op.lhs))
    if m is not None and 0 <= ctx.range(x)[0] and ctx.range(x)[1] < m:
        return [ctx.axis(x)]                        # x & (2**m-1) == x
    X = ctx.axis(x)
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        if m is not None:    # x & (2**m-1) == x mod 2**m (floor, any sign)
            c = _aligned_run(X, d, m, m)
            v = gcd(elem_div(X, d, c), m)
        else:                # low zero bits of either operand stay zero
            c, v = 1, max(elem_div(A, d, 1), elem_div(B, d, 1))
        cs.append(c)
        vs.append(v)
        ks.append(gcd(A.constancy[d], B.constancy[d]))
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.OrOp, ops.XorOp)
def _or_xor(op, ctx, exact):
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    if _const(ctx, op.rhs) == 0:
        return [A]
    if _const(ctx, op.lhs) == 0:
        return [B]
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        cs.append(1)
        vs.append(gcd(elem_div(A, d, 1), elem_div(B, d, 1)))
        ks.append(gcd(A.constancy[d], B.constancy[d]))
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.MinOp, ops.MaxOp)
def _minmax(op, ctx, exact):
    if not is_int_type(op.result.type):
        return _elementwise(op, ctx, exact)
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    ra, rb = ctx.range(op.lhs), ctx.range(op.rhs)
    lhs_wins = ra[1] <= rb[0] if isinstance(op, ops.MinOp) else ra[0] >= rb[1]
    rhs_wins = rb[1] <= ra[0] if isinstance(op, ops.MinOp) else rb[0] >= ra[1]
    if lhs_wins:
        return [A]
    if rhs_wins:
        return [B]
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        c = gcd(A.contiguity[d], B.contiguity[d])   # min(s+j, t+j) == min(s, t)+j
        cs.append(c)
        vs.append(gcd(elem_div(A, d, c), elem_div(B, d, c)))
        ks.append(gcd(A.constancy[d], B.constancy[d]))
    return [_info(cs, vs, ks)]


# ---------------------------------------------------------------- unary
@AXIS_RULES.register(ops.NegOp, ops.AbsOp)
def _neg_abs(op, ctx, exact):
    if not is_int_type(op.result.type):
        return _elementwise(op, ctx, exact)
    A = ctx.axis(op.src)
    if isinstance(op, ops.AbsOp) and ctx.range(op.src)[0] >= 0:
        return [A]
    # -x and |x| keep divisibility; a run becomes decreasing: contiguity 1
    return [_info([1] * A.rank, [elem_div(A, d, 1) for d in range(A.rank)], A.constancy)]


# ---------------------------------------------------------------- compare / select
@AXIS_RULES.register(ops.CmpOp)
def _cmp(op, ctx, exact):
    A, B = ctx.axis(op.lhs), ctx.axis(op.rhs)
    cs, vs, ks = [], [], []
    for d in range(A.rank):
        k = gcd(A.constancy[d], B.constancy[d])
        if is_int_type(op.lhs.type):
            # a run starting at a multiple of g never straddles a bound that is one
            if op.pred in ("lt", "ge"):       # contiguous lhs vs constant rhs
                k = max(k, _aligned_run(A, d, B.constancy[d], elem_div(B, d, 1)))
            elif op.pred in ("gt", "le"):     # constant lhs vs contiguous rhs
                k = max(k, _aligned_run(B, d, A.constancy[d], elem_div(A, d, 1)))
        cs.append(1)
        vs.append(1)
        ks.append(k)
    return [_info(cs, vs, ks)]


@AXIS_RULES.register(ops.SelectOp)
def _select(op, ctx, exact):
    C, T, F = ctx.axis(op.cond), ctx.axis(op.true_value), ctx.axis(op.false_value)
    rc = ctx.range(op.cond)
    if rc == (1, 1):
        return [T]
    if rc == (0, 0):
        return [F]
    step = elem_step(op.result.type)
    cs, vs, ks = [], [], []
    for d in range(T.rank):
        c = gcdn(C.constancy[d], T.contiguity[d], F.contiguity[d])
        cs.append(c)
        vs.append(gcd(elem_div(T, d, c, step), elem_div(F, d, c, step)))
        ks.append(gcdn(C.constancy[d], T.constancy[d], F.constancy[d]))
    return [_info(cs, vs, ks)]
