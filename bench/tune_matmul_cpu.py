"""Block-size sweep of the tl.dot matmul on the CPU backend vs numpy's BLAS.

    python bench/tune_matmul_cpu.py [--threads 2] [--size 1024]
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

BLOCKS = tuple(tuple(int(x) for x in s.split(",")) for s in __import__("os").environ.get("BLOCKS", "64,64,32 64,128,64 128,128,32 128,128,64 64,256,32 128,256,32 256,128,32").split())


def bench(fn, n=5):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    M = args.size
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, M)).astype(np.float32), rng.standard_normal((M, M)).astype(np.float32)
    c = np.empty_like(a)
    print("numpy", round(2 * M ** 3 / bench(lambda: a @ b) / 1e9, 1), "GFLOP/s", flush=True)
    with use_options(backend="cpu", num_threads=args.threads):
        for bm, bn, bk in BLOCKS:
            t = bench(lambda: matmul_kernel[(M // bm, M // bn)](a, b, c, M, M, M, M, 1, M, 1, M, 1,
                                                                BM=bm, BN=bn, BK=bk))
            err = float(np.abs(c - a @ b).max())
            print(bm, bn, bk, round(2 * M ** 3 / t / 1e9, 1), "GFLOP/s", "maxerr", err, flush=True)


if __name__ == "__main__":
    main()
