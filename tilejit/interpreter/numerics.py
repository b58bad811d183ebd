"""Numeric helpers shared by the interpreter rules.

Values are numpy arrays (0-d for scalars) or numpy scalars in the *storage*
dtype of their element type (``DType.to_numpy``): bfloat16 is kept as its uint16
bit pattern, pointers as uint64 addresses.  Float arithmetic on bfloat16 decodes
to float32, computes, and rounds back to nearest even.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import DType, PointerType, bfloat16, float16, float32
from ..ir.fp8 import fmt_of as _fp8_fmt, f32_to_fp8, fp8_to_f32

F32 = np.dtype(np.float32)
U16 = np.dtype(np.uint16)
U32 = np.dtype(np.uint32)
U64 = np.dtype(np.uint64)
I64 = np.dtype(np.int64)


def bf16_to_f32(bits) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values (exact)."""
    b = np.asarray(bits, dtype=U16)
    return (b.astype(U32) << np.uint32(16)).view(F32)


def f32_to_bf16(x) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns, rounding to nearest even; NaN stays NaN."""
    f = np.asarray(x, dtype=F32)
    u = f.view(U32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(f)
    out = rounded.astype(U16)
    if nan.any():
        out = np.where(nan, ((u >> np.uint32(16)) | np.uint32(0x40)).astype(U16), out)
    return out


_STORAGE: dict = {}


def storage(elem) -> np.dtype:
    """The numpy dtype holding values of ``elem`` (an element type)."""
    dt = _STORAGE.get(elem)
    if dt is None:
        dt = _STORAGE[elem] = elem.to_numpy()
    return dt


def decode(x, elem):
    """Storage -> compute values: bf16 and fp8 bits become float32, other types unchanged."""
    if elem is bfloat16:
        return bf16_to_f32(x)
    if elem.bits == 8 and elem.kind == "float":
        return fp8_to_f32(x, _fp8_fmt(elem))
    return x


def encode(x, elem):
    """Compute values -> storage dtype of ``elem`` (rounds to nearest even)."""
    if elem is bfloat16:
        return f32_to_bf16(np.asarray(x).astype(F32))
    if elem.bits == 8 and elem.kind == "float":
        return f32_to_fp8(np.asarray(x).astype(F32), _fp8_fmt(elem))
    dt = storage(elem)
    return x.astype(dt, copy=False) if isinstance(x, np.ndarray) else dt.type(x)


def compute_dtype(elem) -> np.dtype:
    """The dtype in which float math on ``elem`` is carried out (fp32 for 16-bit floats)."""
    if elem is bfloat16 or elem is float16 or (elem.bits == 8 and elem.kind == "float"):
        return F32
    return storage(elem)


def to_scalar(value, elem):
    """A Python launch value -> numpy scalar of ``elem``'s storage dtype."""
    if isinstance(elem, PointerType):
        return np.uint64(int(value) & 0xFFFFFFFFFFFFFFFF)
    if elem is bfloat16:
        return f32_to_bf16(np.float32(value))[()]
    if _fp8_fmt(elem) is not None:
        return f32_to_fp8(np.float32(value), _fp8_fmt(elem))[()]
    dt = storage(elem)
    if elem.kind in ("int", "uint"):
        bits = elem.bits
        v = int(value) & ((1 << bits) - 1)
        if elem.kind == "int" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return dt.type(v)
    if elem.kind == "bool":
        return np.bool_(bool(value))
    return dt.type(value)


# ---------------------------------------------------------------- integers
def int_div(a, b, elem: DType):
    """Integer division truncating toward zero (C); INT_MIN // -1 wraps to INT_MIN;
    ``x // 0`` is 0 on every backend (docs/differences.md)."""
    a, b = np.asarray(a), np.asarray(b)
    zero = b == 0
    safe = np.where(zero, b.dtype.type(1), b)
    q = np.floor_divide(a, safe)
    if elem.kind == "int":
        r = np.subtract(a, np.multiply(q, safe))
        fix = (r != 0) & ((np.less(a, 0)) != (np.less(safe, 0)))
        q = np.where(fix, q + q.dtype.type(1), q)
    return np.where(zero, q.dtype.type(0), q).astype(q.dtype, copy=False)


def int_rem(a, b, elem: DType):
    """Remainder with the sign of the dividend (C); x % -1 == 0 for every x;
    ``x % 0`` is ``x`` on every backend (docs/differences.md)."""
    if elem.kind not in ("int", "uint"):
        return np.remainder(a, b)
    a, b = np.asarray(a), np.asarray(b)
    q = int_div(a, b, elem)
    return np.subtract(a, np.multiply(q, b)).astype(q.dtype, copy=False)


def umulhi(a, b, elem: DType):
    """High ``bits`` of the full unsigned product, reinterpreted as ``elem``."""
    bits = elem.bits
    dt = storage(elem)
    udt = np.dtype(f"uint{bits}")
    ua = np.asarray(a).view(udt)
    ub = np.asarray(b).view(udt)
    if bits <= 32:
        p = ua.astype(U64) * ub.astype(U64)
        return (p >> np.uint64(bits)).astype(udt).view(dt)
    mask = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi = ua & mask, ua >> s32
    b_lo, b_hi = ub & mask, ub >> s32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> s32) + (hi_lo & mask) + lo_hi
    hi = hi_hi + (hi_lo >> s32) + (cross >> s32)
    return hi.view(dt)


# ---------------------------------------------------------------- casts
def cast(x, src, dst):
    """Value conversion following ``tt.cast`` (see ops.CastOp)."""
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        if dst.kind == "bool":
            return np.not_equal(x, 0)
        return np.asarray(x).astype(storage(dst))
    src8, dst8 = _fp8_fmt(src), _fp8_fmt(dst)
    if src8 is not None:        # exact via float32 (semantic allows only float targets)
        return cast(fp8_to_f32(x, src8), float32, dst)
    if dst8 is not None:        # fp16/bf16/fp32 -> float32 is exact: one rounding
        return f32_to_fp8(cast(x, src, float32), dst8)
    if dst.kind == "bool":
        return np.not_equal(decode(x, src), 0)
    if src.kind == "float":
        v = decode(x, src)
        if dst.kind == "float":
            if dst is bfloat16:
                return f32_to_bf16(np.asarray(v).astype(F32))
            return np.asarray(v).astype(storage(dst))
        return _float_to_int(np.asarray(v), dst)
    # integer or bool source
    if dst is bfloat16:
        return f32_to_bf16(np.asarray(x).astype(F32))
    return np.asarray(x).astype(storage(dst))


def _float_to_int(v: np.ndarray, dst: DType):
    """Truncate toward zero; out-of-range values (undefined) saturate, NaN gives 0."""
    t = np.trunc(v.astype(np.float64))
    if dst.kind == "uint":
        lo, hi = 0.0, float(2 ** dst.bits - 1)
    else:
        lo, hi = float(-2 ** (dst.bits - 1)), float(2 ** (dst.bits - 1) - 1)
    t = np.where(np.isnan(t), 0.0, t)
    if dst.bits == 64:
        # 2**63 - 1 is not representable in float64: clamp and convert exactly
        out = np.where(t >= hi, 0.0, np.maximum(t, lo)).astype(storage(dst))
        return np.where(t >= hi, storage(dst).type(2 ** dst.bits - 1 if dst.kind == "uint"
                                                    else 2 ** 63 - 1), out)
    return np.clip(t, lo, hi).astype(storage(dst))


def bitcast(x, src, dst):
    """Reinterpret bits (same width)."""
    return np.asarray(x).view(storage(dst))
