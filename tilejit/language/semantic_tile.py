"""Tile-level rules: creation, shape manipulation, memory, reductions, dot, hints.

Same conventions as ``semantic``: plain ``TypeError``/``ValueError``, ops created
with the frontend's builder.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.types import DType, PointerType, TileType, int1, int8, int32, uint32, float16, bfloat16, \
    float32, float64, uint8
from . import core
from .semantic import (_emit, _wrap, binary_op_type_checking_impl, broadcast_impl_shape, broadcast_shapes,
                       cast, scalar_constant, splat, to_tensor)

MAX_TENSOR_NUMEL = 1 << 20

# ---------------------------------------------------------------------------
# programming model
# ---------------------------------------------------------------------------


def program_id(axis):
    if axis not in (0, 1, 2):
        raise ValueError(f"program_id axis must be 0, 1, or 2 but got {axis}")
    return _emit(ops.ProgramIdOp, axis=axis)


def num_programs(axis):
    if axis not in (0, 1, 2):
        raise ValueError(f"num_programs axis must be 0, 1, or 2 but got {axis}")
    return _emit(ops.NumProgramsOp, axis=axis)


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def not_constexpr_hint(x) -> str:
    """What to do when the runtime value ``x`` stands where a compile-time int is needed:
    a kernel parameter is named with the annotation that makes it one."""
    handle = getattr(x, "handle", None)
    func = getattr(core.current_builder(), "func", None) if handle is not None else None
    for arg in getattr(func, "arguments", ()):
        if arg.value is handle:
            return (f"'{arg.name}' is a runtime argument of the kernel; declare it "
                    f"`{arg.name}: tl.constexpr` to make it a compile-time constant")
    if handle is not None:
        return ("this is a runtime value; block shapes must be known at compile time "
                "(literals, tl.constexpr parameters, or expressions of them)")
    return f"got {x!r}"


def validate_block_shape(shape, what="shape"):
    """Check a tile shape: positive constexpr ints (any, not only powers of two: see
    ``nonpow2``), bounded numel."""
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{what} must be a list or tuple of tl.constexpr ints, got {shape!r}")
    out = []
    numel = 1
    for i, d in enumerate(shape):
        d = core._unwrap(d)
        if isinstance(d, core.tensor):
            raise TypeError(f"{what}[{i}] must be a tl.constexpr int: {not_constexpr_hint(d)}")
        if not _is_int(d):
            raise TypeError(f"{what}[{i}] must be an int, got {d!r}")
        if d <= 0:
            raise ValueError(f"{what}[{i}] = {d} must be positive")
        numel *= d
        out.append(int(d))
    if numel > MAX_TENSOR_NUMEL:
        raise ValueError(f"tile of {numel} elements exceeds the maximum of {MAX_TENSOR_NUMEL}")
    return tuple(out)


def arange(start, end):
    if not _is_int(start) or not _is_int(end):
        bad = end if not _is_int(end) else start
        raise ValueError(f"arange's arguments must be of type tl.constexpr: {not_constexpr_hint(bad)}")
    if start < 0 or end > 2**31:
        raise ValueError("arange must fit in int32")
    if end <= start:
        raise ValueError("arange's end argument must be greater than the start argument")
    validate_block_shape((end - start,))
    return _emit(ops.ArangeOp, start=start, end=end)


def full(shape, value, dtype):
    dtype = core._as_dtype(dtype)
    shape = validate_block_shape(shape) if shape not in ((), []) else ()
    if not isinstance(dtype, (DType, PointerType)):
        raise TypeError(f"dtype must be a tl dtype, got {dtype!r}")
    if isinstance(value, core.tensor):
        if value.shape:
            raise ValueError("full's value must be a scalar")
        return splat(cast(value, dtype), shape)
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"full's value must be a number or scalar tensor, got {value!r}")
    return scalar_constant(value, dtype, shape)


# ---------------------------------------------------------------------------
# shape manipulation
# ---------------------------------------------------------------------------


def reshape(input, shape, can_reorder=False):
    input = to_tensor(input)
    shape = validate_block_shape(shape) if tuple(shape) != () else ()
    numel = 1
    for d in shape:
        numel *= d
    if input.type.numel != numel:
        raise ValueError(f"reshape() cannot change the number of elements: {list(input.shape)} -> {list(shape)}")
    if input.shape == shape:
        return input
    if not input.shape:
        return splat(input, shape)
    return _emit(ops.ReshapeOp, src=input.handle, shape=shape)


def unsplat(input):
    """A one-element tensor as a scalar (Triton's ``_unsplat``)."""
    input = to_tensor(input)
    if input.type.numel != 1:
        raise ValueError(f"can only unsplat single-element tensors, got shape {list(input.shape)}")
    return reshape(input, ())


def expand_dims(input, axis):
    input = to_tensor(input)
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    new_ndim = len(input.shape) + len(axes)
    norm = []
    for a in axes:
        a = core._unwrap(a)
        if not _is_int(a):
            raise TypeError(f"expand_dims axis must be a tl.constexpr int, got {a!r}")
        if not -new_ndim <= a < new_ndim:
            raise ValueError(f"invalid axis {a} for expand_dims of a {len(input.shape)}-d tensor")
        norm.append(a % new_ndim)
    if len(set(norm)) != len(norm):
        raise ValueError(f"expand_dims: duplicate axes, normalized axes = {norm}")
    for a in sorted(norm):
        if not input.shape:
            input = splat(input, (1,))
        else:
            input = _emit(ops.ExpandDimsOp, src=input.handle, axis=a)
    return input


def broadcast_to(input, shape):
    input = to_tensor(input)
    shape = validate_block_shape(shape) if tuple(shape) != () else ()
    return broadcast_impl_shape(input, shape)


def broadcast(a, b):
    a, b = to_tensor(a), to_tensor(b)
    shape = broadcast_shapes(a.shape, b.shape)
    return broadcast_impl_shape(a, shape), broadcast_impl_shape(b, shape)


def permute(input, dims):
    input = to_tensor(input)
    rank = len(input.shape)
    dims = tuple(core._unwrap(d) for d in dims)
    if sorted(dims) != list(range(rank)):
        raise ValueError(f"permute dims must be a permutation of 0..{rank - 1}, got {list(dims)}")
    if dims == tuple(range(rank)):
        return input
    return _emit(ops.TransOp, src=input.handle, perm=dims)


def trans(input, dims=()):
    input = to_tensor(input)
    if not dims:        # Triton: the last two axes swapped (a batched 2-d transpose)
        n = len(input.shape)
        if n < 2:
            raise ValueError(f"trans() without dims needs a tensor of 2 or more dimensions, got shape "
                             f"{list(input.shape)}")
        dims = tuple(range(n - 2)) + (n - 1, n - 2)
    return permute(input, dims)


def getitem(input, slices):
    """Indexing with ``None`` (new axis), ``:`` and one ``...`` (the ``:`` of every
    dimension not named otherwise, as in numpy).  A ``:`` past the last dimension is
    ignored, as Triton does (``scalar_ptr[None, None, :]`` has shape [1, 1])."""
    if not isinstance(slices, (tuple, list)):
        slices = (slices,)
    slices = [core._unwrap(s) for s in slices]
    if slices.count(Ellipsis) > 1:
        raise ValueError("an index can only have a single ellipsis ('...')")
    if Ellipsis in slices:
        at = slices.index(Ellipsis)
        named = len([s for s in slices if s is not None and s is not Ellipsis])
        fill = max(len(to_tensor(input).shape) - named, 0)
        slices[at:at + 1] = [slice(None)] * fill
    ret = input
    dim = 0
    for s in slices:
        s = core._unwrap(s)
        if s is None:
            ret = expand_dims(ret, dim)
            dim += 1
        elif isinstance(s, slice) and s.start is None and s.stop is None and s.step is None:
            dim += 1
        else:
            raise ValueError(f"unsupported tensor index: {s!r} (only None and : are supported)")
    return ret


# ---------------------------------------------------------------------------
# selection and memory
# ---------------------------------------------------------------------------


def where(condition, x, y):
    condition = to_tensor(condition)
    if not condition.dtype.is_bool():
        condition = cast(condition, int1)
    fp8_pair = (isinstance(x, core.tensor) and isinstance(y, core.tensor) and x.dtype == y.dtype
                 and x.dtype.is_floating() and x.dtype.bits == 8)      # selecting fp8 moves bits
    x, y = binary_op_type_checking_impl(x, y, True, True, arithmetic_check=not fp8_pair)
    shape = broadcast_shapes(condition.shape, x.shape)
    condition = broadcast_impl_shape(condition, shape)
    x, y = broadcast_impl_shape(x, shape), broadcast_impl_shape(y, shape)
    return _emit(ops.SelectOp, cond=condition.handle, true_value=x.handle, false_value=y.handle)


_LOAD_CACHE = ("", ".ca", ".cg", ".cv")
_STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
_EVICTION = ("", "evict_normal", "evict_first", "evict_last")


def _check_choice(value, choices, what):
    value = "" if value is None else value
    if value not in choices:
        raise ValueError(f"{what} must be one of {', '.join(repr(c) for c in choices)}; got {value!r}")
    return value


def _ptr_operand(ptr, what):
    if not isinstance(ptr, core.tensor) or not ptr.dtype.is_ptr():
        desc = ptr.dtype if isinstance(ptr, core.tensor) else type(ptr).__name__
        raise TypeError(f"Unsupported ptr type {desc} in `tl.{what}`: expected a pointer or tile of pointers")
    return ptr


def _shape_for(ptr, *others):
    shape = ptr.shape
    for o in others:
        if o is not None and o.shape != shape:
            if not shape:
                shape = o.shape
            else:
                broadcast_shapes(o.shape, shape)
                if len(o.shape) > len(shape) or broadcast_shapes(o.shape, shape) != shape:
                    raise ValueError(f"Cannot broadcast {list(o.shape)} to the pointer shape {list(shape)}")
    return shape


def _as_mask(mask):
    mask = to_tensor(mask)
    return mask if mask.dtype.is_bool() else cast(mask, int1)


def load(ptr, mask=None, other=None, cache_modifier="", eviction_policy="", volatile=False):
    ptr = _ptr_operand(ptr, "load")
    cache = _check_choice(cache_modifier, _LOAD_CACHE, "cache_modifier")
    evict = _check_choice(eviction_policy, _EVICTION, "eviction_policy")
    if mask is None and other is not None:
        raise ValueError("`other` cannot be provided without `mask`")
    mask = _as_mask(mask) if mask is not None else None
    other = to_tensor(other) if other is not None else None
    shape = _shape_for(ptr, mask, other)
    ptr = broadcast_impl_shape(ptr, shape)
    elt = ptr.dtype.element
    is_bool = elt == int1
    if is_bool:
        elt = int8
        ptr = cast(ptr, PointerType(int8, ptr.dtype.address_space))
    if mask is not None:
        mask = broadcast_impl_shape(mask, shape)
    if other is not None:
        other = broadcast_impl_shape(cast(other, elt), shape)
    ret = _emit(ops.LoadOp, ptr=ptr.handle, mask=mask.handle if mask is not None else None,
                other=other.handle if other is not None else None, cache=cache, eviction=evict,
                volatile=bool(volatile))
    return cast(ret, int1) if is_bool else ret


def check_writable(ptr):
    """A store or atomic through a ``tl.const`` pointer is an error (as in Triton)."""
    if ptr.dtype.is_ptr() and ptr.dtype.const:
        raise ValueError("Cannot store to a constant pointer (the parameter is annotated tl.const)")


def store(ptr, value, mask=None, cache_modifier="", eviction_policy=""):
    ptr = _ptr_operand(ptr, "store")
    check_writable(ptr)
    cache = _check_choice(cache_modifier, _STORE_CACHE, "cache_modifier")
    evict = _check_choice(eviction_policy, _EVICTION, "eviction_policy")
    value = to_tensor(value)
    mask = _as_mask(mask) if mask is not None else None
    shape = _shape_for(ptr, value, mask)
    ptr = broadcast_impl_shape(ptr, shape)
    elt = ptr.dtype.element
    if elt == int1:
        elt = int8
        ptr = cast(ptr, PointerType(int8, ptr.dtype.address_space))
    value = broadcast_impl_shape(cast(value, elt), shape)
    if mask is not None:
        mask = broadcast_impl_shape(mask, shape)
    core.current_builder().create(ops.StoreOp, ptr=ptr.handle, value=value.handle,
                                  mask=mask.handle if mask is not None else None,
                                  cache=cache, eviction=evict)
    return None


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


def reduce(input, axis, kind, keep_dims=False):
    """Reduce ``input`` over ``axis`` (all axes when None) with ``kind``."""
    input = to_tensor(input)
    if kind == "xor_sum" and (not input.dtype.is_int()):
        raise ValueError("xor_sum only supported for integers")
    if input.dtype.is_ptr():
        raise TypeError("cannot reduce a tile of pointers")
    if kind == "sum" and input.dtype.is_fp8():
        raise TypeError(f"arithmetic on fp8 is not supported ({input.dtype}): upcast first "
                        "(x.to(tl.float32))")
    rank = len(input.shape)
    if axis is None:
        if rank == 0:
            return input
        flat = reshape(input, (input.type.numel,)) if rank > 1 else input
        ret = _emit(ops.ReduceOp, src=flat.handle, kind=kind, axis=0)
        if keep_dims:
            ret = reshape(ret, (1,) * rank)
        return ret
    if not _is_int(axis):
        raise TypeError(f"reduction axis must be a tl.constexpr int or None, got {axis!r}")
    if not -rank <= axis < rank or rank == 0:
        raise ValueError(f"invalid axis {axis} for a reduction over a tensor of shape {list(input.shape)}")
    axis %= rank
    ret = _emit(ops.ReduceOp, src=input.handle, kind=kind, axis=axis)
    if keep_dims:
        ret = expand_dims(ret, axis)
    return ret


def sum_dtype(dtype):
    """Triton's accumulation type for ``sum``: narrow ints widen to 32 bits, bf16 to fp32."""
    if dtype.is_int_signed() and dtype.bits < 32:
        return int32
    if (dtype.is_int_unsigned() or dtype.is_bool()) and dtype.bits < 32:
        return uint32
    if dtype is bfloat16:
        return float32
    return None


def minmax_dtype(dtype):
    """Triton's promotion for max/min: anything narrower than 32 bits goes to fp32/int32."""
    if dtype.is_floating() and dtype.bits < 32:
        return float32
    if dtype.is_int() and dtype.bits < 32:
        return int32
    return None


# ---------------------------------------------------------------------------
# dot
# ---------------------------------------------------------------------------

_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
# bf16xN: fp32 operands split into bf16 parts; the products of parts kept (smallest first)
_BF16_SPLITS = {"bf16x3": (2, ((1, 0), (0, 1), (0, 0))),
                "bf16x6": (3, ((2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0)))}


def dot(a, b, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=float32):
    a, b = to_tensor(a), to_tensor(b)
    if len(a.shape) == len(b.shape) >= 4:
        return _flattened_batch_dot(a, b, acc, (input_precision, allow_tf32, max_num_imprecise_acc, out_dtype))
    if len(a.shape) == 3 and len(b.shape) == 3:
        return _batched_dot(a, b, acc, (input_precision, allow_tf32, max_num_imprecise_acc, out_dtype))
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ValueError(f"dot needs 2-d operands (or of one rank > 2: a batch), got shapes {list(a.shape)} and "
                         f"{list(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"dot: first input shape {list(a.shape)} and second input shape {list(b.shape)} "
                         f"are not compatible (inner dimensions {a.shape[1]} != {b.shape[0]})")
    if a.dtype != b.dtype:
        raise TypeError(f"Both operands of dot must have the same dtype, got {a.dtype} and {b.dtype}")
    el = a.dtype
    if el.is_ptr() or el.is_bool() or (el.is_int() and el not in (int8, uint8)):
        raise TypeError(f"dot does not support operands of type {el}")
    if input_precision is not None and allow_tf32 is not None:
        raise ValueError("only one of input_precision and allow_tf32 can be specified")
    if input_precision is None:
        input_precision = "ieee" if allow_tf32 is False else "tf32"
    if input_precision not in _PRECISIONS:
        raise ValueError(f"input_precision must be one of {_PRECISIONS}, got {input_precision!r}")
    if el.is_fp8() and max_num_imprecise_acc is not None and max_num_imprecise_acc > a.shape[1]:
        raise ValueError(f"max_num_imprecise_acc ({max_num_imprecise_acc}) must be <= K ({a.shape[1]})")
    ret = _dot_result_type(el, out_dtype)
    m, n = a.shape[0], b.shape[1]
    if acc is None:
        acc = scalar_constant(0, ret, (m, n))
    else:
        acc = to_tensor(acc)
        if acc.shape != (m, n):
            raise ValueError(f"dot accumulator shape {list(acc.shape)} != {[m, n]}")
        if acc.dtype != ret:
            raise TypeError(f"dot accumulator has dtype {acc.dtype} but the product has dtype {ret}")
    if input_precision in _BF16_SPLITS:
        if el is float32:
            return _split_bf16_dot(a, b, acc, input_precision, max_num_imprecise_acc)
        input_precision = "ieee"
    return _emit(ops.DotOp, a=a.handle, b=b.handle, acc=acc.handle, input_precision=input_precision,
                 max_num_imprecise_acc=max_num_imprecise_acc)


def _dot_result_type(el, out_dtype):
    """Triton's rule: int32 for integer operands, float64 for float64, float32 for
    float32/bfloat16 (``out_dtype`` ignored), ``out_dtype`` (float16 or float32) for
    float16 and fp8 operands; ``out_dtype=bfloat16`` is an error."""
    if el.is_int():
        return int32
    if out_dtype == bfloat16:
        raise ValueError("out_dtype=bfloat16 is unsupported. Please use out_dtype=float32/float16 and "
                         "cast with `.to(tl.bfloat16)`")
    if el is float64:
        return float64
    if el in (float32, bfloat16):
        return float32
    if out_dtype not in (float32, float16):
        raise TypeError(f"dot out_dtype must be float16 or float32 for {el} operands, got {out_dtype}")
    return out_dtype


def _bf16_parts(x, k):
    """``x`` (fp32) as ``k`` bf16 tiles whose sum approximates it: each the bf16 rounding
    of what the previous ones left."""
    parts, rest = [], x
    for _ in range(k):
        p = cast(rest, bfloat16)
        parts.append(p)
        rest = _emit(ops.SubOp, lhs=rest.handle, rhs=cast(p, float32).handle)
    return parts


def _split_bf16_dot(a, b, acc, precision, max_num_imprecise_acc):
    """Triton's ``bf16x3`` / ``bf16x6``: fp32 dots as sums of bf16 dots (fp32
    accumulation) of the operands' bf16 parts, the small products first."""
    k, products = _BF16_SPLITS[precision]
    pa, pb = _bf16_parts(a, k), _bf16_parts(b, k)
    for i, j in products:
        acc = _emit(ops.DotOp, a=pa[i].handle, b=pb[j].handle, acc=acc.handle, input_precision="ieee",
                    max_num_imprecise_acc=max_num_imprecise_acc)
    return acc


def _batch_item(x, i):
    """``x[i]`` along the first dimension, bit-exact (a one-hot select and an xor
    reduction of the bit patterns)."""
    ity = _int_of(x.dtype)
    bits = x if x.dtype == ity else _emit(ops.BitcastOp, src=x.handle, to=ity)
    hit = _emit(ops.CmpOp, lhs=_axis_index(x.shape, 0).handle,
                rhs=scalar_constant(i, int32, x.shape).handle, pred="eq")
    part = _emit(ops.SelectOp, cond=hit.handle, true_value=bits.handle,
                 false_value=scalar_constant(0, ity, x.shape).handle)
    r = _emit(ops.ReduceOp, src=part.handle, kind="xor_sum", axis=0)
    return r if x.dtype == ity else _emit(ops.BitcastOp, src=r.handle, to=x.dtype)


def _batched_dot(a, b, acc, options):
    """``[B, M, K] @ [B, K, N] (+ acc [B, M, N])``: one 2-d dot per batch item (B is
    a compile-time size), the results placed back by one-hot selects."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"dot: batch sizes differ: shapes {list(a.shape)} and {list(b.shape)}")
    nb, m, n = a.shape[0], a.shape[1], b.shape[2]
    if acc is not None:
        acc = to_tensor(acc)
        if acc.shape != (nb, m, n):
            raise ValueError(f"dot accumulator shape {list(acc.shape)} != {[nb, m, n]}")
    return stack_batch([dot(_batch_item(a, i), _batch_item(b, i), None if acc is None else _batch_item(acc, i),
                            *options) for i in range(nb)])


def _flattened_batch_dot(a, b, acc, options):
    """``[..., M, K] @ [..., K, N]`` with two or more batch dimensions: as Triton does, the
    batch dimensions flattened into one, a 3-d dot, the result reshaped back."""
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"dot: batch shapes differ: shapes {list(a.shape)} and {list(b.shape)}")
    lead = a.shape[:-2]
    nb = 1
    for d in lead:
        nb *= d
    out_shape = lead + (a.shape[-2], b.shape[-1])
    if acc is not None:
        acc = to_tensor(acc)
        if acc.shape != out_shape:
            raise ValueError(f"dot accumulator shape {list(acc.shape)} != {list(out_shape)}")
        acc = reshape(acc, (nb,) + out_shape[-2:])
    r = _batched_dot(reshape(a, (nb,) + a.shape[-2:]), reshape(b, (nb,) + b.shape[-2:]), acc, options)
    return reshape(r, out_shape)


def stack_batch(items):
    """Tiles of one shape stacked along a new first dimension (exact one-hot selects)."""
    shape = (len(items),) + tuple(items[0].shape)
    out = None
    for i, d in enumerate(items):
        wide = broadcast_impl_shape(expand_dims(d, 0), shape)
        if out is None:
            out = wide
            continue
        hit = _emit(ops.CmpOp, lhs=_axis_index(shape, 0).handle,
                    rhs=scalar_constant(i, int32, shape).handle, pred="eq")
        out = _emit(ops.SelectOp, cond=hit.handle, true_value=wide.handle, false_value=out.handle)
    return out


# ---------------------------------------------------------------------------
# elementwise math
# ---------------------------------------------------------------------------


def math_unary(x, fn):
    """Apply ``math.<fn>`` to a floating-point tensor."""
    x = to_tensor(x)
    if not x.dtype.is_floating():
        raise TypeError(f"{fn} expects a floating-point tensor, got {x.dtype}")
    if x.dtype.bits == 8:
        raise TypeError(f"{fn} on fp8 is not supported ({x.dtype}): upcast first")
    return _emit(ops.MATH_OPS[fn], src=x.handle)


def abs(x):
    x = to_tensor(x)
    if x.dtype.is_ptr():
        raise TypeError("abs of a pointer")
    if x.dtype.is_int_unsigned() or x.dtype.is_bool():
        return x
    if x.dtype.is_fp8():        # clear the sign bit (an fnuz format's NaN, 0x80, stays)
        from ..ir.fp8 import fmt_of
        bits = _emit(ops.BitcastOp, src=x.handle, to=uint8)
        mag = _emit(ops.AndOp, lhs=bits.handle, rhs=scalar_constant(0x7F, uint8, x.shape).handle)
        if fmt_of(x.dtype).fnuz:
            nan = _emit(ops.CmpOp, lhs=bits.handle, rhs=scalar_constant(0x80, uint8, x.shape).handle, pred="eq")
            mag = _emit(ops.SelectOp, cond=nan.handle, true_value=bits.handle, false_value=mag.handle)
        return _emit(ops.BitcastOp, src=mag.handle, to=x.dtype)
    return _emit(ops.AbsOp, src=x.handle)


# ---------------------------------------------------------------------------
# hints and debugging
# ---------------------------------------------------------------------------

_HINTS = {"multiple_of": ops.MultipleOfOp, "max_contiguous": ops.MaxContiguousOp,
          "max_constancy": ops.MaxConstancyOp}


def hint(kind, input, values):
    input = to_tensor(input)
    if isinstance(values, int):
        values = [values]
    values = [core._unwrap(v) for v in values]
    for v in values:
        if not _is_int(v):
            raise TypeError(f"{kind} values must be tl.constexpr ints, got {v!r}")
        if v <= 0:
            raise ValueError(f"{kind} values must be positive, got {v}")
    if len(values) != max(1, len(input.shape)):
        raise ValueError(f"{kind}: {len(values)} values given for a tensor of rank {len(input.shape)}")
    return _emit(_HINTS[kind], src=input.handle, values=tuple(values))


def debug_barrier():
    """Emit ``tt.debug_barrier`` (ops.DebugBarrierOp)."""
    core.current_builder().create(ops.DebugBarrierOp)


def device_assert(cond, msg="", mask=None):
    cond = _as_bool(cond)
    if mask is not None:
        from .semantic import logical_or, not_
        cond = logical_or(cond, not_(mask))
    core.current_builder().create(ops.DeviceAssertOp, cond=cond.handle, msg=str(msg))


def _as_bool(x):
    x = to_tensor(x)
    return x if x.dtype.is_bool() else cast(x, int1)


def device_print(prefix, args, hex=False):
    # Triton's: with values the prefix ends in ": ", and a longer one starts with " "
    prefix = str(prefix)
    if args and not prefix.endswith(" "):
        prefix += " "
    if args and not prefix.endswith(": "):
        prefix = prefix[:-1] + ": "
    if len(prefix) > 2 and not prefix.startswith(" "):
        prefix = " " + prefix
    handles = [to_tensor(a).handle for a in args]
    core.current_builder().create(ops.DevicePrintOp, args=handles, prefix=str(prefix), hex=bool(hex))


__all__ = [n for n in dir() if not n.startswith("_")] + ["_wrap"]


# ---------------------------------------------------------------------------
# join / split (composed from broadcast, select and an exact xor reduction)
# ---------------------------------------------------------------------------

def _int_of(dtype):
    from ..ir.types import int16, int64
    return {1: int1, 8: int8, 16: int16, 32: int32, 64: int64}[dtype.bits]


def _axis_index(shape, axis):
    """int32 tile of ``shape`` holding each element's index along ``axis``."""
    idx = arange(0, shape[axis])
    for _ in range(axis):
        idx = expand_dims(idx, 0)
    for _ in range(len(shape) - axis - 1):
        idx = expand_dims(idx, len(idx.shape))
    return broadcast_impl_shape(idx, shape)


def stack2(a, b, axis):
    """``a`` and ``b`` (same shape after promotion) stacked along a new ``axis`` of size 2."""
    a, b = binary_op_type_checking_impl(a, b, True, True)
    shape = a.shape[:axis] + (2,) + a.shape[axis:]
    a2 = broadcast_impl_shape(expand_dims(a, axis), shape)
    b2 = broadcast_impl_shape(expand_dims(b, axis), shape)
    first = _emit(ops.CmpOp, lhs=_axis_index(shape, axis).handle,
                  rhs=scalar_constant(0, int32, shape).handle, pred="eq")
    return _emit(ops.SelectOp, cond=first.handle, true_value=a2.handle, false_value=b2.handle)


def join(a, b):
    """Stack ``a`` and ``b`` along a new last dimension of size 2."""
    a, b = to_tensor(a), to_tensor(b)
    return stack2(a, b, len(broadcast_shapes(a.shape, b.shape)))


def cat(a, b):
    """Concatenate ``a`` and ``b`` (same shape) along dimension 0, in order."""
    a, b = to_tensor(a), to_tensor(b)
    if a.shape != b.shape or not a.shape:
        raise ValueError(f"cat needs two tiles of the same shape, got {list(a.shape)} and {list(b.shape)}")
    s = stack2(a, b, 0)
    return reshape(s, (2 * a.shape[0],) + a.shape[1:])


def interleave(a, b):
    """Interleave ``a`` and ``b`` along their last dimension."""
    j = join(a, b)
    if len(j.shape) == 1:       # two scalars: join already made [a, b]
        return j
    return reshape(j, j.shape[:-2] + (2 * j.shape[-2],))


def split(x):
    """The two halves of ``x`` along its last dimension, which must have size 2."""
    x = to_tensor(x)
    if not x.shape or x.shape[-1] != 2:
        raise ValueError(f"split needs a last dimension of size 2, got shape {list(x.shape)}")
    if x.dtype.is_ptr():
        raise TypeError("split of a tile of pointers is not supported")
    ity = _int_of(x.dtype)
    bits = x if x.dtype == ity else _emit(ops.BitcastOp, src=x.handle, to=ity)
    last = len(x.shape) - 1
    idx = _axis_index(x.shape, last)
    zero = scalar_constant(0, ity, x.shape)
    out = []
    for k in (0, 1):
        sel = _emit(ops.CmpOp, lhs=idx.handle, rhs=scalar_constant(k, int32, x.shape).handle, pred="eq")
        part = _emit(ops.SelectOp, cond=sel.handle, true_value=bits.handle, false_value=zero.handle)
        if ity == int1:
            r = cast(_emit(ops.ReduceOp, src=cast(part, int8).handle, kind="xor_sum", axis=last), int1)
        else:
            r = _emit(ops.ReduceOp, src=part.handle, kind="xor_sum", axis=last)
        out.append(r if x.dtype == ity else _emit(ops.BitcastOp, src=r.handle, to=x.dtype))
    return tuple(out)


def flip(x, dim=None):
    """``x`` reversed along ``dim`` (default: the last dimension), bit-exactly: a
    bit-reversal of the index made of log2(n) rounds of split / stack / interleave
    (pure data movement, O(n log n) work)."""
    x = to_tensor(x)
    if not x.shape:
        raise ValueError("flip needs a tile")
    rank = len(x.shape)
    dim = rank - 1 if dim is None else dim
    if not _is_int(dim) or not -rank <= dim < rank:
        raise ValueError(f"invalid flip dim {dim!r} for a tensor of shape {list(x.shape)}")
    dim %= rank
    if x.dtype.is_ptr():
        raise TypeError("flip of a tile of pointers is not supported")
    if x.dtype.is_bool():
        return cast(flip(cast(x, int8), dim), int1)
    if x.shape[dim] == 1:
        return x
    perm = tuple(d for d in range(rank) if d != dim) + (dim,)
    inv = tuple(perm.index(d) for d in range(rank))
    y = permute(x, perm)
    if y.shape[-1] & (y.shape[-1] - 1):            # not a power of two: a direct permutation
        from .nonpow2 import flip_last
        return permute(flip_last(y), inv)
    return permute(_flip_last(y, y.shape[:-1]), inv)


def _flip_last(x, lead):
    """Reverse the last dim: out[2j] = flip(odds)[j], out[2j+1] = flip(evens)[j],
    with both halves flipped at once as one batched tile."""
    n = x.shape[-1]
    if n == 1:
        return x
    evens, odds = split(reshape(x, lead + (n // 2, 2)))
    both = stack2(odds, evens, len(lead))                    # lead + (2, n/2)
    z = _flip_last(both, lead + (2,))
    r = len(lead)
    fo, fe = split(permute(z, tuple(range(r)) + (r + 1, r)))   # lead + (n/2,) each
    return interleave(fo, fe)


def sort(x, dim=None, descending=False):
    """``x`` sorted along its last dimension (a bitonic network of compare-and-swaps)."""
    x = to_tensor(x)
    rank = len(x.shape)
    if rank == 0:
        raise ValueError("sort needs a tile")
    if dim is not None and dim % rank != rank - 1:
        raise ValueError("only sorting along the last dimension is supported")
    n = x.shape[-1]
    if n & (n - 1):                                 # not a power of two: padded (nonpow2.py)
        from .nonpow2 import sort_padded
        return sort_padded(x, descending, lambda y: sort(y, None, descending))
    lead = x.shape[:-1]
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            x = _bitonic_stage(x, lead, n, k, j, bool(descending))
            j //= 2
        k *= 2
    return x


def topk(x, k, dim=None):
    """The ``k`` largest elements of ``x`` along its last dimension, largest first
    (Triton's ``tl.topk``: ``k`` a power of two at most that dimension's length);
    the first ``k`` of a descending sort, bit-exact."""
    x = to_tensor(x)
    rank = len(x.shape)
    if rank == 0:
        raise ValueError("topk needs a tile")
    if dim is not None and dim % rank != rank - 1:
        raise ValueError("only minor dimension is currently supported")
    if not _is_int(k) or k < 1 or k & (k - 1) or k > x.shape[-1]:
        raise ValueError(f"topk: k must be a power of two in [1, {x.shape[-1]}] (the last "
                         f"dimension's length), got {k!r}")
    from .nonpow2 import first_last
    return first_last(sort(x, None, True), k)


def _bitonic_stage(x, lead, n, k, j, descending):
    groups = n // (2 * j)
    r = len(lead)
    y = reshape(x, lead + (groups, 2, j))
    perm = tuple(range(r)) + (r, r + 2, r + 1)
    lo, hi = split(permute(y, perm))                       # each lead + (groups, j)
    g = _axis_index(lo.shape, r)                            # group index a
    flip_dir = _emit(ops.AndOp, lhs=g.handle, rhs=scalar_constant(k // (2 * j), int32, lo.shape).handle)
    desc = _emit(ops.CmpOp, lhs=flip_dir.handle, rhs=scalar_constant(0, int32, lo.shape).handle,
                 pred="eq" if descending else "ne")
    gt = _emit(ops.CmpOp, lhs=lo.handle, rhs=hi.handle, pred="gt")
    swap = _emit(ops.XorOp, lhs=gt.handle, rhs=desc.handle)
    new_lo = _emit(ops.SelectOp, cond=swap.handle, true_value=hi.handle, false_value=lo.handle)
    new_hi = _emit(ops.SelectOp, cond=swap.handle, true_value=lo.handle, false_value=hi.handle)
    y = permute(join(new_lo, new_hi), perm)
    return reshape(y, lead + (n,))


# the largest n x n tile (bytes) that cumsum sums by masking; longer axes are scanned
CUMSUM_SQUARE_BYTES = 128 * 1024


def cumsum(x, axis=0, reverse=False):
    """Inclusive prefix sum of ``x`` along ``axis``: element j is the sum of elements
    0..j (j..n-1 when ``reverse``), computed as a masked sum over an n x n tile while
    that tile is small (at most :data:`CUMSUM_SQUARE_BYTES`), else by the O(n log n)
    pairwise scan of ``tl.associative_scan`` (an n x n tile of a long axis would not
    fit a GPU program's shared memory, and is O(n^2) work)."""
    x = to_tensor(x)
    rank = len(x.shape)
    if rank == 0:
        raise ValueError("cumsum needs a tile")
    if not _is_int(axis) or not -rank <= axis < rank:
        raise ValueError(f"invalid cumsum axis {axis!r} for a tensor of shape {list(x.shape)}")
    axis %= rank
    n = x.shape[axis]
    if x.numel * n * x.dtype.itemsize > CUMSUM_SQUARE_BYTES:
        from .scan import scan
        from .semantic import add
        return scan((x,), axis, lambda a, b: (add(a[0], b[0]),), reverse)[0]
    shape2 = x.shape[:axis] + (n, n) + x.shape[axis + 1:]
    wide = broadcast_impl_shape(expand_dims(x, axis), shape2)        # [..., j, k, ...] = x[k]
    keep = _emit(ops.CmpOp, lhs=_axis_index(shape2, axis + 1).handle, rhs=_axis_index(shape2, axis).handle,
                 pred="ge" if reverse else "le")
    part = _emit(ops.SelectOp, cond=keep.handle, true_value=wide.handle,
                 false_value=scalar_constant(0, x.dtype, shape2).handle)
    return _emit(ops.ReduceOp, src=part.handle, kind="sum", axis=axis + 1)
