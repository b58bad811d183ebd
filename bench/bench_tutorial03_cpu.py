"""Triton's tutorial 03 matmul kernel as published (tests/triton_scripts/matmul_tutorial03.py,
``% M`` / ``% N`` offsets, no hints) on the CPU backend vs numpy, one thread:

    python bench/bench_tutorial03_cpu.py [--sizes 512 1024] [--reps 7] [--blocks 128,128,64]

fp32 A, B and C (C receives the kernel's fp16 rounding of the fp32 accumulator), square
sizes, GROUP_SIZE_M=8.  Thread CPU time (``time.thread_time``) with numpy on one OpenBLAS
thread, the two alternating (``tune_matmul_cpu.interleaved``): the machine this was written
on is shared.  Results: bench/results/cpu_codegen_notes.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")       # before numpy loads
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from tilejit.runtime.options import use_options  # noqa: E402
from tests.shared_kernels import script_kernels  # noqa: E402
from tune_matmul_cpu import interleaved  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--blocks", default="128,128,64")
    args = ap.parse_args(argv)
    kernel = script_kernels("matmul_tutorial03.py")["matmul_kernel"]
    bm, bn, bk = (int(x) for x in args.blocks.split(","))
    print(f"{'size':>5}  tutorial03 GFLOP/s  numpy GFLOP/s  ratio  maxerr", flush=True)
    with use_options(backend="cpu", num_threads=1):
        for n in args.sizes:
            rng = np.random.default_rng(n)
            a = rng.standard_normal((n, n), dtype=np.float32)
            b = rng.standard_normal((n, n), dtype=np.float32)
            c = np.empty_like(a)
            grid = (-(-n // bm) * -(-n // bn),)

            def run():
                kernel[grid](a, b, c, n, n, n, n, 1, n, 1, n, 1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                             BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION="")
            t = interleaved({"tilejit": run, "numpy": lambda: a @ b}, args.reps, time.thread_time)
            gf = {k: 2 * n ** 3 / v / 1e9 for k, v in t.items()}
            err = float(np.abs(c - (a.astype(np.float64) @ b)).max() / np.sqrt(n))
            print(f"{n:>5}  {gf['tilejit']:17.1f}  {gf['numpy']:13.1f}  {gf['tilejit'] / gf['numpy']:5.3f}"
                  f"  {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
