"""Mapping from tile-IR element types to LLVM types, for every target.

Two views of each dtype: the *value* type held in registers and the *storage*
type used in memory.  They differ for ``int1`` (i1 in registers, one byte in
memory, as numpy stores bool) and agree otherwise.  ``bf16`` is LLVM's ``bfloat``
where the target computes on it (``Capabilities.native_bf16``: NVPTX); elsewhere its
values are kept as their 16 bits (i16) and arithmetic goes through float32 (see
:mod:`.scalar`).  Pointers live in ``Capabilities.pointer_address_space``.
"""
from __future__ import annotations

import llvmlite.ir as ir
from llvmlite.ir import types as _t

from ...ir.types import DType, PointerType
from .capabilities import CPU, Capabilities


class BFloatType(_t._BaseFloatType):
    """LLVM's ``bfloat`` (llvmlite has none)."""
    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self):
        return "bfloat"

    def format_constant(self, value):
        return "0xR%04X" % float_to_bf16_bits(value)


BFloatType._create_instance()

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
F16, BF16, F32, F64 = ir.HalfType(), BFloatType(), ir.FloatType(), ir.DoubleType()
VOID = ir.VoidType()


def ptr_type(address_space: int = 0) -> ir.PointerType:
    return ir.PointerType(addrspace=address_space) if address_space else ir.PointerType()


PTR = ir.PointerType()


def value_type(dt, caps: Capabilities = CPU) -> ir.Type:
    """LLVM register type of one element of ``dt`` on a target with ``caps``."""
    if isinstance(dt, PointerType):
        return ptr_type(caps.pointer_address_space)
    if dt.kind == "bool":
        return I1
    if dt.kind in ("int", "uint"):
        return ir.IntType(dt.bits)
    if dt.name == "fp16":
        return F16
    if dt.name == "bf16":
        return BF16 if caps.native_bf16 else I16
    if dt.kind == "float" and dt.bits == 8:
        return I8
    if dt.name == "fp32":
        return F32
    if dt.name == "fp64":
        return F64
    raise TypeError(f"no LLVM type for {dt}")


def storage_type(dt, caps: Capabilities = CPU) -> ir.Type:
    """LLVM in-memory type of one element of ``dt`` (bool is a byte)."""
    if isinstance(dt, DType) and dt.kind == "bool":
        return I8
    return value_type(dt, caps)


def to_storage(b: ir.IRBuilder, v, dt):
    """Register value -> value to store in memory."""
    if isinstance(dt, DType) and dt.kind == "bool":
        return b.zext(v, I8 if not isinstance(v.type, ir.VectorType) else ir.VectorType(I8, v.type.count))
    return v


def from_storage(b: ir.IRBuilder, v, dt):
    """Value loaded from memory -> register value."""
    if isinstance(dt, DType) and dt.kind == "bool":
        if isinstance(v.type, ir.VectorType):
            return b.icmp_unsigned("!=", v, ir.Constant(v.type, [0] * v.type.count))
        return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))
    return v


def constant(dt, value, caps: Capabilities = CPU) -> ir.Constant:
    """An LLVM constant of element type ``dt`` holding the Python ``value``."""
    ty = value_type(dt, caps)
    if isinstance(dt, PointerType):
        return ir.Constant(I64, int(value)).inttoptr(ty) if value else ir.Constant(ty, None)
    if dt.kind == "bool":
        return ir.Constant(ty, 1 if value else 0)
    if dt.kind in ("int", "uint"):
        v = int(value) & ((1 << dt.bits) - 1)
        if dt.kind == "int" and v >= 1 << (dt.bits - 1):
            v -= 1 << dt.bits
        return ir.Constant(ty, v)
    if dt.name == "bf16" and not caps.native_bf16:
        return ir.Constant(I16, float_to_bf16_bits(float(value)))
    if dt.bits == 8:
        from ...ir.fp8 import f32_to_fp8, fmt_of
        return ir.Constant(I8, int(f32_to_fp8(float(value), fmt_of(dt))))
    return ir.Constant(ty, float(value))


def float_to_bf16_bits(x: float) -> int:
    """Round-to-nearest-even float32 -> bfloat16 bits (NaN stays NaN)."""
    import numpy as np
    bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return ((bits >> 16) | 0x40) & 0xFFFF
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def vector_of(ty: ir.Type, n: int) -> ir.Type:
    return ty if n == 1 else ir.VectorType(ty, n)


def zero_of(ty: ir.Type):
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, 0 if not _is_float(ty.element) else 0.0)] * ty.count)
    if isinstance(ty, ir.PointerType):
        return ir.Constant(ty, None)
    return ir.Constant(ty, 0.0 if _is_float(ty) else 0)


def _is_float(ty) -> bool:
    return isinstance(ty, (ir.HalfType, BFloatType, ir.FloatType, ir.DoubleType))


def is_float_type(ty) -> bool:
    """True for an LLVM floating type or a vector of one."""
    return _is_float(ty.element if isinstance(ty, ir.VectorType) else ty)
