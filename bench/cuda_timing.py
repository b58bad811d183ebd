"""Timing shared by the GPU benches (bench_tutorials_cuda.py, bench_corpus_cuda.py,
matmul_tutorial_probe.py): the same functions time both implementations.

- :func:`bench_ms`: device time per call (CUDA events, L2 flushed, calls queued behind a
  GPU sleep sized from the host's measured queueing time);
- :func:`kernel_ms`: the GPU's busy time per call from CUPTI (torch.profiler);
- :func:`wall_ms`: wall-clock time per call of back-to-back calls.
"""
from __future__ import annotations

import statistics
import time


def bench_ms(fn, cuda, prepare=None, warmup_ms=25.0, rep_ms=100.0):
    """Median milliseconds of ``fn()``: CUDA events around each call after a warmup,
    with the L2 cache flushed (and ``prepare`` run) before each, untimed (as
    triton.testing.do_bench does), the calls queued behind a GPU sleep (~0.1 ms a call,
    at most 0.2 s; 1.5x the host's measured time to queue a call where that is longer)
    so that host launch cost does not leak into the times; wall-clock medians of a few
    calls on the CPU."""
    prepare = prepare or (lambda: None)
    if not cuda:
        times = []
        for _ in range(3):
            prepare()
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)
    import torch
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    start.record()
    for _ in range(5):
        prepare()
        fn()
    end.record()
    host = (time.perf_counter() - t0) * 1e3 / 5        # the host's time to queue one call
    torch.cuda.synchronize()
    est = max(start.elapsed_time(end) / 5, 1e-3)
    for _ in range(min(1000, max(1, int(warmup_ms / est)))):
        prepare()
        fn()
    n = min(1000, max(10, int(rep_ms / est)))
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    if hasattr(torch.cuda, "_sleep"):    # hold the GPU while the host queues the calls (1.5x its
        # measured queueing time, at least 0.1 ms a call, at most 0.2 s): the events time the kernels
        torch.cuda._sleep(int(2e6 * min(200.0, n * max(0.1, 1.5 * host))))
    for s, e in ev:
        prepare()
        flush.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in ev)


def kernel_ms(fn, prepare=None, calls=5):
    """Milliseconds per call that the GPU spends in kernels and copies (CUPTI, through
    torch.profiler): the sum of the device activities of ``calls`` calls, less those
    of ``prepare`` and the L2 flush measured alone -- device time whatever the host's
    launch cost.  None when the profiler gives no device activity."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    prepare = prepare or (lambda: None)
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")

    def device_us(body):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                prepare()
                flush.zero_()
                body()
            torch.cuda.synchronize()
        return sum(e.time_range.elapsed_us() for e in prof.events() if e.device_type == DeviceType.CUDA)
    total, pre = device_us(fn), device_us(lambda: None)
    return (total - pre) / 1e3 / calls if total > 0 else None


def wall_ms(fn, prepare=None, calls=20):
    """Wall-clock milliseconds per call of ``calls`` back-to-back calls ended by one
    synchronize (no L2 flush, no GPU sleep): above ``bench_ms``'s device time when the
    host (launch path, Python) cannot keep the GPU busy."""
    import torch
    prepare = prepare or (lambda: None)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        prepare()
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / calls
