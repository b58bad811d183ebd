"""``tt.cast`` / ``tt.bitcast`` lowering on LLVM values (scalars or vectors), for every
target: ``caps`` (:mod:`.capabilities`) says how bf16 values and pointers are held.

bf16 goes through float32 both ways, as the interpreter does: a bf16 source is
widened to float32 (exact), a bf16 result is the float32 result rounded to nearest even
(so an int32 or fp64 source is rounded twice, like the interpreter and Triton).  fp8
goes through float32 too (:mod:`.fp8`)."""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir.fp8 import fmt_of
from ...ir.types import PointerType, bfloat16, float32, int64
from .capabilities import CPU, Capabilities
from .fp8 import f32_to_fp8, fp8_to_f32
from .types import F32, value_type


def _like(v, elem):
    return ir.VectorType(elem, v.type.count) if isinstance(v.type, ir.VectorType) else elem


def _c(v, x):
    ty = v.type
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, x)] * ty.count)
    return ir.Constant(ty, x)


def bf16_to_float32(b: ir.IRBuilder, v, caps: Capabilities = CPU):
    """bf16 value(s) -> float32 (exact)."""
    if caps.native_bf16:
        return b.fpext(v, _like(v, F32))
    from .scalar import bf16_to_f32
    return bf16_to_f32(b, v)


def float32_to_bf16(b: ir.IRBuilder, v, caps: Capabilities = CPU):
    """float32 value(s) -> bf16, rounded to nearest even (NaN stays NaN)."""
    if caps.native_bf16:
        return b.fptrunc(v, _like(v, value_type(bfloat16, caps)))
    from .scalar import f32_to_bf16
    return f32_to_bf16(b, v)


def lower_cast(b: ir.IRBuilder, v, src, dst, caps: Capabilities = CPU):
    """Value conversion ``src`` -> ``dst`` as in ops.CastOp's docstring."""
    if src == dst:
        return v
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return _ptr_cast(b, v, src, dst, caps)
    if fmt_of(src) is not None:         # exact via float32
        return lower_cast(b, fp8_to_f32(b, v, fmt_of(src)), float32, dst, caps)
    if fmt_of(dst) is not None:         # fp16/bf16/fp32 -> float32 is exact: one rounding
        return f32_to_fp8(b, lower_cast(b, v, src, float32, caps), fmt_of(dst))
    if src.name == "bf16":
        return lower_cast(b, bf16_to_float32(b, v, caps), float32, dst, caps)
    if dst.name == "bf16":
        return float32_to_bf16(b, lower_cast(b, v, src, float32, caps), caps)
    dty = _like(v, value_type(dst, caps))
    if dst.kind == "bool":
        if src.kind == "float":
            return b.fcmp_unordered("!=", v, _c(v, 0.0))
        return b.icmp_unsigned("!=", v, _c(v, 0))
    if src.kind == "float":
        if dst.kind == "float":
            if dst.bits > src.bits:
                return b.fpext(v, dty)
            return b.fptrunc(v, dty) if dst.bits < src.bits else v
        return b.fptosi(v, dty) if dst.kind == "int" else b.fptoui(v, dty)
    signed = src.kind == "int"
    if dst.kind == "float":
        return b.sitofp(v, dty) if signed else b.uitofp(v, dty)
    sw, dw = (1 if src.kind == "bool" else src.bits), dst.bits
    if dw > sw:
        return b.sext(v, dty) if signed else b.zext(v, dty)
    if dw < sw:
        return b.trunc(v, dty)
    return v


def _ptr_cast(b, v, src, dst, caps):
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        ty = _like(v, value_type(dst, caps))
        return v if v.type == ty else b.addrspacecast(v, ty)
    if isinstance(src, PointerType):
        i = b.ptrtoint(v, _like(v, value_type(int64, caps)))
        return lower_cast(b, i, int64, dst, caps) if dst != int64 else i
    if src != int64:                    # an unsigned or bool source zero-extends
        v = lower_cast(b, v, src, int64, caps)
    return b.inttoptr(v, _like(v, value_type(dst, caps)))


def lower_bitcast(b: ir.IRBuilder, v, src, dst, caps: Capabilities = CPU):
    """Reinterpret bits (same width)."""
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return _ptr_cast(b, v, src, dst, caps)
    dty = _like(v, value_type(dst, caps))
    return v if v.type == dty else b.bitcast(v, dty)

