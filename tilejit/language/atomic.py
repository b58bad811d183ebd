"""Atomic memory operations: ``tl.atomic_add`` ... ``tl.atomic_xchg`` and ``tl.atomic_cas``.

Each returns the values found in memory before the update (the old values).  Lanes
where ``mask`` is false touch nothing (their result is unspecified).  ``sem``
(``"relaxed"``, ``"acquire"``, ``"release"``, ``"acq_rel"``; default ``"acq_rel"``) and
``scope`` (``"gpu"``, ``"cta"``, ``"sys"``; default ``"gpu"``) are accepted as in Triton.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.types import int1
from . import core
from .core import builtin, tensor
from .semantic import _emit, broadcast_impl_shape, broadcast_shapes, cast, to_tensor

_SEMS = {None: "acq_rel", "": "acq_rel", "relaxed": "relaxed", "acquire": "acquire",
         "release": "release", "acq_rel": "acq_rel"}
_SCOPES = {None: "gpu", "": "gpu", "gpu": "gpu", "cta": "cta", "sys": "sys"}


def _sem_scope(sem, scope):
    if sem not in _SEMS:
        raise ValueError(f"atomic sem must be one of relaxed, acquire, release, acq_rel; got {sem!r}")
    if scope not in _SCOPES:
        raise ValueError(f"atomic scope must be one of gpu, cta, sys; got {scope!r}")
    return _SEMS[sem], _SCOPES[scope]


def _pointer(ptr, what):
    ptr = core._unwrap(ptr)
    if not isinstance(ptr, tensor) or not ptr.dtype.is_ptr():
        raise TypeError(f"tl.{what} needs a pointer or a tile of pointers, got {ptr!r}")
    from .semantic_tile import check_writable
    check_writable(ptr)
    el = ptr.dtype.element
    if el.is_ptr() or el == int1:
        raise TypeError(f"tl.{what} does not support pointers to {el}")
    return ptr, el


def _check_kind(kind, el, what):
    """Triton's rules: 16-bit floats take only ``add`` (and min/max through a tensor
    descriptor); 16-bit ints and anything narrower (int8, fp8) have no
    read-modify-write atomics."""
    if kind in ("and", "or", "xor") and not el.is_int():
        raise TypeError(f"tl.{what} needs an integer pointee, got {el}")
    descriptor_minmax = what.startswith("tensor_descriptor.") and kind in ("max", "min")
    if el.is_floating() and el.bits == 16 and kind != "add" and not descriptor_minmax:
        raise ValueError(f"tl.{what} does not support {el}")
    if el.bits < 16 or (el.is_int() and el.bits == 16):
        raise ValueError(f"tl.{what} does not support {el} (atomic read-modify-write needs "
                         f"a 16-bit float or an element of 32 or 64 bits)")


# tensor_descriptor.atomic_*: the element types of Triton's lowering; fp16/bf16 min/max
# only where a TMA reduction exists (CUDA sm_90+): other targets reject them when they
# compile (tilejit.backends.reject_16bit_float_minmax), as Triton's fallback does
_DESCRIPTOR_KINDS = {"add": ("uint32", "int32", "uint64", "fp32", "fp16", "bf16"),
                     "min": ("uint32", "int32", "uint64", "int64", "fp16", "bf16"),
                     "max": ("uint32", "int32", "uint64", "int64", "fp16", "bf16"),
                     "and": ("uint32", "int32", "uint64", "int64"),
                     "or": ("uint32", "int32", "uint64", "int64"),
                     "xor": ("uint32", "int32", "uint64", "int64")}


def check_descriptor_kind(kind, el):
    """Reject a ``tensor_descriptor.atomic_<kind>`` on an element type Triton rejects."""
    if el.name not in _DESCRIPTOR_KINDS[kind]:
        raise ValueError(f"tensor_descriptor.atomic_{kind} does not support {el}; supported: "
                         f"{', '.join(_DESCRIPTOR_KINDS[kind])}")


def atomic_rmw(kind, ptr, val, mask, sem, scope, what):
    """Emit ``tt.atomic_rmw``: ``ptr``, ``val`` and ``mask`` broadcast to one shape."""
    ptr, el = _pointer(ptr, what)
    _check_kind(kind, el, what)
    sem, scope = _sem_scope(sem, scope)
    val = to_tensor(val)
    shape = broadcast_shapes(ptr.shape, val.shape)
    if mask is not None:
        mask = to_tensor(mask)
        shape = broadcast_shapes(shape, mask.shape)
        if not mask.dtype.is_bool():
            mask = cast(mask, int1)
        mask = broadcast_impl_shape(mask, shape)
    ptr = broadcast_impl_shape(ptr, shape)
    val = broadcast_impl_shape(cast(val, el), shape)
    return _emit(ops.AtomicRMWOp, ptr=ptr.handle, val=val.handle,
                 mask=mask.handle if mask is not None else None, kind=kind, sem=sem, scope=scope)


def _rmw_builtin(kind):
    def fn(pointer, val, mask=None, sem=None, scope=None):
        return atomic_rmw(kind, pointer, val, mask, sem, scope, f"atomic_{kind}")
    fn.__name__ = f"atomic_{kind}"
    fn.__qualname__ = fn.__name__
    what = {"add": "adds ``val``", "max": "stores the maximum of the old value and ``val``",
            "min": "stores the minimum of the old value and ``val``", "and": "ands in ``val``",
            "or": "ors in ``val``", "xor": "xors in ``val``", "xchg": "stores ``val``"}[kind]
    fn.__doc__ = (f"Atomically {what} at ``pointer`` (a pointer or tile of pointers) where "
                  "``mask`` holds; returns the old values.  ``sem``/``scope`` as in Triton.")
    return core.tensor_member(builtin(fn))


atomic_add = _rmw_builtin("add")
atomic_max = _rmw_builtin("max")
atomic_min = _rmw_builtin("min")
atomic_and = _rmw_builtin("and")
atomic_or = _rmw_builtin("or")
atomic_xor = _rmw_builtin("xor")
atomic_xchg = _rmw_builtin("xchg")


@core.tensor_member
@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Atomically, where the value at ``pointer`` equals ``cmp``, store ``val``; returns
    the old values (a lane's swap happened iff its result equals ``cmp``)."""
    ptr, el = _pointer(pointer, "atomic_cas")
    if el.bits not in (16, 32, 64):
        raise ValueError(f"tl.atomic_cas needs elements of 16, 32 or 64 bits, got {el}")
    sem, scope = _sem_scope(sem, scope)
    cmp, val = to_tensor(cmp), to_tensor(val)
    shape = broadcast_shapes(broadcast_shapes(ptr.shape, cmp.shape), val.shape)
    ptr = broadcast_impl_shape(ptr, shape)
    cmp = broadcast_impl_shape(cast(cmp, el), shape)
    val = broadcast_impl_shape(cast(val, el), shape)
    return _emit(ops.AtomicCASOp, ptr=ptr.handle, cmp=cmp.handle, val=val.handle, sem=sem, scope=scope)


__all__ = ["atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_xchg", "atomic_cas"]
