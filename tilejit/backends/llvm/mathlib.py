"""Math functions on LLVM float scalars/vectors (fp32 and fp64).

``exp``/``exp2`` on fp32 are an inlined Cephes-style polynomial (about 1 ulp) so
that loops containing them vectorise; fp64 uses LLVM intrinsics.  ``erf`` and
``tanh`` call libm (``erff``/``erf``, ``tanhf``/``tanh``) resolved by the JIT's
symbol lookup.  A backend passes ``overrides`` (name -> fn(b, x)) to replace any.
"""
from __future__ import annotations

import llvmlite.ir as ir

from . import intrinsics as intr
from .types import F32, F64, I32


def _c(v, x):
    ty = v.type
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, x)] * ty.count)
    return ir.Constant(ty, x)


def _elem(ty):
    return ty.element if isinstance(ty, ir.VectorType) else ty


def _like(v, elem):
    return ir.VectorType(elem, v.type.count) if isinstance(v.type, ir.VectorType) else elem


_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
             1.6666665459e-1, 5.0000001201e-1)


def _exp_core(b, n, r):
    """e**r * 2**n for |r| <= ln2/2, n an integral float in [-150, 128]."""
    y = _c(r, _EXP_POLY[0])
    for coef in _EXP_POLY[1:]:
        y = b.fadd(b.fmul(y, r), _c(r, coef))
    r2 = b.fmul(r, r)
    y = b.fadd(b.fadd(b.fmul(y, r2), r), _c(r, 1.0))
    ni = b.fptosi(n, _like(n, I32))
    n1 = b.ashr(ni, _c(ni, 1))
    n2 = b.sub(ni, n1)
    s1 = b.bitcast(b.shl(b.add(n1, _c(ni, 127)), _c(ni, 23)), r.type)
    s2 = b.bitcast(b.shl(b.add(n2, _c(ni, 127)), _c(ni, 23)), r.type)
    return b.fmul(b.fmul(y, s1), s2)


def _finish(b, x, res, hi, lo):
    inf = _c(x, float("inf"))
    res = b.select(b.fcmp_ordered(">", x, _c(x, hi)), inf, res)
    res = b.select(b.fcmp_ordered("<", x, _c(x, lo)), _c(x, 0.0), res)
    return b.select(b.fcmp_unordered("uno", x, x), x, res)


def exp_f32(b, x):
    hi, lo = 88.72283935546875, -104.0
    xc = intr.binary_math(b, "maxnum", intr.binary_math(b, "minnum", x, _c(x, hi)), _c(x, lo))
    n = intr.unary_math(b, "rint", b.fmul(xc, _c(x, 1.4426950408889634)))
    r = b.fsub(b.fsub(xc, b.fmul(n, _c(x, 0.693359375))), b.fmul(n, _c(x, -2.12194440e-4)))
    return _finish(b, x, _exp_core(b, n, r), hi, lo)


def exp2_f32(b, x):
    hi, lo = 128.0 - 1e-5, -150.0
    xc = intr.binary_math(b, "maxnum", intr.binary_math(b, "minnum", x, _c(x, hi)), _c(x, lo))
    n = intr.unary_math(b, "rint", xc)
    r = b.fmul(b.fsub(xc, n), _c(x, 0.6931471805599453))
    return _finish(b, x, _exp_core(b, n, r), 127.99999, lo)


_LIBM = {"erf": ("erff", "erf"), "tanh": ("tanhf", "tanh")}
_INTRINSIC = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
              "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil"}


def _libm_call(b, fn, x):
    scalar_ty = _elem(x.type)
    name = _LIBM[fn][0 if isinstance(scalar_ty, ir.FloatType) else 1]
    f = intr.declare(b.module, name, scalar_ty, [scalar_ty])
    if not isinstance(x.type, ir.VectorType):
        return b.call(f, [x])
    out = ir.Constant(x.type, ir.Undefined)
    for i in range(x.type.count):
        idx = ir.Constant(I32, i)
        out = b.insert_element(out, b.call(f, [b.extract_element(x, idx)]), idx)
    return out


def lower_math(b, fn: str, x, overrides=None):
    """``fn`` (a name from ops.MATH_FUNCTIONS) applied to float value ``x``."""
    if overrides and fn in overrides:
        return overrides[fn](b, x)
    is32 = isinstance(_elem(x.type), ir.FloatType)
    if fn == "exp" and is32:
        return exp_f32(b, x)
    if fn == "exp2" and is32:
        return exp2_f32(b, x)
    if fn == "rsqrt":
        return b.fdiv(_c(x, 1.0), intr.unary_math(b, "sqrt", x))
    if fn in _LIBM:
        return _libm_call(b, fn, x)
    return intr.unary_math(b, _INTRINSIC[fn], x)
