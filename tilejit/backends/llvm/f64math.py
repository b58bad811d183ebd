"""Accurate fp64 ``exp``/``exp2``/``log``/``log2`` in plain LLVM IR (no libm calls).

For targets without an fp64 math library (NVPTX: no libdevice is linked).  Both
use the classic reductions, with polynomials long enough for about 1 ulp of fp64:

* ``exp``: ``x = k ln2 + r`` (Cody-Waite, ``|r| <= ln2 / 2``), Taylor series of
  ``e^r`` to degree 14, then ``2^k`` applied in two halves so results near the
  overflow and subnormal limits are right.
* ``log``: ``x = m 2^e`` with ``m`` in ``[sqrt(1/2), sqrt(2))``, ``s = (m-1)/(m+1)``,
  ``log m = 2 atanh s`` as an odd series to ``s^23``; subnormal inputs are scaled
  by ``2^54`` first.

Only the builder is needed (no intrinsics), so the same code runs on the CPU in a unit test.
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


FUNCTIONS = {"exp": exp_f64, "exp2": exp2_f64, "log": log_f64, "log2": log2_f64}
