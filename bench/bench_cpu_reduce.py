"""Reductions on the CPU backend against numba, torch and numpy (issue 20 workloads).

    python bench/bench_cpu_reduce.py [--threads 1] [--reps 9] [--only sum] [--out bench/results]

Row sum 8192x8192 fp32 (one program per row, 1024-wide column blocks carried by a
loop), layer norm forward 8192x1024 (Triton tutorial 05's kernel), row softmax
4096x4096 into a preallocated output.  Every peer runs with ``--threads`` threads
(numba ``prange`` with ``numba.set_num_threads``, ``torch.set_num_threads``); the
peers alternate within each repetition and medians are reported.  With one thread
the clock is the calling thread's CPU time (other processes cannot inflate it).
numba and torch are optional.  Writes ``cpu-reduce-<date>.json`` via
``bench_cpu.save_result``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tilejit.runtime.options import use_options  # noqa: E402
from bench_cpu import machine_info, save_result  # noqa: E402
import kernels_cpu as K  # noqa: E402
from kernels_cpu_peers import row_sum_kernel, _layer_norm_fwd_fused as layer_norm_fwd  # noqa: E402


def _numba():
    try:
        import numba
    except ImportError:
        return None
    nb = numba.njit(parallel=True, fastmath=True, cache=False)

    @nb
    def row_sum(x, out):
        for i in numba.prange(x.shape[0]):
            out[i] = x[i].sum()

    @nb
    def layer_norm(x, w, b, y, eps):
        n = x.shape[1]
        for i in numba.prange(x.shape[0]):
            m = x[i].sum() / n
            d = x[i] - m
            r = 1.0 / np.sqrt((d * d).sum() / n + eps)
            y[i] = d * r * w + b

    @nb
    def softmax(x, out):
        for i in numba.prange(x.shape[0]):
            e = np.exp(x[i] - x[i].max())
            out[i] = e / e.sum()
    return numba, {"sum": row_sum, "layer_norm": layer_norm, "softmax": softmax}


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def interleaved(fns: dict, reps: int, clock) -> dict:
    for f in fns.values():
        f()
    ts = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            t = clock()
            f()
            ts[k].append(clock() - t)
    return {k: float(np.median(v)) for k, v in ts.items()}


def case_sum(nb, torch):
    R = C = 8192
    x = np.random.default_rng(0).random((R, C), dtype=np.float32)
    out = np.empty(R, np.float32)
    fns = {"tilejit": lambda: row_sum_kernel[(R,)](x, out, C, C, BLOCK=1024),
           "numpy": lambda: x.sum(axis=1)}
    if nb:
        o2 = np.empty(R, np.float32)
        fns["numba"] = lambda: nb["sum"](x, o2)
    if torch:
        tx, to = torch.from_numpy(x), torch.empty(R)
        fns["torch"] = lambda: torch.sum(tx, dim=1, out=to)

    def check():
        np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=1), rtol=1e-5)
    return "row sum 8192x8192 fp32", fns, 4 * R * C, check


def case_layer_norm(nb, torch):
    R, C = 8192, 1024
    rng = np.random.default_rng(1)
    x = rng.standard_normal((R, C)).astype(np.float32)
    w, b = rng.random(C, dtype=np.float32), rng.random(C, dtype=np.float32)
    y, mean, rstd = np.empty_like(x), np.empty(R, np.float32), np.empty(R, np.float32)
    fns = {"tilejit": lambda: layer_norm_fwd[(R,)](x, y, w, b, mean, rstd, C, C, 1e-5, BLOCK_SIZE=1024)}
    if nb:
        y2 = np.empty_like(x)
        fns["numba"] = lambda: nb["layer_norm"](x, w, b, y2, np.float32(1e-5))
    if torch:
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        fns["torch"] = lambda: torch.nn.functional.layer_norm(tx, (C,), tw, tb, 1e-5)

    def check():
        x64 = x.astype(np.float64)
        m = x64.mean(axis=1, keepdims=True)
        ref = (x64 - m) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5) * w + b
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    return "layer norm fwd 8192x1024 fp32", fns, 8 * R * C, check


def case_softmax(nb, torch):
    R = C = 4096
    x = np.random.default_rng(2).standard_normal((R, C)).astype(np.float32)
    out = np.empty_like(x)
    fns = {"tilejit": lambda: K.softmax_kernel[(R,)](out, x, C, C, C, BLOCK=C)}
    if nb:
        o2 = np.empty_like(x)
        fns["numba"] = lambda: nb["softmax"](x, o2)
    if torch:
        tx, to = torch.from_numpy(x), torch.empty(R, C)
        fns["torch"] = lambda: torch.ops.aten._softmax.out(tx, 1, False, out=to)

    def check():
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-9)
    return "row softmax 4096x4096 fp32 into out", fns, 8 * R * C, check


CASES = {"sum": case_sum, "layer_norm": case_layer_norm, "softmax": case_softmax}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    nbm, torch = _numba(), _torch()
    nb = None
    if nbm is not None:
        nbm[0].set_num_threads(args.threads)
        nb = nbm[1]
    if torch is not None:
        torch.set_num_threads(args.threads)
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    results = []
    with use_options(backend="cpu", num_threads=args.threads):
        for name, case in CASES.items():
            if args.only and args.only not in name:
                continue
            title, fns, nbytes, check = case(nb, torch)
            t = interleaved(fns, args.reps, clock)
            check()
            gbs = {k: nbytes / v / 1e9 for k, v in t.items()}
            best = max((v, k) for k, v in gbs.items() if k != "tilejit")
            r = {"case": title, "unit": "GB/s", **gbs, "best_peer": best[1],
                 "ratio_vs_best": gbs["tilejit"] / best[0]}
            results.append(r)
            print("  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()),
                  flush=True)
    doc = {**machine_info(), "threads": args.threads, "clock": clock.__name__,
           "load_average": list(os.getloadavg()),
           "command": "python bench/bench_cpu_reduce.py " + " ".join(argv or sys.argv[1:]),
           "results": results}
    if nbm is not None:
        doc["versions"]["numba"] = nbm[0].__version__
    if torch is not None:
        doc["versions"]["torch"] = torch.__version__
    save_result(doc, args.out, "cpu-reduce")


if __name__ == "__main__":
    main()
