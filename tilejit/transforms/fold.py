"""Constant folding: ops whose operands are all uniform constants become constants.

The arithmetic is ``ops.py``'s: integers wrap modulo 2**bits, ``idiv``/``rem`` truncate
toward zero, ``shr`` is arithmetic for signed and logical for unsigned types.  Anything
undefined is never folded (division by zero, ``INT_MIN / -1``, shift amounts outside
``[0, bits)``, float->int conversions out of range or of NaN), and neither is anything
whose result a backend might compute differently (math functions, fma, fp16/bf16
arithmetic, float min/max, bitcasts).  An input constant whose stored value lies outside
its type's range is left alone.  A wrong fold is a miscompile: when in doubt, keep the op.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import ops
from ..ir.core import Function, Op, RuleTable
from ..ir.types import DType, int_range
from .rewrite import NOT_CONST, Rewriter, apply_rules, constant_of

NO_FOLD = object()
FOLD_RULES = RuleTable("constant folding")
_NP_FLOAT = {"fp32": np.float32, "fp64": np.float64}


# --------------------------------------------------------------------------
# exact integer semantics
# --------------------------------------------------------------------------
def wrap(v: int, dt: DType) -> int:
    """``v`` reduced modulo 2**bits into ``dt``'s range (two's complement)."""
    if dt.kind == "bool":
        return v & 1
    mask = (1 << dt.bits) - 1
    v &= mask
    if dt.kind == "int" and v >> (dt.bits - 1):
        v -= 1 << dt.bits
    return v


def int_div(a: int, b: int, dt: DType):
    """Truncating division, or NO_FOLD where undefined."""
    if b == 0 or (dt.kind == "int" and a == int_range(dt)[0] and b == -1):
        return NO_FOLD
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def int_rem(a: int, b: int, dt: DType):
    """Remainder with the sign of the dividend, or NO_FOLD where undefined."""
    q = int_div(a, b, dt)
    return NO_FOLD if q is NO_FOLD else a - b * q


def _shift_ok(b: int, dt: DType) -> bool:
    return 0 <= b < dt.bits


def _shl(a, b, dt):
    return wrap(a << b, dt) if _shift_ok(b, dt) else NO_FOLD


def _shr(a, b, dt):
    if not _shift_ok(b, dt):
        return NO_FOLD
    return a >> b  # values are normalized: signed is arithmetic, unsigned is logical


def _umulhi(a, b, dt):
    mask = (1 << dt.bits) - 1
    return wrap(((a & mask) * (b & mask)) >> dt.bits, dt)


INT_BINARY = {
    ops.AddOp: lambda a, b, dt: wrap(a + b, dt),
    ops.SubOp: lambda a, b, dt: wrap(a - b, dt),
    ops.MulOp: lambda a, b, dt: wrap(a * b, dt),
    ops.IDivOp: lambda a, b, dt: int_div(a, b, dt),
    ops.RemOp: lambda a, b, dt: int_rem(a, b, dt),
    ops.AndOp: lambda a, b, dt: a & b,
    ops.OrOp: lambda a, b, dt: a | b,
    ops.XorOp: lambda a, b, dt: wrap(a ^ b, dt),
    ops.ShlOp: _shl,
    ops.ShrOp: _shr,
    ops.MinOp: lambda a, b, dt: min(a, b),
    ops.MaxOp: lambda a, b, dt: max(a, b),
    ops.UmulhiOp: _umulhi,
}
FLOAT_BINARY = {ops.AddOp: np.add, ops.SubOp: np.subtract, ops.MulOp: np.multiply,
                ops.TrueDivOp: np.divide}
CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
       "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


# --------------------------------------------------------------------------
# reading and writing constants
# --------------------------------------------------------------------------
def read_const(v, dt):
    """The Python value of a uniform constant of element type ``dt`` for folding:
    an int in range for integer types, a numpy float32/float64 for fp32/fp64;
    NO_FOLD otherwise."""
    c = constant_of(v)
    if c is NOT_CONST or c is None or isinstance(c, (str, complex)):
        return NO_FOLD
    if isinstance(dt, DType) and dt.is_int():
        if isinstance(c, (float, np.floating)):
            return NO_FOLD
        try:
            c = int(c)
        except (TypeError, ValueError):
            return NO_FOLD
        lo, hi = int_range(dt)
        return c if lo <= c <= hi else NO_FOLD
    if isinstance(dt, DType) and dt.name in _NP_FLOAT:
        if isinstance(c, (bool, np.bool_)):
            return NO_FOLD
        if isinstance(c, (int, np.integer)) and abs(int(c)) > 2 ** 53:
            return NO_FOLD
        try:
            return _NP_FLOAT[dt.name](float(c))
        except (TypeError, ValueError, OverflowError):
            return NO_FOLD
    return NO_FOLD


def make_value(x, dt):
    """The Python value stored in a folded constant of element type ``dt``."""
    if dt.kind == "bool":
        return bool(x)
    if dt.is_int():
        return int(x)
    return float(x)


def _operand_consts(op: Op, names, dt):
    vals = [read_const(op.slots[n], dt) for n in names]
    return None if any(v is NO_FOLD for v in vals) else vals


# --------------------------------------------------------------------------
# rules: each returns the folded Python value or NO_FOLD
# --------------------------------------------------------------------------
@FOLD_RULES.register(*ops.BINARY_OPS)
def _fold_binary(op: Op):
    dt = op.lhs.type.element
    vals = _operand_consts(op, ("lhs", "rhs"), dt)
    if vals is None:
        return NO_FOLD
    a, b = vals
    if dt.is_int():
        fn = INT_BINARY.get(type(op))
        return NO_FOLD if fn is None else fn(a, b, dt)
    fn = FLOAT_BINARY.get(type(op))
    if fn is None:
        return NO_FOLD
    with np.errstate(all="ignore"):
        return fn(a, b)


@FOLD_RULES.register(ops.CmpOp)
def _fold_cmp(op: Op):
    vals = _operand_consts(op, ("lhs", "rhs"), op.lhs.type.element)
    if vals is None:
        return NO_FOLD
    return bool(CMP[op.pred](*vals))


@FOLD_RULES.register(ops.NegOp, ops.InvertOp, ops.AbsOp)
def _fold_unary(op: Op):
    dt = op.src.type.element
    vals = _operand_consts(op, ("src",), dt)
    if vals is None:
        return NO_FOLD
    (a,) = vals
    if dt.is_int():
        if isinstance(op, ops.NegOp):
            return wrap(-a, dt)
        if isinstance(op, ops.InvertOp):
            return wrap(~a, dt)
        return wrap(abs(a), dt)
    if isinstance(op, ops.NegOp):
        return np.negative(a)
    if isinstance(op, ops.AbsOp):
        return np.abs(a)
    return NO_FOLD


@FOLD_RULES.register(ops.CastOp)
def _fold_cast(op: Op):
    src, to = op.src.type.element, op.to
    if not isinstance(src, DType) or not isinstance(to, DType):
        return NO_FOLD
    (a,) = _operand_consts(op, ("src",), src) or (NO_FOLD,)
    if a is NO_FOLD:
        return NO_FOLD
    if to.kind == "bool":
        return bool(a != 0)
    if src.is_int() and to.is_int():
        return wrap(a, to)
    if src.is_int() and to.name in _NP_FLOAT:
        exact = 2 ** (24 if to.name == "fp32" else 53)
        return _NP_FLOAT[to.name](a) if abs(a) <= exact else NO_FOLD
    if src.name in _NP_FLOAT and to.is_int():
        if not math.isfinite(a):
            return NO_FOLD
        t = math.trunc(float(a))
        lo, hi = int_range(to)
        return t if lo <= t <= hi else NO_FOLD
    if src.name in _NP_FLOAT and to.name in _NP_FLOAT:
        with np.errstate(all="ignore"):
            return _NP_FLOAT[to.name](a)
    return NO_FOLD


@FOLD_RULES.register(ops.SelectOp)
def _fold_select(op: Op):
    c = read_const(op.cond, op.cond.type.element)
    if c is NO_FOLD:
        return NO_FOLD
    chosen = op.true_value if c else op.false_value
    value = constant_of(chosen)
    return NO_FOLD if value is NOT_CONST else _Raw(value)


@FOLD_RULES.register(ops.SplatOp, ops.BroadcastOp, ops.ReshapeOp, ops.ExpandDimsOp,
                     ops.TransOp)
def _fold_shape(op: Op):
    c = constant_of(op.src)
    return NO_FOLD if c is NOT_CONST else _Raw(c)


class _Raw:
    """A constant value carried over unchanged (shape ops on a uniform constant)."""

    def __init__(self, value):
        self.value = value


def fold_op(op: Op):
    """The folded Python value of ``op``'s single result, or NO_FOLD."""
    if len(op.results) != 1 or op.regions:
        return NO_FOLD
    try:
        rule = FOLD_RULES.lookup(type(op))
    except NotImplementedError:
        return NO_FOLD
    return rule(op)


def fold_rule(op: Op, rw: Rewriter):
    """Rewrite rule: replace a foldable op by an ``arith.constant`` of its result type."""
    if isinstance(op, ops.ConstantOp):
        return None
    value = fold_op(op)
    if value is NO_FOLD:
        return None
    t = op.result.type
    if isinstance(value, _Raw):
        value = value.value
    else:
        value = make_value(value, t.element)
    return [rw.constant(value, t)]


def fold_constants(func: Function) -> Function:
    """Pass: fold every op whose operands are uniform constants (to a fixed point)."""
    apply_rules(func, fold_rule)
    return func
