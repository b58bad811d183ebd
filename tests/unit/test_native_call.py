"""Native pack-and-run builtins (backends/llvm/native_call.py, cpu/native_run.py):
the bytes they pack are the ones the Python packer writes, statuses and errors come
back, and the CPU express lane launches through them (results, device asserts)."""
import ctypes
import struct

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.backends.cpu.native_run import native_runner
from tilejit.backends.cpu.runner import arg_format
from tilejit.errors import DeviceAssertionError
from tilejit.backends.llvm import native_call as NC
from tilejit.ir import types as IT
from tilejit.runtime.options import use_options

_CHUNK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)


class ChunkRecorder:
    """Stands for a kernel's ``run_chunk``: records the block's bytes and the range."""

    def __init__(self, nbytes, status=0):
        self.nbytes, self.status, self.calls = nbytes, status, []
        self.cfunc = _CHUNK(self._call)
        self.address = ctypes.cast(self.cfunc, ctypes.c_void_p).value

    def _call(self, block, start, end):
        self.calls.append((ctypes.string_at(block, self.nbytes), start, end))
        return self.status


DTYPES = [IT.PointerType(IT.float32), IT.int32, IT.int64, IT.uint64, IT.float32, IT.float64, IT.int1]
VALUES = [0x7F00_1234_5670, -5, -2 ** 63, 2 ** 64 - 1, 0.1, -2.5e300, True]


def test_cpu_runner_packs_what_arg_format_packs():
    fmt = arg_format(DTYPES)
    rec = ChunkRecorder(fmt.size - 24, status=0)
    run = native_runner(DTYPES, rec.address)
    block = ctypes.create_string_buffer(fmt.size + 64)
    assert run(ctypes.addressof(block), *VALUES) == 0
    (packed, start, end), = rec.calls
    assert (start, end) == (0, 1)
    assert packed == fmt.pack(*VALUES, 1, 1, 1)[:fmt.size - 24]


def test_cpu_runner_returns_the_status_and_refuses_wrong_values():
    rec = ChunkRecorder(16, status=3)
    run = native_runner(DTYPES[:2], rec.address)
    block = ctypes.create_string_buffer(64)
    assert run(ctypes.addressof(block), 4096, 7) == 3
    with pytest.raises(TypeError):
        run(ctypes.addressof(block), None, 7)
    with pytest.raises(TypeError):
        run(ctypes.addressof(block), 4096, 7.5)
    assert run(ctypes.addressof(block), 4096) == NC.BAD_CALL
    assert len(rec.calls) == 1


def test_switched_off_by_the_options(monkeypatch):
    from tilejit.backends.cpu import backend as cpu_backend
    from tilejit.runtime.options import Options
    assert not Options.from_env({"TILEJIT_NATIVE_CALL": "0"}).native_call
    assert Options.from_env({}).native_call

    class Kernel:
        _dtypes, _fn_addr = DTYPES, ChunkRecorder(8).address
    assert cpu_backend._native_runner(Kernel()) is not None
    with use_options(native_call=False):
        assert cpu_backend._native_runner(Kernel()) is None


needs_cpu = pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")


def _scale(x_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.device_assert(v * a < 1000.0, "scaled value too large")
    tl.store(out_ptr + offs, v * a, mask=m)


@needs_cpu
def test_express_launches_run_natively_and_report_asserts(monkeypatch):
    from tilejit.backends.cpu import backend as cpu_backend, native_go
    monkeypatch.setattr(native_go, "AVAILABLE", False)      # the Python lane's runner
    native_calls, real = [], cpu_backend._native_runner

    def counting(kernel):
        fn = real(kernel)
        return lambda *a: native_calls.append(a) or fn(*a)
    monkeypatch.setattr(cpu_backend, "_native_runner", counting)
    k = tilejit.jit(_scale)
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    with use_options(backend="cpu"):
        for a in (1.0, 2.0, 3.0, 0.5):          # the lane's runner takes over after the first
            out[:] = 0
            k[(1,)](x, out, 32, a, BLOCK=32)
            np.testing.assert_array_equal(out, x * np.float32(a))
        assert len(native_calls) >= 2
        with pytest.raises(DeviceAssertionError, match="scaled value too large"):
            k[(1,)](x, out, 32, 100.0, BLOCK=32)
        k[(1,)](x, out, 32, 4.0, BLOCK=32)      # the runner's buffer is still usable
        np.testing.assert_array_equal(out, x * np.float32(4.0))
