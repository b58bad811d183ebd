"""Running a compiled grid: argument packing, the thread pool, device-assert reports."""
from __future__ import annotations

import ctypes
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

CHUNK_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)


class DeviceAssertionError(AssertionError):
    """A ``tl.device_assert`` failed in a compiled kernel."""


def arg_struct_type(arg_dtypes):
    """A ctypes Structure with one 8-byte slot per kernel argument."""
    fields = []
    for i, dt in enumerate(arg_dtypes):
        if dt.is_ptr():
            ct = ctypes.c_uint64
        elif dt.kind == "float":
            ct = ctypes.c_double
        elif dt.kind == "uint":
            ct = ctypes.c_uint64
        else:
            ct = ctypes.c_int64
        fields.append((f"a{i}", ct))
    return type("KernelArgs", (ctypes.Structure,), {"_fields_": fields})


def coerce_values(values, arg_dtypes):
    """Slow path: convert numpy scalars, None pointers, out-of-range ints."""
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


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def pool(n_threads: int) -> ThreadPoolExecutor:
    with _POOL_LOCK:
        p = _POOLS.get(n_threads)
        if p is None:
            p = _POOLS[n_threads] = ThreadPoolExecutor(max_workers=n_threads,
                                                       thread_name_prefix="tilejit-cpu")
        return p


def run_parallel(fn, argp, n, gx, gy, gz, err, n_threads):
    """Run ``n`` programs on ``n_threads`` threads (the caller is one), in chunks."""
    n_chunks = min(n, n_threads * 8)
    size = -(-n // n_chunks)
    n_chunks = -(-n // size)
    counter = itertools.count()

    def work():
        while True:
            c = next(counter)
            if c >= n_chunks or err[0]:
                return
            fn(argp, c * size, min(n, (c + 1) * size), gx, gy, gz, err)

    ex = pool(n_threads - 1)
    futs = [ex.submit(work) for _ in range(min(n_threads - 1, n_chunks - 1))]
    work()
    for f in futs:
        f.result()
