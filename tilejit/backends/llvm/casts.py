"""``tt.cast`` / ``tt.bitcast`` lowering on LLVM values (target independent)."""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir.types import PointerType
from .types import F32, I1, I64, value_type


def _like(v, elem):
    return ir.VectorType(elem, v.type.count) if isinstance(v.type, ir.VectorType) else elem


def _c(v, x):
    ty = v.type
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, x)] * ty.count)
    return ir.Constant(ty, x)


def _to_f32_if_bf16(b, v, dt):
    from .scalar import bf16_to_f32
    from ...ir.types import float32
    if dt.name == "bf16":
        return bf16_to_f32(b, v), float32
    return v, dt


def lower_cast(b: ir.IRBuilder, v, src, dst):
    """Value conversion ``src`` -> ``dst`` as in ops.CastOp's docstring."""
    if src == dst:
        return v
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return _ptr_cast(b, v, src, dst)
    from ...ir.fp8 import fmt_of
    from ...ir.types import float32
    from .fp8 import f32_to_fp8, fp8_to_f32
    if fmt_of(src) is not None:         # exact via float32
        return lower_cast(b, fp8_to_f32(b, v, fmt_of(src)), float32, dst)
    if fmt_of(dst) is not None:         # fp16/bf16/fp32 -> float32 is exact: one rounding
        return f32_to_fp8(b, lower_cast(b, v, src, float32), fmt_of(dst))
    v, src = _to_f32_if_bf16(b, v, src)
    if dst.name == "bf16":
        from .scalar import f32_to_bf16
        from ...ir.types import float32
        return f32_to_bf16(b, lower_cast(b, v, src, float32))
    dty = _like(v, value_type(dst))
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


def _ptr_cast(b, v, src, dst):
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return v if src.address_space == dst.address_space else b.addrspacecast(v, _like(v, value_type(dst)))
    if isinstance(src, PointerType):
        i = b.ptrtoint(v, _like(v, I64))
        return lower_cast(b, i, _I64DT, dst) if dst.bits != 64 or dst.kind != "int" else i
    if src.bits != 64:
        v = lower_cast(b, v, src, _I64DT)
    return b.inttoptr(v, _like(v, value_type(dst)))


def lower_bitcast(b: ir.IRBuilder, v, src, dst):
    """Reinterpret bits (same width)."""
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return _ptr_cast(b, v, src, dst)
    dty = _like(v, value_type(dst))
    return v if v.type == dty else b.bitcast(v, dty)


from ...ir.types import int64 as _I64DT  # noqa: E402
