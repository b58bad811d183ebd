"""The native express lane (backends/cpu/native_go.py) takes exactly the launches its
express entry's key would take and hands every other one to the Python lane.

Each test first fills the lane with one launch shape, then launches variants: the
native lane must return the kernel the general rules pick with the right results,
and decline (the Python lane's ``miss`` or general path runs) whatever differs from
the entry in a way the express key or a launch check separates."""
import sys
import threading

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.runtime.options import use_options

pytestmark = pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")
native_go = pytest.importorskip("tilejit.backends.cpu.native_go")
needs_lane = pytest.mark.skipif(not native_go.AVAILABLE, reason="no native lane on this Python")


def _axpb(x_ptr, out_ptr, n, a, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * a
    if SHIFT:
        v = v + 1
    tl.store(out_ptr + offs, v, mask=m)


def _copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def _check(x, n, a, block, shift, out):
    want = np.zeros_like(out)
    m = min(n, block, len(x), len(out))
    want[:m] = x[:m].astype(out.dtype) * out.dtype.type(a) + (1 if shift else 0)
    np.testing.assert_array_equal(out[:m], want[:m])


class _Lane:
    """A kernel with its launcher's Python-lane misses counted once the native lane
    holds an entry (``declined()``: whether the last launch went to Python)."""

    def __init__(self, fn, launch):
        self.k = tilejit.jit(fn)
        for _ in range(3):
            launch(self.k)
        self.launcher = self.k._launcher
        assert self.launcher.native is not None and self.launcher.native.entries()
        self.calls = []
        ns = self.launcher.express_ns
        real_miss, real_slow = ns["miss"], ns["slow"]
        ns["miss"] = lambda *a: self.calls.append("miss") or real_miss(*a)
        ns["slow"] = lambda *a: self.calls.append("slow") or real_slow(*a)
        dict.clear(self.launcher.express)          # every Python-lane launch now misses

    def declined(self) -> bool:
        got = bool(self.calls)
        self.calls.clear()
        dict.clear(self.launcher.express)
        return got


@needs_lane
def test_native_lane_takes_its_entry_and_declines_every_difference():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with use_options(backend="cpu"):
        lane = _Lane(_axpb, lambda k: k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False))
        k = lane.k
        kernel = k[(1,)](x, out, 32, 3.0, BLOCK=32, SHIFT=False)
        _check(x, 32, 3.0, 32, False, out)
        assert not lane.declined()
        assert any(kernel is c for c in lane.launcher.cache.values())
        for n in (48, 16, 64):                      # same width class and specialization, but
            k[(1,)](x, out, n, 1.5, BLOCK=32, SHIFT=False)     # the access bounds read n:
            assert lane.declined()                  # the Python lane checks them
        k[(1,)](x, out, 32, 1.5, BLOCK=32, SHIFT=False)
        lane.declined()                             # the lane follows the launches' n
        k[(1,)](x, out, 32, 1.5, BLOCK=32, SHIFT=False)
        assert not lane.declined()
        for grid in ((1, 1), (1, 1, 1)):
            k[grid](x, out, 32, 4.0, BLOCK=32, SHIFT=False)
            _check(x, 32, 4.0, 32, False, out)
            assert not lane.declined()
        ro = x.copy()
        ro.flags.writeable = False                  # read only, but only read
        k[(1,)](ro, out, 32, 2.0, BLOCK=32, SHIFT=False)
        assert not lane.declined()
        x64, out64 = x.astype(np.float64), out.astype(np.float64)
        declined = [
            lambda: k[(1,)](x64, out64, 32, 2.0, BLOCK=32, SHIFT=False),   # dtypes
            lambda: k[(1,)](x[1:], out, 32, 2.0, BLOCK=32, SHIFT=False),   # alignment
            lambda: k[(1,)](x, out, 1, 2.0, BLOCK=32, SHIFT=False),        # n == 1
            lambda: k[(1,)](x, out, 2 ** 31, 2.0, BLOCK=32, SHIFT=False),  # i64
            lambda: k[(1,)](x, out, 32, 2, BLOCK=32, SHIFT=False),         # int for float
            lambda: k[(1,)](x, out, 32, True, BLOCK=32, SHIFT=False),      # bool for float
            lambda: k[(1,)](x, out, 32, 2.0, BLOCK=64, SHIFT=False),       # constexpr
            lambda: k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=0),           # False vs 0
            lambda: k[(1,)](x, out, 32, 2.0, SHIFT=False, BLOCK=32),       # keyword order
            lambda: k[(1,)](x, out, 32, 2.0, 32, False),                   # call shape
            lambda: k[(2,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False),       # the pool's grid
            lambda: k[lambda m: (1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False),
            lambda: k[(1,)](x.tolist(), out, 32, 2.0, BLOCK=32, SHIFT=False),
        ]
        for i, launch in enumerate(declined):
            out[:] = 0
            try:
                launch()
            except (TypeError, ValueError):
                pass
            assert lane.declined(), i
            k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False)     # the entry again
            lane.declined()
            k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False)
            assert not lane.declined(), i
        k[(1,)](x, out, 16, 2.0, 32, True)
        _check(x, 16, 2.0, 32, True, out)
        with pytest.raises(ValueError, match="read-only"):
            k[(1,)](x, ro, 32, 2.0, BLOCK=32, SHIFT=False)
        with use_options(backend="cpu", num_threads=1):       # other options: Python lane
            k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False)
            assert lane.declined()


@needs_lane
def test_native_lane_declines_arrays_past_int32():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with use_options(backend="cpu"):
        lane = _Lane(_axpb, lambda k: k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False))
        huge = np.lib.stride_tricks.as_strided(x, shape=(2 ** 29, 2), strides=(0, 4))
        out[:] = 0
        lane.k[(1,)](huge, out, 2, 2.0, BLOCK=32, SHIFT=False)   # reads its 2 distinct elements
        assert lane.declined()                            # the launcher's checks decide
        _check(x, 2, 2.0, 32, False, out)


@needs_lane
def test_native_lane_checks_bounded_accesses_for_its_grid():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    with use_options(backend="cpu"):
        lane = _Lane(_copy, lambda k: k[(1,)](x, y, BLOCK=128))
        k = lane.k
        k[(1,)](x * 2, y, BLOCK=128)
        np.testing.assert_array_equal(y, x * 2)
        assert not lane.declined()
        k[(1, 1)](x, y, BLOCK=128)                       # the same grid, spelled otherwise
        assert not lane.declined()
        k[(1,)](x, y, BLOCK=64)                          # another kernel: Python lane
        assert lane.declined()
        k[(1,)](x, y, BLOCK=128)
        lane.declined()
        with pytest.raises(tilejit.OutOfBoundsError):
            k[(1,)](x[:100], y, BLOCK=128)               # too short
        assert lane.declined()
        k[(1,)](x, y, BLOCK=128)
        lane.declined()
        with pytest.raises(tilejit.OutOfBoundsError):
            k[(1,)](x[::2], y, BLOCK=128)                # not contiguous, too short
        assert lane.declined()
        k[(1,)](x, y, BLOCK=128)
        lane.declined()
        y2 = np.zeros(256, np.float32)
        k[(1,)](x, y2[::2], BLOCK=128)                   # strided: the general rules decide
        assert lane.declined()
        np.testing.assert_array_equal(y2[:128], x)


@needs_lane
def test_native_lane_learns_each_grid_of_a_bounded_kernel(monkeypatch):
    """A kernel with bounded accesses runs natively only for its spec's grid: the first
    launch with a new grid goes through the Python lane and offers a spec for it, the
    next ones (and later returns to it) run natively."""
    from tilejit.backends.cpu import backend
    x = np.arange(512, dtype=np.float32)
    y = np.zeros(512, np.float32)
    runs, real = [], backend.CPUKernel._run
    monkeypatch.setattr(backend.CPUKernel, "_run", lambda self, *a: runs.append(a[1]) or real(self, *a))
    with use_options(backend="cpu", num_threads=1):
        k = tilejit.jit(_copy)
        for _ in range(3):
            k[(1,)](x, y, BLOCK=128)
        assert k._launcher.native is not None and k._launcher.native.entries()
        for g, first in ((4, True), (2, True), (4, False), (2, False)):
            y[:] = 0
            runs.clear()
            for _ in range(3):
                k[(g,)](x * g, y, BLOCK=128)
            np.testing.assert_array_equal(y[:128 * g], (x * g)[:128 * g])
            assert (y[128 * g:] == 0).all()
            assert runs == ([g] if first else [])


def _assert_big(x_ptr, out_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.device_assert(v * a < 1000.0, "scaled value too large")
    tl.store(out_ptr + offs, v * a, mask=m)


@needs_lane
def test_native_lane_reports_device_asserts_and_stays_usable():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    with use_options(backend="cpu"):
        lane = _Lane(_assert_big, lambda k: k[(1,)](x, out, 32, 1.0, BLOCK=32))
        from tilejit.errors import DeviceAssertionError
        with pytest.raises(DeviceAssertionError, match="scaled value too large"):
            lane.k[(1,)](x, out, 32, 100.0, BLOCK=32)
        assert not lane.declined()
        lane.k[(1,)](x, out, 32, 4.0, BLOCK=32)
        np.testing.assert_array_equal(out, x * 4)
        assert not lane.declined()


@needs_lane
def test_native_lane_from_threads():
    k = tilejit.jit(_axpb)
    rng = np.random.default_rng(0)
    xs = [rng.random(64).astype(np.float32) for _ in range(4)]
    outs = [np.zeros(64, np.float32) for _ in range(4)]
    errors = []

    def work(i):
        try:
            for r in range(300):
                k[(1,)](xs[i], outs[i], 64, float(r), BLOCK=64, SHIFT=False)
                np.testing.assert_array_equal(outs[i], xs[i] * np.float32(r))
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)
    with use_options(backend="cpu"):
        for _ in range(3):
            k[(1,)](xs[0], outs[0], 64, 1.0, BLOCK=64, SHIFT=False)
        assert k._launcher.native.entries()
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


def test_no_native_lane_for_the_interpreter():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    k = tilejit.jit(_axpb)
    with use_options(backend="interpreter"):
        for _ in range(3):
            k[(1,)](x, out, 16, 2.0, BLOCK=16, SHIFT=True)
        _check(x, 16, 2.0, 16, True, out)
        native = k._launcher.native
        assert native is None or not native.entries()


@needs_lane
def test_native_lane_takes_torch_cpu_tensors_and_declines_others():
    torch = pytest.importorskip("torch")
    x = torch.arange(64, dtype=torch.float32)
    out = torch.zeros(64)
    with use_options(backend="cpu"):
        lane = _Lane(_axpb, lambda k: k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False))
        k = lane.k
        k[(1,)](x * 3, out, 32, 2.0, BLOCK=32, SHIFT=False)
        np.testing.assert_array_equal(out.numpy()[:32], x.numpy()[:32] * 6)
        assert not lane.declined()
        declined = [
            lambda: k[(1,)](x.double(), out.double(), 32, 2.0, BLOCK=32, SHIFT=False),   # dtype
            lambda: k[(1,)](x[1:], out, 32, 2.0, BLOCK=32, SHIFT=False),                 # alignment
            lambda: k[(1,)](torch.nn.Parameter(x), out, 32, 2.0, BLOCK=32, SHIFT=False),  # subclass
            lambda: k[(1,)](x.numpy(), out, 32, 2.0, BLOCK=32, SHIFT=False),             # numpy for torch
        ]
        for i, launch in enumerate(declined):
            launch()
            assert lane.declined(), i
            k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False)
            lane.declined()
            k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False)
            assert not lane.declined(), i
        with pytest.raises(Exception):
            k[(1,)](torch.zeros(4, device="meta"), out, 32, 2.0, BLOCK=32, SHIFT=False)
        assert lane.declined()
        with pytest.raises(tilejit.OutOfBoundsError):                 # n reaches past it
            k[(1,)](x[:16], out, 32, 2.0, BLOCK=32, SHIFT=False)
        assert lane.declined()
        k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False)
        lane.declined()
        k[(1,)](x[::2].contiguous()[:32], out, 32, 2.0, BLOCK=32, SHIFT=False)   # long enough
        assert not lane.declined()
        np.testing.assert_array_equal(out.numpy()[:32], x.numpy()[::2] * 2)
        k[(1,)](x[::4], out, 32, 2.0, BLOCK=32, SHIFT=False)          # strided: the Python lane's
        assert lane.declined()                                         # span check decides
        before = sys.getrefcount(x), sys.getrefcount(x.dtype)
        for _ in range(1000):
            k[(1,)](x, out, 32, 2.0, BLOCK=32, SHIFT=False)
        assert (sys.getrefcount(x), sys.getrefcount(x.dtype)) == before
