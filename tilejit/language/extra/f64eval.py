"""Helpers of the libdevice functions evaluated in float64 on tiles, then rounded once
to the input's type (libdevice.py's compositions and bessel.py)."""
from __future__ import annotations

import sys

from .. import semantic as sem
from .. import semantic_tile as st
from ..core import builtin


def _wide(x):
    from ...ir.types import float64
    x = sem.to_tensor(x)
    if not x.dtype.is_floating():
        raise TypeError(f"expected a floating-point tensor, got {x.dtype}")
    return x, sem.cast(x, float64)


def _narrow(r, like):
    return r if r.dtype == like.dtype else sem.cast(r, like.dtype)


def _m(fn, x):
    return st.math_unary(x, fn)


def _unary_wide(fn, doc, name):
    """The builtin ``name`` computing ``fn`` on the float64 widening of its argument and
    rounding the result back to the argument's type once."""
    def f(arg0):
        x, w = _wide(arg0)
        return _narrow(fn(w), x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    f.__module__ = sys._getframe(1).f_globals["__name__"]   # the defining module's (its __all__)
    return builtin(f)
