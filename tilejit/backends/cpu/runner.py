"""Running a compiled grid: argument packing, the thread pool, device-assert reports.

The native entry is ``i32 run_chunk(ptr args, i32 start, i32 end)`` (see codegen).
It is called through a ctypes function pointer *without* argtypes (the cheapest
ctypes call: ints go as C ints, the buffer address as a ``c_void_p``); ctypes
releases the GIL during the call.  Arguments are packed with a precompiled
``struct.Struct`` into a per-kernel buffer (or a fresh one when another thread is
using it): one 8-byte slot per kernel argument (pointers/integers as 64-bit
integers, floats as doubles), then the grid, then the i32[4] error record.
"""
from __future__ import annotations

import ctypes
import itertools
import os
import struct
import threading
from concurrent.futures import ThreadPoolExecutor


def chunk_function(addr: int):
    fn = ctypes.CFUNCTYPE(ctypes.c_int32)(addr)
    fn.argtypes = None
    return fn


def arg_format(arg_dtypes) -> struct.Struct:
    codes = []
    for dt in arg_dtypes:
        if dt.is_ptr() or dt.kind == "uint":
            codes.append("Q")
        elif dt.kind == "float":
            codes.append("d")
        else:
            codes.append("q")
    return struct.Struct("<" + "".join(codes) + "qqq")


def coerce_values(values, arg_dtypes):
    """Slow path: None pointers, out-of-range ints, odd scalar types."""
    out = []
    for v, dt in zip(values, arg_dtypes):
        if dt.is_ptr():
            out.append(int(v or 0) & (2**64 - 1))
        elif dt.kind == "float":
            out.append(float(v))
        else:
            iv = int(v)
            out.append(iv & (2**64 - 1) if dt.kind == "uint" else ((iv + 2**63) % 2**64) - 2**63)
    return out


class ArgBuffer:
    """A packed argument block and its address."""

    def __init__(self, size):
        self.raw = (ctypes.c_char * size)()
        self.ptr = ctypes.c_void_p(ctypes.addressof(self.raw))

    def error(self, nargs):
        """[code, pid x, y, z, lane, address]."""
        rec = list((ctypes.c_int32 * 4).from_buffer(self.raw, 8 * (nargs + 3)))
        extra = list((ctypes.c_int64 * 2).from_buffer(self.raw, 8 * (nargs + 5)))
        return rec + extra

    def set_table(self, nargs, table, count):
        slots = (ctypes.c_uint64 * 2).from_buffer(self.raw, 8 * (nargs + 7))
        slots[0], slots[1] = ctypes.addressof(table), count


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


WORKER_STACK = 256 << 20        # per-program tiles live on the worker's stack
BIG_FRAME = 1 << 20             # programs with larger frames never run on the caller's stack


def pool(n_threads: int) -> ThreadPoolExecutor:
    with _POOL_LOCK:
        p = _POOLS.get(n_threads)
        if p is None:
            p = _POOLS[n_threads] = ThreadPoolExecutor(max_workers=n_threads,
                                                       thread_name_prefix="tilejit-cpu")
            old = threading.stack_size(WORKER_STACK)
            try:                # start the workers now, with big stacks
                for f in [p.submit(lambda: None) for _ in range(n_threads)]:
                    f.result()
            finally:
                threading.stack_size(old)
        return p


def run_on_worker(fn, argp, n) -> int:
    """Run all programs on one pool thread (its stack is large)."""
    return pool(1).submit(fn, argp, 0, n).result()


def run_parallel(fn, argp, n, n_threads, big_frame=False) -> int:
    """Run ``n`` programs on ``n_threads`` threads (the caller is one), in chunks.
    Returns the first nonzero status seen (0 when every program succeeded)."""
    n_chunks = min(n, n_threads * 8)
    size = -(-n // n_chunks)
    n_chunks = -(-n // size)
    counter = itertools.count()
    status = [0]

    def work():
        while not status[0]:
            c = next(counter)
            if c >= n_chunks:
                return
            st = fn(argp, c * size, min(n, (c + 1) * size))
            if st:
                status[0] = st

    ex = pool(n_threads)
    futs = [ex.submit(work) for _ in range(min(n_threads - 1, n_chunks - 1))]
    if big_frame:
        futs.append(ex.submit(work))
    else:
        work()
    for f in futs:
        f.result()
    return status[0]
