"""``tl.math``: elementwise math functions (also exported as ``tl.exp`` etc.)."""
from __future__ import annotations

from . import semantic as sem
from . import semantic_tile as st
from .core import builtin, tensor_member


def _unary(fn_name, doc):
    def fn(x):
        return st.math_unary(x, fn_name)
    fn.__name__ = fn.__qualname__ = fn_name
    fn.__doc__ = doc + " (floating-point tensors; the result has the input's dtype)."
    return tensor_member(builtin(fn))


exp = _unary("exp", "Elementwise e**x")
exp2 = _unary("exp2", "Elementwise 2**x")
log = _unary("log", "Elementwise natural logarithm")
log2 = _unary("log2", "Elementwise base-2 logarithm")
sqrt = _unary("sqrt", "Elementwise square root")
rsqrt = _unary("rsqrt", "Elementwise 1 / sqrt(x)")
sin = _unary("sin", "Elementwise sine")
cos = _unary("cos", "Elementwise cosine")
floor = _unary("floor", "Elementwise floor")
ceil = _unary("ceil", "Elementwise ceiling")
erf = _unary("erf", "Elementwise error function")
tanh = _unary("tanh", "Elementwise hyperbolic tangent")


@tensor_member
@builtin
def abs(x):
    """Elementwise absolute value (identity on unsigned integers)."""
    return st.abs(x)


@builtin
def fma(x, y, z):
    """Elementwise ``x * y + z`` with a single rounding (operands are promoted and broadcast)."""
    return sem.fma(x, y, z)


@builtin
def umulhi(x, y):
    """Elementwise high half of the full-width product of two integers."""
    return sem.umulhi(x, y)


@builtin
def div_rn(x, y):
    """Floating-point division rounded to nearest; a Python number operand takes the
    other operand's type (``div_rn(x, 2)``), as in ordinary arithmetic."""
    x, y = sem.binary_op_type_checking_impl(x, y)
    return sem.fdiv(x, y, True)


@builtin
def sqrt_rn(x):
    """Square root rounded to nearest."""
    return st.math_unary(x, "sqrt")


@builtin
def max(x, y, propagate_nan=None):
    """Elementwise maximum."""
    return sem.maximum(x, y)


@builtin
def min(x, y, propagate_nan=None):
    """Elementwise minimum."""
    return sem.minimum(x, y)


@builtin
def cdiv(x, div):
    """Ceiling division."""
    from .standard import cdiv as _cdiv
    return _cdiv(x, div)


@builtin
def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    from .standard import sigmoid as _s
    return _s(x)
