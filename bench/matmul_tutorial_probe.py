"""Variants of tutorials 03 (grouped-ordering matmul: tutorial 09's hinted ``mm``, the
published ``mm03``) and 08 (grouped GEMM) on one GPU:
tilejit under chosen compile attributes / ``CudaTuning`` switches, and Triton, timed the way
bench_tutorials_cuda.py times its rows (its ``bench_ms``: L2 flushed, CUDA events, median).

    PYTHONPATH=$PWD python bench/matmul_tutorial_probe.py --impl triton --out o.jsonl [--ptx DIR]
    PYTHONPATH=$PWD python bench/matmul_tutorial_probe.py --impl tilejit --out o.jsonl [--only a,b]
    PYTHONPATH=$PWD python bench/matmul_tutorial_probe.py --impl rows --out o.jsonl [--only a,b]

``--impl rows``: each of ROW_VARIANTS in a fresh process (own TILEJIT_CACHE_DIR) through
bench_tutorials_cuda's own row (``run_row``: the ``triton`` alias, the launcher, its timing),
with the variant's ``CudaTuning`` fields set first: the bench's figures, switch by switch.

Each tilejit variant is built from the tutorial source specialised as the launcher does
(divisible-by-16 pointers and sizes, unit strides), compiled for cuda:90 with the
variant's ``func.attrs`` and ``CudaTuning`` fields, checked against torch, then timed.
One JSON line per variant (ms, TFLOP/s, max error, shared bytes); ``--ptx DIR`` saves PTX.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, ROOT)

MM = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)
GG = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64)
GROUPS = ((1024, 1024, 1024), (2048, 2048, 2048), (1024, 2048, 1024), (2048, 1024, 2048))
N = 4096
MM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
          "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
          "stride_cm": "i32", "stride_cn": "i32"}
MM_DIV = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
MM_ONE = ("stride_ak", "stride_bn", "stride_cn")
GG_SIG = {0: "*i64", 1: "*i64", 2: "*i64", 3: "*i32", 4: "*i32", 5: "i32"}

# name -> (kernel, func.attrs, {CudaTuning field: value}, hinted grouped-GEMM source)
VARIANTS = {
    "mm": ("mm", {}, {}, False),
    "mm_early": ("mm", {}, {"ring_late_issue": False}, False),
    "mm_s4": ("mm", {"num_stages": 4}, {}, False),
    "gg": ("gg", {}, {}, False),
    "gg_hinted": ("gg", {}, {}, True),
    "gg_cap128": ("gg", {"maxnreg": 128}, {}, False),
    # tutorial 03 as published (`% M`, no hints): its dot loop is range-versioned; the
    # register-path fallback sets the kernel's register count (219 against 110 for the
    # ring alone, ptxas -v): cuda/occupancy.py caps it at 128 (as shipped; the same PTX as
    # maxnreg=128 given at launch), two CTAs fit an SM as they do for "mm"
    "mm03": ("mm03", {}, {}, False),
    "mm03_cap128": ("mm03", {"maxnreg": 128}, {}, False),
    "mm03_nocap": ("mm03", {}, {"ring_occupancy": False}, False),
}


# name -> (bench_tutorials_cuda row key, {CudaTuning field: value}, hinted grouped-GEMM source)
def _sw(imm, fence, uwg=False, fresh=False):
    return dict(imm_offsets=imm, uniform_wg=uwg, proxy_fence=fence, fresh_tid=fresh)


def _options(switches):
    """The process options with ``switches`` ({CudaTuning field: value}) set."""
    from dataclasses import replace
    from tilejit.runtime.options import get_options
    return get_options().with_(cuda=replace(get_options().cuda, **switches))


ROW_VARIANTS = {}
for _key in ("matmul", "grouped_gemm", "persistent_matmul"):
    ROW_VARIANTS[_key + "_before"] = (_key, _sw(False, True), False)        # the committed PTX before
    ROW_VARIANTS[_key + "_imm"] = (_key, _sw(True, True), False)
    ROW_VARIANTS[_key + "_imm_nofence"] = (_key, _sw(True, False), False)
    ROW_VARIANTS[_key + "_imm_uwg"] = (_key, _sw(True, True, True), False)
    ROW_VARIANTS[_key + "_imm_uwg_fresh"] = (_key, _sw(True, True, True, True), False)
ROW_VARIANTS["grouped_gemm_hinted_imm"] = ("grouped_gemm", _sw(True, True), True)
ROW_VARIANTS["grouped_gemm_hinted_imm_nofence"] = ("grouped_gemm", _sw(True, False), True)
ROW_VARIANTS["matmul_03_shipped"] = ("matmul_03", {}, False)
ROW_VARIANTS["matmul_03_nocap"] = ("matmul_03", {"ring_occupancy": False}, False)   # occupancy.py's cap off


def run_rows(ns, emit):
    """Each row variant in its own process (see the module docstring)."""
    import subprocess
    import tempfile
    for name in (ns.only.split(",") if ns.only else list(ROW_VARIANTS)):
        env = dict(os.environ, TILEJIT_BACKEND="cuda", TILEJIT_CACHE_DIR=tempfile.mkdtemp(prefix="tj_probe_"))
        cmd = [sys.executable, os.path.abspath(__file__), "--impl", "row-child", "--only", name,
               "--out", ns.out, "--tmp", ns.tmp]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        print(r.stdout, end="", flush=True)
        if r.returncode:
            emit(dict(impl="tilejit-row", variant=name, error=r.stderr.strip().splitlines()[-1:]))


def row_child(ns, emit):
    import bench_tutorials_cuda as B
    from tilejit.compat import install_triton_alias
    install_triton_alias()
    name = ns.only
    key, switches, hinted = ROW_VARIANTS[name]
    from tilejit.runtime.options import set_options
    set_options(_options(switches))
    if hinted:
        sys.path.insert(0, os.path.join(ns.tmp, "src"))
        B._MODULES["grouped_gemm"] = importlib.import_module(hinted_source(os.path.join(ns.tmp, "src")))
    samples = os.path.join(ns.tmp, "samples", name)
    os.makedirs(samples, exist_ok=True)
    rec = B.run_row(B.BY_KEY[key], "cuda", False, samples)
    rec.update(impl="tilejit-row", variant=name)
    emit(rec)


def mm_setup(torch):
    a = torch.randn(N, N, device="cuda", dtype=torch.float16)
    b = torch.randn(N, N, device="cuda", dtype=torch.float16)
    c = torch.empty(N, N, device="cuda", dtype=torch.float16)
    return a, b, c, (a, b, c, N, N, N, N, 1, N, 1, N, 1), (N // 128) ** 2


def gg_setup(torch):
    ops = [(torch.randn(M, K, device="cuda", dtype=torch.float16),
            torch.randn(K, Nn, device="cuda", dtype=torch.float16),
            torch.empty(M, Nn, device="cuda", dtype=torch.float16)) for M, Nn, K in GROUPS]
    ptrs = [torch.tensor([op[i].data_ptr() for op in ops], device="cuda") for i in range(3)]
    sizes = torch.tensor([s for g in GROUPS for s in g], dtype=torch.int32, device="cuda")
    lds = torch.tensor([op[i].stride(0) for op in ops for i in range(3)], dtype=torch.int32, device="cuda")
    return ops, (*ptrs, sizes, lds, len(GROUPS))


def hinted_source(dst):
    """grouped_gemm.py with its loaded leading dimensions and pointers hinted aligned
    (what Triton's discarded ``tl.multiple_of(a_ptrs, [16, 16])`` gives it): one loop, no
    runtime versioning."""
    import re
    src = open(os.path.join(ROOT, "tests", "triton_scripts", "grouped_gemm.py")).read()
    src = re.sub(r"^(\s*)(ld[abc]) = (tl\.load\(g_lds[^\n]*)$", r"\1\2 = tl.multiple_of(\3, 8)", src, flags=re.M)
    src = re.sub(r"^(\s*)([abc])_ptr = (tl\.load\(group_[abc]_ptrs \+ g\)\.to\([^\n]*\)\))$",
                 r"\1\2_ptr = tl.multiple_of(\3, 16)", src, flags=re.M)
    assert src.count("tl.multiple_of(tl.load") == 6, "hint rewrite failed"
    import bench_tutorials_cuda as B
    os.makedirs(dst, exist_ok=True)
    full = os.path.join(dst, "grouped_gemm_hinted_full.py")
    with open(full, "w") as f:
        f.write(src)
    with open(os.path.join(dst, "grouped_gemm_hinted.py"), "w") as f:
        f.write(B.definitions_source(full))           # definitions only, as the bench loads them
    return "grouped_gemm_hinted"


def run_triton(ns, emit):
    import torch
    import bench_tutorials_cuda as B
    for key in ("mm", "gg"):
        torch.manual_seed(0)
        if key == "mm":
            K = B.kernels("persistent_matmul")
            a, b, c, args, tiles = mm_setup(torch)
            run = lambda: K.matmul_kernel[(tiles,)](*args, **MM, num_warps=8, num_stages=3)  # noqa: E731
            ref = lambda: [(c, a.float() @ b.float())]  # noqa: E731
            flops = 2 * N ** 3
        else:
            K = B.kernels("grouped_gemm")
            ops, args = gg_setup(torch)
            run = lambda: K.grouped_matmul_kernel[(132,)](*args, NUM_SM=132, **GG, num_warps=8, num_stages=3)  # noqa
            ref = lambda: [(o[2], o[0].float() @ o[1].float()) for o in ops]  # noqa: E731
            flops = sum(2 * m * n * k for m, n, k in GROUPS)
        ck = run()
        torch.cuda.synchronize()
        err = max((x.float() - r).abs().max().item() for x, r in ref())
        ms = B.bench_ms(run, True)
        rec = dict(impl="triton", variant=key, ms=ms, tflops=flops / ms * 1e-9, err=err)
        for attr in ("n_regs", "n_spills"):
            rec[attr] = getattr(ck, attr, None)
        rec["shared"] = getattr(getattr(ck, "metadata", None), "shared", None)
        if ns.ptx and hasattr(ck, "asm"):
            with open(os.path.join(ns.ptx, f"triton_{key}.ptx"), "w") as f:
                f.write(ck.asm.get("ptx", ""))
        emit(rec)


def run_tilejit(ns, emit):
    if ns.dry:
        return dry_tilejit(ns, emit)
    import torch
    import bench_tutorials_cuda as B
    from tilejit.backends import LaunchArgs, get_backend
    from tilejit.compat import install_triton_alias
    install_triton_alias()
    names = ns.only.split(",") if ns.only else list(VARIANTS)
    for name in names:
        kind = VARIANTS[name][0]
        try:
            func, options = _func(ns, name)
            torch.manual_seed(0)
            if kind in ("mm", "mm03"):
                a, b, c, args, grid = mm_setup(torch)
                outs = lambda: [(c, a.float() @ b.float())]  # noqa: E731
                flops = 2 * N ** 3
                tensors = [a, b, c]
            else:
                ops, args = gg_setup(torch)
                outs = lambda: [(o[2], o[0].float() @ o[1].float()) for o in ops]  # noqa: E731
                flops = sum(2 * m * n * k for m, n, k in GROUPS)
                grid = 132
                tensors = list(args[:5])
            kern = get_backend("cuda").compile(func, options)
            vals = [x.data_ptr() if isinstance(x, torch.Tensor) else x for x in args]
            la = LaunchArgs(vals, [], tensors)
            run = lambda: kern.launch((grid, 1, 1), la)  # noqa: E731
            run()
            torch.cuda.synchronize()
            err = max((x.float() - r).abs().max().item() for x, r in outs())
            ms = B.bench_ms(run, True)
            emit(dict(impl="tilejit", variant=name, ms=ms, tflops=flops / ms * 1e-9, err=err, shared=kern.shared))
            if ns.ptx:
                with open(os.path.join(ns.ptx, f"tilejit_{name}.ptx"), "w") as f:
                    f.write(kern.asm["ptx"])
        except Exception as e:
            traceback.print_exc()
            emit(dict(impl="tilejit", variant=name, error=f"{type(e).__name__}: {e}"[:500]))


def _func(ns, name):
    """(ir.Function with the variant's attrs, the options with its switches) for variant ``name``."""
    import bench_tutorials_cuda as B
    from tilejit.runtime.compiler import build
    kind, attrs, switches, hinted = VARIANTS[name]
    if kind == "mm":
        func, _ = build(B.kernels("persistent_matmul").matmul_kernel, MM_SIG, MM, MM_DIV, MM_ONE)
    elif kind == "mm03":
        func, _ = build(B.kernels("matmul_tutorial03").matmul_kernel, MM_SIG, dict(MM, ACTIVATION=""),
                        MM_DIV, MM_ONE)
    else:
        if hinted:
            sys.path.insert(0, os.path.join(ns.tmp, "src"))
            K = importlib.import_module(hinted_source(os.path.join(ns.tmp, "src")))
        else:
            K = B.kernels("grouped_gemm")
        func, _ = build(K.grouped_matmul_kernel, GG_SIG, dict(NUM_SM=132, **GG), (0, 1, 2, 3, 4), ())
    func.attrs.update({"target": "cuda:90", "num_warps": 8, "num_stages": 3})
    func.attrs.update(attrs)
    return func, _options(switches)


def dry_tilejit(ns, emit):
    """No GPU: compile each variant, ptxas -v its PTX (registers, spills)."""
    import subprocess
    from tilejit.backends import get_backend
    from tilejit.compat import install_triton_alias
    install_triton_alias()
    for name in (ns.only.split(",") if ns.only else list(VARIANTS)):
        func, options = _func(ns, name)
        kern = get_backend("cuda").compile(func, options)
        path = os.path.join(ns.ptx or ns.tmp, f"tilejit_{name}.ptx")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(kern.asm["ptx"])
        r = subprocess.run(["ptxas", "-v", "-arch=sm_90a", path, "-o", os.devnull], capture_output=True, text=True)
        info = " ".join(ln.strip() for ln in (r.stdout + r.stderr).splitlines() if "Used" in ln or "spill" in ln)
        emit(dict(impl="tilejit", variant=name, shared=kern.shared, ptxas=info))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=("triton", "tilejit", "rows", "row-child"), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--ptx", default="")
    ap.add_argument("--tmp", default="/tmp/tilejit_probe")
    ap.add_argument("--dry", action="store_true", help="tilejit: compile and ptxas -v only (no GPU)")
    ns = ap.parse_args()
    if ns.ptx:
        os.makedirs(ns.ptx, exist_ok=True)
    with open(ns.out, "a") as f:
        def emit(rec):
            print(json.dumps(rec), flush=True)
            f.write(json.dumps(rec) + "\n")
            f.flush()
        if ns.impl == "rows":
            f.close()
            return run_rows(ns, lambda rec: print(json.dumps(rec), flush=True))
        {"triton": run_triton, "tilejit": run_tilejit, "row-child": row_child}[ns.impl](ns, emit)


if __name__ == "__main__":
    main()
