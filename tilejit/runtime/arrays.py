"""Array arguments: numpy arrays, torch tensors (imported lazily, only when the
argument's type comes from torch), and anything exposing ``__array_interface__``
or ``__cuda_array_interface__``.

``describe(obj)`` returns an :class:`ArrayInfo` (element dtype, base address,
the byte extent its elements span, device) or None when ``obj`` is not an array.
The base address is the address of element 0, as Triton passes it; strides are
the kernel's business.
"""
from __future__ import annotations

import ctypes
import numpy as np

from ..ir.types import DType, dtype_from_name, dtype_from_numpy

_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


class ArrayInfo:
    """dtype; address of element 0; lowest byte address any element touches (lo);
    extent in bytes from lo; itemsize; device ('cpu' or 'cuda')."""

    __slots__ = ("dtype", "address", "lo", "nbytes", "itemsize", "device")

    def __init__(self, dtype: DType, address: int, lo: int, nbytes: int, itemsize: int,
                 device: str = "cpu"):
        self.dtype = dtype
        self.address = address
        self.lo = lo
        self.nbytes = nbytes
        self.itemsize = itemsize
        self.device = device


_NP_DTYPES: dict = {}


def _np_dtype(dt) -> DType:
    got = _NP_DTYPES.get(dt)
    if got is None:
        got = _NP_DTYPES[dt] = dtype_from_numpy(dt)
    return got


def _extent(shape, strides, itemsize):
    """(min byte offset, extent in bytes) of the elements of a strided array."""
    if any(s == 0 for s in shape):
        return 0, 0
    lo = hi = 0
    for n, st in zip(shape, strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi - lo + itemsize


def numpy_address(a: np.ndarray) -> int:
    """Address of element 0 (fast path for contiguous writable arrays)."""
    try:
        return _addressof(_from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.__array_interface__["data"][0]


def describe_numpy(a: np.ndarray) -> ArrayInfo:
    dt = _np_dtype(a.dtype)
    isz = a.itemsize
    if a.flags.c_contiguous:
        addr = numpy_address(a)
        return ArrayInfo(dt, addr, addr, a.nbytes, isz)
    addr = a.__array_interface__["data"][0]
    lo, n = _extent(a.shape, a.strides, isz)
    return ArrayInfo(dt, addr, addr + lo, n, isz)


_TORCH_DTYPES = {"torch.bool": "int1", "torch.int8": "int8", "torch.int16": "int16",
                 "torch.int32": "int32", "torch.int64": "int64", "torch.uint8": "uint8",
                 "torch.uint16": "uint16", "torch.uint32": "uint32", "torch.uint64": "uint64",
                 "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32",
                 "torch.float64": "fp64", "torch.float8_e5m2": "fp8e5", "torch.float8_e4m3fn": "fp8e4nv",
                 "torch.float8_e4m3fnuz": "fp8e4b8", "torch.float8_e5m2fnuz": "fp8e5b16"}


def describe_torch(t) -> ArrayInfo:
    name = _TORCH_DTYPES.get(str(t.dtype))
    if name is None:
        raise TypeError(f"unsupported tensor dtype {t.dtype}")
    dt = dtype_from_name(name)
    isz = t.element_size()
    addr = t.data_ptr()
    lo, n = _extent(tuple(t.shape), tuple(s * isz for s in t.stride()), isz)
    device = "cuda" if t.device.type == "cuda" else "cpu"
    if device == "cpu" and t.device.type != "cpu":
        raise TypeError(f"unsupported tensor device {t.device}")
    return ArrayInfo(dt, addr, addr + lo, n, isz, device)


def describe_interface(obj, iface: dict, device: str) -> ArrayInfo:
    npdt = np.dtype(iface["typestr"])
    dt = _np_dtype(npdt)
    isz = npdt.itemsize
    addr = int(iface["data"][0])
    shape = tuple(iface["shape"])
    strides = iface.get("strides")
    if strides is None:
        strides, acc = [], isz
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= n
    lo, n = _extent(shape, tuple(strides), isz)
    return ArrayInfo(dt, addr, addr + lo, n, isz, device)


def is_torch_type(tp) -> bool:
    return tp.__module__.partition(".")[0] == "torch"


def is_torch(obj) -> bool:
    return is_torch_type(type(obj))


class TensorWrapper:
    """A tensor ``base`` whose memory a kernel reads as elements of ``dtype`` (a
    ``tl`` dtype of the same size): Triton's ``triton.TensorWrapper``, made by
    :func:`reinterpret` (e.g. an int8 torch tensor passed as ``tl.float8e4nv``)."""

    def __init__(self, base, dtype):
        self.dtype = dtype
        self.base = base
        self.data = getattr(base, "data", None)
        self.device = getattr(base, "device", "cpu")
        self.shape = base.shape

    def data_ptr(self):
        return self.base.data_ptr()

    def stride(self, *args):
        return self.base.stride(*args)

    def element_size(self):
        return self.base.element_size()

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"

    def cpu(self):
        return TensorWrapper(self.base.cpu(), self.dtype)

    def copy_(self, other):
        self.base.copy_(other.base)

    def clone(self):
        return TensorWrapper(self.base.clone(), self.dtype)

    def to(self, device):
        return TensorWrapper(self.base.to(device), self.dtype)

    def new_empty(self, sizes):
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)


def reinterpret(tensor, dtype):
    """View ``tensor``'s memory as ``dtype`` in kernels (Triton's ``triton.reinterpret``):
    a :class:`TensorWrapper`; reinterpreting a wrapper as its base's own dtype returns
    the base."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    if hasattr(tensor, "data_ptr") or hasattr(tensor, "__array_interface__"):
        return TensorWrapper(tensor, dtype)
    raise TypeError(f"cannot reinterpret a {type(tensor).__module__}."
                    f"{type(tensor).__qualname__} (expected a tensor or an array)")


def describe_wrapper(w: TensorWrapper) -> ArrayInfo:
    """The base's memory, its elements typed as the wrapper's dtype."""
    info = describe(w.base)
    if info is None:
        raise TypeError(f"TensorWrapper of an unsupported {type(w.base).__qualname__}")
    dt = w.dtype
    if not isinstance(dt, DType):
        name = _TORCH_DTYPES.get(str(dt))          # a torch dtype, as Triton accepts
        if name is None:
            raise TypeError(f"TensorWrapper dtype {dt!r} is not a tl or torch dtype")
        dt = dtype_from_name(name)
    if dt.itemsize != info.itemsize:
        raise TypeError(f"cannot reinterpret {info.itemsize}-byte elements as {dt.name} "
                        f"({dt.itemsize} bytes)")
    return ArrayInfo(dt, info.address, info.lo, info.nbytes, info.itemsize, info.device)


def describe(obj) -> ArrayInfo | None:
    """An :class:`ArrayInfo` for an array-like argument, else None."""
    if isinstance(obj, np.ndarray):
        return describe_numpy(obj)
    if isinstance(obj, TensorWrapper):
        return describe_wrapper(obj)
    if is_torch(obj) and hasattr(obj, "data_ptr"):
        return describe_torch(obj)
    iface = getattr(obj, "__cuda_array_interface__", None)
    if iface is not None:
        return describe_interface(obj, iface, "cuda")
    iface = getattr(obj, "__array_interface__", None)
    if iface is not None:
        return describe_interface(obj, iface, "cpu")
    return None
