"""Dimensions that are not powers of two (a tilejit extension: Triton rejects them).

A tile has exactly the shape written: ``tl.arange(0, 10)`` has 10 lanes.  Most ops
take such shapes directly: elementwise ops, loads/stores, atomics, ``tt.reduce``
(sum/max/min/argmax/argmin/xor_sum), ``tt.dot``, reshape/trans/broadcast/expand_dims,
``cumsum``, ``histogram``, ``gather``, ``join``/``cat``/``interleave``.  The
backends pad internally where their layouts want powers of two (the CUDA blocked
layout wraps a tile onto ``threads * vector`` slots and only the first copy of an
element is *owned*: stores, atomics and reductions use owned slots only).

The compositions that halve a dimension (``flip``, ``sort``, ``associative_scan`` /
``cumprod`` and reductions with a user combine function) run here on the axis padded
to the next power of two, then drop the padding:

* ``take_last(x, idx)``: ``out[..., j] = x[..., idx[j]]`` by a one-hot select and an
  exact xor reduction of the bit patterns (O(len(idx) * n) work);
* ``pad_last(x, p)``: ``x`` extended to ``p`` elements by repeating its last one;
* the padded lanes never reach a result: a scan keeps its first ``n`` outputs (an
  inclusive scan's output ``j`` depends on inputs ``0..j`` only), a user reduction
  keeps the low element of a pair whose high element is padding, a sort pads with
  the value that sorts last (the type's maximum, or minimum when descending) and
  keeps the first ``n``, a flip is a direct permutation.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.types import int1, int8, int32
from . import semantic as sem
from . import semantic_tile as st


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _const(value, shape, dtype=int32):
    return sem.scalar_constant(value, dtype, shape)


def take_last(x, idx):
    """``out[..., j] = x[..., idx[j]]`` along the last dimension (``idx``: a 1-d int32
    tile with values in ``[0, n)``), bit-exact for every value."""
    if x.dtype.is_bool():
        return sem.cast(take_last(sem.cast(x, int8), idx), int1)
    lead, n, m = x.shape[:-1], x.shape[-1], idx.shape[0]
    r = len(lead)
    ity = st._int_of(x.dtype)
    bits = x if x.dtype == ity else sem.bitcast(x, ity)
    shape3 = lead + (m, n)
    wide = st.broadcast_impl_shape(st.expand_dims(bits, r), shape3)       # [..., j, k] = x[..., k]
    i3 = idx
    for _ in range(r):
        i3 = st.expand_dims(i3, 0)
    i3 = st.broadcast_impl_shape(st.expand_dims(i3, r + 1), shape3)       # [..., j, k] = idx[j]
    hit = sem.compare(i3, st._axis_index(shape3, r + 1), "eq")
    part = st.where(hit, wide, _const(0, shape3, ity))
    red = sem._emit(ops.ReduceOp, src=part.handle, kind="xor_sum", axis=r + 1)
    return red if x.dtype == ity else sem.bitcast(red, x.dtype)


def pad_last(x, p):
    """``x`` extended along its last dimension to ``p`` elements (the last element repeated)."""
    n = x.shape[-1]
    idx = sem._emit(ops.MinOp, lhs=st.arange(0, p).handle, rhs=_const(n - 1, (p,)).handle)
    return take_last(x, idx)


def first_last(x, n):
    """The first ``n`` elements of ``x`` along its last dimension."""
    return x if x.shape[-1] == n else take_last(x, st.arange(0, n))


def lane_below(shape, n):
    """int1 tile of ``shape``: the index along the last dimension is ``< n``."""
    return sem.compare(st._axis_index(shape, len(shape) - 1), _const(n, shape), "lt")


def flip_last(x):
    """``x`` reversed along its last dimension (any length)."""
    n = x.shape[-1]
    idx = sem._emit(ops.SubOp, lhs=_const(n - 1, (n,)).handle, rhs=st.arange(0, n).handle)
    return take_last(x, idx)


def _sorts_last(dtype, descending):
    """The value of ``dtype`` that no other value sorts after."""
    from ..ir.types import int_range
    if dtype.is_floating():
        return float("-inf") if descending else float("inf")
    lo, hi = int_range(dtype)
    return lo if descending else hi


def sort_padded(x, descending, sort_pow2):
    """``sort_pow2`` (a bitonic sort of a power-of-two last dimension) applied to ``x``
    padded with the value that sorts last; the first ``n`` outputs are ``x`` sorted."""
    if x.dtype.is_bool():
        return sem.cast(sort_padded(sem.cast(x, int8), descending, sort_pow2), int1)
    n = x.shape[-1]
    y = pad_last(x, next_pow2(n))
    y = st.where(lane_below(y.shape, n), y, _const(_sorts_last(x.dtype, descending), y.shape, x.dtype))
    return first_last(sort_pow2(y), n)


def scan_padded(xs, lead, scan_pow2):
    """An inclusive scan of the tuple ``xs`` along the last dimension through
    ``scan_pow2`` on the padded tiles; padding only follows the real lanes."""
    n = xs[0].shape[-1]
    padded = tuple(pad_last(x, next_pow2(n)) for x in xs)
    return tuple(first_last(o, n) for o in scan_pow2(padded, lead))


def hi_valid(shape, count):
    """For pairs ``(2k, 2k+1)`` of a dimension holding ``count`` real lanes first: the
    high element of pair ``k`` is real (int1 tile of the pairs' ``shape``), or None
    when every pair is complete."""
    half = shape[-1]
    if count >= 2 * half:
        return None
    return lane_below(shape, count // 2)
