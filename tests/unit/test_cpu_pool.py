"""The CPU pool (backends/cpu/pool.py): how many threads a launch gets, and that small
launches stay on the calling thread (behaviour, not timings)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.runtime.options import use_options

pool_mod = pytest.importorskip("tilejit.backends.cpu.pool")
choose, Sizing = pool_mod.choose_threads, pool_mod.Sizing
needs_cpu = pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")


def test_one_program_or_one_thread_runs_alone():
    assert choose(1, 1e9, 8, 8, 10_000) == 1
    assert choose(1000, 1e9, 1, 8, 10_000) == 1
    assert choose(1000, 1e9, 8, 1, 10_000) == 1       # no core free: never the pool


def test_unknown_work_takes_every_allowed_thread():
    assert choose(1000, None, 4, 8, 10_000) == 4
    assert choose(3, None, 4, 8, 10_000) == 3          # no more threads than programs
    assert choose(1000, None, 8, 2, 10_000) == 2       # no more than the free cores


def test_threads_grow_with_the_work_over_the_wake_up_cost():
    wake = 10_000.0
    assert choose(64, 100.0, 8, 8, wake) == 1           # 6.4 us of work: under two wake-ups
    got = [choose(1024, ns, 8, 8, wake) for ns in (10, 100, 1_000, 10_000, 100_000)]
    assert got == sorted(got) and got[0] == 1 and got[-1] == 8
    # the k-th thread only while the work covers 2*k*(k-1) wake-ups
    for ns in (50.0, 400.0, 3000.0):
        k = choose(1024, ns, 8, 8, wake)
        budget = 1024 * ns / wake
        assert 2 * k * (k - 1) <= budget or k == 1
        assert k == 8 or 2 * (k + 1) * k > budget
    # a machine whose workers wake late (load) gets fewer threads for the same work
    assert choose(1024, 1_000.0, 8, 8, 200_000.0) < choose(1024, 1_000.0, 8, 8, 10_000.0)


def test_sizing_estimate_and_inline_limit():
    s = Sizing()
    assert s.ns_per_program is None and s.inline_limit(10_000, 1 << 31) == 1
    s.note(100, 100e-6, 1)                              # 1 us per program
    assert s.ns_per_program == pytest.approx(1000)
    s.note(100, 50e-6, 2)                               # two threads for 50 us: the same work
    assert s.ns_per_program == pytest.approx(1000)
    assert s.inline_limit(10_000, 1 << 31) == 20        # two wake-ups' worth of programs
    assert s.inline_limit(10_000, 8) == 8
    s.note(100, 10e-3, 1)                               # one slow launch (preempted): a bounded rise
    assert s.ns_per_program == pytest.approx(1250)
    s.note(100, 10e-3, 1)
    assert s.ns_per_program == pytest.approx(1250 * 1.25)
    s.note(100, 10e-6, 1)                               # a faster one: at once
    assert s.ns_per_program == pytest.approx(100)


@tilejit.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@needs_cpu
def test_small_launches_stay_on_the_calling_thread(monkeypatch):
    runs = []
    real = pool_mod.Pool.run
    monkeypatch.setattr(pool_mod.Pool, "run", lambda self, *a: runs.append(a) or real(self, *a))
    n = 64 * 16
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    with use_options(backend="cpu", num_threads=2):
        kernel = _add[(64,)](x, y, out, n, BLOCK=16)
        np.testing.assert_array_equal(out, x + y)
        kernel.sizing.ns_per_program = 10.0                  # 64 programs of 10 ns: tiny
        pool = pool_mod.get_pool(1)
        monkeypatch.setattr(pool, "wake_ns", 20_000.0)
        runs.clear()
        for i in range(5):
            out[:] = 0
            _add[(64,)](x, y + i, out, n, BLOCK=16)
            np.testing.assert_array_equal(out, x + y + i)
        assert runs == []
        kernel.sizing.ns_per_program = 1e6                    # 64 programs of 1 ms: the pool
        kernel._inline[0] = 1                                 # (as the native lane's timer does)
        monkeypatch.setattr(pool, "free_cores", lambda: 2)
        _add[(64,)](x, y, out, n, BLOCK=16)
        np.testing.assert_array_equal(out, x + y)
        assert [a[3] for a in runs] == [2]


@needs_cpu
def test_workers_that_never_start_do_not_hold_up_a_launch():
    n = 256 * 16
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    with use_options(backend="cpu", num_threads=1):
        kernel = _add[(256,)](x, y, out, n, BLOCK=16)
    from tilejit.backends.cpu.runner import ArgBuffer
    buf = ArgBuffer(kernel._size)
    out[:] = 0
    kernel._fmt.pack_into(buf.raw, 0, x.ctypes.data, y.ctypes.data, out.ctypes.data, n, 256, 1, 1)
    idle = pool_mod.Pool(0)                  # no worker will ever take the posted jobs
    idle.grow = lambda workers: None
    assert idle.run(kernel._fn_addr, buf.ptr.value, 256, 4) == (0, 1)    # the caller alone
    np.testing.assert_array_equal(out, x + y)
    assert idle.queue.qsize() == 3           # the posted jobs, never started


@needs_cpu
def test_a_native_run_past_its_time_goes_back_to_the_sizing():
    from tilejit.backends.cpu import native_go
    if not native_go.AVAILABLE:
        pytest.skip("no native lane on this Python")
    n = 64 * 16
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    with use_options(backend="cpu", num_threads=2):
        for _ in range(3):
            kernel = _add[(64,)](x, y, out, n, BLOCK=16)
        assert _add._launcher.native.entries()
        kernel._inline[0], kernel._inline[1] = 1000, 0     # inline, but no time at all
        out[:] = 0
        _add[(64,)](x, y, out, n, BLOCK=16)
        np.testing.assert_array_equal(out, x + y)
        assert kernel._inline[0] == 1                      # the next launch is sized again


@needs_cpu
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_gets_a_pool_of_its_own():
    import os
    n = 256 * 16
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    with use_options(backend="cpu", num_threads=2):
        _add[(256,)](x, y, out, n, BLOCK=16)
        parent = pool_mod.get_pool(1)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:                                     # the child: report, never return
            ok = 0
            try:
                out[:] = 0
                _add[(256,)](x, y, out, n, BLOCK=16)
                ok = int(np.array_equal(out, x + y) and pool_mod._POOL is not parent)
            finally:
                os.write(w, bytes([ok]))
                os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.waitpid(pid, 0)
        assert got == b"\x01"
