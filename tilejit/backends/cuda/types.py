"""LLVM types and constants for tile IR element types on the NVPTX target."""
from __future__ import annotations

import struct

import numpy as np
from llvmlite import ir
from llvmlite.ir import types as _t

from ...ir.types import DType, PointerType


class BFloatType(_t._BaseFloatType):
    """LLVM's ``bfloat`` (llvmlite has none)."""
    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self):
        return "bfloat"

    def format_constant(self, value):
        return "0xR%04X" % bf16_bits(value)


BFloatType._create_instance()


def bf16_bits(value) -> int:
    """bfloat16 bits of ``value`` rounded to nearest even (NaN stays NaN)."""
    bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return (bits >> 16) | 0x40
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
F16, BF16, F32, F64 = ir.HalfType(), BFloatType(), ir.FloatType(), ir.DoubleType()
GLOBAL_PTR = ir.PointerType(addrspace=1)
SHARED_PTR = ir.PointerType(addrspace=3)
VOID = ir.VoidType()

_FLOATS = {16: F16, 32: F32, 64: F64}


def llvm_type(el) -> ir.Type:
    """Register type of an element type (int1 is i1, pointers are global pointers)."""
    if isinstance(el, PointerType):
        return GLOBAL_PTR
    if el.kind == "float":
        if el.bits == 8:        # fp8: i8 bit patterns
            return ir.IntType(8)
        return BF16 if el.name == "bf16" else _FLOATS[el.bits]
    return ir.IntType(el.bits)


def mem_type(el) -> ir.Type:
    """Type of an element in memory (int1 is stored as one byte)."""
    if not isinstance(el, PointerType) and el.kind == "bool":
        return I8
    return llvm_type(el)


def mem_size(el) -> int:
    return 8 if isinstance(el, PointerType) else max(1, el.bits // 8)


def is_float(el) -> bool:
    return not isinstance(el, PointerType) and el.kind == "float"


def is_unsigned(el) -> bool:
    return not isinstance(el, PointerType) and el.kind in ("uint", "bool")


def const(el, value) -> ir.Constant:
    """An LLVM constant of element type ``el``."""
    t = llvm_type(el)
    if isinstance(el, PointerType):
        return ir.Constant(I64, int(value)).inttoptr(t) if value else ir.Constant(t, None)
    if el.kind == "float" and el.bits == 8:
        from ...ir.fp8 import f32_to_fp8, fmt_of
        return ir.Constant(t, int(f32_to_fp8(float(value), fmt_of(el))))
    if el.kind == "float":
        return ir.Constant(t, float(value))
    if el.kind == "bool":
        return ir.Constant(I1, 1 if value else 0)
    v = int(value) & ((1 << el.bits) - 1)
    if v >= 1 << (el.bits - 1):
        v -= 1 << el.bits
    return ir.Constant(t, v)


def param_type(el) -> ir.Type:
    """ABI type of a kernel parameter (int1 travels as a byte)."""
    return mem_type(el)


def pack_param(el, value) -> bytes:
    """Bytes of a kernel parameter value as the kernel's ABI expects them."""
    if isinstance(el, PointerType):
        return struct.pack("<Q", int(value) & (2**64 - 1))
    if el.kind == "bool":
        return struct.pack("<B", 1 if value else 0)
    if el.kind == "float":
        if el.name == "bf16":
            return struct.pack("<H", bf16_bits(value))
        if el.bits == 8:
            from ...ir.fp8 import f32_to_fp8, fmt_of
            return struct.pack("<B", int(f32_to_fp8(float(value), fmt_of(el))))
        return np.array(value, dtype={16: np.float16, 32: np.float32, 64: np.float64}[el.bits]).tobytes()
    fmt = {8: "b", 16: "h", 32: "i", 64: "q"}[el.bits]
    if el.kind == "uint":
        fmt = fmt.upper()
    bits = el.bits
    v = int(value) & ((1 << bits) - 1)
    if el.kind == "int" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return struct.pack("<" + fmt, v)
