"""Types of the tile IR.

Every IR value has a :class:`TileType`: an element type (a :class:`DType` or a
:class:`PointerType`) and a shape.  A shape of ``()`` is a scalar.  The language
(``tilejit.language``) re-exports the dtype singletons defined here, so
``tl.float32 is tilejit.ir.types.float32``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, init=False)
class DType:
    """A scalar element type: ``kind`` is 'int', 'uint', 'float' or 'bool'.

    ``DType(name)`` (Triton's ``tl.dtype('fp16')``) is the dtype of that name."""

    name: str
    kind: str
    bits: int

    # Triton's dtype name lists (``tl.dtype.SINT_TYPES``...)
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]

    def __new__(cls, name, kind=None, bits=None):
        if kind is None:
            return dtype_from_name(name)
        return super().__new__(cls)

    def __init__(self, name, kind=None, bits=None):
        if kind is None:                  # DType(name): the existing dtype, set up already
            return
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "bits", bits)

    # --- Triton-compatible queries -------------------------------------
    def is_floating(self) -> bool:
        return self.kind == "float"

    def is_int(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    def is_int_signed(self) -> bool:
        return self.kind == "int"

    def is_int_unsigned(self) -> bool:
        return self.kind == "uint"

    def is_bool(self) -> bool:
        return self.kind == "bool"

    def is_ptr(self) -> bool:
        return False

    def is_fp16(self) -> bool:
        return self is float16

    def is_bf16(self) -> bool:
        return self is bfloat16

    def is_fp8(self) -> bool:
        return self.kind == "float" and self.bits == 8

    def is_fp32(self) -> bool:
        return self is float32

    def is_fp64(self) -> bool:
        return self is float64

    @property
    def primitive_bitwidth(self) -> int:
        return self.bits

    @property
    def int_bitwidth(self) -> int:
        return self.bits

    @property
    def fp_mantissa_width(self) -> int:
        """Stored mantissa bits of a float type (Triton's ``dtype.fp_mantissa_width``)."""
        return _FP_LAYOUT[self.name][0]

    @property
    def exponent_bias(self) -> int:
        """Exponent bias of a float type (Triton's ``dtype.exponent_bias``)."""
        return _FP_LAYOUT[self.name][1]

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    @property
    def scalar(self) -> "DType":
        return self

    def to_numpy(self) -> np.dtype:
        """numpy dtype used to store this type (bfloat16 is stored as uint16 bits)."""
        return np.dtype(_NUMPY_NAMES[self.name])

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (dtype_from_name, (self.name,))


@dataclass(frozen=True)
class PointerType:
    """Pointer to ``element`` in ``address_space`` (0 generic/CPU, 1 global).  A
    ``const`` pointer (a kernel parameter annotated ``tl.const``) cannot be stored
    through; it is written ``*k`` (``*kfp32``), as in Triton's signatures."""

    element: "DType | PointerType"
    address_space: int = 1
    const: bool = False

    @property
    def name(self) -> str:
        s = f"*{'k' if self.const else ''}{self.element.name}"
        return s if self.address_space == 1 else f"{s}@{self.address_space}"

    def is_const(self) -> bool:
        return self.const

    kind = "ptr"
    bits = 64

    def is_ptr(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    def is_int_signed(self) -> bool:
        return False

    def is_int_unsigned(self) -> bool:
        return False

    @property
    def element_ty(self):
        return self.element

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    @property
    def itemsize(self) -> int:
        return 8

    @property
    def scalar(self) -> "PointerType":
        return self

    def to_numpy(self) -> np.dtype:
        return np.dtype(np.uint64)

    def __repr__(self) -> str:
        return f"pointer<{self.element.name}>"

    __str__ = __repr__


ElemType = "DType | PointerType"


@dataclass(frozen=True)
class TileType:
    """The type of an IR value: an element type and a (possibly empty) shape."""

    element: "DType | PointerType"
    shape: tuple = ()

    @property
    def is_scalar(self) -> bool:
        return self.shape == ()

    @property
    def is_block(self) -> bool:
        return self.shape != ()

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def with_shape(self, shape) -> "TileType":
        return TileType(self.element, tuple(shape))

    def with_element(self, element) -> "TileType":
        return TileType(element, self.shape)

    def __str__(self) -> str:
        if not self.shape:
            return self.element.name
        return "<" + "x".join(str(d) for d in self.shape) + "x" + self.element.name + ">"

    __repr__ = __str__


def _dt(name, kind, bits):
    return DType(name, kind, bits)


int1 = _dt("int1", "bool", 1)
int8 = _dt("int8", "int", 8)
int16 = _dt("int16", "int", 16)
int32 = _dt("int32", "int", 32)
int64 = _dt("int64", "int", 64)
uint8 = _dt("uint8", "uint", 8)
uint16 = _dt("uint16", "uint", 16)
uint32 = _dt("uint32", "uint", 32)
uint64 = _dt("uint64", "uint", 64)
float16 = _dt("fp16", "float", 16)
bfloat16 = _dt("bf16", "float", 16)
float32 = _dt("fp32", "float", 32)
float64 = _dt("fp64", "float", 64)
float8e5 = _dt("fp8e5", "float", 8)       # e5m2 (IEEE-like inf/NaN), stored as uint8 bits
float8e4nv = _dt("fp8e4nv", "float", 8)   # e4m3fn (no inf, NaN = S.1111.111), stored as uint8 bits
float8e4b15 = _dt("fp8e4b15", "float", 8)  # e4m3 with bias 15 (no inf, NaN = S.1111.111)
float8e4b8 = _dt("fp8e4b8", "float", 8)    # e4m3fnuz, bias 8 (no inf, no -0, NaN = 0x80)
float8e5b16 = _dt("fp8e5b16", "float", 8)  # e5m2fnuz, bias 16 (no inf, no -0, NaN = 0x80)
FP8_DTYPES = (float8e5, float8e4nv, float8e4b15, float8e4b8, float8e5b16)

ALL_DTYPES = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES + FP8_DTYPES}
_ALIASES = {"i1": int1, "bool": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64,
            "u8": uint8, "u16": uint16, "u32": uint32, "u64": uint64,
            "float16": float16, "bfloat16": bfloat16, "float32": float32, "float64": float64,
            "f16": float16, "f32": float32, "f64": float64,
            "float8e5": float8e5, "float8e4nv": float8e4nv, "fp8e4m3fn": float8e4nv,
            "fp8e5m2": float8e5, "float8e4b15": float8e4b15, "float8e4b8": float8e4b8,
            "float8e5b16": float8e5b16}
_NUMPY_NAMES = {"int1": "bool", "int8": "int8", "int16": "int16", "int32": "int32",
                "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
                "uint64": "uint64", "fp16": "float16", "bf16": "uint16", "fp32": "float32",
                "fp64": "float64", "fp8e5": "uint8", "fp8e4nv": "uint8", "fp8e4b15": "uint8",
                "fp8e4b8": "uint8", "fp8e5b16": "uint8"}


# float types: (stored mantissa bits, exponent bias), as Triton's dtype reports them
_FP_LAYOUT = {"fp8e4b15": (3, 15), "fp8e4nv": (3, 7), "fp8e4b8": (3, 8), "fp8e5": (2, 15),
              "fp8e5b16": (2, 16), "fp16": (10, 15), "bf16": (7, 127), "fp32": (23, 127),
              "fp64": (52, 1023)}


def dtype_from_name(name: str):
    """Parse a dtype or pointer name as written in signatures: 'fp32', 'i32', '*fp16'."""
    if name.startswith("*k"):
        return PointerType(dtype_from_name(name[2:]), const=True)
    if name.startswith("*"):
        return PointerType(dtype_from_name(name[1:]))
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name in _ALIASES:
        return _ALIASES[name]
    raise ValueError(f"unknown dtype name {name!r}")


_FROM_NUMPY = {np.dtype(v): _BY_NAME[k] for k, v in _NUMPY_NAMES.items()
               if k != "bf16" and not k.startswith("fp8")}


def dtype_from_numpy(dt) -> DType:
    """The tilejit dtype for a numpy dtype (raises TypeError when there is none)."""
    try:
        return _FROM_NUMPY[np.dtype(dt)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported array dtype {dt}") from None


def int_range(dt: DType) -> tuple[int, int]:
    """Inclusive value range of an integer dtype (bool is 0..1)."""
    if dt.kind == "bool":
        return 0, 1
    if dt.kind == "uint":
        return 0, (1 << dt.bits) - 1
    if dt.kind == "int":
        return -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
    raise TypeError(f"{dt} is not an integer type")
