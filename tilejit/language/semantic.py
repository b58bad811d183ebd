"""Type and shape rules of the language (Triton's semantics), emitting tile IR.

Every function takes language ``tensor`` objects or plain Python numbers and
returns tensors.  Mistakes raise plain ``TypeError`` / ``ValueError``; only the
frontend knows about source locations.  Ops are created with the builder that the
frontend installed (``core.current_builder()``).
"""
from __future__ import annotations

import builtins
import numbers

from ..ir import ops
from ..ir.types import (DType, PointerType, TileType, int_range, int1, int8, int16, int32, int64,
                        uint8, uint32, uint64, float16, bfloat16, float32, float64)
from . import core

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _b():
    return core.current_builder()


def _wrap(value) -> "core.tensor":
    return core.tensor(value)


def _emit(op_cls, **kwargs) -> "core.tensor":
    return _wrap(_b().value(op_cls, **kwargs))


def _is_number(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, core.tensor)


def _kind_rank(dt) -> int:
    """Triton's dtype kind order: bool < integer < floating."""
    if dt.is_bool():
        return 0
    if dt.is_int():
        return 1
    return 2


def _signed(dt) -> bool:
    # Triton counts int1 among the unsigned types.
    return dt.kind == "int"


def normalize_int(value: int, dt: DType) -> int:
    """``value`` wrapped into the range of integer type ``dt`` (two's complement)."""
    if dt.is_bool():
        return int(bool(value))
    value = int(value) & ((1 << dt.bits) - 1)
    if dt.kind == "int" and value >= 1 << (dt.bits - 1):
        value -= 1 << dt.bits
    return value


def _const_value(value, dt):
    if dt.is_bool():
        return bool(value)
    if dt.is_int():
        if isinstance(value, float):
            value = int(value)
        return normalize_int(value, dt)
    return float(value)


# ---------------------------------------------------------------------------
# constants and conversion of Python values
# ---------------------------------------------------------------------------


def to_tensor_type(x):
    """The dtype a Python number becomes (Triton's rules)."""
    if isinstance(x, bool):
        return int1
    if isinstance(x, int):
        if -2**31 <= x < 2**31:
            return int32
        if 2**31 <= x < 2**32:
            return uint32
        if -2**63 <= x < 2**63:
            return int64
        if 2**63 <= x < 2**64:
            return uint64
        raise ValueError(f"Nonrepresentable integer {x}.")
    if isinstance(x, float):
        ax = builtins.abs(x)
        if ax == float("inf") or ax == 0.0 or x != x or 2**-126 <= ax <= (2 - 2**-23) * 2**127:
            return float32
        return float64
    raise TypeError(f"cannot convert {x!r} of type {type(x).__name__} to tensor")


def scalar_constant(value, dtype, shape=()) -> "core.tensor":
    """A constant of ``dtype`` (splatted to ``shape``)."""
    if dtype is None:
        raise ValueError("dtype must be specified when value is not a tensor")
    if isinstance(dtype, PointerType):
        raise TypeError(f"cannot make a constant of pointer type {dtype}")
    return _wrap(_b().constant(_const_value(value, dtype), TileType(dtype, tuple(shape))))


def to_tensor(x) -> "core.tensor":
    """A tensor for ``x`` (tensors pass through, Python numbers become constants)."""
    x = core._unwrap(x)
    if isinstance(x, core.tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return scalar_constant(x, to_tensor_type(x))
    raise TypeError(f"cannot convert {x!r} of type {type(x).__name__} to tensor")


# ---------------------------------------------------------------------------
# implicit casting
# ---------------------------------------------------------------------------


def integer_promote_impl(a_ty, b_ty):
    """C's usual arithmetic conversions for two integer types (int1 counts as unsigned)."""
    a_rank, b_rank = a_ty.bits, b_ty.bits
    a_sn, b_sn = _signed(a_ty), _signed(b_ty)
    if a_sn == b_sn:
        return a_ty if a_rank > b_rank else b_ty
    if not a_sn:
        return a_ty if a_rank >= b_rank else b_ty
    return b_ty if b_rank >= a_rank else a_ty


def computation_type_impl(a_ty, a_is_scalar, b_ty, b_is_scalar, div_or_mod):
    """Result dtype of an arithmetic op between two operands (Triton's table)."""
    if _is_fp8(a_ty) or _is_fp8(b_ty):
        raise TypeError(f"arithmetic on fp8 is not supported ({a_ty} and {b_ty}): "
                        "upcast with .to(tl.float16/tl.bfloat16/tl.float32) first")
    if a_is_scalar != b_is_scalar:
        scalar_ty, tensor_ty = (a_ty, b_ty) if a_is_scalar else (b_ty, a_ty)
        if _kind_rank(scalar_ty) <= _kind_rank(tensor_ty):
            if div_or_mod and tensor_ty in (float16, bfloat16):
                return float32
            return tensor_ty
    if a_ty is float64 or b_ty is float64:
        return float64
    if a_ty is float32 or b_ty is float32:
        return float32
    if a_ty is float16 or b_ty is float16:
        return float32 if div_or_mod else float16
    if a_ty is bfloat16 and b_ty is bfloat16:
        return float32 if div_or_mod else bfloat16
    if a_ty is bfloat16 or b_ty is bfloat16:
        return float32
    if not a_ty.is_int() or not b_ty.is_int():
        raise TypeError(f"unexpected type {a_ty} and {b_ty}")
    if div_or_mod and _signed(a_ty) != _signed(b_ty):
        raise TypeError(f"Cannot use /, //, or % with {a_ty} and {b_ty} because they have different "
                        "signedness; this is unlikely to result in a useful answer. "
                        "Cast them to the same signedness.")
    return integer_promote_impl(a_ty, b_ty)


def _incompatible(a, b):
    return TypeError(f"invalid operands of type {a} and {b}")


def check_ptr_type_impl(type_a, type_b, allow_ptr_a):
    if type_a.is_ptr():
        if not allow_ptr_a:
            raise _incompatible(type_a, type_b)
        if type_b.is_ptr() and type_a != type_b:
            raise _incompatible(type_a, type_b)
        if type_b.is_floating():
            raise _incompatible(type_a, type_b)


def _strong(x):
    """A typed literal (a number bound to a name) is a scalar tensor of its own dtype in
    arithmetic, as in Triton; an unnamed number takes the other operand's type."""
    if isinstance(x, core.typed_int):
        return to_tensor(int(x))
    if isinstance(x, core.typed_float):
        return to_tensor(float(x))
    return x


def binary_op_type_checking_impl(lhs, rhs, allow_lhs_ptr=False, allow_rhs_ptr=False,
                                 arithmetic_check=True, div_or_mod=False):
    """Convert Python scalars, apply implicit casts and broadcast both operands."""
    lhs, rhs = _strong(core._unwrap(lhs)), _strong(core._unwrap(rhs))
    lhs_is_scalar, rhs_is_scalar = _is_number(lhs), _is_number(rhs)
    if not lhs_is_scalar and not isinstance(lhs, core.tensor):
        lhs = to_tensor(lhs)
    if not rhs_is_scalar and not isinstance(rhs, core.tensor):
        rhs = to_tensor(rhs)
    lhs_ty = to_tensor_type(lhs) if lhs_is_scalar else lhs.dtype
    rhs_ty = to_tensor_type(rhs) if rhs_is_scalar else rhs.dtype
    check_ptr_type_impl(lhs_ty, rhs_ty, allow_lhs_ptr)
    check_ptr_type_impl(rhs_ty, lhs_ty, allow_rhs_ptr)
    if arithmetic_check and not lhs_ty.is_ptr() and not rhs_ty.is_ptr():
        ret = computation_type_impl(lhs_ty, lhs_is_scalar, rhs_ty, rhs_is_scalar, div_or_mod)
        for is_scalar, value in ((lhs_is_scalar, lhs), (rhs_is_scalar, rhs)):
            if is_scalar and ret.is_int_unsigned() and value < 0:
                raise ValueError("Cannot perform a binary operation between an unsigned tensor and a "
                                 "negative scalar. Perform a explicit cast on one of them.")
            if is_scalar and ret.is_int() and not ret.is_bool():
                lo, hi = int_range(ret)
                if not lo <= value <= hi:
                    raise ValueError(f"Scalar {value} is out of range for type {ret}")
        lhs = scalar_constant(lhs, ret) if lhs_is_scalar else cast(lhs, ret)
        rhs = scalar_constant(rhs, ret) if rhs_is_scalar else cast(rhs, ret)
    else:
        lhs = to_tensor(lhs) if lhs_is_scalar else lhs
        rhs = to_tensor(rhs) if rhs_is_scalar else rhs
    return broadcast_impl_value(lhs, rhs)


# ---------------------------------------------------------------------------
# broadcasting
# ---------------------------------------------------------------------------


def broadcast_shapes(a, b):
    """numpy-style broadcast of two shapes (ranks aligned on the right)."""
    a, b = tuple(a), tuple(b)
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + a
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        else:
            raise ValueError(f"Cannot broadcast shapes: incompatible dimensions at index {i}: {x} and {y}")
    return tuple(out)


def splat(value, shape) -> "core.tensor":
    """A scalar tensor repeated to ``shape``."""
    shape = tuple(shape)
    if value.shape:
        raise ValueError("cannot splat a block tensor")
    if not shape:
        return value
    return _emit(ops.SplatOp, src=value.handle, shape=shape)


def broadcast_impl_shape(x, shape) -> "core.tensor":
    """Broadcast tensor ``x`` to ``shape`` (scalars splat; missing leading dims added)."""
    shape = tuple(shape)
    src = x.shape
    if src == shape:
        return x
    if not src:
        op = x.handle.op
        if op is not None and isinstance(op, ops.ConstantOp) and not x.handle.name_hint:
            return scalar_constant(op.value, x.dtype, shape)
        return splat(x, shape)
    if len(src) > len(shape):
        raise ValueError(f"Cannot broadcast tensor of shape {list(src)} to {list(shape)}")
    while len(src) < len(shape):
        x = _emit(ops.ExpandDimsOp, src=x.handle, axis=0)
        src = x.shape
    for i, (s, d) in enumerate(zip(src, shape)):
        if s != d and s != 1:
            raise ValueError(f"Cannot broadcast dimension {i} of shape {list(src)} to {list(shape)}: "
                             f"{s} != {d}")
    return _emit(ops.BroadcastOp, src=x.handle, shape=shape)


def broadcast_impl_value(lhs, rhs):
    """Broadcast two tensors to their common shape."""
    if lhs.shape == rhs.shape:
        return lhs, rhs
    shape = broadcast_shapes(lhs.shape, rhs.shape)
    return broadcast_impl_shape(lhs, shape), broadcast_impl_shape(rhs, shape)


# ---------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------


def _rn(dtype, rn: bool) -> dict:
    """``rn=True`` (libdevice ``add_rn``...): the float op is never contracted into an fma."""
    return {"rn": True} if rn and dtype.is_floating() else {}


def add(input, other, rn=False):
    input, other = binary_op_type_checking_impl(input, other, True, True)
    if input.dtype.is_ptr() and other.dtype.is_ptr():
        raise TypeError("cannot add pointers together")
    if other.dtype.is_ptr():
        input, other = other, input
    if input.dtype.is_ptr():
        return add_ptr(input, other)
    if input.dtype.is_bool():          # i1 arithmetic wraps: + is xor
        return _emit(ops.XorOp, lhs=input.handle, rhs=other.handle)
    return _emit(ops.AddOp, lhs=input.handle, rhs=other.handle, **_rn(input.dtype, rn))


def add_ptr(ptr, offset):
    """``ptr + offset`` counting elements; unsigned narrow offsets are zero-extended."""
    if not offset.dtype.is_int():
        raise TypeError(f"pointer offset must be an integer, got {offset.dtype}")
    if offset.dtype.is_int_unsigned() and offset.dtype.bits < 64 or offset.dtype.is_bool():
        offset = cast(offset, int64)
    ptr, offset = broadcast_impl_value(ptr, offset)
    return _emit(ops.AddPtrOp, ptr=ptr.handle, offset=offset.handle)


def sub(input, other, rn=False):
    input, other = binary_op_type_checking_impl(input, other, True, False)
    if input.dtype.is_ptr():
        return add_ptr(input, minus(other))
    if input.dtype.is_bool():          # i1 arithmetic wraps: - is xor
        return _emit(ops.XorOp, lhs=input.handle, rhs=other.handle)
    return _emit(ops.SubOp, lhs=input.handle, rhs=other.handle, **_rn(input.dtype, rn))


def mul(input, other, rn=False):
    input, other = binary_op_type_checking_impl(input, other)
    if input.dtype.is_bool():          # i1 multiplication is and
        return _emit(ops.AndOp, lhs=input.handle, rhs=other.handle)
    return _emit(ops.MulOp, lhs=input.handle, rhs=other.handle, **_rn(input.dtype, rn))


def truediv(input, other):
    input, other = binary_op_type_checking_impl(input, other, False, False, True, True)
    a, b = input.dtype, other.dtype
    if a.is_floating() and b.is_int():
        other = cast(other, a)
    elif a.is_int() and b.is_floating():
        input = cast(input, b)
    elif a.is_int() and b.is_int():
        input, other = cast(input, float32), cast(other, float32)
    elif a.is_floating() and b.is_floating():
        if _mantissa(a) > _mantissa(b):
            other = cast(other, a)
        else:
            input = cast(input, b)
    else:
        raise TypeError(f"unexpected type {a}")
    return _emit(ops.TrueDivOp, lhs=input.handle, rhs=other.handle)


def _mantissa(dt):
    return {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}[dt.name]


def fdiv(input, other, ieee_rounding=False):
    """Division of two floating-point tensors."""
    input, other = to_tensor(input), to_tensor(other)      # Python floats become fp32 (Triton)
    if not input.dtype.is_floating() or not other.dtype.is_floating():
        raise TypeError("both operands of fdiv must have floating scalar type")
    input, other = binary_op_type_checking_impl(input, other, False, False, False, True)
    if input.dtype != other.dtype:
        ty = computation_type_impl(input.dtype, False, other.dtype, False, True)
        input, other = cast(input, ty), cast(other, ty)
    return _emit(ops.TrueDivOp, lhs=input.handle, rhs=other.handle)


def floordiv(input, other):
    """Integer division truncating toward zero (C semantics, as Triton)."""
    input, other = binary_op_type_checking_impl(input, other, False, False, True, True)
    if input.dtype.is_int() and other.dtype.is_int():
        ret = integer_promote_impl(input.dtype, other.dtype)
        if ret.is_bool():
            raise TypeError("unexpected type int1 for //")
        input, other = cast(input, ret), cast(other, ret)
        return _emit(ops.IDivOp, lhs=input.handle, rhs=other.handle)
    raise TypeError(f"unexpected type {input.dtype}")


def mod(input, other):
    """Remainder with the sign of the dividend (C semantics; fmod for floats)."""
    input, other = binary_op_type_checking_impl(input, other, False, False, True, True)
    a, b = input.dtype, other.dtype
    if a.is_floating():
        return _emit(ops.RemOp, lhs=input.handle, rhs=other.handle)
    if a.is_int() and not a.is_bool():
        if _signed(a) != _signed(b):
            raise TypeError(f"Cannot mod {a} by {b} because they have different signedness; this is "
                            "unlikely to result in a useful answer. Cast them to the same signedness.")
        return _emit(ops.RemOp, lhs=input.handle, rhs=other.handle)
    raise TypeError(f"unexpected type {a}")


def minimum(x, y):
    x, y = binary_op_type_checking_impl(x, y)
    if x.dtype.is_bool():
        x, y = cast(x, int32), cast(y, int32)
        return cast(_emit(ops.MinOp, lhs=x.handle, rhs=y.handle), int1)
    return _emit(ops.MinOp, lhs=x.handle, rhs=y.handle)


def maximum(x, y):
    x, y = binary_op_type_checking_impl(x, y)
    if x.dtype.is_bool():
        x, y = cast(x, int32), cast(y, int32)
        return cast(_emit(ops.MaxOp, lhs=x.handle, rhs=y.handle), int1)
    return _emit(ops.MaxOp, lhs=x.handle, rhs=y.handle)


def umulhi(x, y):
    """High half of the full-width product of two integers."""
    x, y = binary_op_type_checking_impl(x, y)
    if not x.dtype.is_int() or x.dtype.is_bool():
        raise TypeError(f"umulhi needs integer operands, got {x.dtype}")
    return _emit(ops.UmulhiOp, lhs=x.handle, rhs=y.handle)


def fma(x, y, z):
    """``x * y + z`` with one rounding."""
    x, y = binary_op_type_checking_impl(x, y)
    z, x = binary_op_type_checking_impl(z, x)
    z, y = binary_op_type_checking_impl(z, y)
    if not x.dtype.is_floating():
        raise TypeError(f"fma needs floating-point operands, got {x.dtype}")
    return _emit(ops.FmaOp, a=x.handle, b=y.handle, c=z.handle)


# ---------------------------------------------------------------------------
# bitwise and logical
# ---------------------------------------------------------------------------


def bitwise_op_type_checking_impl(input, other):
    input, other = binary_op_type_checking_impl(input, other)
    a, b = input.dtype, other.dtype
    if not a.is_int() or not b.is_int():
        raise _incompatible(a, b)
    ret = integer_promote_impl(a, b)
    return cast(input, ret), cast(other, ret)


def and_(input, other):
    input, other = bitwise_op_type_checking_impl(input, other)
    return _emit(ops.AndOp, lhs=input.handle, rhs=other.handle)


def or_(input, other):
    input, other = bitwise_op_type_checking_impl(input, other)
    return _emit(ops.OrOp, lhs=input.handle, rhs=other.handle)


def xor_(input, other):
    input, other = bitwise_op_type_checking_impl(input, other)
    return _emit(ops.XorOp, lhs=input.handle, rhs=other.handle)


def _to_bool(x):
    x = to_tensor(x)
    return x if x.dtype.is_bool() else cast(x, int1)


def logical_and(input, other):
    return and_(_to_bool(input), _to_bool(other))


def logical_or(input, other):
    return or_(_to_bool(input), _to_bool(other))


def not_(input):
    """Logical not: int1 result that is true where ``input`` is zero."""
    return invert(_to_bool(input))


def shl(input, other):
    input, other = bitwise_op_type_checking_impl(input, other)
    if input.dtype.is_bool():
        raise TypeError("cannot shift int1 values")
    return _emit(ops.ShlOp, lhs=input.handle, rhs=other.handle)


def shr(input, other, arithmetic=None):
    """Right shift in the operands' promoted type: arithmetic for signed, logical for
    unsigned types, unless ``arithmetic`` says which.  Triton's ``x >> y`` decides by the
    signedness of ``x`` before promotion (``x.__rshift__``; for ``c >> x`` with ``c`` not a
    tensor, by ``x``'s): an int8 shifted by a uint16 shifts arithmetically in uint16."""
    input, other = bitwise_op_type_checking_impl(input, other)
    if input.dtype.is_bool():
        raise TypeError("cannot shift int1 values")
    ty = input.dtype
    if arithmetic is None or arithmetic == ty.is_int_signed():
        return _emit(ops.ShrOp, lhs=input.handle, rhs=other.handle)
    flipped = DType(("int" if arithmetic else "uint") + str(ty.int_bitwidth))
    out = _emit(ops.ShrOp, lhs=bitcast(input, flipped).handle, rhs=bitcast(other, flipped).handle)
    return bitcast(out, ty)


def plus(input):
    return to_tensor(input)


def minus(input):
    input = to_tensor(input)
    if input.dtype.is_ptr():
        raise ValueError(f"wrong type argument to unary minus ({input.dtype})")
    if input.dtype.is_bool():
        return input    # 0 - x wraps to x in one bit
    if _is_fp8(input.dtype):
        raise TypeError(f"arithmetic on fp8 is not supported ({input.dtype}): upcast first")
    return _emit(ops.NegOp, src=input.handle)


def invert(input):
    input = to_tensor(input)
    if input.dtype.is_ptr() or input.dtype.is_floating():
        raise ValueError(f"wrong type argument to unary invert ({input.dtype})")
    return _emit(ops.InvertOp, src=input.handle)


# ---------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------


def compare(input, other, pred: str):
    """``input pred other`` -> int1 (pred in eq, ne, lt, le, gt, ge)."""
    input, other = binary_op_type_checking_impl(input, other)
    if input.dtype.is_ptr():
        raise TypeError(f"cannot compare pointers of type {input.dtype}")
    return _emit(ops.CmpOp, lhs=input.handle, rhs=other.handle, pred=pred)


# ---------------------------------------------------------------------------
# casts
# ---------------------------------------------------------------------------


def cast(input, dst_ty, fp_downcast_rounding=None):
    """Value conversion to ``dst_ty`` (a dtype or pointer type).  A floating-point
    downcast rounds to nearest even, or toward zero with ``fp_downcast_rounding="rtz"``."""
    input = to_tensor(input)
    dst_ty = core._as_dtype(dst_ty)
    if not isinstance(dst_ty, (DType, PointerType)):
        raise TypeError(f"cannot cast to {dst_ty!r}: not a dtype")
    src_ty = input.dtype
    if src_ty == dst_ty:
        return input
    rounding = _downcast_rounding(src_ty, dst_ty, fp_downcast_rounding)
    if src_ty.is_ptr() or dst_ty.is_ptr():
        return _cast_pointer(input, src_ty, dst_ty)
    _check_fp8_cast(src_ty, dst_ty)
    nearest = _emit(ops.CastOp, src=input.handle, to=dst_ty)
    return _toward_zero(input, nearest) if rounding == "rtz" else nearest


def _downcast_rounding(src_ty, dst_ty, rounding):
    """Triton's rule: a rounding mode ("rtne" or "rtz") is given only for a narrowing
    floating-point conversion."""
    if rounding is None:
        return "rtne"
    if rounding not in ("rtne", "rtz"):
        raise ValueError(f"Invalid rounding mode: {rounding}")
    if not (src_ty.is_floating() and dst_ty.is_floating() and dst_ty.bits < src_ty.bits):
        raise ValueError("fp_downcast_rounding should be set only for truncating fp conversions. "
                         f"Source scalar type is {src_ty} and destination type is {dst_ty}")
    return rounding


def _toward_zero(input, nearest):
    """Round-toward-zero from the round-to-nearest result: when ``nearest`` is larger in
    magnitude than ``input`` (it rounded away from zero, or overflowed to inf), the value
    one ulp nearer zero is its bit pattern minus one (floats are sign-magnitude)."""
    from . import semantic_tile as st
    back = cast(nearest, input.dtype)                # exact: widening
    away = compare(st.abs(back), st.abs(input), "gt")
    ity = {8: int8, 16: int16, 32: int32, 64: int64}[nearest.dtype.bits]
    stepped = bitcast(sub(bitcast(nearest, ity), scalar_constant(1, ity, nearest.shape)), nearest.dtype)
    return st.where(away, stepped, nearest)


def _is_fp8(ty) -> bool:
    return isinstance(ty, DType) and ty.kind == "float" and ty.bits == 8


def _check_fp8_cast(src_ty, dst_ty):
    """fp8 converts only from fp16/bf16/fp32 (one rounding) and to fp16/bf16/fp32/fp64 (exact)."""
    if _is_fp8(dst_ty) and (not src_ty.is_floating() or src_ty.bits == 64 or _is_fp8(src_ty)):
        raise TypeError(f"cannot convert {src_ty} to {dst_ty}: fp8 is converted from fp16, bf16 or fp32")
    if _is_fp8(src_ty) and (not dst_ty.is_floating() or _is_fp8(dst_ty)):
        raise TypeError(f"cannot convert {src_ty} to {dst_ty}: upcast fp8 to fp16, bf16 or fp32 first")


def _cast_pointer(input, src_ty, dst_ty):
    if src_ty.is_ptr() and dst_ty.is_ptr():
        return _emit(ops.CastOp, src=input.handle, to=dst_ty)
    if src_ty.is_ptr():
        if dst_ty in (int64, uint64):
            return _emit(ops.CastOp, src=input.handle, to=dst_ty)
        if dst_ty.is_bool():
            as_int = _emit(ops.CastOp, src=input.handle, to=int64)
            return compare(as_int, 0, "ne")
        raise ValueError(f"cannot cast pointer {src_ty} to {dst_ty}; cast it to tl.int64")
    if not src_ty.is_int():
        raise ValueError(f"cannot cast {src_ty} to pointer type {dst_ty}")
    if src_ty != int64:
        input = cast(input, int64) if src_ty != uint64 else _emit(ops.BitcastOp, src=input.handle, to=int64)
    return _emit(ops.CastOp, src=input.handle, to=dst_ty)


def bitcast(input, dst_ty):
    """Reinterpret bits as ``dst_ty`` (same width; pointer casts are value casts)."""
    input = to_tensor(input)
    dst_ty = core._as_dtype(dst_ty)
    src_ty = input.dtype
    if src_ty == dst_ty:
        return input
    if src_ty.is_ptr() or dst_ty.is_ptr():
        return cast(input, dst_ty)
    if src_ty.bits != dst_ty.bits:
        raise ValueError(f"Cannot bitcast data-type of size {src_ty.bits} to data-type of size {dst_ty.bits}")
    return _emit(ops.BitcastOp, src=input.handle, to=dst_ty)
