"""Same-process A/B of the CPU backend's dot loop lowering on the tutorial matmul.

    python bench/ab_dot_loop_cpu.py [--size 1024] [--blocks 128,128,64] [--reps 15] [--out DIR]

One thread everywhere (``OPENBLAS_NUM_THREADS=1``, tilejit ``num_threads=1``), each
call timed by the thread's CPU time, which other processes on a busy machine do not
inflate.  Two copies of ``bench/kernels_cpu.py``'s ``matmul_kernel`` are compiled in
this process: "loop" with the dot loop lowering turned off for its compilation
(``lower_dot_loop.match`` answering None: the K loop lowered as any loop, one dot
per iteration into a double-buffered accumulator), "dot loop" as shipped
(backends/cpu/lower_dot_loop.py); both and numpy then run interleaved.  Ratios are
to numpy's median in the same run.  bench/results/cpu_matmul_notes.md has the figures.
"""
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tilejit.backends.cpu import lower_dot_loop  # noqa: E402
from tilejit.runtime.options import use_options  # noqa: E402


def _kernel_copy(name, tmp):
    """``matmul_kernel`` from kernels_cpu.py under a new name (its own compile cache)."""
    src = open(os.path.join(ROOT, "bench", "kernels_cpu.py")).read()
    start = src.index("@triton.jit\ndef matmul_kernel")
    body = src[start:src.index("@triton.jit", start + 10)]
    path = os.path.join(tmp, f"{name}.py")
    with open(path, "w") as f:
        f.write("import tilejit as triton\nimport tilejit.language as tl\n\n\n"
                + body.replace("def matmul_kernel", f"def {name}"))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--blocks", default="128,128,64", help="BM,BN,BK")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default="", help="directory for a JSON record")
    args = ap.parse_args(argv)
    M = args.size
    BM, BN, BK = (int(x) for x in args.blocks.split(","))
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((M, M)).astype(np.float32) for _ in range(2))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    outs, fns = {}, {}
    real = lower_dot_loop.match
    with tempfile.TemporaryDirectory() as tmp, use_options(backend="cpu", num_threads=1):
        for name, match in (("loop", lambda ctx, op: None), ("dot loop", real)):
            kern = _kernel_copy("mm_" + name.replace(" ", "_"), tmp)
            outs[name] = c = np.empty_like(a)
            lower_dot_loop.match = match             # read while this copy compiles
            try:
                run = kern[(M // BM, M // BN)]
                run(a, b, c, M, M, M, M, 1, M, 1, M, 1, BM=BM, BN=BN, BK=BK)
            finally:
                lower_dot_loop.match = real
            fns[name] = (lambda run=run, c=c: run(a, b, c, M, M, M, M, 1, M, 1, M, 1, BM=BM, BN=BN, BK=BK))
        fns["numpy"] = lambda: a @ b
        times = {k: [] for k in fns}
        for _ in range(args.reps):
            for k, f in fns.items():
                t = time.thread_time()
                f()
                times[k].append(time.thread_time() - t)
    gf = {k: 2 * M ** 3 / float(np.median(v)) / 1e9 for k, v in times.items()}
    rows = {k: {"gflops": v, "ratio_vs_numpy": v / gf["numpy"],
                "maxerr": float(np.abs(outs[k] - ref).max()) if k in outs else None} for k, v in gf.items()}
    for k, r in rows.items():
        print(f"{M}^3 {args.blocks:>12} {k:9s} {r['gflops']:6.1f} GFLOP/s  {r['ratio_vs_numpy']:.3f}x numpy")
    if args.out:
        now = datetime.datetime.now(datetime.timezone.utc)
        doc = {"command": "python bench/ab_dot_loop_cpu.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "date": now.isoformat(timespec="seconds"), "load_average": list(os.getloadavg()),
               "size": M, "blocks": [BM, BN, BK], "reps": args.reps, "rows": rows}
        path = os.path.join(args.out, f"cpu-ab-dot-loop-{now:%Y-%m-%d}-{M}-{BM}x{BN}x{BK}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        print("saved", path)


if __name__ == "__main__":
    main()
