"""``tl.extra.cuda.libdevice``: the libdevice functions tilejit implements.

Each maps to a tile-IR op (or a short composition); functions not listed here are
not supported and raise ``AttributeError`` when a kernel names them.
"""
from __future__ import annotations

from .. import semantic as sem
from .. import semantic_tile as st
from ..core import builtin


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
