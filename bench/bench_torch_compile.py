"""torch.compile on CPU: Inductor's Triton kernels on tilejit (cpu_backend="triton")
against torch.compile's default C++ CPU backend and eager torch.

    python bench/bench_torch_compile.py [--threads 2] [--only NAME] [--out DIR]

Per model: compile time (first call after ``torch._dynamo.reset()`` with Inductor's
caches disabled, so every kernel is generated and compiled; tilejit's own disk
cache is pointed at a fresh directory) and steady-state time (median of timed
calls after warm-up), each backend in turn in one process.  Saves JSON with the
machine, versions, load average and date under bench/results/.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ["TILEJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilejit-bench-tc-")

import tilejit  # noqa: E402
import tilejit.compat  # noqa: E402

tilejit.compat.install_triton_alias()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "torch_compile"))
from models import MLP, Attention  # noqa: E402
from bench_cpu import machine_info as cpu_machine_info, save_result  # noqa: E402


def _r(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


MODELS = {
    "elementwise_chain": (lambda: lambda x, y: (torch.relu(x * 2 + y) - 0.5).exp() * torch.sigmoid(y),
                          lambda: (_r(1 << 20), _r(1 << 20))),
    "softmax_512x1024": (lambda: lambda x: torch.softmax(x, -1), lambda: (_r(512, 1024),)),
    "layer_norm_2048x1024": (lambda: lambda x, w, b: F.layer_norm(x, (1024,), w, b),
                             lambda: (_r(2048, 1024), _r(1024), _r(1024))),
    "gelu_4M": (lambda: lambda x: F.gelu(x), lambda: (_r(1 << 22),)),
    "row_sum_64x20000": (lambda: lambda x: x.sum(-1), lambda: (_r(64, 20000),)),
    "col_mean_4096x256": (lambda: lambda x: x.mean(0), lambda: (_r(4096, 256),)),
    "mlp_forward_b256": (MLP, lambda: (_r(256, 32),)),
    "attention_forward": (Attention, lambda: (_r(8, 64, 32),)),
}


def _steady(fn, args, min_time=0.5, min_reps=5):
    for _ in range(3):
        fn(*args)
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_model(name, options):
    make, inputs = MODELS[name]
    torch._dynamo.reset()
    fn = make()
    args = inputs()
    compiled = torch.compile(fn, options=options) if options is not None else fn
    with torch.no_grad():
        t0 = time.perf_counter()
        compiled(*args)
        first = time.perf_counter() - t0
        return first, _steady(compiled, args)


def machine_info():
    """bench_cpu's machine and versions record, with torch's version."""
    info = cpu_machine_info()
    info["versions"]["torch"] = torch.__version__
    return info


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    os.environ["TILEJIT_NUM_THREADS"] = str(args.threads)
    torch._inductor.config.force_disable_caches = True
    load_before = os.getloadavg()
    results = []
    for name in MODELS:
        if args.only and args.only not in name:
            continue
        rec = {"model": name}
        for label, options in (("tilejit", {"cpu_backend": "triton"}), ("cpp", {}), ("eager", None)):
            first, steady = bench_model(name, options)
            rec[f"{label}_compile_s"] = first if options is not None else None
            rec[f"{label}_ms"] = steady * 1e3
        rec["tilejit_vs_cpp"] = rec["cpp_ms"] / rec["tilejit_ms"]      # > 1: tilejit faster
        results.append(rec)
        print(f"{name:24s} tilejit {rec['tilejit_ms']:8.3f} ms (compile {rec['tilejit_compile_s']:5.1f} s)  "
              f"cpp {rec['cpp_ms']:8.3f} ms (compile {rec['cpp_compile_s']:5.1f} s)  eager "
              f"{rec['eager_ms']:8.3f} ms  speed vs cpp {rec['tilejit_vs_cpp']:.2f}x", flush=True)
    ratios = [r["tilejit_vs_cpp"] for r in results]
    doc = {**machine_info(), "threads": args.threads, "load_avg_before": load_before,
           "load_avg_after": os.getloadavg(),
           "command": "python bench/bench_torch_compile.py " + " ".join(argv or sys.argv[1:]),
           "geomean_tilejit_vs_cpp": statistics.geometric_mean(ratios) if ratios else None,
           "results": results}
    print(f"geomean steady-state speed vs the C++ backend: {doc['geomean_tilejit_vs_cpp']:.2f}x")
    save_result(doc, args.out, "torch-compile-cpu")


if __name__ == "__main__":
    main()
