"""CPU backend benchmarks, side by side with numpy and tilejit's interpreter.

    python bench/bench_cpu.py [--threads 2] [--quick] [--out bench/results]

Prints a table and writes bench/results/cpu-<date>.json (machine, versions, date).
Each case interleaves its peers within every repetition (this machine is noisy)
and reports medians; ratios are tilejit / peer throughput (higher is better).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time

# OpenBLAS's workers spin ~0.1 s after each numpy call; interleaved with tilejit launches
# they would hold a core through the next launch (bench/results/cpu_matmul_notes.md).
# A short timeout puts them to sleep at once; numpy's own matmul speed is unchanged.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tilejit  # noqa: E402
from tilejit.runtime.options import use_options  # noqa: E402
import kernels_cpu as K  # noqa: E402


def timeit_side_by_side(fns: dict, reps: int, warmup: int = 1) -> dict:
    """Median seconds per call of each function, peers interleaved per repetition."""
    for f in fns.values():
        for _ in range(warmup):
            f()
    times = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    return {k: float(np.median(v)) for k, v in times.items()}


def bench_add(threads, reps):
    n = 1 << 24
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out, ref = np.empty_like(x), np.empty_like(x)
    B = 4096
    fns = {"tilejit": lambda: K.add_kernel[(n // B,)](x, y, out, n, BLOCK=B),
           "numpy": lambda: np.add(x, y, out=ref)}
    t = timeit_side_by_side(fns, reps)
    np.testing.assert_array_equal(out, x + y)
    # the interpreter on a smaller problem (it is orders of magnitude slower)
    ni = 1 << 18
    xi, yi, oi = x[:ni].copy(), y[:ni].copy(), np.empty(ni, np.float32)
    with use_options(backend="interpreter", interpret=True):
        ti = timeit_side_by_side({"interp": lambda: K.add_kernel[(ni // 1024,)](xi, yi, oi, ni, BLOCK=1024)}, 2)
    np.testing.assert_array_equal(oi, xi + yi)
    gbs = {k: 12 * n / v / 1e9 for k, v in t.items()}
    gbs["interpreter"] = 12 * ni / ti["interp"] / 1e9
    return {"case": "vector add fp32 2^24", "unit": "GB/s", **gbs,
            "ratio_vs_numpy": gbs["tilejit"] / gbs["numpy"],
            "ratio_vs_interpreter": gbs["tilejit"] / gbs["interpreter"]}


def bench_softmax(threads, reps):
    R = C = 4096
    x = np.random.default_rng(1).standard_normal((R, C)).astype(np.float32)
    out = np.empty_like(x)

    def numpy_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    fns = {"tilejit": lambda: K.softmax_kernel[(R,)](out, x, C, C, C, BLOCK=C), "numpy": numpy_softmax}
    t = timeit_side_by_side(fns, reps)
    np.testing.assert_allclose(out, numpy_softmax(), rtol=1e-5, atol=1e-9)
    gbs = {k: 8 * R * C / v / 1e9 for k, v in t.items()}
    return {"case": "row softmax 4096x4096 fp32", "unit": "GB/s", **gbs,
            "ratio_vs_numpy": gbs["tilejit"] / gbs["numpy"]}


def bench_matmul(threads, reps):
    M = N = Kd = 1024
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((M, Kd)).astype(np.float32), rng.standard_normal((Kd, N)).astype(np.float32)
    c = np.empty((M, N), np.float32)
    BM, BN, BK = 128, 128, 64
    fns = {"tilejit": lambda: K.matmul_kernel[(M // BM, N // BN)](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1,
                                                                  BM=BM, BN=BN, BK=BK),
           "numpy": lambda: a @ b}
    t = timeit_side_by_side(fns, max(3, reps // 2))
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    gf = {k: 2 * M * N * Kd / v / 1e9 for k, v in t.items()}
    return {"case": "matmul 1024^3 fp32 tl.dot", "unit": "GFLOP/s", **gf,
            "ratio_vs_numpy": gf["tilejit"] / gf["numpy"], "blocks": [BM, BN, BK]}


def bench_scatter(threads, reps):
    n = 1 << 22
    rng = np.random.default_rng(3)
    i0 = rng.integers(0, 4, n).astype(np.int64)
    i1 = rng.standard_normal(n).astype(np.float32)
    rows = -(-n // 1000)
    out = np.zeros(4 * rows * 1000, np.float32)
    ref = np.zeros_like(out)
    idx = np.arange(n)
    dest = idx % 1000 + 1000 * i0 + 4000 * (idx // 1000)
    B = 1024
    fns = {"tilejit": lambda: K.scatter741_kernel[(-(-n // B),)](i0, i1, out, n, XBLOCK=B),
           "numpy": lambda: np.put(ref, dest, i1)}
    t = timeit_side_by_side(fns, reps)
    np.testing.assert_array_equal(out, ref)
    gbs = {k: 16 * n / v / 1e9 for k, v in t.items()}     # 8 B index + 4 B value + 4 B store
    return {"case": "#741 scatter 2^22 (rows of 4)", "unit": "GB/s", **gbs,
            "ratio_vs_numpy": gbs["tilejit"] / gbs["numpy"]}


def bench_compile(threads, reps):
    """Cold compile of vector add: a fresh JITFunction each time, empty cache dir."""
    from tilejit.backends import get_backend
    from tilejit.backends.cpu.irgen import vector_add
    from tilejit.runtime.options import get_options
    x = np.ones(1024, np.float32)
    o = np.empty_like(x)
    total, backend = [], []
    for i in range(max(3, reps // 2)):
        fn = tilejit.jit(K.add_kernel.fn)
        with tempfile.TemporaryDirectory() as d, use_options(cache_dir=d):
            t = time.perf_counter()
            fn[(1,)](x, x, o, 1024, BLOCK=1024)
            total.append(time.perf_counter() - t)
        f = vector_add(1024)
        t = time.perf_counter()
        get_backend("cpu").compile(f, get_options())
        backend.append(time.perf_counter() - t)
    return {"case": "cold compile vector add", "unit": "ms",
            "tilejit": 1e3 * float(np.median(total)), "backend_only": 1e3 * float(np.median(backend))}


def bench_launch(threads, reps):
    """Repeated-launch overhead: 4-argument kernel, 1-program grid."""
    from tilejit.backends import LaunchArgs, get_backend
    from tilejit.backends.cpu.irgen import vector_add
    from tilejit.runtime.options import get_options
    x = np.ones(16, np.float32)
    o = np.empty_like(x)
    k = get_backend("cpu").compile(vector_add(16), get_options())
    la = LaunchArgs([x.ctypes.data, x.ctypes.data, o.ctypes.data, 16])
    n = 20000

    def loop_backend():
        for _ in range(n):
            k.launch((1, 1, 1), la)

    def loop_runtime():
        for _ in range(n):
            K.add_kernel[(1,)](x, x, o, 16, BLOCK=16)
    t = timeit_side_by_side({"backend": loop_backend, "runtime": loop_runtime}, 5)
    return {"case": "repeated launch, 4 args, 1 program", "unit": "us",
            "backend_launch": 1e6 * t["backend"] / n, "kernel[grid](...)": 1e6 * t["runtime"] / n}


def machine_info():
    import llvmlite
    import llvmlite.binding as llvm
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"machine": {"cpu": cpu, "llvm_cpu": llvm.get_host_cpu_name(), "cores": os.cpu_count(),
                        "platform": platform.platform()},
            "versions": {"python": platform.python_version(), "numpy": np.__version__,
                         "llvmlite": llvmlite.__version__,
                         "llvm": ".".join(map(str, llvm.llvm_version_info)), "tilejit": tilejit.__version__},
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def save_result(doc: dict, out_dir: str, stem: str) -> str:
    """Write ``doc`` atomically to ``out_dir/<stem>-<date>.json``; returns the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{stem}-{doc['date'][:10]}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)
    print("saved", path)
    return path


CASES = [bench_add, bench_softmax, bench_matmul, bench_scatter, bench_compile, bench_launch]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    results = []
    with use_options(backend="cpu", num_threads=args.threads):
        for case in CASES:
            if args.only and args.only not in case.__name__:
                continue
            r = case(args.threads, args.reps)
            results.append(r)
            print("  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()),
                  flush=True)
    doc = {**machine_info(), "threads": args.threads, "openblas_thread_timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT"), "command": "python bench/bench_cpu.py " + " ".join(argv or sys.argv[1:]),
           "results": results}
    save_result(doc, args.out, "cpu")


if __name__ == "__main__":
    main()
