"""Launch validation: every mistake at the launch site gets a message naming the
kernel and the argument (or the grid), never a crash or a wrong result.
(tests/e2e/test_launch_errors.py covers argument counts and basic grid types.)"""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import CompilationError
from tilejit.runtime.options import use_options

HOST_BACKENDS = ["interpreter", "cpu"]


@pytest.fixture(params=HOST_BACKENDS)
def host(request):
    with use_options(backend=request.param, interpret=request.param == "interpreter"):
        yield request.param


@tilejit.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tilejit.jit
def fill2d(y_ptr, R: tl.constexpr, C: tl.constexpr):
    t = tl.zeros((R, C), tl.float32) + 1.0
    tl.store(y_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], t)


@tilejit.jit
def flag_kernel(y_ptr, FLAG: tl.constexpr):
    if FLAG is True:
        tl.store(y_ptr, 1.0)
    else:
        tl.store(y_ptr, 2.0)


@tilejit.jit
def count_programs(y_ptr):
    tl.store(y_ptr + tl.program_id(0), 1)


def test_unsupported_argument_types(host):
    x = np.zeros(8, np.float32)
    for bad, tname in [("8", "builtins.str"), (object(), "builtins.object"),
                       ({"a": 1}, "builtins.dict")]:
        with pytest.raises(TypeError, match=f"copy: argument 'n' has unsupported type {tname}"):
            copy[(1,)](x, x, bad, BLOCK=8)
    with pytest.raises(TypeError, match="copy: argument 'n': tuple element 1 has unsupported "
                                        "type builtins.object"):
        copy[(1,)](x, x, (1, object()), BLOCK=8)
    with pytest.raises(TypeError, match="argument 'y_ptr': unsupported array dtype complex128"):
        copy[(1,)](x, np.zeros(8, np.complex128), 8, BLOCK=8)
    with pytest.raises(ValueError, match="argument 'n': integer .* does not fit in 64 bits"):
        copy[(1,)](x, x, 2**64, BLOCK=8)
    for big in (2**64, -2**63 - 1):         # Triton raises OverflowError (test_core.py)
        with pytest.raises(OverflowError, match="argument 'n': integer .* does not fit in 64 bits"):
            copy[(1,)](x, x, big, BLOCK=8)


def test_missing_and_misspelled_constexpr(host):
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"copy\(\) missing required argument 'BLOCK' \(a tl.constexpr\)"):
        copy[(1,)](x, x, 8)
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOK'"):
        copy[(1,)](x, x, 8, BLOK=8)


@pytest.mark.parametrize("value, message", [
    ("8", "cannot convert '8' of type str to tensor"),
    (8.0, "arange's arguments must be of type tl.constexpr"),
    (None, "cannot convert None of type NoneType to tensor"),
    (0, "end argument must be greater than the start"),
    (-4, "end argument must be greater than the start"),
    (2**21, "exceeds the maximum of 1048576"),
])
def test_bad_block_constexpr_is_a_located_compilation_error(host, value, message):
    x = np.zeros(8, np.float32)
    copy[(1,)](x, x, 8, BLOCK=8)                  # a good variant is cached first
    with pytest.raises(CompilationError) as ei:
        copy[(1,)](x, x, 8, BLOCK=value)
    e = ei.value
    assert isinstance(e, (TypeError, ValueError)) and message in str(e)
    assert e.kernel == "copy" and e.line == copy.first_line + 2
    assert "tl.arange(0, BLOCK)" in str(e)


@pytest.mark.parametrize("shape, message", [((3, 0), "must be positive"),
                                            ((1024, 2048), "exceeds the maximum")])
def test_block_shapes_the_backends_cannot_handle(host, shape, message):
    y = np.zeros(16, np.float32)
    with pytest.raises(CompilationError, match=message) as ei:
        fill2d[(1,)](y, R=shape[0], C=shape[1])
    assert ei.value.line == fill2d.first_line + 2


def test_constexpr_values_equal_as_numbers_are_different_kernels(host):
    y = np.zeros(1, np.float32)
    flag_kernel[(1,)](y, FLAG=1)
    assert y[0] == 2.0
    flag_kernel[(1,)](y, FLAG=True)      # True == 1 but `is True` differs: its own kernel
    assert y[0] == 1.0
    flag_kernel[(1,)](y, FLAG=1.0)
    assert y[0] == 2.0
    assert len(flag_kernel.cache) >= 3


def test_zero_grid_dims_launch_nothing(host):
    y = np.zeros(4, np.int32)
    for grid in [(0,), (4, 0), (4, 1, 0), (0, 0, 0)]:
        count_programs[grid](y)
    assert not y.any()
    count_programs[(4,)](y)
    np.testing.assert_array_equal(y, [1, 1, 1, 1])


@pytest.mark.parametrize("grid, exc, message", [
    ((-1,), ValueError, "grid dimensions must be >= 0"),
    ((4, -2), ValueError, "grid dimensions must be >= 0"),
    ((2**31,), ValueError, "over 2\\*\\*31-1"),
    ((2**16, 2**16), ValueError, "4294967296 programs"),
    ((1.0,), TypeError, "grid dimensions must be ints"),
    ((True,), TypeError, "grid dimensions must be ints"),
    ((), TypeError, "grid must be a tuple of 1 to 3 ints"),
    (None, TypeError, "grid must be a tuple of 1 to 3 ints"),
    ((1, 1, 1, 1), TypeError, "grid must be a tuple of 1 to 3 ints"),
])
def test_bad_grids(host, grid, exc, message):
    y = np.zeros(4, np.int32)
    with pytest.raises(exc, match=message) as ei:
        count_programs[grid](y)
    assert "count_programs" in str(ei.value)
    assert not y.any()


def test_grid_limits_per_backend():
    from tilejit.runtime.validate import check_grid
    check_grid((2**31 - 1, 1, 1), "k", "cpu")
    check_grid((2**31 - 1, 2, 1), "k", "cuda")          # CUDA counts x and y separately
    with pytest.raises(ValueError, match="at most 65535"):
        check_grid((1, 65536, 1), "k", "cuda")
    check_grid((1, 65536, 1), "k", "cpu")
    with pytest.raises(ValueError, match="runs at most"):
        check_grid((2**16, 2**15, 1), "k", "interpreter")


class _FakeDeviceArray:
    """Something exporting ``__cuda_array_interface__`` (like a cupy array)."""

    def __init__(self, n):
        self._host = np.zeros(n, np.float32)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self._host.shape, "typestr": "<f4", "version": 3,
                "data": (self._host.ctypes.data, False), "strides": None}


def test_device_arrays_on_a_host_backend_and_mixed_devices(host):
    x = np.zeros(8, np.float32)
    d = _FakeDeviceArray(8)
    with pytest.raises(ValueError, match="arrays on different devices .*'x_ptr' on cpu.*'y_ptr' on cuda"):
        copy[(1,)](x, d, 8, BLOCK=8)
    with pytest.raises(ValueError, match="CUDA arrays were passed but the backend is"):
        copy[(1,)](d, d, 8, BLOCK=8)
