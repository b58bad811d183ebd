"""Analysis-driven vector loads/stores on the CPU backend: on vs off, side by side.

    python bench/bench_vectorize.py [--threads 2] [--reps 15] [--out bench/results]

Cases: vector add (n divisible by 16: one predicate per vector; n odd: masked
vector loads) at a cache-resident and a memory-bound size, and Triton #741's kernel
(contiguous loads vectorised, the scattered store per element).  "on" and "off"
(TILEJIT_VECTORIZE=0) are separate compiled kernels timed interleaved in every
repetition; medians, GB/s of the bytes each kernel must move, ratio on/off.
Writes bench/results/vectorize-<date>.json (machine, versions, date).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tilejit.runtime.options import use_options  # noqa: E402
import kernels_cpu as K  # noqa: E402
from bench_cpu import machine_info, save_result, timeit_side_by_side  # noqa: E402


def _on_off(launch, reps):
    """Median seconds of ``launch()`` with vectorisation on and off, interleaved."""
    def with_vec(flag):
        def run():
            with use_options(vectorize=flag):
                launch()
        return run
    return timeit_side_by_side({"on": with_vec(True), "off": with_vec(False)}, reps, warmup=2)


def bench_add(n, reps):
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    B = 1024
    t = _on_off(lambda: K.add_kernel[(-(-n // B),)](x, y, out, n, BLOCK=B), reps)
    np.testing.assert_array_equal(out, x + y)
    return {"case": f"vector add fp32 n={n}", "unit": "GB/s", "bytes": 12 * n, **_rates(12 * n, t)}


def bench_741(n, reps):
    rng = np.random.default_rng(3)
    i0 = rng.integers(0, 4, n).astype(np.int64)
    i1 = rng.standard_normal(n).astype(np.float32)
    rows = -(-n // 1000)
    out = np.zeros(4 * rows * 1000, np.float32)
    idx = np.arange(n)
    ref = np.zeros_like(out)
    np.put(ref, idx % 1000 + 1000 * i0 + 4000 * (idx // 1000), i1)
    B = 1024
    t = _on_off(lambda: K.scatter741_kernel[(-(-n // B),)](i0, i1, out, n, XBLOCK=B), reps)
    np.testing.assert_array_equal(out, ref)
    return {"case": f"#741 kernel n={n}", "unit": "GB/s", "bytes": 16 * n, **_rates(16 * n, t)}


def _rates(nbytes, t):
    on, off = nbytes / t["on"] / 1e9, nbytes / t["off"] / 1e9
    return {"on": on, "off": off, "ratio_on_off": on / off,
            "us_on": 1e6 * t["on"], "us_off": 1e6 * t["off"]}


CASES = [(bench_add, 1 << 16), (bench_add, (1 << 16) - 3), (bench_add, 1 << 24),
         (bench_add, (1 << 24) - 3), (bench_741, 1 << 16), (bench_741, 1 << 22),
         (bench_741, (1 << 22) - 3)]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    results = []
    with use_options(backend="cpu", num_threads=args.threads):
        for case, n in CASES:
            reps = args.reps * (8 if n <= 1 << 16 else 1)
            r = case(n, reps)
            results.append(r)
            print(f"{r['case']:<32} on {r['on']:7.2f} GB/s  off {r['off']:7.2f} GB/s  "
                  f"on/off {r['ratio_on_off']:.2f}  ({r['us_on']:.0f} vs {r['us_off']:.0f} us)", flush=True)
    doc = {**machine_info(), "threads": args.threads,
           "command": "python bench/bench_vectorize.py " + " ".join(argv or sys.argv[1:]),
           "results": results}
    save_result(doc, args.out, "vectorize")


if __name__ == "__main__":
    main()
