"""Host arrays around a CUDA launch (tilejit/backends/cuda/driver.py): numpy arrays are
copied to the device, their pointer parameters rewritten, and copied back after the
launch -- also when they arrive inside a tuple argument (plain, nested, namedtuple).
No GPU needed: the driver is replaced by one whose device memory is host memory."""
import ctypes
from typing import NamedTuple

import numpy as np

import tilejit
import tilejit.language as tl
from tilejit.backends import Buffer, LaunchArgs
from tilejit.backends.cuda import driver


@tilejit.jit
def _copy(x_ptr, y_ptr):
    tl.store(y_ptr, tl.load(x_ptr))


class _FakeCu:
    """Device memory is fresh host memory, so a pointer that was not staged is seen."""

    def __init__(self):
        self.mem = {}

    def cuMemAlloc(self, n):
        buf = ctypes.create_string_buffer(n)
        self.mem[ctypes.addressof(buf)] = buf
        return 0, ctypes.addressof(buf)

    def cuMemcpyHtoD(self, d, src, n):
        ctypes.memmove(int(d), src, n)
        return (0,)

    def cuMemcpyDtoH(self, dst, d, n):
        ctypes.memmove(dst, int(d), n)
        return (0,)

    def cuCtxSynchronize(self):
        return (0,)

    def cuMemFree(self, d):
        return (0,)


class _Dev:
    ordinal = 0

    def make_current(self):
        pass


class Pair(NamedTuple):
    src: object
    dst: object


def _launch_with_keepalive(monkeypatch, keep, x, y):
    """Launch ``_copy`` (y[0] = x[0]) with ``keep`` as the arguments the user passed."""
    cu = _FakeCu()
    monkeypatch.setattr(driver, "_cu", lambda: cu)
    monkeypatch.setattr(driver, "get_device", lambda ordinal: _Dev())
    k = tilejit.compile(_copy, signature={"x_ptr": "*fp32", "y_ptr": "*fp32"}, target="cuda:90")
    launcher = driver.Launcher(k)
    seen = []

    def run(dev, grid, values, stream, buffers=(), sync=False):
        seen.append(list(values))
        src, dst = values
        assert src in cu.mem and dst in cu.mem, "a host pointer reached the device"
        ctypes.memmove(dst, src, 4)
    monkeypatch.setattr(launcher, "run", run)
    values = [x.ctypes.data, y.ctypes.data]
    bufs = [Buffer("x_ptr", x.ctypes.data, x.nbytes, 4), Buffer("y_ptr", y.ctypes.data, y.nbytes, 4)]
    launcher((1, 1, 1), LaunchArgs(values, bufs, keep), device=0)
    return seen


def test_arrays_in_tuple_arguments_are_staged_and_copied_back(monkeypatch):
    for wrap in (lambda x, y: [(x, y)], lambda x, y: [(x, (3, None, (y,)))],
                 lambda x, y: [Pair(x, y)], lambda x, y: [x, (y,)]):
        x, y = np.array([5.0], np.float32), np.zeros(1, np.float32)
        seen = _launch_with_keepalive(monkeypatch, wrap(x, y), x, y)
        assert len(seen) == 1 and seen[0] != [x.ctypes.data, y.ctypes.data]
        assert y[0] == 5.0


def test_placement_finds_host_arrays_inside_tuples():
    a, b = np.zeros(4, np.float32), np.zeros(8, np.int64)
    _, _, host = driver._placement(LaunchArgs([], [], [(a, (1, b)), 2.0, None]), 0)
    assert (a.ctypes.data, a.nbytes) in host and (b.ctypes.data, b.nbytes) in host


class _SyncCu:
    def __init__(self, err):
        self.err, self.calls = err, []

    def cuCtxPushCurrent(self, ctx):
        self.calls.append(("push", ctx))
        return (0,)

    def cuCtxSynchronize(self):
        self.calls.append("sync")
        return (self.err,)

    def cuCtxPopCurrent(self):
        self.calls.append("pop")
        return 0, None

    def cuGetErrorName(self, err):
        return 0, b"CUDA_ERROR_ILLEGAL_ADDRESS"


def test_context_error_names_a_poisoned_context_and_initialises_nothing(monkeypatch):
    """What the test suite's guard (tests/conftest.py) asks after every test."""
    monkeypatch.setattr(driver, "_devices", {})
    monkeypatch.setattr(driver, "_cu", lambda: 1 / 0)       # never reached: nothing in use
    assert driver.context_error() is None
    dev = type("D", (), {"ordinal": 1, "ctx": "ctx1"})()
    monkeypatch.setattr(driver, "_devices", {1: dev})
    for err, want in ((0, None), (700, "CUDA driver error 700 (CUDA_ERROR_ILLEGAL_ADDRESS) on device 1")):
        cu = _SyncCu(err)
        monkeypatch.setattr(driver, "_cu", lambda: cu)
        assert driver.context_error() == want
        assert cu.calls == [("push", "ctx1"), "sync", "pop"]
