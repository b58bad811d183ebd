"""fp8 (e5m2 / e4m3fn / e4b15 / e4m3fnuz / e5m2fnuz) <-> float32 conversions as integer bit manipulation on llvmlite
values (scalars or vectors); shared by the CPU and CUDA backends.  fp8 values are i8
bit patterns.  Semantics as in :mod:`tilejit.ir.fp8` (round to nearest even; overflow and +-inf
saturate to the largest finite value, as Triton's satfinite; NaN stays NaN); decoding is exact.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir.fp8 import Fp8Format

_I8, _I32 = ir.IntType(8), ir.IntType(32)
_F32 = ir.FloatType()


def _like(v, ty):
    return ir.VectorType(ty, v.type.count) if isinstance(v.type, ir.VectorType) else ty


def _k(v, x):
    ty = v.type
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, x)] * ty.count)
    return ir.Constant(ty, x)


def f32_to_fp8(b: ir.IRBuilder, v, fmt: Fp8Format):
    """float32 value(s) -> i8 fp8 bit pattern(s), round to nearest even."""
    u = b.bitcast(v, _like(v, _I32))
    sign = b.shl(b.lshr(u, _k(u, 31)), _k(u, 7))
    a = b.and_(u, _k(u, 0x7FFFFFFF))
    drop = 23 - fmt.mbits
    lsb = b.and_(b.lshr(a, _k(a, drop)), _k(a, 1))
    normal = b.lshr(b.add(b.add(a, _k(a, (1 << (drop - 1)) - 1)), lsb), _k(a, drop))
    normal = b.sub(normal, _k(a, (127 - fmt.bias) << fmt.mbits))
    # subnormal (or underflow): shift the 24-bit significand right by s (clamped to 31)
    exp = b.lshr(a, _k(a, 23))                                  # biased f32 exponent
    s = b.sub(_k(a, drop + fmt.emin + 127), exp)                # drop + (emin - e)
    s = b.select(b.icmp_signed(">", s, _k(s, 31)), _k(s, 31), s)
    m = b.or_(b.and_(a, _k(a, 0x7FFFFF)), _k(a, 0x800000))
    lsb_s = b.and_(b.lshr(m, s), _k(m, 1))
    half_m1 = b.sub(b.shl(_k(m, 1), b.sub(s, _k(s, 1))), _k(m, 1))
    sub = b.lshr(b.add(b.add(m, half_m1), lsb_s), s)
    is_normal = b.icmp_signed(">=", exp, _k(exp, fmt.emin + 127))
    r = b.select(is_normal, normal, sub)
    over = b.icmp_signed(">", r, _k(r, fmt.max_code))
    r = b.select(over, _k(r, fmt.nan_code if fmt.fnuz else fmt.max_code), r)
    if fmt.fnuz:                                    # overflow is NaN; no negative zero
        sign = b.select(b.icmp_unsigned("==", r, _k(r, 0)), _k(sign, 0), sign)
    r = b.select(b.icmp_unsigned(">", a, _k(a, 0x7F800000)), _k(r, fmt.nan_code), r)
    return b.trunc(b.or_(sign, r), _like(v, _I8))


def fp8_to_f32(b: ir.IRBuilder, v, fmt: Fp8Format):
    """i8 fp8 bit pattern(s) -> float32 value(s), exact."""
    x = b.zext(v, _like(v, _I32))
    sign = b.shl(b.and_(x, _k(x, 0x80)), _k(x, 24))
    mag = b.and_(x, _k(x, 0x7F))
    e = b.lshr(mag, _k(mag, fmt.mbits))
    m = b.and_(mag, _k(mag, (1 << fmt.mbits) - 1))
    normal = b.or_(b.shl(b.add(e, _k(e, 127 - fmt.bias)), _k(e, 23)), b.shl(m, _k(m, 23 - fmt.mbits)))
    # subnormal: m * 2**(emin - mbits), exact in float32
    sub_f = b.fmul(b.uitofp(m, _like(v, _F32)), _k(b.uitofp(m, _like(v, _F32)), 2.0 ** (fmt.emin - fmt.mbits)))
    sub = b.bitcast(sub_f, _like(v, _I32))
    r = b.select(b.icmp_unsigned("==", e, _k(e, 0)), sub, normal)
    if fmt.ieee:
        top = (1 << fmt.ebits) - 1
        special = b.icmp_unsigned("==", e, _k(e, top))
        inf_nan = b.select(b.icmp_unsigned("==", m, _k(m, 0)), _k(m, 0x7F800000), _k(m, 0x7FC00000))
        r = b.select(special, inf_nan, r)
    elif fmt.fnuz:                                              # 0x80 is the NaN
        r = b.select(b.icmp_unsigned("==", x, _k(x, 0x80)), _k(x, 0x7FC00000), r)
        sign = b.select(b.icmp_unsigned("==", x, _k(x, 0x80)), _k(x, 0), sign)
    else:
        r = b.select(b.icmp_unsigned("==", mag, _k(mag, 0x7F)), _k(mag, 0x7FC00000), r)
    return b.bitcast(b.or_(r, sign), _like(v, _F32))
