"""``tl.dot_scaled``: the matrix product of microscaling (MX) operands, composed of
existing ops the way Triton emulates it where the hardware has no scaled MMA.

Each operand is upcast to the compute type -- bf16, or fp16 when either operand's
format is fp16 -- and multiplied, in that type, by its e8m0 scale (an 8-bit exponent:
``2 ** (s - 127)``, as the compute type reads it: 0 gives 0 in bf16; 255 gives NaN),
one scale per 32 elements along K (fp8e4nv scales, NVFP4: their values, one per 16);
then one ``tt.dot`` with fp32 accumulation.
Formats: ``e2m1`` (two 4-bit values per uint8, the first in the low bits, packed along
K, or along M/N when ``lhs_k_pack``/``rhs_k_pack`` is false), ``e4m3``, ``e5m2``
(uint8 bits or the fp8 type), ``bf16``, ``fp16`` (uint16 bits or the type).
"""
from __future__ import annotations

from ..ir.types import bfloat16, float16, float32, float8e4nv, float8e5, int8, uint8, uint16, uint32
from . import core
from . import semantic as sem
from . import semantic_tile as st

_TYPED = {"e4m3": float8e4nv, "e5m2": float8e5, "bf16": bfloat16, "fp16": float16}
_BITS = {"e4m3": uint8, "e5m2": uint8, "bf16": uint16, "fp16": uint16, "e2m1": uint8}


def _operand(x, fmt, what):
    """``x`` as the format's element type (e2m1: the packed uint8 tile)."""
    x = sem.to_tensor(x)
    if fmt not in _BITS:
        raise ValueError(f"dot_scaled: invalid {what}_format {fmt!r}; one of e2m1, e4m3, e5m2, bf16, fp16")
    if len(x.shape) != 2:
        raise ValueError(f"dot_scaled: {what} must be a 2-d tile, got shape {list(x.shape)}")
    if fmt in _TYPED and x.dtype == _TYPED[fmt]:
        return x
    if x.dtype != _BITS[fmt]:
        raise TypeError(f"dot_scaled: {what} in format {fmt} must be {_BITS[fmt]}"
                        f"{'' if fmt == 'e2m1' else ' or ' + str(_TYPED[fmt])}, got {x.dtype}")
    return x if fmt == "e2m1" else sem.bitcast(x, _TYPED[fmt])


def _e2m1_to_f32(nibble):
    """4-bit e2m1 codes (uint8 0..15: sign, 2 exponent bits, 1 mantissa bit) -> fp32,
    exact: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives."""
    c = sem.cast(nibble, uint32)
    e = sem.and_(sem.shr(c, 1), 3)
    m = sem.and_(c, 1)
    normal = sem.or_(sem.shl(sem.add(e, 126), 23), sem.shl(m, 22))
    bits = st.where(sem.compare(e, 0, "eq"), sem.mul(m, 0x3F000000), normal)
    bits = sem.or_(bits, sem.shl(sem.and_(c, 8), 28))
    return sem.bitcast(bits, float32)


def _unpack_e2m1(x, along_last):
    """Packed e2m1 (two per byte, the first in the low bits) -> fp32 with the packed
    dimension (the last, or the first) doubled."""
    lo = _e2m1_to_f32(sem.and_(x, 0xF))
    hi = _e2m1_to_f32(sem.shr(x, 4))
    if along_last:
        return st.interleave(lo, hi)
    t = st.interleave(st.permute(lo, (1, 0)), st.permute(hi, (1, 0)))
    return st.permute(t, (1, 0))


def _scale_factor(scale, comp):
    """(scale factors in the compute type, elements per scale along K).  e8m0
    exponents (uint8; 32 elements each): bf16 reads ``s << 7`` as its bits (s = 0 is
    0); fp16 converts ``2 ** (s - 127)`` from fp32; 255 is NaN either way.  fp8e4nv
    scales (NVFP4; 16 elements each) are their values."""
    s = sem.to_tensor(scale)
    if s.dtype == float8e4nv:
        return sem.cast(s, comp), 16
    if s.dtype == int8:                 # e8m0 bits held as int8 (as Triton's tests build them)
        s = sem.bitcast(s, uint8)
    if s.dtype != uint8:
        raise TypeError(f"dot_scaled: scales must be uint8/int8 (e8m0) or float8e4nv, got {s.dtype}")
    if comp == bfloat16:
        f = sem.bitcast(sem.shl(sem.cast(s, uint16), 7), bfloat16)
    else:
        f = sem.cast(sem.bitcast(sem.shl(sem.cast(s, uint32), 23), float32), float16)
    nan = sem.scalar_constant(float("nan"), comp, f.shape)
    return st.where(sem.compare(s, 255, "eq"), nan, f), 32


def _upcast(x, fmt, scale, comp, k_pack, is_rhs):
    """One operand in the compute type, scaled; the lhs is [M, K], the rhs [K, N]."""
    if fmt == "e2m1":
        # the lhs packs along K (last) or M (first); the rhs along K (first) or N (last)
        v = _unpack_e2m1(x, along_last=(k_pack != is_rhs))
    else:
        v = x
    v = sem.cast(v, comp) if v.dtype != comp else v
    if scale is None:
        return v
    rows, k = (v.shape[1], v.shape[0]) if is_rhs else v.shape
    f, g = _scale_factor(scale, comp)
    if tuple(f.shape) != (rows, k // g) or k % g:
        raise ValueError(f"{'rhs' if is_rhs else 'lhs'}_scale must be a tensor of shape "
                         f"[{rows}, {k // g}]. Got {[str(d) for d in f.shape]}")
    f = st.reshape(st.broadcast_impl_shape(st.expand_dims(f, 2), (rows, k // g, g)), (rows, k))
    if is_rhs:
        f = st.permute(f, (1, 0))
    return sem.mul(v, f)


def _none(x):
    x = core._unwrap(x)
    return x is None


def dot_scaled_impl(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False,
                    lhs_k_pack=True, rhs_k_pack=True, out_dtype=float32):
    """The semantics of :func:`tilejit.language.dot_scaled` (module doc)."""
    if core._unwrap(out_dtype) != float32:
        raise ValueError("dot_scaled: only float32 is supported for out_dtype")
    lhs, rhs = sem.to_tensor(lhs), sem.to_tensor(rhs)
    if len(lhs.shape) == 3 and len(rhs.shape) == 3:        # a batch: one 2-d scaled dot per item
        if lhs.shape[0] != rhs.shape[0]:
            raise ValueError(f"dot_scaled: batch sizes differ: {list(lhs.shape)} and {list(rhs.shape)}")
        item = (lambda x, i: None if _none(x) else st._batch_item(sem.to_tensor(x), i))
        return st.stack_batch([dot_scaled_impl(item(lhs, i), item(lhs_scale, i), lhs_format, item(rhs, i),
                                               item(rhs_scale, i), rhs_format, item(acc, i), fast_math,
                                               lhs_k_pack, rhs_k_pack, out_dtype)
                               for i in range(lhs.shape[0])])
    lf, rf = str(core._unwrap(lhs_format)), str(core._unwrap(rhs_format))
    a, b = _operand(lhs, lf, "lhs"), _operand(rhs, rf, "rhs")
    if not lhs_k_pack and lf != "e2m1" or not rhs_k_pack and rf != "e2m1":
        raise ValueError("dot_scaled: only e2m1 operands can be packed along a dimension other than K")
    comp = float16 if "fp16" in (lf, rf) else bfloat16
    a = _upcast(a, lf, None if _none(lhs_scale) else lhs_scale, comp, lhs_k_pack, False)
    b = _upcast(b, rf, None if _none(rhs_scale) else rhs_scale, comp, rhs_k_pack, True)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"dot_scaled: the reduction dimensions differ: lhs {list(a.shape)} and rhs "
                         f"{list(b.shape)} after unpacking")
    acc = None if _none(acc) else acc
    return st.dot(a, b, acc, input_precision="ieee", out_dtype=float32)


__all__ = ["dot_scaled_impl"]
