"""fp16 matmul (fp32 accumulation) on tensor cores: tilejit's pipelined dot against
Triton and torch (cuBLAS), 4096^3 and 8192^3.

    PYTHONPATH=$PWD python bench/bench_matmul_tc.py [--sizes 4096 8192] [--out x.json]

Each tilejit config is checked against a float64 reference (relative Frobenius error)
before it is timed with triton.testing.do_bench (median, CUDA events).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from bench_cuda import K, tj_kernel, tj_launcher, tr_matmul  # noqa: E402
from tilejit.runtime.options import CudaTuning, Options  # noqa: E402

# BM, BN, BK, warps, stages, arch (90: wgmma sm_90a, 80: ldmatrix + mma.sync),
# CudaTuning.wgmma_inflight, .ring_late_issue (copies after the in-flight group retires: distance S-1)
TJ_CONFIGS = [(128, 256, 64, 8, 4, 90, 1, 1), (128, 256, 64, 8, 3, 90, 1, 1), (128, 256, 64, 8, 4, 90, 1, 0),
              (128, 128, 64, 8, 4, 90, 1, 1), (128, 128, 64, 8, 5, 90, 1, 1), (128, 128, 64, 8, 6, 90, 1, 1),
              (128, 128, 64, 8, 4, 80, 0, 0)]
TR_CONFIGS = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3)]


def tj_config(n, cfg, a, b, c, ref, rows):
    """Compile, check rows [0, rows) against ``ref`` and every element for NaN, time."""
    BM, BN, BK, warps, stages, arch, inflight, late = cfg
    func = K.matmul_kernel(BM, BN, BK, "fp16")
    func.attrs.update(num_stages=stages, target=f"cuda:{arch}")
    tuning = CudaTuning(wgmma_inflight=bool(inflight), ring_late_issue=bool(late))
    kern, secs = tj_kernel(func, warps, Options(cuda=tuning))
    f = tj_launcher(kern, (n // BM, n // BN), a, b, c, n, n, n)
    c.fill_(float("nan"))
    f()
    torch.cuda.synchronize()
    err = ((c[:rows].double() - ref).norm() / ref.norm()).item()
    ptx = kern.asm["ptx"]
    kind = "wgmma" if "wgmma.mma_async" in ptx else ("ldmatrix" if "ldmatrix" in ptx else "mma")
    if not err < 1e-3 or torch.isnan(c).any():
        return {"cfg": list(cfg), "error": err, "kind": kind}
    ms = do_bench(f, warmup=10, rep=100, return_mode="median")
    return {"cfg": list(cfg), "ms": ms, "tflops": 2 * n ** 3 / ms * 1e-9, "err": err, "kind": kind,
            "smem": kern.shared, "compile_s": secs}


def bench(n, configs):
    torch.manual_seed(n)
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float32)
    c2 = torch.empty_like(c)
    rows = min(n, 1024)                 # fp64 reference on a band of rows
    ref = a[:rows].double() @ b.double()
    out = []
    for cfg in configs:
        try:
            r = tj_config(n, cfg, a, b, c, ref, rows)
        except Exception as e:
            r = {"cfg": list(cfg), "exception": f"{type(e).__name__}: {e}"[:300]}
        out.append(r)
        print(n, json.dumps(r), flush=True)
    tr = {}
    for BM, BN, BK, w, s in TR_CONFIGS:
        g = (n // BM, n // BN)
        ms = do_bench(lambda: tr_matmul[g](a, b, c2, n, n, n, BM=BM, BN=BN, BK=BK, num_warps=w, num_stages=s),
                      warmup=10, rep=100, return_mode="median")
        tr[f"{BM}x{BN}x{BK}w{w}s{s}"] = 2 * n ** 3 / ms * 1e-9
    cub = 2 * n ** 3 / do_bench(lambda: torch.matmul(a, b), warmup=10, rep=100, return_mode="median") * 1e-9
    return {"n": n, "tilejit": out, "triton_tflops": tr, "torch_tflops": cub}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[4096, 8192])
    ap.add_argument("--out", default="")
    ap.add_argument("--configs", default="", help="indices into TJ_CONFIGS, comma separated")
    ns = ap.parse_args()
    cfgs = [TJ_CONFIGS[int(i)] for i in ns.configs.split(",")] if ns.configs else TJ_CONFIGS
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": torch.cuda.get_device_name(),
           "results": [bench(n, cfgs) for n in ns.sizes]}
    if ns.out:
        with open(ns.out, "w") as f:
            json.dump(out, f, indent=1)
    print("\n%-6s %-34s %9s" % ("n", "config (BM,BN,BK,w,S,arch,infl,late)", "TFLOP/s"))
    for res in out["results"]:
        for r in res["tilejit"]:
            print("%-6d %-34s %9s" % (res["n"], r["cfg"], f"{r['tflops']:.1f}" if "tflops" in r else r))
        for k, v in res["triton_tflops"].items():
            print("%-6d %-34s %9.1f" % (res["n"], "triton " + k, v))
        print("%-6d %-34s %9.1f" % (res["n"], "torch", res["torch_tflops"]))


if __name__ == "__main__":
    main()
