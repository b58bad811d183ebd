"""The language's builtins (``tl.load``, ``tl.arange``, ``tl.sum``, ...).

Each builtin documents itself, unwraps constexpr arguments (``@builtin``) and
delegates the type and shape rules to ``semantic`` / ``semantic_tile``.
"""
from __future__ import annotations

import builtins as _py
import warnings

from ..ir.types import float32
from . import semantic as sem
from . import semantic_tile as st
from .core import PropagateNan, builtin, tensor, tensor_member, constexpr, _unwrap

# ---------------------------------------------------------------------------
# programming model
# ---------------------------------------------------------------------------


@builtin
def program_id(axis):
    """The index of the current program along grid ``axis`` (0, 1 or 2), an int32 scalar."""
    return st.program_id(axis)


@builtin
def num_programs(axis):
    """The number of programs along grid ``axis`` (0, 1 or 2), an int32 scalar."""
    return st.num_programs(axis)


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------


@builtin
def arange(start, end):
    """int32 tile ``[start, ..., end - 1]`` of ``end - start`` lanes; the bounds are
    constexprs.  The length need not be a power of 2 (a tilejit extension)."""
    return st.arange(start, end)


@builtin
def full(shape, value, dtype):
    """A tile of ``shape`` (constexpr ints) filled with ``value`` converted to ``dtype``."""
    return st.full(shape, value, dtype)


@builtin
def zeros(shape, dtype):
    """A tile of ``shape`` filled with zeros of ``dtype``."""
    return st.full(shape, 0, dtype)


@builtin
def zeros_like(input):
    """Zeros with the shape and dtype of ``input``."""
    input = sem.to_tensor(input)
    return st.full(input.shape, 0, input.dtype)


@builtin
def full_like(input, value, dtype=None):
    """A tile with the shape of ``input`` filled with ``value`` (dtype defaults to input's)."""
    input = sem.to_tensor(input)
    return st.full(input.shape, value, dtype if dtype is not None else input.dtype)


@builtin
def to_tensor(x):
    """``x`` as a tensor (Python numbers become constants of Triton's default type)."""
    return sem.to_tensor(x)


@tensor_member
@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    """``input`` converted to ``dtype`` (also ``x.cast(dtype)``).

    ``fp_downcast_rounding`` ("rtne", the default, or "rtz": toward zero) is the rounding
    of a narrowing floating-point conversion; ``bitcast=True`` reinterprets the bits
    (same width) instead of converting the value."""
    if bitcast:
        return sem.bitcast(input, dtype)
    return sem.cast(input, dtype, fp_downcast_rounding)


@tensor_member
@builtin
def item(input):
    """The single element of a one-element tensor, as a scalar (a scalar is returned as is)."""
    return st.unsplat(input)


# ---------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


@tensor_member
@builtin
def broadcast_to(input, *shape):
    """Broadcast ``input`` to ``shape`` (numpy rules; scalars are splatted)."""
    return st.broadcast_to(input, _shape_args(shape))


@builtin
def broadcast(input, other):
    """Broadcast two tensors to their common shape; returns both."""
    return st.broadcast(input, other)


@tensor_member
@builtin
def reshape(input, *shape, can_reorder=False):
    """Row-major reshape of ``input`` to ``shape`` (same number of elements)."""
    return st.reshape(input, _shape_args(shape), can_reorder)


@tensor_member
@builtin
def view(input, *shape):
    """Same as :func:`reshape` (Triton allows reordering; tilejit keeps row-major order)."""
    return st.reshape(input, _shape_args(shape), True)


@tensor_member
@builtin
def ravel(input, can_reorder=False):
    """Flatten ``input`` to one dimension."""
    input = sem.to_tensor(input)
    return st.reshape(input, (input.numel,), can_reorder)


@tensor_member
@builtin
def expand_dims(input, axis):
    """Insert a dimension of size 1 at ``axis`` (an int or a sequence of ints)."""
    return st.expand_dims(input, axis)


@tensor_member
@builtin
def permute(input, *dims):
    """Permute the dimensions of ``input``: result dim i is source dim ``dims[i]``."""
    return st.permute(input, _shape_args(dims))


@tensor_member
@builtin
def trans(input, *dims):
    """Transpose: ``trans(x)`` swaps the two dims of a 2-d tile; ``trans(x, *dims)`` permutes."""
    return st.trans(input, _shape_args(dims))


@builtin
def join(a, b):
    """Stack two tensors along a new minor dimension of size 2 (``[..., 0]`` is ``a``)."""
    return st.join(a, b)


@tensor_member
@builtin
def split(a):
    """Split ``a`` along its last dimension, which must have size 2; returns two tensors."""
    return st.split(a)


@tensor_member
@builtin
def flip(x, dim=None):
    """``x`` reversed along ``dim`` (default: the last dimension)."""
    return st.flip(x, dim)


@tensor_member
@builtin
def sort(x, dim=None, descending=False):
    """``x`` sorted along its last dimension (ascending, or descending when asked)."""
    return st.sort(x, dim, descending)


@builtin
def topk(x, k, dim=None):
    """The ``k`` largest elements of ``x`` along its last dimension, largest first
    (``k``: a power of two, at most that dimension's length)."""
    return st.topk(x, k, dim)


@builtin
def interleave(a, b):
    """Interleave ``a`` and ``b`` along their last dimension."""
    return st.interleave(a, b)


@builtin
def cat(input, other, can_reorder=False):
    """Concatenate two tiles of the same shape along dimension 0 (tilejit keeps the order)."""
    return st.cat(input, other)


# ---------------------------------------------------------------------------
# memory and selection
# ---------------------------------------------------------------------------


@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    """Load from ``pointer`` (a pointer or tile of pointers).  Lanes where ``mask`` is
    false read nothing and yield ``other`` (0 when absent), cast to the pointee type."""
    from .blockptr import block_ptr, load_block
    if isinstance(pointer, block_ptr):
        if mask is not None or other is not None:
            raise ValueError("`mask` and `other` cannot be used with a block pointer (use boundary_check)")
        return load_block(pointer, boundary_check, padding_option, cache_modifier, eviction_policy, volatile)
    if boundary_check or padding_option:
        raise ValueError("boundary_check and padding_option need a block pointer (tl.make_block_ptr)")
    return st.load(pointer, mask, other, cache_modifier, eviction_policy, volatile)


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    """Store ``value`` (broadcast and cast to the pointee type) where ``mask`` holds."""
    from .blockptr import block_ptr, store_block
    if isinstance(pointer, block_ptr):
        if mask is not None:
            raise ValueError("`mask` cannot be used with a block pointer (use boundary_check)")
        return store_block(pointer, value, boundary_check, cache_modifier, eviction_policy)
    if boundary_check:
        raise ValueError("boundary_check needs a block pointer (tl.make_block_ptr)")
    return st.store(pointer, value, mask, cache_modifier, eviction_policy)


@builtin
def where(condition, x, y):
    """Elementwise ``x`` where ``condition`` else ``y`` (broadcast, with type promotion).
    A condition that is not boolean is compared with zero, with Triton's deprecation
    warning."""
    dtype = getattr(condition, "dtype", None)
    if dtype is not None and not dtype.is_bool():
        warnings.warn("tl.where with a non-boolean condition is deprecated and will error out "
                      f"in a future triton release. Got {dtype}", stacklevel=2)
    return st.where(condition, x, y)


# ---------------------------------------------------------------------------
# arithmetic helpers
# ---------------------------------------------------------------------------


def _propagate(result, x, y, propagate_nan):
    if propagate_nan != PropagateNan.ALL or not result.dtype.is_floating():
        return result
    x, y = sem.binary_op_type_checking_impl(x, y)
    return st.where(sem.compare(x, x, "ne"), x, st.where(sem.compare(y, y, "ne"), y, result))


@builtin
def minimum(x, y, propagate_nan=PropagateNan.NONE):
    """Elementwise minimum; with NONE (default) a NaN operand yields the other operand,
    with ``tl.PropagateNan.ALL`` a NaN operand yields NaN."""
    return _propagate(sem.minimum(x, y), x, y, propagate_nan)


@builtin
def maximum(x, y, propagate_nan=PropagateNan.NONE):
    """Elementwise maximum; NaN handling as in :func:`minimum`."""
    return _propagate(sem.maximum(x, y), x, y, propagate_nan)


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE):
    """``minimum(maximum(x, min), max)`` for floating-point ``x``."""
    x = sem.to_tensor(x)
    if not x.dtype.is_floating():
        raise TypeError(f"Unexpected dtype {x.dtype}. Only floating point clamp is supported")
    return _propagate(sem.minimum(sem.maximum(x, min), max), x, x, propagate_nan)


@tensor_member
@builtin
def cdiv(x, div):
    """Ceiling division ``(x + div - 1) // div``."""
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        return (x + div - 1) // div
    return sem.floordiv(sem.sub(sem.add(x, div), 1), div)


@tensor_member
@builtin
def sigmoid(x):
    """``1 / (1 + exp(-x))`` (fp16 inputs give fp32, as in Triton)."""
    return sem.truediv(1, sem.add(1, st.math_unary(sem.minus(x), "exp")))


@tensor_member
@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """``exp(x - max(x, dim)) / sum(exp(...), dim)`` along ``dim`` (default 0)."""
    dim = 0 if dim is None else dim
    z = sem.sub(x, max(x, dim, keep_dims=keep_dims))
    num = st.math_unary(z, "exp")
    den = sum(num, dim, keep_dims=keep_dims)
    return sem.fdiv(num, den, ieee_rounding)


@builtin
def add(x, y, sanitize_overflow=True):
    """``x + y``."""
    return sem.add(x, y)


@builtin
def sub(x, y, sanitize_overflow=True):
    """``x - y``."""
    return sem.sub(x, y)


@builtin
def mul(x, y, sanitize_overflow=True):
    """``x * y``."""
    return sem.mul(x, y)


@builtin
def fdiv(x, y, ieee_rounding=False):
    """Floating-point ``x / y``."""
    return sem.fdiv(x, y, ieee_rounding)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


def _promote(x, dtype):
    return sem.cast(x, dtype) if dtype is not None else x


@tensor_member
@builtin
def sum(input, axis=None, keep_dims=False, dtype=None):
    """Sum over ``axis`` (all axes when None).  Narrow integers accumulate in 32 bits
    (signed -> int32, unsigned and int1 -> uint32) and bf16 in fp32, as in Triton."""
    input = sem.to_tensor(input)
    input = _promote(input, dtype if dtype is not None else st.sum_dtype(input.dtype))
    return st.reduce(input, axis, "sum", keep_dims)


@tensor_member
@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """Maximum over ``axis``; with ``return_indices`` also the int32 index of the first maximum.
    Types narrower than 32 bits are promoted to fp32 / int32 first (as in Triton)."""
    input = sem.to_tensor(input)
    if return_indices:
        input = _promote(input, float32 if input.dtype.name == "bf16" else None)
        return (st.reduce(input, axis, "max", keep_dims), st.reduce(input, axis, "argmax", keep_dims))
    return st.reduce(_promote(input, st.minmax_dtype(input.dtype)), axis, "max", keep_dims)


@tensor_member
@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    """Minimum over ``axis``; with ``return_indices`` also the int32 index of the first minimum.
    Types narrower than 32 bits are promoted to fp32 / int32 first (as in Triton)."""
    input = sem.to_tensor(input)
    if return_indices:
        input = _promote(input, float32 if input.dtype.name == "bf16" else None)
        return (st.reduce(input, axis, "min", keep_dims), st.reduce(input, axis, "argmin", keep_dims))
    return st.reduce(_promote(input, st.minmax_dtype(input.dtype)), axis, "min", keep_dims)


@tensor_member
@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    """int32 index of the first maximum along ``axis``."""
    input = sem.to_tensor(input)
    input = _promote(input, float32 if input.dtype.name == "bf16" else None)
    return st.reduce(input, axis, "argmax", keep_dims)


@tensor_member
@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    """int32 index of the first minimum along ``axis``."""
    input = sem.to_tensor(input)
    input = _promote(input, float32 if input.dtype.name == "bf16" else None)
    return st.reduce(input, axis, "argmin", keep_dims)


@tensor_member
@builtin
def xor_sum(input, axis=None, keep_dims=False):
    """Bitwise xor of the elements along ``axis`` (integers only)."""
    return st.reduce(input, axis, "xor_sum", keep_dims)


@tensor_member
@builtin
def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduce ``input`` along ``axis`` with ``combine_fn``, a ``@jit`` function of two
    scalars.  tilejit recognises combine functions computing ``a + b``, ``a ^ b``,
    ``tl.maximum(a, b)`` or ``tl.minimum(a, b)`` (the frontend inlines them to find out)."""
    raise RuntimeError("tl.reduce is compiled by the frontend and cannot be called here")


@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """Apply ``scalar_fn``, a ``@jit`` function written for single elements (it may use
    ``if``/``else`` and return several values), to every element of ``args`` (broadcast
    to one shape); returns one tensor or a tuple.  With ``pack=k`` each call receives
    ``k`` neighbouring elements of every input along the last dimension (``fn(a0, a1,
    b0, b1)``) and returns ``k`` values per result.  Branches that only some elements
    take are computed for all and selected per element, so they may not load, store,
    perform atomics or print (compiled by the frontend)."""
    raise RuntimeError("tl.map_elementwise is compiled by the frontend and cannot be called here")


@tensor_member
@builtin
def cumsum(input, axis=0, reverse=False, dtype=None):
    """Inclusive prefix sum along ``axis`` (accumulation type as in :func:`sum`)."""
    input = sem.to_tensor(input)
    input = _promote(input, dtype if dtype is not None else st.sum_dtype(input.dtype))
    if input.dtype.is_bool():
        input = sem.cast(input, st.int32)
    return st.cumsum(input, axis, reverse)


# ---------------------------------------------------------------------------
# dot
# ---------------------------------------------------------------------------


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=float32):
    """Matrix product of 2-d tiles ``input @ other`` (+ ``acc``), or of 3-d tiles batch by
    batch (``[B, M, K] @ [B, K, N] -> [B, M, N]``).  int8 inputs give int32, fp64 gives
    fp64, other float inputs give ``out_dtype`` (fp32 by default)."""
    return st.dot(input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype)


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None, fast_math=False,
               lhs_k_pack=True, rhs_k_pack=True, out_dtype=float32):
    """Matrix product of 2-d tiles in microscaling formats (fp32 result, + ``acc``).
    ``lhs`` [M, K] and ``rhs`` [K, N] are in ``lhs_format``/``rhs_format`` -- ``e2m1``
    (two per uint8, first in the low bits, packed along K or, with ``*_k_pack=False``,
    along M/N), ``e4m3``, ``e5m2``, ``bf16``, ``fp16``; ``lhs_scale`` [M, K//32] and
    ``rhs_scale`` [N, K//32] are uint8 e8m0 exponents (or None).  Computed as Triton
    emulates it: both operands upcast to bf16 (fp16 if either is fp16) and scaled,
    then one dot with fp32 accumulation."""
    from .scaled_dot import dot_scaled_impl
    return dot_scaled_impl(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, fast_math,
                           lhs_k_pack, rhs_k_pack, out_dtype)


# ---------------------------------------------------------------------------
# compiler hints
# ---------------------------------------------------------------------------


@builtin
def multiple_of(input, values):
    """Claim every element of ``input`` is a multiple of ``values`` (one per dim)."""
    return st.hint("multiple_of", input, values)


@builtin
def max_contiguous(input, values):
    """Claim the first ``values`` elements along each dim are contiguous."""
    return st.hint("max_contiguous", input, values)


@builtin
def max_constancy(input, values):
    """Claim runs of ``values`` equal elements along each dim."""
    return st.hint("max_constancy", input, values)


@builtin
def assume(cond):
    """A claim that ``cond`` holds (Triton's optimisation hint); tilejit accepts it and
    does not use it."""
    if not isinstance(cond, (tensor, bool, int)):
        raise TypeError(f"tl.assume needs a condition, got {cond!r}")
    return None


@builtin
def debug_barrier():
    """Order the program's memory accesses: those before the call happen before those
    after it, also across the threads that run one program on a GPU (a CTA barrier on
    CUDA, as in Triton; nothing to do on the CPU and in the interpreter, where one
    thread runs a program).  Needed where a program stores a tile and then reads or
    overwrites some of its elements from another lane, e.g. a scalar store to an
    element the tile store wrote."""
    st.debug_barrier()
    return None


# ---------------------------------------------------------------------------
# iteration
# ---------------------------------------------------------------------------


def _range_args(arg1, arg2, step):
    if arg2 is None:
        return 0, arg1, 1 if step is None else step
    return arg1, arg2, 1 if step is None else step


class range:  # noqa: N801
    """``for i in tl.range(start, end, step)``: a loop with runtime bounds (scf.for).
    Extra Triton options (num_stages, loop_unroll_factor, ...) are accepted and ignored."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, disable_licm=False):
        self.start, self.end, self.step = (_unwrap(a) for a in _range_args(arg1, arg2, step))

    def __iter__(self):
        raise RuntimeError("tl.range can only be iterated inside a @tilejit.jit kernel")


class condition:  # noqa: N801
    """``while tl.condition(c, disable_licm=False):`` -- the loop condition ``c`` with
    Triton's extra loop attribute.  ``disable_licm`` (keep loop-invariant code in the
    loop) is an optimisation hint, accepted and ignored."""

    def __init__(self, arg1, disable_licm=False):
        self.condition = _unwrap(arg1)
        self.disable_licm = bool(_unwrap(disable_licm))


class static_range:  # noqa: N801
    """``for i in tl.static_range(start, end, step)``: unrolled at compile time; the
    bounds must be constexprs."""

    def __init__(self, arg1, arg2=None, step=None):
        start, end, step = (_unwrap(a) for a in _range_args(arg1, arg2, step))
        for name, v in (("start", start), ("end", end), ("step", step)):
            if isinstance(v, tensor) or not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"static_range {name} must be a tl.constexpr int, got {_describe(v)}")
        if step == 0:
            raise ValueError("static_range step must not be zero")
        self.start, self.end, self.step = start, end, step

    def __iter__(self):
        return iter(_py.range(self.start, self.end, self.step))


def _describe(v):
    return f"a runtime tensor of type {v.type}" if isinstance(v, tensor) else repr(v)


# ---------------------------------------------------------------------------
# compile-time and debugging
# ---------------------------------------------------------------------------


@builtin
def static_assert(cond, msg=""):
    """Fail compilation when the constexpr ``cond`` is false."""
    if isinstance(cond, tensor):
        raise TypeError("static_assert needs a tl.constexpr condition, got a runtime tensor; "
                        "use tl.device_assert")
    if not cond:
        raise AssertionError(f"static_assert failed: {msg}" if msg else "static_assert failed")


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    """Print compile-time values while the kernel is compiled."""
    _py.print(*values, sep=sep, end=end, file=file, flush=flush)


@builtin
def device_assert(cond, msg="", mask=None):
    """At run time, fail with ``msg`` where ``cond`` is false (for lanes where ``mask`` holds)."""
    st.device_assert(cond, msg, mask)


@builtin
def device_print(prefix, *args, hex=False):
    """At run time, print ``prefix`` and the values of ``args`` (every program prints)."""
    st.device_print(prefix, args, hex)


@builtin
def _log2(i):
    """floor(log2(i)) of a constexpr int (0 for i <= 1), as a constexpr: Triton's helper
    behind its bitonic sort, which Inductor's ``triton_helpers`` imports."""
    n, log2 = int(i), 0
    while n > 1:
        n >>= 1
        log2 += 1
    return constexpr(log2)
