"""Reductions and scans with arbitrary combine functions, composed from existing ops.

* ``reduce_tree``: a pairwise tree along the axis (reshape to ``(n/2, 2)``, split,
  combine) — ``log2(n)`` applications of the combine function, O(n) work, exact
  data movement (split is an xor reduction over the bit patterns).
* ``scan``: recursive pairing along the axis — the exclusive scan of the sums of
  pairs ``(2k, 2k+1)`` gives the exclusive scan of the elements (Blelloch's
  down-sweep, the edge lane masked instead of an identity element), then each
  output is its exclusive prefix combined with its element.  O(n) work, O(log n)
  ops.  ``reverse`` runs the same recursion mirrored, without flips (flips and
  shifts built of splits made the IR so large that LLVM took minutes at n = 1024).
* ``histogram`` and ``gather``: one op each (``tt.histogram``, ``tt.gather``).

Combine functions here are Python callables ``combine(a: tuple, b: tuple) -> tuple``;
the frontend wraps a user ``@jit`` function into one.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.types import int1, int32
from . import core, nonpow2
from . import semantic as sem
from . import semantic_tile as st
from .core import builtin, tensor


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _check_inputs(inputs, what):
    inputs = tuple(sem.to_tensor(x) for x in inputs)
    if not inputs:
        raise ValueError(f"{what} needs at least one input")
    shape = inputs[0].shape
    for x in inputs:
        if x.shape != shape:
            raise ValueError(f"{what}: all inputs must have the same shape, got {[list(i.shape) for i in inputs]}")
        if x.dtype.is_ptr():
            raise TypeError(f"{what} of a tile of pointers is not supported")
    return inputs


def _apply(combine, a, b, like):
    """``combine(a, b)`` with each result cast/broadcast to the matching input's type."""
    out = _as_tuple(combine(a, b))
    if len(out) != len(like):
        raise ValueError(f"the combine function returned {len(out)} values for {len(like)} inputs")
    fixed = []
    for r, ref in zip(out, like):
        r = sem.to_tensor(r)
        if r.dtype != ref.dtype:
            r = sem.cast(r, ref.dtype)
        if r.shape != ref.shape:
            r = st.broadcast_impl_shape(r, ref.shape)
        fixed.append(r)
    return tuple(fixed)


def _split_last(x):
    if x.dtype.is_bool():
        lo, hi = st.split(sem.cast(x, int32))
        return sem.cast(lo, int1), sem.cast(hi, int1)
    return st.split(x)


def _to_scalar(x):
    """The one element of a shape-(1,) tile as a scalar (an exact xor reduction)."""
    from ..ir import ops
    if x.dtype.is_bool():
        return sem.cast(_to_scalar(sem.cast(x, int32)), int1)
    ity = st._int_of(x.dtype)
    bits = x if x.dtype == ity else sem.bitcast(x, ity)
    r = sem._emit(ops.ReduceOp, src=bits.handle, kind="xor_sum", axis=0)
    return r if x.dtype == ity else sem.bitcast(r, x.dtype)


def _norm_axis(axis, rank, what):
    axis = core._unwrap(axis)
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
        raise ValueError(f"invalid {what} axis {axis!r} for a tensor of rank {rank}")
    return axis % rank


def reduce_flattened(inputs, reduce_axis0, keep_dims):
    """A reduction over every axis of the tuple ``inputs`` (rank >= 1): ``reduce_axis0`` of
    their row-major flattening, reshaped to all-ones dims when ``keep_dims``."""
    rank = len(inputs[0].shape)
    out = reduce_axis0(tuple(st.reshape(x, (x.numel,)) for x in inputs))
    return tuple(st.reshape(o, (1,) * rank) for o in out) if keep_dims else out


def reduce_tree(inputs, axis, combine, keep_dims=False):
    """Reduce the tuple ``inputs`` along ``axis`` (None: all) with ``combine``; returns a tuple."""
    inputs = _check_inputs(inputs, "reduce")
    rank = len(inputs[0].shape)
    if rank == 0:
        return inputs
    if axis is None:
        return reduce_flattened(inputs, lambda flat: reduce_tree(flat, 0, combine), keep_dims)
    axis = _norm_axis(axis, rank, "reduction")
    perm = tuple(d for d in range(rank) if d != axis) + (axis,)
    xs = tuple(st.permute(x, perm) for x in inputs)
    lead = xs[0].shape[:-1]
    n = count = xs[0].shape[-1]
    if n & (n - 1):          # not a power of two: padded; padding never reaches a result
        n = nonpow2.next_pow2(n)
        xs = tuple(nonpow2.pad_last(x, n) for x in xs)
    while n > 1:
        pairs = [_split_last(st.reshape(x, lead + (n // 2, 2))) for x in xs]
        los, his = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        xs = _apply(combine, los, his, los)
        real = nonpow2.hi_valid(los[0].shape, count)
        if real is not None:
            xs = tuple(st.where(real, c, lo) for c, lo in zip(xs, los))
        n //= 2
        count = (count + 1) // 2
    out = tuple(st.reshape(x, lead) if lead else _to_scalar(x) for x in xs)
    if keep_dims:
        out = tuple(st.expand_dims(o, axis) for o in out)
    return out


_EXTREMUM = {"gt": "max", "ge": "max", "lt": "min", "le": "min"}
_FLIP = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}


def extremum_kind(r, a, b):
    """The reduction computed by a combine function whose result is ``r`` for the scalar
    arguments ``a``, ``b`` (IR values), when it is a compare-and-select extremum:
    ``where(a > b, a, b)`` on integers is ``"max"`` (``<``: ``"min"``); on floats
    ``where((a > b) | (a != a), a, b)`` is the NaN-propagating ``"nanmax"``
    (``"nanmin"``), as TorchInductor's ``triton_helpers.maximum``/``minimum`` write it.
    Either argument may be the one selected when the compare holds.  None otherwise."""
    from ..ir import ops
    op = getattr(r, "op", None)
    if not isinstance(op, ops.SelectOp) or {id(op.true_value), id(op.false_value)} != {id(a), id(b)}:
        return None
    x, y = op.true_value, op.false_value
    floating = x.type.element.kind == "float"
    cond, nan_test = op.cond.op, False
    if isinstance(cond, ops.OrOp):
        parts = [cond.lhs.op, cond.rhs.op]
        nans = [p for p in parts if isinstance(p, ops.CmpOp) and p.pred == "ne" and p.lhs is x and p.rhs is x]
        if len(nans) != 1:
            return None
        cond, nan_test = parts[1 - parts.index(nans[0])], True
    if not isinstance(cond, ops.CmpOp) or cond.pred not in _EXTREMUM or nan_test != floating:
        return None
    if cond.lhs is x and cond.rhs is y:
        kind = _EXTREMUM[cond.pred]
    elif cond.lhs is y and cond.rhs is x:
        kind = _EXTREMUM[_FLIP[cond.pred]]
    else:
        return None
    return "nan" + kind if floating else kind


def nan_extremum(input, axis, kind, keep_dims=False):
    """``kind`` ("nanmax"/"nanmin") of ``input`` along ``axis``: NaN where the reduced
    elements hold a NaN, else their max (min): a ``tt.reduce`` max (min), which skips
    NaN and vectorizes, and a max over ``x != x``.  The sign of a zero result among
    equal zeros is unspecified, as for ``tl.max``."""
    m = st.reduce(input, axis, kind[3:], keep_dims)
    has_nan = st.reduce(sem.compare(input, input, "ne"), axis, "max", keep_dims)
    return st.where(has_nan, sem.scalar_constant(float("nan"), input.dtype), m)


def scan(inputs, axis, combine, reverse=False):
    """Inclusive scan of the tuple ``inputs`` along ``axis`` with ``combine``; returns a tuple."""
    inputs = _check_inputs(inputs, "associative_scan")
    rank = len(inputs[0].shape)
    if rank == 0:
        raise ValueError("associative_scan needs a tile")
    axis = _norm_axis(axis, rank, "scan")
    n = inputs[0].shape[axis]
    if reverse and n & (n - 1):     # not a power of two: padding must not precede real lanes
        flipped = tuple(st.flip(x, axis) for x in inputs)
        return tuple(st.flip(o, axis) for o in scan(flipped, axis, combine, False))
    if n == 1:
        return inputs
    perm = tuple(d for d in range(rank) if d != axis) + (axis,)
    inv = tuple(perm.index(d) for d in range(rank))
    xs = tuple(st.permute(x, perm) for x in inputs)
    if n & (n - 1):    # not a power of two: padded at the end
        out = nonpow2.scan_padded(xs, xs[0].shape[:-1], lambda p, lead: _scan_last(p, combine, lead))
    else:
        out = _scan_last(xs, combine, xs[0].shape[:-1], reverse)
    return tuple(st.permute(o, inv) for o in out)


def _pairs(xs, lead):
    """Elements 2k and 2k+1 of the last dim of each tile: (evens, odds)."""
    n = xs[0].shape[-1]
    parts = [_split_last(st.reshape(x, lead + (n // 2, 2))) for x in xs]
    return tuple(p[0] for p in parts), tuple(p[1] for p in parts)


def _interleave(evens, odds):
    return tuple(st.interleave(e, o) for e, o in zip(evens, odds))


def _scan_last(xs, combine, lead, reverse=False):
    """Inclusive scan along the last dim: each output is the exclusive prefix combined
    with its element (the first lane, or the last when ``reverse``, is its element).
    A reverse scan combines from the end (``out[k] = x[n-1] + ... + x[k]``, Triton's
    flip-scan-flip) without flipping."""
    if xs[0].shape[-1] == 1:
        return xs
    ex = _exclusive_last(xs, combine, lead, reverse)
    edge = _edge_lane(xs[0].shape, lead, reverse)
    out = _apply(combine, ex, xs, xs)
    return tuple(st.where(edge, x, o) for x, o in zip(xs, out))


def _edge_lane(shape, lead, reverse):
    """int1 tile: the lane has no predecessor (index 0, or the last when ``reverse``)."""
    return sem.compare(st._axis_index(shape, len(lead)), shape[-1] - 1 if reverse else 0, "eq")


def _exclusive_last(xs, combine, lead, reverse):
    """Exclusive scan along the last dim (the edge lane's value unspecified), from the
    exclusive scan of the pair sums (Blelloch's down-sweep, no identity needed):
    ex[2k] = E[k], ex[2k+1] = E[k] + x[2k] (x[0] for k = 0); mirrored when ``reverse``.
    O(n) work and O(log n) ops."""
    if xs[0].shape[-1] == 1:
        return xs
    los, his = _pairs(xs, lead)
    if reverse:
        e = _exclusive_last(_apply(combine, his, los, los), combine, lead, True)
        edge = _edge_lane(los[0].shape, lead, True)
        ev = tuple(st.where(edge, h, c) for h, c in zip(his, _apply(combine, e, his, his)))
        return _interleave(ev, e)
    e = _exclusive_last(_apply(combine, los, his, los), combine, lead, False)
    edge = _edge_lane(los[0].shape, lead, False)
    od = tuple(st.where(edge, lo, c) for lo, c in zip(los, _apply(combine, e, los, los)))
    return _interleave(e, od)


def _scan_dtype(x):
    dt = st.sum_dtype(x.dtype)
    x = sem.cast(x, dt) if dt is not None else x
    return sem.cast(x, int32) if x.dtype.is_bool() else x


@core.tensor_member
@builtin
def cumprod(input, axis=0, reverse=False):
    """Inclusive prefix product along ``axis`` (narrow ints accumulate in 32 bits)."""
    x = _scan_dtype(sem.to_tensor(input))
    return scan((x,), axis, lambda a, b: (sem.mul(a[0], b[0]),), reverse)[0]


@core.tensor_member
@builtin
def associative_scan(input, axis, combine_fn, reverse=False):
    """Inclusive scan of ``input`` (a tensor or a tuple of tensors of one shape) along
    ``axis`` with ``combine_fn``, a ``@jit`` function taking two sets of values and
    returning one (it must be associative).  ``reverse`` scans from the end."""
    raise RuntimeError("tl.associative_scan is compiled by the frontend and cannot be called here")


@core.tensor_member
@builtin
def histogram(input, num_bins, mask=None):
    """int32 counts of the values ``0 .. num_bins-1`` in the 1-d integer tile ``input``
    (other values, and lanes where ``mask`` is false, are not counted)."""
    x = sem.to_tensor(input)
    if len(x.shape) != 1 or not x.dtype.is_int():
        raise TypeError(f"histogram needs a 1-d integer tile, got {x.type}")
    num_bins = core._unwrap(num_bins)
    st.validate_block_shape((num_bins,), "num_bins")
    m = None
    if mask is not None:
        m = sem.to_tensor(mask)
        m = st.broadcast_impl_shape(m if m.dtype.is_bool() else sem.cast(m, int1), x.shape)
    return sem._emit(ops.HistogramOp, src=x.handle, mask=None if m is None else m.handle, num_bins=num_bins)


@core.tensor_member
@builtin
def gather(src, index, axis):
    """``out[..., i, ...] = src[..., index[..., i, ...], ...]`` along ``axis``; ``index``
    (integers) has ``src``'s shape except along ``axis``.  Bit-exact; out-of-range
    indices give 0."""
    src, index = sem.to_tensor(src), sem.to_tensor(index)
    rank = len(src.shape)
    if rank == 0 or len(index.shape) != rank:
        raise ValueError(f"gather needs src and index of the same rank, got {list(src.shape)} and "
                         f"{list(index.shape)}")
    axis = _norm_axis(axis, rank, "gather")
    if any(a != b for d, (a, b) in enumerate(zip(src.shape, index.shape)) if d != axis):
        raise ValueError(f"gather: index shape {list(index.shape)} must match src shape {list(src.shape)} "
                         f"except along axis {axis}")
    if not index.dtype.is_int():
        raise TypeError(f"gather index must be integers, got {index.dtype}")
    if src.dtype.is_ptr():
        raise TypeError("gather of a tile of pointers is not supported")
    return sem._emit(ops.GatherOp, src=src.handle, index=index.handle, axis=axis)


__all__ = ["reduce_tree", "scan", "cumprod", "associative_scan", "histogram", "gather"]
