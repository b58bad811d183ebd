"""Block pointers (``tl.make_block_ptr``, ``tl.advance``) and tensor descriptors
(``tl.make_tensor_descriptor``), desugared into pointer tiles and masks.

A block pointer is a compile-time aggregate of runtime scalars (base pointer,
shape, strides, offsets) plus the static block shape and order; it flows through
``if``/loops like a tuple of its scalars.  ``tl.load(bp, boundary_check=(0, 1),
padding_option="zero")`` becomes a ``tt.load`` of ``base + sum_d (offset_d +
arange(block_d)) * stride_d`` (int64 offsets) masked by ``0 <= index_d < shape_d``
for the checked dims; no new IR ops are involved.
"""
from __future__ import annotations

from ..ir.types import int1, int64
from . import core
from . import semantic as sem
from . import semantic_tile as st
from .core import builtin, tensor

_PADDING = ("", None, "zero", "nan")


def _scalar_int(x, what):
    x = core._unwrap(x)
    if isinstance(x, tensor):
        if x.shape or not x.dtype.is_int():
            raise TypeError(f"{what} must be integer scalars, got {x.type}")
        return x
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{what} must be integers, got {x!r}")
    return x


def _ints(values, what, rank=None):
    values = core._unwrap(values)
    if not isinstance(values, (list, tuple)):
        values = [values]
    out = tuple(_scalar_int(v, what) for v in values)
    if rank is not None and len(out) != rank:
        raise ValueError(f"expected {rank} {what}, got {len(out)}")
    return out


def _add(a, b):
    if not isinstance(a, tensor) and not isinstance(b, tensor):
        return a + b
    return sem.add(a, b)


class block_ptr:  # noqa: N801  (Triton's spelling of the type name)
    """A pointer to a block of a strided tensor (see module docstring)."""

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides, self.offsets = base, shape, strides, offsets
        self.block_shape, self.order = tuple(block_shape), tuple(order)

    # frontend aggregate protocol (tilejit.frontend.astutil.flatten)
    def _tj_flatten(self):
        r = len(self.block_shape)
        return (self.block_shape, self.order, r), (self.base,) + self.shape + self.strides + self.offsets

    @classmethod
    def _tj_unflatten(cls, key, children):
        block_shape, order, r = key
        base, rest = children[0], children[1:]
        return cls(base, rest[:r], rest[r:2 * r], rest[2 * r:], block_shape, order)

    @property
    def dtype(self):
        return self.base.dtype

    def __repr__(self):
        return f"block_ptr<{self.base.dtype}, block {list(self.block_shape)}>"


def make_block_ptr_impl(base, shape, strides, offsets, block_shape, order):
    base = core._unwrap(base)
    if not isinstance(base, tensor) or base.shape or not base.dtype.is_ptr():
        raise TypeError("make_block_ptr's base must be a scalar pointer")
    block_shape = st.validate_block_shape(core._unwrap(block_shape), "block_shape")
    r = len(block_shape)
    shape, strides = _ints(shape, "shape", r), _ints(strides, "strides", r)
    offsets = _ints(offsets, "offsets", r)
    order = tuple(core._unwrap(o) for o in core._unwrap(order)) if order is not None else tuple(range(r))
    if sorted(order) != list(range(r)):
        raise ValueError(f"order must be a permutation of 0..{r - 1}, got {list(order)}")
    return block_ptr(base, shape, strides, offsets, block_shape, order)


def _to64(x, shape=None):
    t = sem.to_tensor(x) if not isinstance(x, tensor) else x
    t = sem.cast(t, int64) if t.dtype != int64 else t
    return t


def _dim_index(offset, n, d, rank):
    """int64 tile shaped for broadcasting along dim ``d``: offset + arange(n)."""
    idx = sem.add(_to64(offset), sem.cast(st.arange(0, n), int64))
    for _ in range(d):
        idx = st.expand_dims(idx, 0)
    for _ in range(rank - d - 1):
        idx = st.expand_dims(idx, len(idx.shape))
    return idx


def block_pointers_and_mask(bp, boundary_check):
    """(pointer tile, mask or None) addressed by ``bp`` with ``boundary_check`` dims."""
    rank = len(bp.block_shape)
    check = sorted({int(core._unwrap(d)) % rank for d in (boundary_check or ())})
    ptrs, mask = bp.base, None
    for d in range(rank):
        idx = _dim_index(bp.offsets[d], bp.block_shape[d], d, rank)
        ptrs = sem.add(ptrs, sem.mul(idx, _to64(bp.strides[d])))
        if d in check:
            m = sem.logical_and(sem.compare(idx, 0, "ge"), sem.compare(idx, _to64(bp.shape[d]), "lt"))
            mask = m if mask is None else sem.logical_and(mask, m)
    ptrs = st.broadcast_impl_shape(ptrs, bp.block_shape)
    if mask is not None:
        mask = st.broadcast_impl_shape(mask, bp.block_shape)
    return ptrs, mask


def load_block(bp, boundary_check, padding_option, cache="", evict="", volatile=False):
    if padding_option not in _PADDING:
        raise ValueError(f"padding_option must be 'zero' or 'nan', got {padding_option!r}")
    ptrs, mask = block_pointers_and_mask(bp, boundary_check)
    other = None
    if mask is not None and padding_option == "nan":
        if not bp.dtype.element.is_floating():
            raise ValueError("padding_option='nan' needs a floating-point block pointer")
        other = float("nan")
    elif mask is not None:
        other = 0
    return st.load(ptrs, mask, other, cache, evict, volatile)


def store_block(bp, value, boundary_check, cache="", evict=""):
    ptrs, mask = block_pointers_and_mask(bp, boundary_check)
    value = sem.to_tensor(value)
    if value.shape and tuple(value.shape) != bp.block_shape:
        value = st.broadcast_impl_shape(value, bp.block_shape)
    return st.store(ptrs, value, mask, cache, evict)


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """A block pointer to the ``block_shape`` block at ``offsets`` of the tensor at ``base``
    with ``shape`` and ``strides`` (in elements).  Load and store it with ``tl.load`` /
    ``tl.store`` (``boundary_check`` dims are masked, ``padding_option`` fills them)."""
    return make_block_ptr_impl(base, shape, strides, offsets, block_shape, order)


@builtin
def advance(base, offsets):
    """The block pointer ``base`` moved by ``offsets`` (one per dimension)."""
    if not isinstance(base, block_ptr):
        raise TypeError("tl.advance needs a block pointer made by tl.make_block_ptr")
    offsets = _ints(offsets, "offsets", len(base.block_shape))
    return block_ptr(base.base, base.shape, base.strides,
                     tuple(_add(a, b) for a, b in zip(base.offsets, offsets)), base.block_shape, base.order)


class tensor_descriptor:  # noqa: N801
    """A tensor descriptor: ``tl.make_tensor_descriptor`` inside a kernel, or a host
    ``TensorDescriptor`` (``tilejit.tools.tensor_descriptor``) passed as an argument.
    ``desc.load(offsets)`` / ``desc.store(offsets, value)`` move ``block_shape`` blocks
    at element ``offsets``; out-of-bounds elements are masked (loads read zero, or NaN
    with ``padding_option="nan"``; stores skip them).  ``shape``, ``strides``,
    ``block_shape`` and ``dtype`` (the element type) are readable."""

    def __init__(self, base, shape, strides, block_shape, padding):
        self.base, self.shape, self.strides = base, tuple(shape), tuple(strides)
        self.block_shape, self.padding = tuple(block_shape), padding

    def _tj_flatten(self):
        r = len(self.block_shape)
        return (self.block_shape, self.padding, r), (self.base,) + self.shape + self.strides

    @classmethod
    def _tj_unflatten(cls, key, children):
        block_shape, padding, r = key
        return cls(children[0], children[1:1 + r], children[1 + r:], block_shape, padding)

    @property
    def dtype(self):
        return self.base.dtype.element

    @property
    def ndim(self):
        return len(self.block_shape)

    def __repr__(self):
        return f"tensor_descriptor<{self.dtype}, block {list(self.block_shape)}>"

    def _bp(self, offsets):
        r = len(self.block_shape)
        offsets = core._unwrap(offsets)
        if not isinstance(offsets, (list, tuple)) or len(offsets) != r:
            n = len(offsets) if isinstance(offsets, (list, tuple)) else 1
            raise ValueError(f"this tensor descriptor has rank {r}: expected {r} offsets, got {n}")
        offsets = _ints(offsets, "offsets", r)
        return block_ptr(self.base, self.shape, self.strides, offsets, self.block_shape,
                         tuple(range(r)))

    def _ptrs_mask(self, offsets):
        return block_pointers_and_mask(self._bp(offsets), range(len(self.block_shape)))

    @builtin
    def load(self, offsets):
        """The ``block_shape`` block at element ``offsets`` (one per dimension);
        out-of-bounds elements read zero (NaN with ``padding_option="nan"``)."""
        return load_block(self._bp(offsets), range(len(self.block_shape)), self.padding)

    @builtin
    def store(self, offsets, value):
        """Store ``value`` (a ``block_shape`` block, or broadcast to one) at element
        ``offsets``; out-of-bounds elements are not written."""
        return store_block(self._bp(offsets), value, range(len(self.block_shape)))

    def _rows(self, x_offsets, y_offset, what):
        """(pointers, mask) of rows ``x_offsets`` (a 1-d int tile), columns ``y_offset +
        arange(block_shape[1])`` of a 2-d descriptor whose block has one row."""
        if len(self.block_shape) != 2 or self.block_shape[0] != 1:
            raise ValueError(f"tensor_descriptor.{what} needs a 2-d descriptor with block_shape "
                             f"[1, n], got {list(self.block_shape)}")
        x = core._unwrap(x_offsets)
        if not isinstance(x, tensor) or len(x.shape) != 1 or not x.dtype.is_int():
            raise TypeError(f"tensor_descriptor.{what}'s row offsets must be a 1-d integer tensor")
        rows = st.expand_dims(_to64(x), 1)
        cols = _dim_index(_scalar_int(y_offset, "y_offset"), self.block_shape[1], 1, 2)
        ptrs = sem.add(sem.add(self.base, sem.mul(rows, _to64(self.strides[0]))),
                       sem.mul(cols, _to64(self.strides[1])))
        mask = sem.logical_and(
            sem.logical_and(sem.compare(rows, 0, "ge"), sem.compare(rows, _to64(self.shape[0]), "lt")),
            sem.logical_and(sem.compare(cols, 0, "ge"), sem.compare(cols, _to64(self.shape[1]), "lt")))
        shape = (x.shape[0], self.block_shape[1])
        return st.broadcast_impl_shape(ptrs, shape), st.broadcast_impl_shape(mask, shape)

    @builtin
    def gather(self, x_offsets, y_offset):
        """Rows ``x_offsets`` (1-d integer tensor) of a 2-d descriptor with block_shape
        ``[1, n]``, columns ``y_offset .. y_offset + n``: a ``[len(x_offsets), n]`` tile
        (out-of-bounds elements padded as by ``load``)."""
        ptrs, mask = self._rows(x_offsets, y_offset, "gather")
        other = float("nan") if self.padding == "nan" else 0
        return st.load(ptrs, mask, other)

    @builtin
    def scatter(self, value, x_offsets, y_offset):
        """Store ``value`` (``[len(x_offsets), n]``) into rows ``x_offsets``, columns
        ``y_offset .. y_offset + n`` of a 2-d descriptor with block_shape ``[1, n]``
        (out-of-bounds elements are not written)."""
        ptrs, mask = self._rows(x_offsets, y_offset, "scatter")
        value = sem.to_tensor(value)
        if tuple(value.shape) != tuple(ptrs.shape):
            value = st.broadcast_impl_shape(value, ptrs.shape)
        return st.store(ptrs, value, mask)

    def _atomic(self, kind, offsets, value):
        from .atomic import atomic_rmw, check_descriptor_kind
        check_descriptor_kind(kind, self.dtype)
        ptrs, mask = self._ptrs_mask(offsets)
        atomic_rmw(kind, ptrs, value, mask, None, None, f"tensor_descriptor.atomic_{kind}")

    @builtin
    def atomic_add(self, offsets, value):
        """Atomically add ``value`` to the block at ``offsets`` (in-bounds elements only)."""
        self._atomic("add", offsets, value)

    @builtin
    def atomic_min(self, offsets, value):
        """Atomic elementwise minimum into the block at ``offsets`` (in-bounds elements only)."""
        self._atomic("min", offsets, value)

    @builtin
    def atomic_max(self, offsets, value):
        """Atomic elementwise maximum into the block at ``offsets`` (in-bounds elements only)."""
        self._atomic("max", offsets, value)

    @builtin
    def atomic_and(self, offsets, value):
        """Atomic bitwise and into the block at ``offsets`` (in-bounds elements only)."""
        self._atomic("and", offsets, value)

    @builtin
    def atomic_or(self, offsets, value):
        """Atomic bitwise or into the block at ``offsets`` (in-bounds elements only)."""
        self._atomic("or", offsets, value)

    @builtin
    def atomic_xor(self, offsets, value):
        """Atomic bitwise xor into the block at ``offsets`` (in-bounds elements only)."""
        self._atomic("xor", offsets, value)


def _check_strides(strides):
    last = core._unwrap(strides[-1])
    if not isinstance(last, tensor) and last != 1:
        raise ValueError(f"a tensor descriptor's last stride must be 1 (contiguous last "
                         f"dimension), got {last}")


def make_descriptor_impl(base, shape, strides, block_shape, padding_option="zero"):
    base = core._unwrap(base)
    if not isinstance(base, tensor) or base.shape or not base.dtype.is_ptr():
        raise TypeError("make_tensor_descriptor's base must be a scalar pointer")
    block_shape = st.validate_block_shape(core._unwrap(block_shape), "block_shape")
    r = len(block_shape)
    padding_option = core._unwrap(padding_option)
    if padding_option not in ("zero", "nan"):
        raise ValueError(f"padding_option must be 'zero' or 'nan', got {padding_option!r}")
    if padding_option == "nan" and not base.dtype.element.is_floating():
        raise ValueError("padding_option='nan' needs a floating-point tensor")
    elem_bytes = base.dtype.element.bits // 8
    if block_shape[-1] * elem_bytes < 16:     # Triton's (TMA's) rule, kept on every target
        raise ValueError("Descriptor block shape must have at least 16 bytes in the last dimension, "
                         f"but got {block_shape[-1]} * {elem_bytes} = {block_shape[-1] * elem_bytes} bytes")
    shape, strides = _ints(shape, "shape", r), _ints(strides, "strides", r)
    _check_strides(strides)
    return tensor_descriptor(base, shape, strides, block_shape, padding_option)


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """A tensor descriptor for the tensor at ``base`` (a scalar pointer) with ``shape``
    and ``strides`` (in elements; the last stride must be 1) moving ``block_shape``
    blocks: ``desc.load(offsets)``, ``desc.store(offsets, value)``, ``desc.atomic_add(...)``.
    Out-of-bounds elements read zero (``padding_option="nan"``: NaN) and are not written."""
    return make_descriptor_impl(base, shape, strides, block_shape, padding_option)


@builtin
def load_tensor_descriptor(desc, offsets):
    """``desc.load(offsets)``: the block of tensor descriptor ``desc`` at ``offsets``."""
    if not isinstance(desc, tensor_descriptor):
        raise TypeError("tl.load_tensor_descriptor needs a tensor descriptor")
    return load_block(desc._bp(offsets), range(len(desc.block_shape)), desc.padding)


@builtin
def store_tensor_descriptor(desc, offsets, value):
    """``desc.store(offsets, value)``: store ``value`` into the block of ``desc`` at ``offsets``."""
    if not isinstance(desc, tensor_descriptor):
        raise TypeError("tl.store_tensor_descriptor needs a tensor descriptor")
    return store_block(desc._bp(offsets), value, range(len(desc.block_shape)))


class descriptor_arg:  # noqa: N801
    """How a host ``TensorDescriptor`` argument enters the IR: a base pointer argument,
    then one argument per shape entry and per stride (``<name>_base``, ``<name>_shape<d>``,
    ``<name>_stride<d>``), assembled into a :class:`tensor_descriptor`.  Built from the
    launcher's key (runtime/descriptors.py)."""

    def __init__(self, base_type, base_spec, index_keys, block_shape, padding):
        self.base_type, self.base_spec = base_type, base_spec
        self.index_keys, self.block_shape, self.padding = index_keys, tuple(block_shape), padding

    def build(self, name, add_argument):
        """``add_argument(name, type name, (divisibility, equal_to_1))`` -> tensor."""
        r = len(self.block_shape)
        spec = lambda s: (16 if s == 16 else 1, s == 1)   # noqa: E731
        base = add_argument(f"{name}_base", self.base_type, spec(self.base_spec))
        vals = [add_argument(f"{name}_{'shape' if i < r else 'stride'}{i % r}", t, spec(s))
                for i, (t, s) in enumerate(self.index_keys)]
        return tensor_descriptor(base, vals[:r], vals[r:], self.block_shape, self.padding)


__all__ = ["block_ptr", "make_block_ptr", "advance", "tensor_descriptor", "make_tensor_descriptor",
           "load_tensor_descriptor", "store_tensor_descriptor"]
