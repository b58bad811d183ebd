"""Block-size sweep of the tl.dot matmul on the CPU backend vs numpy's BLAS.

    python bench/tune_matmul_cpu.py [--threads 2] [--size 1024] [--reps 9]
                                    [--blocks 128,128,64 64,128,32 ...]

Each block size is timed interleaved with numpy (``a @ b``) and the medians are
compared (this machine is shared and noisy).  With one thread the clock is the
thread's CPU time, which other processes cannot inflate.

OpenBLAS worker threads spin for a while after each call (2**28 cycles by
default), so with ``OPENBLAS_NUM_THREADS=2`` a tilejit launch that follows a numpy
call shares a core with a spinning thread and runs at about half speed.  Set
``OPENBLAS_THREAD_TIMEOUT=4`` (the shortest spin) for a fair comparison; see
bench/results/cpu_matmul_notes.md.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tilejit.runtime.options import use_options  # noqa: E402
from kernels_cpu import matmul_kernel  # noqa: E402

BLOCKS = ("64,64,32", "64,128,64", "128,128,32", "128,128,64", "128,128,128", "64,256,32",
          "128,256,32", "256,128,32", "256,128,64")


def interleaved(fns: dict, reps: int, clock) -> dict:
    """Median seconds per call of each function, the functions alternating."""
    for f in fns.values():
        f()
    ts = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            t = clock()
            f()
            ts[k].append(clock() - t)
    return {k: float(np.median(v)) for k, v in ts.items()}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--blocks", nargs="*", default=list(BLOCKS), help="BM,BN,BK ...")
    args = ap.parse_args(argv)
    M = args.size
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, M)).astype(np.float32), rng.standard_normal((M, M)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.empty_like(a)
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    if args.threads > 1 and os.environ.get("OPENBLAS_THREAD_TIMEOUT") is None:
        print("note: OPENBLAS_THREAD_TIMEOUT unset: OpenBLAS threads spinning after numpy's call "
              "slow down the tilejit launch that follows", flush=True)
    print(f"{'BM':>4} {'BN':>4} {'BK':>4}  tilejit GFLOP/s  numpy GFLOP/s  ratio  maxerr", flush=True)
    with use_options(backend="cpu", num_threads=args.threads):
        for spec in args.blocks:
            bm, bn, bk = (int(x) for x in spec.split(","))
            if M % bm or M % bn or M % bk:
                continue

            def run(bm=bm, bn=bn, bk=bk):
                matmul_kernel[(M // bm, M // bn)](a, b, c, M, M, M, M, 1, M, 1, M, 1, BM=bm, BN=bn, BK=bk)
            t = interleaved({"tilejit": run, "numpy": lambda: a @ b}, args.reps, clock)
            gf = {k: 2 * M ** 3 / v / 1e9 for k, v in t.items()}
            err = float(np.abs(c - ref).max())
            print(f"{bm:>4} {bn:>4} {bk:>4}  {gf['tilejit']:15.1f}  {gf['numpy']:13.1f}  "
                  f"{gf['tilejit'] / gf['numpy']:5.3f}  {err:.2e}", flush=True)


if __name__ == "__main__":
    main()
