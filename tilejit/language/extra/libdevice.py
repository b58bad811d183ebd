"""``tl.extra.cuda.libdevice``: the libdevice functions tilejit implements.

Each maps to a tile-IR op (or a short composition); functions not listed here are
not supported and raise ``AttributeError`` when a kernel names them.
"""
from __future__ import annotations

from .. import semantic as sem
from .. import semantic_tile as st
from ..core import builtin
from .f64eval import _m, _narrow, _wide


def _unary(name, op_name, doc):
    def fn(arg0):
        return st.math_unary(arg0, op_name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return builtin(fn)


exp = _unary("exp", "exp", "e**x.")
exp2 = _unary("exp2", "exp2", "2**x.")
log = _unary("log", "log", "Natural logarithm.")
log2 = _unary("log2", "log2", "Base-2 logarithm.")
sqrt = _unary("sqrt", "sqrt", "Square root.")
sqrt_rn = _unary("sqrt_rn", "sqrt", "Square root, rounded to nearest.")
rsqrt = _unary("rsqrt", "rsqrt", "1 / sqrt(x).")
sin = _unary("sin", "sin", "Sine.")
cos = _unary("cos", "cos", "Cosine.")
floor = _unary("floor", "floor", "Floor.")
ceil = _unary("ceil", "ceil", "Ceiling.")
erf = _unary("erf", "erf", "Error function.")
tanh = _unary("tanh", "tanh", "Hyperbolic tangent.")


@builtin
def fabs(arg0):
    """Absolute value."""
    return st.abs(arg0)


abs = fabs


@builtin
def fma(arg0, arg1, arg2):
    """``arg0 * arg1 + arg2`` with one rounding."""
    return sem.fma(arg0, arg1, arg2)


@builtin
def div_rn(arg0, arg1):
    """Division rounded to nearest."""
    return sem.fdiv(arg0, arg1, True)


@builtin
def fmin(arg0, arg1):
    """Minimum (a NaN operand yields the other)."""
    return sem.minimum(arg0, arg1)


@builtin
def fmax(arg0, arg1):
    """Maximum (a NaN operand yields the other)."""
    return sem.maximum(arg0, arg1)


@builtin
def isnan(arg0):
    """int1: ``x`` is NaN."""
    return sem.compare(arg0, arg0, "ne")


@builtin
def isinf(arg0):
    """int1: ``x`` is +inf or -inf."""
    return sem.compare(st.abs(arg0), float("inf"), "eq")


@builtin
def trunc(arg0):
    """Round toward zero."""
    return st.where(sem.compare(arg0, 0, "lt"), st.math_unary(arg0, "ceil"), st.math_unary(arg0, "floor"))


@builtin
def tan(arg0):
    """Tangent (sin / cos)."""
    return sem.truediv(st.math_unary(arg0, "sin"), st.math_unary(arg0, "cos"))


@builtin
def mulhi(arg0, arg1):
    """High half of the full-width product."""
    return sem.umulhi(arg0, arg1)


# ---------------------------------------------------------------------------
# compositions evaluated in float64 (then rounded once to the input's type):
# accurate to about one ulp of fp32/fp16; fp64 inputs get fp64 rounding.
# ---------------------------------------------------------------------------


@builtin
def log1p(arg0):
    """``log(1 + x)``, accurate for small ``x``."""
    x, w = _wide(arg0)
    u = sem.add(w, 1.0)
    d = sem.sub(u, 1.0)
    safe_d = st.where(sem.compare(d, 0.0, "eq"), 1.0, d)
    r = st.where(sem.compare(d, 0.0, "eq"), w, sem.mul(_m("log", u), sem.truediv(w, safe_d)))
    return _narrow(st.where(sem.compare(u, float("inf"), "eq"), u, r), x)


def _expm1_wide(w):
    u = _m("exp", w)
    um1 = sem.sub(u, 1.0)
    lu = _m("log", u)
    safe_lu = st.where(sem.compare(lu, 0.0, "eq"), 1.0, lu)
    r = st.where(sem.compare(um1, 0.0, "eq"), w, sem.mul(um1, sem.truediv(w, safe_lu)))
    return st.where(sem.compare(u, float("inf"), "eq"), u, st.where(sem.compare(um1, -1.0, "eq"), um1, r))


@builtin
def expm1(arg0):
    """``exp(x) - 1``, accurate for small ``x``."""
    x, w = _wide(arg0)
    return _narrow(_expm1_wide(w), x)


@builtin
def sinh(arg0):
    """Hyperbolic sine."""
    x, w = _wide(arg0)
    e = _m("exp", w)
    big = sem.mul(sem.sub(e, sem.truediv(1.0, e)), 0.5)
    em1 = _expm1_wide(w)                       # small |x|: no cancellation
    small = sem.mul(sem.add(em1, sem.truediv(em1, sem.add(em1, 1.0))), 0.5)
    return _narrow(st.where(sem.compare(st.abs(w), 1.0, "lt"), small, big), x)


@builtin
def cosh(arg0):
    """Hyperbolic cosine."""
    x, w = _wide(arg0)
    e = _m("exp", w)
    return _narrow(sem.mul(sem.add(e, sem.truediv(1.0, e)), 0.5), x)


@builtin
def pow(arg0, arg1):
    """``x ** y`` for floats (C ``pow`` special cases: ``pow(x, 0) = 1``, ``pow(1, y) = 1``,
    negative ``x`` with an integral ``y`` keeps the sign of odd powers, else NaN)."""
    x, y = sem.binary_op_type_checking_impl(arg0, arg1)
    if not x.dtype.is_floating():
        raise TypeError(f"pow expects floating-point tensors, got {x.dtype}")
    _, wx = _wide(x)
    _, wy = _wide(y)
    mag = _m("exp", sem.mul(wy, _m("log", st.abs(wx))))
    is_int = sem.compare(_m("floor", wy), wy, "eq")
    half = sem.mul(wy, 0.5)
    odd = sem.logical_and(is_int, sem.compare(_m("floor", half), half, "ne"))
    neg = sem.compare(wx, 0.0, "lt")
    r = st.where(sem.logical_and(neg, odd), sem.minus(mag), mag)
    r = st.where(sem.logical_and(neg, sem.not_(is_int)), float("nan"), r)
    one = sem.logical_or(sem.compare(wy, 0.0, "eq"), sem.compare(wx, 1.0, "eq"))
    return _narrow(st.where(one, 1.0, r), x)


@builtin
def signbit(arg0):
    """int1: the sign bit of ``x`` is set (true for -0.0)."""
    from ...ir.types import int16, int32, int64
    x = sem.to_tensor(arg0)
    ity = {16: int16, 32: int32, 64: int64}[x.dtype.bits]
    return sem.compare(sem.bitcast(x, ity), 0, "lt")


@builtin
def isfinited(arg0):
    """int1: ``x`` is neither infinite nor NaN."""
    x = sem.to_tensor(arg0)
    return sem.compare(st.abs(x), float("inf"), "lt")


isfinite = isfinited


@builtin
def fast_dividef(arg0, arg1):
    """Fast float division (here: IEEE division)."""
    return sem.truediv(arg0, arg1)


from .bessel import cyl_bessel_i0, cyl_bessel_i1, j0, j1, y0, y1  # noqa: E402,F401
from .libdevice_more import *  # noqa: E402,F401,F403  (its __all__)
from .libdevice_erf import *  # noqa: E402,F401,F403  (erfc, erfcx, erfinv, normcdf, fmod)
