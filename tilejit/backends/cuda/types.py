"""LLVM types and constants for tile IR element types on the NVPTX target: the shared
mapping of ``backends/llvm/types.py`` under the NVPTX capabilities (bf16 is LLVM's
``bfloat``, pointers are global, addrspace 1), and the kernel parameter ABI."""
from __future__ import annotations

import struct

import numpy as np
from llvmlite import ir

from ...ir.types import PointerType
from ..llvm.capabilities import NVPTX
from ..llvm.types import (BF16, F16, F32, F64, I1, I8, I16, I32, I64, VOID,  # noqa: F401
                          constant, float_to_bf16_bits as bf16_bits, storage_type, value_type)

GLOBAL_PTR = ir.PointerType(addrspace=NVPTX.pointer_address_space)
SHARED_PTR = ir.PointerType(addrspace=3)


def llvm_type(el) -> ir.Type:
    """Register type of an element type (int1 is i1, pointers are global pointers)."""
    return value_type(el, NVPTX)


def mem_type(el) -> ir.Type:
    """Type of an element in memory (int1 is stored as one byte)."""
    return storage_type(el, NVPTX)


def mem_size(el) -> int:
    return 8 if isinstance(el, PointerType) else max(1, el.bits // 8)


def is_float(el) -> bool:
    return not isinstance(el, PointerType) and el.kind == "float"


def is_unsigned(el) -> bool:
    return not isinstance(el, PointerType) and el.kind in ("uint", "bool")


def const(el, value) -> ir.Constant:
    """An LLVM constant of element type ``el``."""
    return constant(el, value, NVPTX)


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
