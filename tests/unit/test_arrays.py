"""Array descriptions: addresses, extents, dtypes for numpy, array-interface objects, torch."""
import numpy as np
import pytest

from tilejit.runtime import arrays


def test_contiguous_numpy():
    a = np.zeros((3, 5), np.float64)
    info = arrays.describe(a)
    assert info.dtype.name == "fp64" and info.address == a.ctypes.data
    assert (info.lo, info.nbytes, info.itemsize, info.device) == (a.ctypes.data, 120, 8, "cpu")


@pytest.mark.parametrize("view", [lambda a: a[::-1], lambda a: a[:, ::2], lambda a: a.T,
                                  lambda a: a[2:5, 1:3], lambda a: a[::-2, ::-3]])
def test_strided_numpy_extent_covers_exactly_the_elements(view):
    base = np.arange(8 * 7, dtype=np.int32).reshape(8, 7)
    v = view(base)
    info = arrays.describe(v)
    assert info.address == v.__array_interface__["data"][0]     # element 0, as Triton passes it
    byte_offsets = [v.__array_interface__["data"][0] - base.ctypes.data
                    + sum(i * s for i, s in zip(idx, v.strides)) for idx in np.ndindex(v.shape)]
    assert info.lo - base.ctypes.data == min(byte_offsets)
    assert info.nbytes == max(byte_offsets) - min(byte_offsets) + 4


def test_read_only_and_empty_arrays():
    a = np.arange(4, dtype=np.int16)
    a.flags.writeable = False
    assert arrays.describe(a).address == a.ctypes.data
    e = np.zeros(0, np.float32)
    assert arrays.describe(e).nbytes == 0


class Iface:
    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


def test_array_interface_objects():
    a = np.arange(12, dtype=np.uint8).reshape(3, 4)[:, 1:]
    info = arrays.describe(Iface(a))
    assert info.dtype.name == "uint8" and info.address == a.__array_interface__["data"][0]
    assert info.nbytes == 2 * 4 + 3
    assert arrays.describe(3) is None and arrays.describe("x") is None


def test_unsupported_dtype():
    with pytest.raises(TypeError, match="unsupported array dtype"):
        arrays.describe(np.zeros(2, np.complex64))


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    t = torch.arange(20, dtype=torch.float32).reshape(4, 5)
    info = arrays.describe(t[:, 1:])
    assert info.dtype.name == "fp32" and info.address == t.data_ptr() + 4
    assert info.nbytes == (3 * 5 + 3) * 4 + 4      # last element at offset 18
    assert arrays.describe(torch.zeros(3, dtype=torch.bfloat16)).dtype.name == "bf16"
    assert arrays.describe(torch.zeros(3, dtype=torch.bool)).dtype.name == "int1"
