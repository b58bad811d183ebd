"""Math functions on LLVM float scalars/vectors (fp32 and fp64).

``exp``/``exp2`` on fp32 are an inlined Cephes-style polynomial (about 1 ulp) so
that loops containing them vectorise; fp64 uses LLVM intrinsics.  fp32 ``erf`` and
``tanh`` are inlined too (polynomials fitted here to the mpmath values, minimax in
relative error, and ``exp_f32``; within 3 ulp of the correctly rounded value), and so is
fp32 ``log`` (Cephes' polynomial, within 1 ulp); the CUDA backend uses the same fp32
``erf``/``tanh``/``log`` code (backends/cuda/rules_elementwise.py); fp64
``erf``/``tanh`` call libm (``erf``, ``tanh``) resolved by the JIT's symbol lookup.  A backend passes ``overrides`` (name -> fn(b, x)) to replace any.
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


def _poly(b, coefs, t):
    """Horner: coefs[0] + coefs[1]*t + ... (lowest degree first), each step an
    ``llvm.fmuladd`` (one FMA where the target has it)."""
    y = _c(t, coefs[-1])
    for coef in reversed(coefs[:-1]):
        y = intr.call_overloaded(b, "fmuladd", [y, t, _c(t, coef)])
    return y


_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
             1.6666665459e-1, 5.0000001201e-1)


def _exp_core(b, n, r, normal_scale=False):
    """e**r * 2**n for |r| <= ln2/2, n an integral float in [-150, 128]; with
    ``normal_scale`` n in [-126, 127] (2**n a normal float: one scaling multiply, the
    same result as the two below, each of which is exact there)."""
    y = _poly(b, _EXP_POLY[::-1], r)
    y = b.fadd(intr.call_overloaded(b, "fmuladd", [y, b.fmul(r, r), r]), _c(r, 1.0))
    ni = b.fptosi(n, _like(n, I32))
    if normal_scale:
        return b.fmul(y, b.bitcast(b.shl(b.add(ni, _c(ni, 127)), _c(ni, 23)), r.type))
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


def _clamp(b, x, hi, lo):
    """``x`` clamped above to ``hi``; below ``lo`` (where the result is 0 or inf,
    selected by ``_finish``) replaced by 0, so no lane scales to a subnormal there: a
    subnormal product costs a microcode assist on x86 (~100 cycles), and ``exp(-inf)``
    is common (masked softmax rows)."""
    return b.select(b.fcmp_ordered("<", x, _c(x, lo)), _c(x, 0.0), _below(b, x, hi))


def exp_f32(b, x):
    hi, lo = 88.72283935546875, -104.0
    return _finish(b, x, _exp_bounded(b, _clamp(b, x, hi, lo)), hi, lo)


def _exp_bounded(b, x, normal_scale=False):
    """e**x for x in [-104, 88.72] (no NaN, no overflow): exp_f32 without its clamp
    and fix-ups, for callers whose argument is bounded by construction;
    ``normal_scale``: x in [-87, 87] (erf, tanh), one scaling multiply."""
    n = intr.unary_math(b, "rint", b.fmul(x, _c(x, 1.4426950408889634)))
    r = intr.call_overloaded(b, "fmuladd", [n, _c(x, -0.693359375), x])      # exact (n * c1 is)
    r = intr.call_overloaded(b, "fmuladd", [n, _c(x, 2.12194440e-4), r])
    return _exp_core(b, n, r, normal_scale)


def _below(b, a, c):
    """``a`` if ``a < c`` else ``c`` (NaN gives ``c``): one minps on x86."""
    return b.select(b.fcmp_ordered("<", a, _c(a, c)), a, _c(a, c))


def exp2_f32(b, x):
    hi, lo = 128.0 - 1e-5, -150.0
    xc = _clamp(b, x, hi, lo)
    n = intr.unary_math(b, "rint", xc)
    r = b.fmul(b.fsub(xc, n), _c(x, 0.6931471805599453))
    return _finish(b, x, _exp_core(b, n, r), 127.99999, lo)


def _keep_nan(b, x, res):
    return b.select(b.fcmp_unordered("uno", x, x), x, res)


# erf(x)/x = P(x*x) for |x| < 0.875 (relative error 8.5e-9); log(erfc(x)) + x*x = Q(x)
# on [0.875, 4] (absolute error 1.2e-8); erf(x) rounds to 1 in fp32 beyond 3.92.
_ERF_SMALL = (1.1283791065216064, -0.3761255145072937, 0.11282455176115036,
              -0.026791462674736977, 0.00503217987716198, -0.0006203246302902699)
_ERFC_LOG = (0.0002942824794445187, -1.130131483078003, 0.368004709482193,
             -0.10992522537708282, 0.026335565373301506, -0.004730290733277798,
             0.000590717070735991, -4.5354794565355405e-05, 1.602500447006605e-06)
# (tanh(x) - x)/x**3 = P(x*x) for |x| < 0.625 (relative error 4.8e-9).
_TANH_SMALL = (-0.3333333432674408, 0.13333304226398468, -0.05395926162600517,
               0.021768944337964058, -0.008344022557139397, 0.0022928237449377775)


def erf_f32(b, x):
    """fp32 erf, both branches computed and selected (vectorisable, no libm call)."""
    a = intr.unary_math(b, "fabs", x)
    small = b.fmul(a, _poly(b, _ERF_SMALL, b.fmul(a, a)))
    ac = _below(b, a, 4.0)                         # NaN: 4 (the result is x, below)
    erfc = _exp_bounded(b, b.fsub(_poly(b, _ERFC_LOG, ac), b.fmul(ac, ac)), True)   # in [-17, 0]
    res = b.select(b.fcmp_ordered("<", a, _c(x, 0.875)), small, b.fsub(_c(x, 1.0), erfc))
    return _keep_nan(b, x, intr.binary_math(b, "copysign", res, x))


def tanh_f32(b, x):
    """fp32 tanh: x + x**3 P(x*x) near 0, 1 - 2/(exp(2|x|) + 1) beyond (inf gives 1)."""
    a = intr.unary_math(b, "fabs", x)
    a2 = b.fmul(a, a)
    small = b.fadd(a, b.fmul(b.fmul(a, a2), _poly(b, _TANH_SMALL, a2)))
    ac = _below(b, a, 20.0)                        # tanh is 1.0 in fp32 from 9.01 on
    e = _exp_bounded(b, b.fadd(ac, ac), True)      # 2|x| < 40
    big = b.fsub(_c(x, 1.0), b.fdiv(_c(x, 2.0), b.fadd(e, _c(x, 1.0))))
    res = b.select(b.fcmp_ordered("<", a, _c(x, 0.625)), small, big)
    return _keep_nan(b, x, intr.binary_math(b, "copysign", res, x))


# log(1 + f) = f - f*f/2 + f**3 P(f) for sqrt(1/2) - 1 <= f < sqrt(2) - 1 (Cephes logf)
_LOG_POLY = (3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1,
             1.4249322787e-1, -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1,
             7.0376836292e-2)


def log_f32(b, x):
    """fp32 natural logarithm: x = m 2**e with m in [sqrt(1/2), sqrt(2)), log(m) by the
    polynomial above, e ln2 in two parts; subnormals scaled first; 0 gives -inf, a
    negative x NaN, +inf itself."""
    ity = _like(x, I32)
    tiny = b.fcmp_ordered("<", x, _c(x, 2.0 ** -126))
    xs = b.select(tiny, b.fmul(x, _c(x, 2.0 ** 25)), x)
    bits = b.bitcast(xs, ity)
    e = b.sub(b.lshr(bits, _c(bits, 23)), _c(bits, 127))
    e = b.select(tiny, b.sub(e, _c(e, 25)), e)
    m = b.bitcast(b.or_(b.and_(bits, _c(bits, (1 << 23) - 1)), _c(bits, 127 << 23)), x.type)
    big = b.fcmp_ordered(">", m, _c(x, 1.4142135381698608))
    m = b.select(big, b.fmul(m, _c(x, 0.5)), m)
    e = b.select(big, b.add(e, _c(e, 1)), e)
    f = b.fsub(m, _c(x, 1.0))
    z = b.fmul(f, f)
    ef = b.sitofp(e, x.type)
    y = b.fmul(b.fmul(_poly(b, _LOG_POLY, f), f), z)
    y = intr.call_overloaded(b, "fmuladd", [ef, _c(x, -2.12194440e-4), y])
    y = intr.call_overloaded(b, "fmuladd", [z, _c(x, -0.5), y])
    res = intr.call_overloaded(b, "fmuladd", [ef, _c(x, 0.693359375), b.fadd(f, y)])
    res = b.select(b.fcmp_ordered("==", x, _c(x, float("inf"))), x, res)
    res = b.select(b.fcmp_ordered("==", x, _c(x, 0.0)), _c(x, float("-inf")), res)
    return b.select(b.fcmp_unordered("<", x, _c(x, 0.0)), _c(x, float("nan")), res)


_INLINE_F32 = {"exp": exp_f32, "exp2": exp2_f32, "erf": erf_f32, "tanh": tanh_f32, "log": log_f32}
_LIBM = {"erf": ("erff", "erf"), "tanh": ("tanhf", "tanh")}
_INTRINSIC = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
              "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil"}


def call_per_lane(b, f, args):
    """``f`` (a scalar function) called on scalar ``args``, or once per lane of vector ones."""
    if not isinstance(args[0].type, ir.VectorType):
        return b.call(f, args)
    out = ir.Constant(args[0].type, ir.Undefined)
    for i in range(args[0].type.count):
        idx = ir.Constant(I32, i)
        out = b.insert_element(out, b.call(f, [b.extract_element(a, idx) for a in args]), idx)
    return out


def _libm_call(b, fn, x):
    scalar_ty = _elem(x.type)
    name = _LIBM[fn][0 if isinstance(scalar_ty, ir.FloatType) else 1]
    return call_per_lane(b, intr.declare(b.module, name, scalar_ty, [scalar_ty]), [x])


def lower_math(b, fn: str, x, overrides=None):
    """``fn`` (a name from ops.MATH_FUNCTIONS) applied to float value ``x``."""
    if overrides and fn in overrides:
        return overrides[fn](b, x)
    if isinstance(_elem(x.type), ir.FloatType) and fn in _INLINE_F32:
        return _INLINE_F32[fn](b, x)
    if fn == "rsqrt":
        return b.fdiv(_c(x, 1.0), intr.unary_math(b, "sqrt", x))
    if fn in _LIBM:
        return _libm_call(b, fn, x)
    return intr.unary_math(b, _INTRINSIC[fn], x)
