"""What a cheaper LLVM pipeline costs at run time: the benchmark kernels of
bench/bench_cpu_peers.py (and the unrolled 3x3 stencil) compiled under each pipeline
choice and timed interleaved in one process.

    python bench/bench_compile_time_runtime.py [--reps 15] [--variants unroll=1,default,...]
                                               [--only NAME] [--out bench/results]

The row softmax of 1000 columns in blocks of 1024 runs every program on the
masked copy of its tile ops (the path whose loops ``rolled_cold_loops`` keeps rolled).
A variant is a set of ``Options`` fields, ``name=value`` joined by ``+``:
``unroll=0|1`` (``cpu_loop_unroll``), ``level=1|2|3`` (``cpu_opt_level``);
``default`` is the options as they are.  Every kernel is compiled once per variant
(each is a different compiled kernel: both fields are in the compile key), then each
repetition times one batch of calls of every variant in turn (interleaved, so a
loaded machine's drift hits them alike), on one thread, by the process's CPU time.
Per kernel: the median time of each variant and its ratio to the first variant
(> 1: slower).  JSON (``compile-runtime-<date>.json``) through ``bench_cpu.save_result``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

_FIELDS = {"unroll": "cpu_loop_unroll", "level": "cpu_opt_level"}


def parse_variant(text: str) -> dict:
    """``"unroll=0+level=3"`` -> ``{"cpu_loop_unroll": 0, "cpu_opt_level": 3}``."""
    if text == "default":
        return {}
    out = {}
    for item in text.split("+"):
        name, eq, value = item.partition("=")
        if name not in _FIELDS or not eq:
            raise SystemExit(f"variant {text!r}: write name=value joined by '+', names {sorted(_FIELDS)}")
        out[_FIELDS[name]] = int(value)
    return out


def workloads():
    """name -> (bytes or flops per call, unit, call): the rows of bench_cpu_peers.py at
    their middle sizes, and the stencil."""
    import tilejit
    import kernels_cpu as K
    import kernels_cpu_peers as KP
    from bench_compile_cpu import stencil3x3_kernel
    rng = np.random.default_rng(0)
    f32 = np.float32
    n = 1 << 20
    x, y, o = rng.random(n, dtype=f32), rng.random(n, dtype=f32), np.empty(n, f32)
    R, C = 8192, 8192
    rs, rs_o = rng.random((R, C), dtype=f32), np.empty(R, f32)
    lr, lc = 8192, 1024
    ln_x, ln_y = rng.standard_normal((lr, lc)).astype(f32), np.empty((lr, lc), f32)
    ln_w, ln_b = rng.random(lc, dtype=f32), rng.random(lc, dtype=f32)
    ln_m, ln_r = np.empty(lr, f32), np.empty(lr, f32)
    mm = 1024
    a, b, c = (rng.standard_normal((mm, mm)).astype(f32), rng.standard_normal((mm, mm)).astype(f32),
               np.empty((mm, mm), f32))
    sm, sm_o = rng.standard_normal((4096, 4096)).astype(f32), np.empty((4096, 4096), f32)
    sm2, sm2_o = rng.standard_normal((4096, 1000)).astype(f32), np.empty((4096, 1000), f32)
    H = W = 2048
    st, st_o = rng.standard_normal((H, W)).astype(f32), np.empty((H, W), f32)
    return {
        "vector add fp32 2^20": (12 * n, "GB/s", lambda: K.add_kernel[(tilejit.cdiv(n, 4096),)](
            x, y, o, n, BLOCK=4096)),
        "row sum 8192x8192 fp32": (4 * R * C, "GB/s", lambda: KP.row_sum_kernel[(R,)](
            rs, rs_o, C, C, BLOCK=1024)),
        "layer norm fwd 8192x1024 fp32": (8 * lr * lc, "GB/s", lambda: KP._layer_norm_fwd_fused[(lr,)](
            ln_x, ln_y, ln_w, ln_b, ln_m, ln_r, lc, lc, 1e-5, BLOCK_SIZE=lc)),
        "matmul fp32 1024^3": (2 * mm ** 3, "GFLOP/s", lambda: K.matmul_kernel[(mm // 128, mm // 128)](
            a, b, c, mm, mm, mm, mm, 1, mm, 1, mm, 1, BM=128, BN=128, BK=64)),
        "row softmax 4096x4096 fp32": (8 * 4096 * 4096, "GB/s", lambda: K.softmax_kernel[(4096,)](
            sm_o, sm, 4096, 4096, 4096, BLOCK=4096)),
        "row softmax 4096x1000 fp32 (masked)": (8 * 4096 * 1000, "GB/s", lambda: K.softmax_kernel[(4096,)](
            sm2_o, sm2, 1000, 1000, 1000, BLOCK=1024)),
        "stencil 3x3 2048^2 (64x64 tiles)": (8 * H * W, "GB/s", lambda: stencil3x3_kernel[(H // 64, W // 64)](
            st, st_o, H, W, BH=64, BW=64)),
    }


def run(variants, reps, only=""):
    from tilejit.runtime.options import use_options
    rows = []
    for name, (work, unit, call) in workloads().items():
        if only and only not in name:
            continue
        for changes in variants.values():          # compile (and warm) every variant first
            with use_options(num_threads=1, **changes):
                call()
                call()
        t0 = time.process_time()
        with use_options(num_threads=1):
            call()
        batch = max(1, int(0.02 / max(time.process_time() - t0, 1e-6)))
        times = {v: [] for v in variants}
        for _ in range(reps):
            for v, changes in variants.items():
                with use_options(num_threads=1, **changes):
                    c0 = time.process_time()
                    for _ in range(batch):
                        call()
                    times[v].append((time.process_time() - c0) / batch)
        med = {v: statistics.median(t) for v, t in times.items()}
        first = next(iter(variants))
        row = {"workload": name, "unit": unit, "seconds": med,
               "throughput": {v: work / s / 1e9 for v, s in med.items()},
               "time_vs_first": {v: med[v] / med[first] for v in variants}}
        rows.append(row)
        print(f"{name:34s} " + "  ".join(f"{v}: {row['throughput'][v]:7.2f} {unit} "
                                         f"({row['time_vs_first'][v]:.3f}x time)" for v in variants), flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--variants", default="unroll=1,unroll=0",
                    help="comma-separated variants; the first is the reference")
    ap.add_argument("--only", default="")
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args(argv)
    variants = {v: parse_variant(v) for v in args.variants.split(",") if v}
    from bench_cpu import machine_info, save_result
    doc = {**machine_info(), "load_average_before": list(os.getloadavg()),
           "command": "python bench/bench_compile_time_runtime.py " + " ".join(argv or sys.argv[1:]),
           "variants": {v: c for v, c in variants.items()}, "threads": 1, "clock": "cpu"}
    doc["results"] = run(variants, args.reps, args.only)
    doc["load_average_after"] = list(os.getloadavg())
    times = [r["time_vs_first"] for r in doc["results"]]
    doc["geomean_time_vs_first"] = {v: statistics.geometric_mean(t[v] for t in times) for v in variants}
    print("geomean time vs the first variant: " +
          "  ".join(f"{v} {g:.3f}x" for v, g in doc["geomean_time_vs_first"].items()))
    save_result(doc, args.out, "compile-runtime" + (f"-{args.tag}" if args.tag else ""))


if __name__ == "__main__":
    main()
