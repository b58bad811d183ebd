"""tilejit's cuda backend side by side with Triton and torch on one GPU, in one run.

    PYTHONPATH=$PWD python bench/bench_cuda.py [--out bench/results/cuda_h200.json] [--quick]

Kernels are built in tile IR (tests/unit/test_cuda_ptx.py) until the frontend lands.
Times are medians of triton.testing.do_bench (CUDA events); bandwidth counts each
input read once and each output written once.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "unit"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import test_cuda_ptx as K  # noqa: E402
import tilejit  # noqa: E402
import tilejit.language as tjl  # noqa: E402
from tilejit.backends import LaunchArgs, get_backend  # noqa: E402


# ---------------------------------------------------------------- Triton peers
@triton.jit
def tr_add(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, m) + tl.load(y + offs, m), m)


@triton.jit
def tr_softmax(x, y, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    v = tl.load(x + row * stride + cols, m, other=-float("inf"))
    v = v - tl.max(v, 0)
    e = tl.exp(v)
    tl.store(y + row * stride + cols, e / tl.sum(e, 0), m)


@triton.jit
def tr_741(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 1000
    x1 = xindex // 1000
    tmp0 = tl.load(in_ptr0 + xindex, xmask)
    tmp1 = tl.load(in_ptr1 + xindex, xmask)
    tl.store(out_ptr0 + x0 + (1000 * tmp0) + (196000 * x1), tmp1, xmask)


@triton.jit
def tr_matmul(a, b, c, M, N, K_, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    ap = a + om[:, None] * K_ + ok[None, :]
    bp = b + ok[:, None] * N + on[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K_, BK):
        acc += tl.dot(tl.load(ap), tl.load(bp))
        ap += BK
        bp += BK * N
    tl.store(c + om[:, None] * N + on[None, :], acc)


# ---------------------------------------------------------------- tilejit side
def tj_kernel(func, num_warps=4, options=None):
    func.attrs["num_warps"] = num_warps
    t0 = time.perf_counter()
    k = get_backend("cuda").compile(func, options)
    return k, time.perf_counter() - t0


def tj_launcher(kern, grid, *args):
    vals = [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args]
    la = LaunchArgs(vals, [], [a for a in args if isinstance(a, torch.Tensor)])
    grid = tuple(grid) + (1,) * (3 - len(grid))
    return lambda: kern.launch(grid, la)


def row(name, unit, amount, times, extra=None):
    r = {"name": name, "unit": unit}
    for who, ms in times.items():
        r[f"{who}_ms"] = ms
        r[f"{who}_{unit}"] = amount / (ms * 1e-3) / 1e12 if ms else None
    r.update(extra or {})
    return r


def bench_add(n):
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    o1, o2 = torch.empty_like(x), torch.empty_like(x)
    func = K.add_kernel(1024)
    func.arguments[3].divisibility = 16
    kern, _ = tj_kernel(func)
    f = tj_launcher(kern, (n // 1024,), x, y, o1, n)
    f()
    tr_add[(n // 1024,)](x, y, o2, n, BLOCK=1024)
    assert torch.equal(o1, x + y) and torch.equal(o2, x + y)
    t = {"tilejit": do_bench(f, return_mode="median"),
         "triton": do_bench(lambda: tr_add[(n // 1024,)](x, y, o2, n, BLOCK=1024), return_mode="median"),
         "torch": do_bench(lambda: torch.add(x, y, out=o2), return_mode="median")}
    return row(f"vector add fp32 n={n}", "TB/s", 12 * n, t)


def bench_softmax(M, N):
    x = torch.randn(M, N, device="cuda")
    y1, y2 = torch.empty_like(x), torch.empty_like(x)
    func = K.softmax_kernel(N)
    func.arguments[3].divisibility = 16
    kern, _ = tj_kernel(func, 8)
    f = tj_launcher(kern, (M,), x, y1, N, N)
    f()
    ref = torch.softmax(x, 1)
    err = ((y1 - ref).norm() / ref.norm()).item()
    assert err < 1e-5, err
    t = {"tilejit": do_bench(f, return_mode="median"),
         "triton": do_bench(lambda: tr_softmax[(M,)](x, y2, N, N, BLOCK=N, num_warps=8), return_mode="median"),
         "torch": do_bench(lambda: torch.softmax(x, 1), return_mode="median")}
    return row(f"row softmax fp32 {M}x{N}", "TB/s", 8 * M * N, t, {"tilejit_rel_err": err})


def bench_741(xnumel):
    rows = xnumel // 1000
    in0 = torch.randint(0, 196, (xnumel,), device="cuda", dtype=torch.int64)
    in1 = torch.randn(xnumel, device="cuda")
    o1 = torch.zeros(rows * 196000, device="cuda")
    o2 = torch.zeros_like(o1)
    func = K.k741(1024, reassign=False)
    func.arguments[3].divisibility = 16     # xnumel % 16 == 0, as the runtime specialises it
    kern, _ = tj_kernel(func)
    grid = (triton.cdiv(xnumel, 1024),)
    f = tj_launcher(kern, grid, in0, in1, o1, xnumel)
    f()
    tr_741[grid](in0, in1, o2, xnumel, XBLOCK=1024)
    assert torch.equal(o1, o2)
    t = {"tilejit": do_bench(f, return_mode="median"),
         "triton": do_bench(lambda: tr_741[grid](in0, in1, o2, xnumel, XBLOCK=1024), return_mode="median")}
    return row(f"#741 scatter xnumel={xnumel}", "TB/s", 16 * xnumel, t)


# BM, BN, BK, warps, min CTAs per SM, num_stages.  BK=64 tiles take the cp.async ring
# (wgmma on sm_90, ldmatrix + mma.sync elsewhere); BK=32 keeps the register path.
MM_CONFIGS = ((128, 256, 64, 8, 0, 4), (128, 256, 64, 8, 0, 3), (128, 128, 64, 8, 0, 4), (128, 128, 64, 8, 0, 5),
              (64, 128, 64, 4, 0, 4), (128, 128, 32, 8, 0, 2))
TR_MM_CONFIGS = ((128, 128, 64, 8, 3), (128, 256, 64, 8, 3))     # Triton: BM, BN, BK, warps, stages


def bench_matmul(n):
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c1 = torch.empty(n, n, device="cuda", dtype=torch.float32)
    c2 = torch.empty_like(c1)
    ref = (a.double() @ b.double())
    sweep, best = {}, None
    for BM, BN, BK, warps, min_ctas, stages in MM_CONFIGS:      # tilejit's configs, timed like an autotuner
        func = K.matmul_kernel(BM, BN, BK, "fp16")
        func.attrs["min_ctas_per_sm"] = min_ctas
        func.attrs["num_stages"] = stages
        kern, _ = tj_kernel(func, warps)
        f = tj_launcher(kern, (n // BM, n // BN), a, b, c1, n, n, n)
        c1.fill_(float("nan"))
        f()
        err = ((c1.double() - ref).norm() / ref.norm()).item()
        assert err < 1e-3, (BM, BN, BK, warps, err)
        ms = do_bench(f, warmup=5, rep=50, return_mode="median")
        sweep[f"{BM}x{BN}x{BK}w{warps}c{min_ctas}s{stages}"] = ms
        if best is None or ms < best[0]:
            best = (ms, (BM, BN, BK, warps, min_ctas, stages), err, kern.shared)
    tr_sweep = {}
    for BM, BN, BK, warps, stages in TR_MM_CONFIGS:   # Triton's best of its usual configs
        g = (n // BM, n // BN)
        tr_sweep[f"{BM}x{BN}x{BK}w{warps}s{stages}"] = do_bench(
            lambda: tr_matmul[g](a, b, c2, n, n, n, BM=BM, BN=BN, BK=BK, num_warps=warps, num_stages=stages),
            return_mode="median")
    t = {"tilejit": best[0], "triton": min(tr_sweep.values()),
         "torch": do_bench(lambda: torch.matmul(a, b), return_mode="median")}
    return row(f"matmul fp16 {n}^3", "TFLOP/s", 2 * n ** 3, t,
               {"tilejit_rel_err": best[2], "tilejit_config": list(best[1]), "tilejit_smem": best[3],
                "tilejit_sweep_ms": sweep, "triton_sweep_ms": tr_sweep})


@tilejit.jit
def tj_add(x, y, o, n, BLOCK: tjl.constexpr):
    offs = tjl.program_id(0) * BLOCK + tjl.arange(0, BLOCK)
    m = offs < n
    tjl.store(o + offs, tjl.load(x + offs, mask=m) + tjl.load(y + offs, mask=m), mask=m)


def _time_calls(fn, calls):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def bench_launch(calls=2000, reps=7):
    """Host time per launch of a 4-argument add (1 program), peers interleaved per
    repetition (the host is shared and noisy); medians over ``reps``."""
    from tilejit.runtime.options import use_options
    x = torch.randn(1024, device="cuda")
    o = torch.empty_like(x)
    kern, _ = tj_kernel(K.add_kernel(1024))
    out, fns = {}, {}
    try:          # the whole runtime path: kernel[grid](...) binding, cache lookup, launch
        with use_options(backend="cuda"):
            o.zero_()
            tj_add[(1,)](x, x, o, 1024, BLOCK=1024)
            torch.cuda.synchronize()
            assert torch.equal(o, x + x)
        fns["tilejit_jit_grid"] = lambda: tj_add[(1,)](x, x, o, 1024, BLOCK=1024)
    except Exception as e:  # the runtime is another part's; report, don't fail
        out["tilejit_jit_error"] = f"{type(e).__name__}: {e}"
    la = LaunchArgs([x.data_ptr(), x.data_ptr(), o.data_ptr(), 1024], [], [x, x, o, 1024])
    fns.update({"tilejit": tj_launcher(kern, (1,), x, x, o, 1024),
                "tilejit_prebound": lambda: kern.launch((1, 1, 1), la),
                "triton": lambda: tr_add[(1,)](x, x, o, 1024, BLOCK=1024),
                "torch": lambda: torch.add(x, x, out=o)})
    fns["tilejit"]()
    launcher = kern._launcher
    if launcher is not None and launcher.native and 0 in launcher.cache:
        handle, native, values = launcher.cache[0][1], launcher.native, la.values   # the floor:
        fns["tilejit_native_only"] = lambda: native(handle, 1, 1, 1, 0, *values)      # packing + driver
    if "tilejit_jit_grid" in fns:        # the same call, launches packed by struct + ctypes
        fns["tilejit_jit_grid_no_native"] = fns["tilejit_jit_grid"]
    times = {k: [] for k in fns}
    for _ in range(reps):
        for who, fn in fns.items():
            with use_options(backend="cuda", native_call=not who.endswith("no_native")):
                times[who].append(_time_calls(fn, calls))
    for who, ts in times.items():
        out[f"{who}_us_per_call"] = float(statistics.median(ts))
    return {"name": "launch overhead (4-arg add, host time per call)", **out}


def bench_compile():
    out = {"name": "cold compile (s)"}
    for label, mk, nw in (("add", lambda: K.add_kernel(1024), 4), ("softmax", lambda: K.softmax_kernel(4096), 8),
                          ("matmul", lambda: K.matmul_kernel(128, 128, 32), 8)):
        _, secs = tj_kernel(mk(), nw)
        out[f"tilejit_{label}"] = secs
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    try:
        triton.knobs.cache.dir = os.environ["TRITON_CACHE_DIR"]
    except Exception:
        pass
    fresh = {k: triton.jit(f.fn) for k, f in (("add", tr_add), ("softmax", tr_softmax), ("matmul", tr_matmul))}
    x = torch.randn(4096 * 4, device="cuda")
    xs = torch.randn(16, 4096, device="cuda")
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    c = torch.empty(256, 256, device="cuda")
    for label, fn in (("add", lambda: fresh["add"][(1,)](x, x, x, 4096, BLOCK=2048)),
                      ("softmax", lambda: fresh["softmax"][(16,)](xs, xs, 4096, 4096, BLOCK=4096, num_warps=8)),
                      ("matmul", lambda: fresh["matmul"][(2, 2)](a, a, c, 256, 256, 256, BM=128, BN=128, BK=64,
                                                                 num_warps=8, num_stages=3))):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out[f"triton_{label}"] = time.perf_counter() - t0
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated: add,softmax,741,matmul,launch,compile")
    ns = ap.parse_args()
    q = ns.quick
    results = []
    for fn, args in ((bench_add, (1 << (24 if q else 28),)), (bench_softmax, (4096 if q else 32768, 4096)),
                     (bench_741, (400_000 if q else 4_000_000,)), (bench_matmul, (1024 if q else 4096,)),
                     (bench_launch, ()), (bench_compile, ())):
        if ns.only and fn.__name__[len("bench_"):] not in ns.only.split(","):
            continue
        try:
            r = fn(*args)
        except Exception as e:  # keep the other rows
            r = {"name": fn.__name__, "error": f"{type(e).__name__}: {e}"}
        results.append(r)
        print(json.dumps(r), flush=True)
    meta = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version()}
    doc = {"meta": meta, "results": results}
    if ns.out:
        with open(ns.out, "w") as f:
            json.dump(doc, f, indent=1)
    print("\n%-45s %12s %12s %12s" % ("benchmark", "tilejit", "triton", "torch"))
    for r in results:
        u = r.get("unit")
        if u:
            vals = [r.get(f"{w}_{u}") for w in ("tilejit", "triton", "torch")]
            print("%-45s %12s %12s %12s  (%s)" % (r["name"][:45], *[f"{v:.3f}" if v else "-" for v in vals], u))
        else:
            print(r["name"], {k: round(v, 3) for k, v in r.items() if isinstance(v, float)}, r.get("error", ""))


if __name__ == "__main__":
    main()
