"""Cold compile time of the CPU backend on tutorial-style kernels.

    python bench/bench_compile_cpu.py [--reps 3] [--out bench/results]

Each sample is a first call: a fresh ``tilejit.jit`` object and an empty cache
directory, so the frontend, the lowering, LLVM's optimisation and code generation
all run.  The LLVM optimisation pipeline's share is measured separately
(``llvm_opt_cpu_s``: CPU seconds inside ``binding.optimize``).  ``cpu_s`` is the
process's CPU time, which a busy machine does not inflate as it does the wall time.
Medians; the JSON (``cpu-compile-<date>.json``) goes through ``bench_cpu.save_result``.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tilejit  # noqa: E402
import tilejit.language as tl  # noqa: E402
from tilejit.runtime.options import use_options  # noqa: E402
from bench_cpu import machine_info, save_result  # noqa: E402
import bench_cpu_reduce as R  # noqa: E402
import kernels_cpu as K  # noqa: E402


@tilejit.jit
def stencil3x3_kernel(x_ptr, y_ptr, H, W, BH: tl.constexpr, BW: tl.constexpr):
    """A 3x3 box stencil over a 2-D tile, the taps unrolled by ``tl.static_range``."""
    r = tl.program_id(0) * BH + tl.arange(0, BH)[:, None]
    c = tl.program_id(1) * BW + tl.arange(0, BW)[None, :]
    acc = tl.zeros((BH, BW), dtype=tl.float32)
    for di in tl.static_range(3):
        for dj in tl.static_range(3):
            rr = r + (di - 1)
            cc = c + (dj - 1)
            m = (rr >= 0) & (rr < H) & (cc >= 0) & (cc < W)
            acc += tl.load(x_ptr + rr * W + cc, mask=m, other=0.0) * ((di + 1) * 0.25 + dj * 0.125)
    tl.store(y_ptr + r * W + c, acc, mask=(r < H) & (c < W))


def _cases():
    f32 = np.float32
    x1 = np.ones(4096, f32)
    a = np.ones((256, 256), f32)
    c = np.empty_like(a)
    ln = [np.ones((8, 1024), f32), np.empty((8, 1024), f32), np.ones(1024, f32), np.ones(1024, f32),
          np.empty(8, f32), np.empty(8, f32)]
    return {
        "vector add": (K.add_kernel, lambda f: f[(4,)](x1, x1, x1.copy(), 4096, BLOCK=1024)),
        "row softmax": (K.softmax_kernel, lambda f: f[(4,)](c, a, 256, 256, 256, BLOCK=256)),
        "matmul 128x128x64": (K.matmul_kernel, lambda f: f[(2, 2)](a, a, c, 256, 256, 256, 256, 1, 256, 1,
                                                                    256, 1, BM=128, BN=128, BK=64)),
        "layer norm fwd": (R.layer_norm_fwd, lambda f: f[(8,)](*ln, 1024, 1024, 1e-5, BLOCK_SIZE=1024)),
        "row sum loop": (R.row_sum_kernel, lambda f: f[(4,)](a, a[:, 0].copy(), 256, 256, BLOCK=128)),
        "stencil 3x3 unrolled": (stencil3x3_kernel, lambda f: f[(4, 4)](a, c, 256, 256, BH=64, BW=64)),
    }


class _OptTimer:
    """Wraps ``binding.optimize`` to add up the CPU seconds spent in LLVM's pipeline."""

    def __init__(self):
        from tilejit.backends.llvm import binding
        self.binding, self.inner, self.seconds = binding, binding.optimize, 0.0

    def __enter__(self):
        def timed(*a, **kw):
            t = time.process_time()
            try:
                return self.inner(*a, **kw)
            finally:
                self.seconds += time.process_time() - t
        self.binding.optimize = timed
        return self

    def __exit__(self, *exc):
        self.binding.optimize = self.inner
        return False


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    results = []
    for name, (kern, call) in _cases().items():
        if args.only and args.only not in name:
            continue
        total, proc, opt = [], [], []
        for _ in range(args.reps):
            f = tilejit.jit(kern.fn)
            with tempfile.TemporaryDirectory() as d, use_options(backend="cpu", cache_dir=d), \
                    _OptTimer() as timer:
                t, p = time.perf_counter(), time.process_time()
                call(f)
                total.append(time.perf_counter() - t)
                proc.append(time.process_time() - p)
            opt.append(timer.seconds)
        r = {"case": name, "first_call_s": float(np.median(total)), "cpu_s": float(np.median(proc)),
             "llvm_opt_cpu_s": float(np.median(opt))}
        results.append(r)
        print("  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()), flush=True)
    doc = {**machine_info(), "load_average": list(os.getloadavg()),
           "command": "python bench/bench_compile_cpu.py " + " ".join(argv or sys.argv[1:]), "results": results}
    save_result(doc, args.out, "cpu-compile")


if __name__ == "__main__":
    main()
