"""A tiny numpy-backed stand-in for the part of ``torch`` small reproducers use.

``import tilejit.compat.nptorch as torch`` runs such a script without torch: tensors
are :class:`Tensor`, an ``np.ndarray`` subclass with the torch methods these scripts
call (``fill_``, ``zero_``, ``scatter_``, ``amax``, ``data_ptr``, ``copy_``, ``clone``);
``device`` arguments are accepted and ignored (memory is host memory).
"""
from __future__ import annotations

import types

import numpy as np

float16, float32, float64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, bool_ = np.dtype(np.uint8), np.dtype(np.bool_)
bool = bool_  # noqa: A001 - torch.bool
float, half, long, int = float32, float16, int64, int32  # noqa: A001
ops = types.SimpleNamespace(aten=types.SimpleNamespace())


class Tensor(np.ndarray):
    """A numpy array with torch-style in-place methods."""

    def fill_(self, value):
        self[...] = value
        return self

    def zero_(self):
        return self.fill_(0)

    def copy_(self, src):
        self[...] = np.asarray(src)
        return self

    def clone(self):
        return np.array(self, copy=True).view(Tensor)

    def scatter_(self, dim, index, src):
        np.put_along_axis(self, np.asarray(index), np.asarray(src), axis=dim)
        return self

    def amax(self, dim=None, keepdim=False):
        return _wrap(np.max(np.asarray(self), axis=dim, keepdims=keepdim))

    def sum(self, dim=None, keepdim=False, **kw):
        return _wrap(np.sum(np.asarray(self), axis=kw.get("axis", dim), keepdims=keepdim))

    def data_ptr(self):
        return self.ctypes.data

    def numel(self):
        return self.size

    def stride(self, dim=None):
        s = tuple(b // self.itemsize for b in self.strides)
        return s if dim is None else s[dim]

    def size(self, dim=None):  # noqa: A003 - torch's name
        return self.shape if dim is None else self.shape[dim]

    def cpu(self):
        return self

    def numpy(self):
        return np.asarray(self)

    def __repr__(self):
        a = np.asarray(self)
        body = np.array2string(a, separator=", ") if a.ndim else repr(a.item())
        return f"tensor({body})"

    __str__ = __repr__


def _wrap(a):
    return np.asarray(a).view(Tensor)


def device(spec=None, index=None):
    return spec


def manual_seed(seed):
    np.random.seed(seed)


def _dt(dtype):
    return np.dtype(dtype) if dtype is not None else float32


def zeros(*size, dtype=None, device=None):
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return _wrap(np.zeros(size, _dt(dtype)))


def empty(*size, dtype=None, device=None):
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return _wrap(np.empty(size, _dt(dtype)))


def arange(start, end=None, step=1, dtype=None, device=None):
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, (np.integer, type(1))) for v in (start, end, step))
        dtype = int64 if is_int else float32
    return _wrap(np.arange(start, end, step).astype(dtype))


def tensor(data, dtype=None, device=None):
    return _wrap(np.array(data, dtype=dtype))


def as_strided(t, size, stride, storage_offset=0):
    base = np.asarray(t).reshape(-1)[storage_offset:]
    strides = tuple(s * base.itemsize for s in stride)
    return np.lib.stride_tricks.as_strided(base, shape=tuple(size), strides=strides).view(Tensor)


def empty_strided(size, stride, dtype=None, device=None):
    needed = sum((s - 1) * st for s, st in zip(size, stride)) + 1 if all(size) else 0
    return as_strided(np.zeros(max(needed, 1), _dt(dtype)), size, stride)


def rand_strided(size, stride, dtype=None, device=None, extra_size=0):
    dt = _dt(dtype)
    t = empty_strided(size, stride, dtype=dt)
    base = np.asarray(t)
    if dt.kind == "f":
        base[...] = np.random.standard_normal(t.shape)
    return t
