"""Accurate fp64 ``exp``/``exp2``/``log``/``log2``/``sin``/``cos``/``tanh`` in plain LLVM IR
(no libm calls).

For targets without an fp64 math library (NVPTX: no libdevice is linked).  Both
use the classic reductions, with polynomials long enough for about 1 ulp of fp64:

* ``exp``: ``x = k ln2 + r`` (Cody-Waite, ``|r| <= ln2 / 2``), Taylor series of
  ``e^r`` to degree 14, then ``2^k`` applied in two halves so results near the
  overflow and subnormal limits are right.
* ``log``: ``x = m 2^e`` with ``m`` in ``[sqrt(1/2), sqrt(2))``, ``s = (m-1)/(m+1)``,
  ``log m = 2 atanh s`` as an odd series to ``s^23``; subnormal inputs are scaled
  by ``2^54`` first.
* ``sin``/``cos``: ``x = q pi/2 + r`` with ``pi/2`` in three parts subtracted by fused
  multiply-adds (libdevice's reduction), done twice so that the rounding of ``q``
  for large ``|x|`` is taken up; fdlibm's kernels on ``[-pi/4, pi/4]``, the quadrant
  ``q mod 4`` picking sign and kernel: 1-2 ulp for ``|x| < 2**52``.  Beyond, three
  parts of ``pi/2`` are too few and there is no Payne-Hanek reduction: NaN, never
  an inaccurate value (docs/differences.md).
* ``tanh``: ``t / (t + 2)``, ``t = expm1(2|x|)`` from ``exp`` and ``log`` (3 ulp).

The sin/cos polynomial coefficients are fdlibm's (k_sin.c, k_cos.c: "Copyright (C) 1993
by Sun Microsystems, Inc. All rights reserved.  Developed at SunSoft, a Sun
Microsystems, Inc. business.  Permission to use, copy, modify, and distribute this
software is freely granted, provided that this notice is preserved.").

Only the builder and the target-independent intrinsics ``llvm.fma`` / ``llvm.rint`` /
``llvm.floor`` / ``llvm.fabs`` / ``llvm.copysign`` are needed, so the same code runs on the CPU in a unit test.
"""
from __future__ import annotations

import math

from llvmlite import ir

F64, I64 = ir.DoubleType(), ir.IntType(64)
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
LOG2E = 1.4426950408889634
ROUNDER = 6755399441055744.0
EXP_MAX, EXP_MIN = 709.782712893384, -745.1332191019412


def _c(v):
    return ir.Constant(F64, v)


def _rint(b, x):
    """Round to nearest even for ``|x| < 2**51`` (adding and removing 1.5 * 2**52);
    callers discard the result outside that range."""
    return b.fsub(b.fadd(x, _c(ROUNDER)), _c(ROUNDER))


def _pow2(b, k):
    """``2.0 ** k`` for an i64 ``k`` in the normal exponent range."""
    return b.bitcast(b.shl(b.add(k, ir.Constant(I64, 1023)), ir.Constant(I64, 52)), F64)


def _horner(b, x, coeffs):
    acc = _c(coeffs[0])
    for c in coeffs[1:]:
        acc = b.fadd(b.fmul(acc, x), _c(c))
    return acc


_EXP_COEFFS = [1.0 / math.factorial(n) for n in range(14, -1, -1)]


def _exp_core(b, x, kf, r):
    """``e^r * 2^kf`` with the limits of ``exp`` applied against ``x``."""
    p = _horner(b, r, _EXP_COEFFS)
    k = b.fptosi(kf, I64)
    half = b.ashr(k, ir.Constant(I64, 1))
    y = b.fmul(b.fmul(p, _pow2(b, half)), _pow2(b, b.sub(k, half)))
    return y


def _exp_limits(b, x, y, hi, lo):
    y = b.select(b.fcmp_ordered(">", x, _c(hi)), _c(math.inf), y)
    return b.select(b.fcmp_ordered("<", x, _c(lo)), _c(0.0), y)


def exp_f64(b, x):
    """``e**x`` of an fp64 LLVM value."""
    kf = _rint(b, b.fmul(x, _c(LOG2E)))
    r = b.fsub(b.fsub(x, b.fmul(kf, _c(LN2_HI))), b.fmul(kf, _c(LN2_LO)))
    kf = b.select(b.fcmp_ordered("<", b.fmul(kf, kf), _c(1.0e7)), kf, _c(0.0))   # NaN/huge: keep k small
    return _exp_limits(b, x, _exp_core(b, x, kf, r), EXP_MAX, EXP_MIN)


def exp2_f64(b, x):
    """``2**x`` of an fp64 LLVM value (``x - k`` is exact, so no Cody-Waite split)."""
    kf = _rint(b, x)
    r = b.fmul(b.fsub(x, kf), _c(math.log(2.0)))
    kf = b.select(b.fcmp_ordered("<", b.fmul(kf, kf), _c(1.0e7)), kf, _c(0.0))
    return _exp_limits(b, x, _exp_core(b, x, kf, r), 1024.0 - 1e-12, -1075.0)


_ATANH_COEFFS = [1.0 / (2 * k + 1) for k in range(11, 0, -1)]


def log_f64(b, x):
    """Natural logarithm of an fp64 LLVM value."""
    tiny = b.fcmp_ordered("<", x, _c(2.0 ** -1022))
    xs = b.select(tiny, b.fmul(x, _c(2.0 ** 54)), x)
    bits = b.bitcast(xs, I64)
    e = b.sub(b.lshr(bits, ir.Constant(I64, 52)), ir.Constant(I64, 1023))
    e = b.select(tiny, b.sub(e, ir.Constant(I64, 54)), e)
    mbits = b.or_(b.and_(bits, ir.Constant(I64, (1 << 52) - 1)), ir.Constant(I64, 1023 << 52))
    m = b.bitcast(mbits, F64)
    big = b.fcmp_ordered(">", m, _c(math.sqrt(2.0)))
    m = b.select(big, b.fmul(m, _c(0.5)), m)
    e = b.select(big, b.add(e, ir.Constant(I64, 1)), e)
    f = b.fsub(m, _c(1.0))
    s = b.fdiv(f, b.fadd(m, _c(1.0)))
    z = b.fmul(s, s)
    tail = b.fmul(b.fmul(s, z), _horner(b, z, _ATANH_COEFFS))      # s^3/3 + s^5/5 + ...
    log_m = b.fadd(f, b.fsub(b.fmul(_c(2.0), tail), b.fmul(s, f)))  # 2s = f - s f, exactly rearranged
    ef = b.sitofp(e, F64)
    y = b.fadd(b.fmul(ef, _c(LN2_HI)), b.fadd(log_m, b.fmul(ef, _c(LN2_LO))))
    y = b.select(b.fcmp_ordered("==", x, _c(math.inf)), x, y)
    y = b.select(b.fcmp_ordered("==", x, _c(0.0)), _c(-math.inf), y)
    return b.select(b.fcmp_unordered("<", x, _c(0.0)), _c(math.nan), y)


def log2_f64(b, x):
    """Base-2 logarithm of an fp64 LLVM value."""
    return b.fmul(log_f64(b, x), _c(LOG2E))


TRIG_MAX = 2.0 ** 52       # sin/cos: |x| at and above this give NaN (see the module docstring)
_PIO2 = (1.5707963267948966e+00, 6.1232339957367574e-17, 8.4784276603688985e-32)  # pi/2 in 3 parts
_SIN = (1.58969099521155010221e-10, -2.50507602534068634195e-08, 2.75573137070700676789e-06,
        -1.98412698298579493134e-04, 8.33333333332248946124e-03, -1.66666666666666324348e-01)
_COS = (-1.13596475577881948265e-11, 2.08757232129817482790e-09, -2.75573143513906633035e-07,
        2.48015872894767294178e-05, -1.38888888888741095749e-03, 4.16666666666666019037e-02)


def _intr(b, name, *args):
    fn = b.module.declare_intrinsic(name, [F64], ir.FunctionType(F64, [F64] * len(args)))
    return b.call(fn, list(args))


def _mod4(b, q):
    """``q mod 4`` (0..3, as fp64) of an integral fp64 ``q``: exact for every magnitude."""
    return b.fsub(q, b.fmul(_intr(b, "llvm.floor", b.fmul(q, _c(0.25))), _c(4.0)))


def _reduce_pio2(b, x):
    """``(r, n)``: ``x = (4k + n) pi/2 + r`` with ``|r|`` about ``pi/4`` at most."""
    r, n = x, _c(0.0)
    for _ in range(2):
        q = _intr(b, "llvm.rint", b.fmul(r, _c(2.0 / math.pi)))
        for part in _PIO2:
            r = _intr(b, "llvm.fma", b.fneg(q), _c(part), r)
        n = _mod4(b, b.fadd(n, _mod4(b, q)))
    return r, n


def _sin_kernel(b, r):
    z = b.fmul(r, r)
    return b.fadd(r, b.fmul(b.fmul(z, r), _horner(b, z, _SIN)))


def _cos_kernel(b, r):
    """fdlibm's ``__kernel_cos``: ``w + (((1 - w) - z/2) + z^2 C(z))``, ``w = 1 - z/2``."""
    z = b.fmul(r, r)
    hz = b.fmul(z, _c(0.5))
    w = b.fsub(_c(1.0), hz)
    tail = b.fmul(b.fmul(z, z), _horner(b, z, _COS))
    return b.fadd(w, b.fadd(b.fsub(b.fsub(_c(1.0), w), hz), tail))


def _trig(b, x, shift):
    """``sin(x + shift pi/2)`` (shift 0: sin, 1: cos) of an fp64 LLVM value."""
    r, n = _reduce_pio2(b, x)
    n = _mod4(b, b.fadd(n, _c(float(shift))))
    odd = b.fcmp_ordered("==", _mod4(b, b.fmul(n, _c(2.0))), _c(2.0))      # n = 1 or 3: cosine
    v = b.select(odd, _cos_kernel(b, r), _sin_kernel(b, r))
    v = b.select(b.fcmp_ordered(">=", n, _c(2.0)), b.fneg(v), v)
    if shift == 0:      # sin(+-0) = +-0 (the reduction gives +0 for -0)
        v = b.select(b.fcmp_ordered("==", x, _c(0.0)), x, v)
    ax = b.fmul(x, x)
    return b.select(b.fcmp_ordered(">=", ax, _c(TRIG_MAX * TRIG_MAX)), _c(math.nan), v)


def sin_f64(b, x):
    """Sine of an fp64 LLVM value (NaN for infinities)."""
    return _trig(b, x, 0)


def cos_f64(b, x):
    """Cosine of an fp64 LLVM value (NaN for infinities)."""
    return _trig(b, x, 1)


def tanh_f64(b, x):
    """Hyperbolic tangent of an fp64 LLVM value: ``t / (t + 2)`` with ``t = expm1(2|x|)``,
    ``expm1`` as ``(u - 1) * y / log(u)``, ``u = e**y`` (exact enough for small ``y``:
    the rounding of ``u`` cancels), the sign of ``x`` restored; 1 past ``|x| = 22``."""
    a = _intr(b, "llvm.fabs", x)
    y = b.fmul(a, _c(2.0))
    u = exp_f64(b, y)
    lu = log_f64(b, u)
    exact = b.fcmp_ordered("==", lu, _c(0.0))
    em1 = b.select(exact, y, b.fmul(b.fsub(u, _c(1.0)), b.fdiv(y, b.select(exact, _c(1.0), lu))))
    t = b.fdiv(em1, b.fadd(em1, _c(2.0)))
    t = b.select(b.fcmp_ordered(">", a, _c(22.0)), _c(1.0), t)
    return _intr(b, "llvm.copysign", t, x)


FUNCTIONS = {"exp": exp_f64, "exp2": exp2_f64, "log": log_f64, "log2": log2_f64,
             "sin": sin_f64, "cos": cos_f64, "tanh": tanh_f64}
