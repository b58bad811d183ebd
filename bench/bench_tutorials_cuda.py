"""Triton's tutorials on tilejit's cuda backend and on Triton, side by side on one GPU.

    PYTHONPATH=$PWD python bench/bench_tutorials_cuda.py [--out bench/results/tutorials_cuda_h200.json]
    PYTHONPATH=$PWD python bench/bench_tutorials_cuda.py --smoke   # tilejit cpu backend, torch CPU, tiny shapes
    python bench/bench_tutorials_cuda.py --table bench/results/tutorials_cuda_h200.json   # print a saved table

The kernels are the tutorial kernels of tests/triton_scripts/*.py, the same source for
both sides: only the scripts' definitions (imports, functions, classes, UPPER_CASE
constants) are kept by an AST filter, written to a temporary .py file (line numbers
kept) and imported, so Triton's ``inspect.getsource`` works.  The launch wrappers below
call those kernels directly with torch CUDA tensors at realistic shapes and configs.

The parent process only orchestrates: for each tutorial script it runs one child
process with real Triton (``--impl triton``) and one with tilejit behind the ``triton``
alias (``--impl tilejit``, ``TILEJIT_BACKEND=cuda``), each under a timeout.  A child
checks its outputs against a torch reference computed in-process, times each row with
CUDA events (median, L2 flushed before each repetition, the same function for both
sides), writes one JSON line per row and a strided sample of its output; the parent
compares the two samples, writes the JSON document and prints a markdown table.
A row that fails (compile error, wrong result, timeout) is a failure row, not a crash;
when a child hangs or breaks its CUDA context in a row, a fresh child takes the rest.
"""
from __future__ import annotations

import argparse
import ast
import atexit
import importlib.util
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_timing import bench_ms, kernel_ms, wall_ms  # noqa: E402  (the same code for both sides)
SCRIPTS = os.path.join(ROOT, "tests", "triton_scripts")
DEFAULT_OUT = os.path.join(ROOT, "bench", "results", "tutorials_cuda_h200.json")
SAMPLE_MAX = 1 << 20
RESTART = 3             # a child's exit status: stopped after a row that broke its CUDA context


# ------------------------------------------------------------------ kernel loading
def _kept(node) -> bool:
    """Definitions only: imports, functions, classes, UPPER_CASE constants."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)):
        return True
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, ast.AnnAssign) else []
    return bool(targets) and all(isinstance(t, ast.Name) and t.id.isupper() for t in targets)


def definitions_source(path: str) -> str:
    """The script's definitions at their original line numbers, everything else blank.
    A ``try: import torch / except ImportError: ...`` block keeps its imports."""
    src = open(path).read()
    lines = src.splitlines()
    out = [""] * len(lines)
    for node in ast.parse(src).body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        if _kept(node):
            out[start:node.end_lineno] = lines[start:node.end_lineno]
        elif isinstance(node, ast.Try):
            imports = [n for n in node.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            for i, n in enumerate(imports):
                out[start + i] = ast.get_source_segment(src, n)
    return "\n".join(out) + "\n"


_TMP = []
_MODULES = {}
_SHARED = []            # the run's directory both implementations' children see (child_main)


def shared_dir() -> str:
    """A directory shared by the children of one bench run (the Triton child writes what
    the tilejit child reads: bench/corpus_inductor.py's captured Inductor code)."""
    if not _SHARED:
        _SHARED.append(tempfile.mkdtemp(prefix="tilejit_bench_shared_"))
        atexit.register(shutil.rmtree, _SHARED[0], True)
    return _SHARED[0]


def kernels(stem: str):
    """Import the definitions of tests/triton_scripts/<stem>.py as a module."""
    if stem in _MODULES:
        return _MODULES[stem]
    if not _TMP:
        _TMP.append(tempfile.mkdtemp(prefix="tilejit_tutorials_"))
        atexit.register(shutil.rmtree, _TMP[0], True)
    name = f"tutorial_{stem}"
    path = os.path.join(_TMP[0], name + ".py")
    with open(path, "w") as f:
        f.write(definitions_source(os.path.join(SCRIPTS, stem + ".py")))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _MODULES[stem] = mod
    return mod


# ------------------------------------------------------------------ helpers
def cdiv(a, b):
    return (a + b - 1) // b


def next_pow2(n):
    return 1 << (n - 1).bit_length()


def num_sms(dev, small):
    if small or dev == "cpu":
        return 4
    import torch
    return torch.cuda.get_device_properties(dev).multi_processor_count


def close(out, ref, atol, rtol=0.0):
    """(max |out - ref|, whether it is within atol + rtol * max |ref|)."""
    err = (out.float() - ref.float()).abs().max().item()
    return err, err <= atol + rtol * ref.float().abs().max().item()


def sample(*tensors):
    """A strided sample (at most SAMPLE_MAX values) of the outputs, fp32 on the CPU."""
    flat = [t.detach().reshape(-1) for t in tensors]
    step = max(1, sum(t.numel() for t in flat) // SAMPLE_MAX)
    return __import__("torch").cat([t[::step].float().cpu() for t in flat])


@dataclass
class Case:
    """One tutorial row, set up: ``run`` launches its kernel(s) once."""
    shape: str
    run: Callable[[], None]
    check: Callable[[], tuple]          # -> (max error, ok, details dict)
    outputs: Callable[[], tuple]        # the tensors compared across implementations
    work: float = 0.0                   # bytes or flops per run
    unit: str = "GB/s"
    prepare: Callable[[], None] | None = None   # before each timed run, untimed


# ------------------------------------------------------------------ tutorials
def tut_vector_add(dev, small):
    import torch
    K = kernels("vector_add")
    n = 5000 if small else 1 << 26
    x, y = torch.rand(n, device=dev), torch.rand(n, device=dev)
    out = torch.empty_like(x)

    def run():
        K.add_kernel[(cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    return Case(f"fp32 n={n}; BLOCK 1024 w4", run, lambda: (*close(out, x + y, 0.0), {}), lambda: (out,),
                12 * n)


def _softmax(n_cols):
    def make(dev, small):
        import torch
        K = kernels("fused_softmax")
        M, N = (37, n_cols // 4 - 3) if small else (8192, n_cols)
        x = torch.randn(M, N, device=dev)
        y = torch.empty_like(x)
        BLOCK = next_pow2(N)
        warps = 8 if BLOCK >= 2048 else 4

        def run():
            K.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), N, num_warps=warps, BLOCK_SIZE=BLOCK)
        ref = lambda: torch.softmax(x.double(), 1)  # noqa: E731
        return Case(f"fp32 {M}x{N}; BLOCK {BLOCK} w{warps}", run, lambda: (*close(y, ref(), 1e-6, 1e-5), {}),
                    lambda: (y,), 8 * M * N)
    return make


def _matmul_operands(dev, M, N, Kd):
    import torch
    a = torch.randn(M, Kd, device=dev, dtype=torch.float16)
    b = torch.randn(Kd, N, device=dev, dtype=torch.float16)
    return a, b, torch.empty(M, N, device=dev, dtype=torch.float16)


MM_CONFIG = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)
MM_LAUNCH = dict(num_warps=8, num_stages=3)
MM_SMALL_CONFIG = dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=2)
MM_SMALL_LAUNCH = dict(num_warps=4, num_stages=2)


def mm_config(cfg, launch):
    return (f"BLOCK {cfg['BLOCK_SIZE_M']}x{cfg['BLOCK_SIZE_N']}x{cfg['BLOCK_SIZE_K']} "
            f"GROUP {cfg['GROUP_SIZE_M']} w{launch['num_warps']} s{launch['num_stages']}")


def _matmul(persistent, stem="persistent_matmul", extra=None):
    """Tutorial 09's kernels (``persistent_matmul``) or, with ``stem="matmul_tutorial03"``,
    tutorial 03's ``matmul_kernel`` as published (``% M`` offsets, no hints)."""
    extra = dict(extra or {})

    def make(dev, small):
        K = kernels(stem)
        M, N, Kd = (100, 72, 80) if small else (4096, 4096, 4096)
        cfg, launch = (MM_SMALL_CONFIG, MM_SMALL_LAUNCH) if small else (MM_CONFIG, MM_LAUNCH)
        a, b, c = _matmul_operands(dev, M, N, Kd)
        tiles = cdiv(M, cfg["BLOCK_SIZE_M"]) * cdiv(N, cfg["BLOCK_SIZE_N"])
        args = (a, b, c, M, N, Kd, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        sms = num_sms(dev, small)

        def run():
            if persistent:
                K.matmul_kernel_persistent[(min(sms, tiles),)](*args, NUM_SMS=sms, **cfg, **launch)
            else:
                K.matmul_kernel[(tiles,)](*args, **cfg, **extra, **launch)
        check = lambda: (*close(c, a.float() @ b.float(), 0.0, 1e-3), {})  # noqa: E731
        return Case(f"fp16 {M}x{N}x{Kd}; {mm_config(cfg, launch)}" + (f" NUM_SMS={sms}" if persistent else ""),
                    run, check, lambda: (c,), 2 * M * N * Kd, "TFLOP/s")
    return make


def tut_dropout(dev, small):
    import torch
    K = kernels("low_memory_dropout")
    n, p, seed = (10000 if small else 1 << 24), 0.5, 123
    x = torch.randn(n, device=dev)
    out = torch.empty_like(x)

    def run():
        K._seeded_dropout[(cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)

    def check():
        kept = out != 0
        err = (out[kept] - x[kept] / (1 - p)).abs().max().item()
        frac = kept.float().mean().item()
        return err, err <= 1e-6 and abs(frac - (1 - p)) < (0.03 if small else 0.005), {"kept": frac}
    return Case(f"fp32 n={n} p={p}; BLOCK 1024 w4", run, check, lambda: (out,), 8 * n)


def _layer_norm_inputs(dev, small):
    import torch
    M, N = (64, 200) if small else (4096, 8192)
    x = -2.3 + 0.5 * torch.randn(M, N, device=dev, dtype=torch.float16)
    w = torch.rand(N, device=dev, dtype=torch.float16)
    b = torch.rand(N, device=dev, dtype=torch.float16)
    BLOCK = min(65536 // x.element_size(), next_pow2(N))     # the tutorial's heuristics
    return M, N, x, w, b, BLOCK, min(max(BLOCK // 256, 1), 8)


def tut_layer_norm_fwd(dev, small):
    import torch
    K = kernels("layer_norm")
    M, N, x, w, b, BLOCK, warps = _layer_norm_inputs(dev, small)
    eps = 1e-5
    y = torch.empty_like(x)
    mean = torch.empty(M, device=dev)
    rstd = torch.empty(M, device=dev)

    def run():
        K._layer_norm_fwd_fused[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, eps,
                                      BLOCK_SIZE=BLOCK, num_warps=warps, num_ctas=1)

    def check():
        ref = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float(), eps)
        err, ok = close(y, ref, 1e-2)
        err_rstd, ok_rstd = close(rstd, 1 / (x.float().var(1, unbiased=False) + eps).sqrt(), 0.0, 1e-4)
        return err, ok and ok_rstd, {"rstd_err": err_rstd}
    return Case(f"fp16 {M}x{N}; BLOCK {BLOCK} w{warps}", run, check, lambda: (y,), 4 * M * N)


def _layer_norm_bwd(part="both"):
    """Tutorial 05's backward: both kernels, or one of them ("dx": the row kernel with
    the lock; "dwdb": the column sums, over partial sums made once beforehand)."""
    def make(dev, small):
        import torch
        K = kernels("layer_norm")
        M, N, x, w, b, BLOCK, warps = _layer_norm_inputs(dev, small)
        eps = 1e-5
        xf = x.float()
        mean = xf.mean(1)
        rstd = 1 / (xf.var(1, unbiased=False) + eps).sqrt()
        dy = 0.1 * torch.randn_like(x)
        G = 64 if N > 8192 else 96 if N > 4096 else 128 if N > 1024 else 256   # the tutorial's heuristics
        locks = torch.zeros(2 * G, dtype=torch.int32, device=dev)
        _dw = torch.zeros((G, N), dtype=x.dtype, device=dev)
        _db = torch.zeros((G, N), dtype=x.dtype, device=dev)
        dw, db, dx = torch.empty_like(w), torch.empty_like(b), torch.empty_like(dy)

        def run_dx():
            K._layer_norm_bwd_dx_fused[(M,)](dx, dy, _dw, _db, x, w, mean, rstd, locks, x.stride(0), N,
                                             BLOCK_SIZE_N=BLOCK, GROUP_SIZE_M=G, num_warps=warps)

        def run_dwdb():
            K._layer_norm_bwd_dwdb[(cdiv(N, 128),)](_dw, _db, dw, db, min(G, M), N,
                                                    BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, num_ctas=1)
        steps = {"both": (run_dx, run_dwdb), "dx": (run_dx,), "dwdb": (run_dwdb,)}[part]

        def run():
            for step in steps:
                step()
        if part == "dwdb":
            run_dx()                         # the partial sums the column sums read

        def check():
            xr, wr, br = (t.float().requires_grad_(True) for t in (x, w, b))
            torch.nn.functional.layer_norm(xr, (N,), wr, br, eps).backward(dy.float())
            errs = {"dx_err": close(dx, xr.grad, 1e-2), "dw_err": close(dw, wr.grad, 0.0, 2e-2),
                    "db_err": close(db, br.grad, 0.0, 2e-2)}
            if part == "dx":
                errs = {"dx_err": errs["dx_err"]}
            elif part == "dwdb":
                del errs["dx_err"]
            return (max(e for e, _ in errs.values()), all(ok for _, ok in errs.values()),
                    {k: e for k, (e, _) in errs.items()})
        outputs = {"both": (dx, dw, db), "dx": (dx,), "dwdb": (dw, db)}[part]
        work = {"both": 6 * M * N, "dx": 6 * M * N, "dwdb": 2 * 2 * G * N}[part]
        return Case(f"fp16 {M}x{N}; dx BLOCK {BLOCK} w{warps} GROUP {G}, dw/db 32x128", run, check,
                    lambda: outputs, work, prepare=locks.zero_ if part != "dwdb" else None)
    return make


tut_layer_norm_bwd = _layer_norm_bwd()


def _attention(causal):
    def make(dev, small):
        import torch
        K = kernels("fused_attention")
        Z, H, N_CTX, D = (1, 2, 128, 32) if small else (4, 32, 4096, 64)
        BM, BN, warps = (32, 32, 4) if small else (128, 64, 8)
        q, k, v = (torch.empty((Z, H, N_CTX, D), device=dev, dtype=torch.float16).normal_(0.0, 0.5)
                   for _ in range(3))
        o = torch.empty_like(q)
        m = torch.empty((Z, H, N_CTX), device=dev, dtype=torch.float32)
        sm_scale = 0.5

        def run():
            K._attn_fwd[(cdiv(N_CTX, BM), Z * H, 1)](
                q, k, v, sm_scale, m, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(), Z, H,
                N_CTX=N_CTX, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, STAGE=3 if causal else 1,
                num_warps=warps, num_stages=3)

        def check():
            ref = torch.nn.functional.scaled_dot_product_attention(
                q.float(), k.float(), v.float(), is_causal=causal, scale=sm_scale)
            return (*close(o, ref, 1e-2), {})
        flops = 4 * Z * H * N_CTX * N_CTX * D * (0.5 if causal else 1)
        return Case(f"fp16 Z={Z} H={H} N_CTX={N_CTX} D={D}; BLOCK {BM}x{BN} w{warps} s3", run, check, lambda: (o,), flops, "TFLOP/s")
    return make


GG_GROUPS = ((1024, 1024, 1024), (2048, 2048, 2048), (1024, 2048, 1024), (2048, 1024, 2048))
GG_SMALL = ((64, 64, 32), (128, 32, 64), (32, 96, 96), (96, 64, 32))


def tut_grouped_gemm(dev, small):
    import torch
    K = kernels("grouped_gemm")
    groups = GG_SMALL if small else GG_GROUPS
    BM, BN, BK, launch = (32, 32, 32, MM_SMALL_LAUNCH) if small else (128, 128, 64, MM_LAUNCH)
    ops = [_matmul_operands(dev, M, N, Kd) for M, N, Kd in groups]
    ptrs = [torch.tensor([op[i].data_ptr() for op in ops], device=dev) for i in range(3)]
    sizes = torch.tensor([s for g in groups for s in g], dtype=torch.int32, device=dev)
    lds = torch.tensor([op[i].stride(0) for op in ops for i in range(3)], dtype=torch.int32, device=dev)
    sms = num_sms(dev, small)

    def run():
        K.grouped_matmul_kernel[(sms,)](*ptrs, sizes, lds, len(groups), NUM_SM=sms, BLOCK_SIZE_M=BM,
                                        BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, **launch)

    def check():
        res = [close(c, a.float() @ b.float(), 0.0, 1e-3) for a, b, c in ops]
        return max(e for e, _ in res), all(ok for _, ok in res), {}
    shape = ("fp16 " + ", ".join("x".join(map(str, g)) for g in groups)
             + f"; BLOCK {BM}x{BN}x{BK} w{launch['num_warps']} s{launch['num_stages']} NUM_SM={sms}")
    return Case(shape, run, check, lambda: tuple(op[2] for op in ops),
                sum(2 * M * N * Kd for M, N, Kd in groups), "TFLOP/s")


@dataclass
class Row:
    key: str
    title: str
    script: str                 # tests/triton_scripts/<script>.py: its kernels; one child per script
    kernels: str                # the kernels launched
    make: Callable              # (device, small) -> Case
    source: str = ""            # where the kernels come from, when not tests/triton_scripts/<script>.py


# Row "matmul" is tutorial 09's `matmul_kernel` (tutorial 03's grouped ordering with
# `multiple_of`/`max_contiguous` hints added); row "matmul_03" is tutorial 03's own kernel as
# published in Triton 3.6 (tests/triton_scripts/matmul_tutorial03.py: `% M` / `% N` offsets,
# no hints; only the autotune decorator dropped, both sides run the same config).
# matmul_autotune.py's kernel is an autotuned plain blocked matmul at toy configs and is not
# benchmarked.
ROWS = [
    Row("vector_add", "01 vector add", "vector_add", "add_kernel", tut_vector_add),
    Row("softmax_1024", "02 fused softmax", "fused_softmax", "softmax_kernel", _softmax(1024)),
    Row("softmax_4096", "02 fused softmax", "fused_softmax", "softmax_kernel", _softmax(4096)),
    Row("matmul", "03 matmul (grouped ordering)", "persistent_matmul", "matmul_kernel", _matmul(False)),
    Row("matmul_03", "03 matmul as published (% M, no hints)", "matmul_tutorial03", "matmul_kernel",
        _matmul(False, "matmul_tutorial03", {"ACTIVATION": ""})),
    Row("dropout", "04 low-memory dropout", "low_memory_dropout", "_seeded_dropout", tut_dropout),
    Row("layer_norm_fwd", "05 layer norm fwd", "layer_norm", "_layer_norm_fwd_fused", tut_layer_norm_fwd),
    Row("layer_norm_bwd", "05 layer norm bwd", "layer_norm", "_layer_norm_bwd_dx_fused + _layer_norm_bwd_dwdb",
        tut_layer_norm_bwd),
    Row("layer_norm_bwd_dx", "05 layer norm bwd, dx kernel alone", "layer_norm", "_layer_norm_bwd_dx_fused",
        _layer_norm_bwd("dx")),
    Row("layer_norm_bwd_dwdb", "05 layer norm bwd, dw/db kernel alone", "layer_norm", "_layer_norm_bwd_dwdb",
        _layer_norm_bwd("dwdb")),
    Row("attention", "06 fused attention fwd", "fused_attention", "_attn_fwd", _attention(False)),
    Row("attention_causal", "06 fused attention fwd causal", "fused_attention", "_attn_fwd", _attention(True)),
    Row("grouped_gemm", "08 grouped GEMM", "grouped_gemm", "grouped_matmul_kernel", tut_grouped_gemm),
    Row("persistent_matmul", "09 persistent matmul", "persistent_matmul", "matmul_kernel_persistent",
        _matmul(True)),
]
BY_KEY = {r.key: r for r in ROWS}


@dataclass(frozen=True)
class Suite:
    """A table of rows and the script whose ``--child`` runs them (bench/bench_corpus_cuda.py
    drives its own rows through this file's children, timing and report)."""
    rows: dict                  # key -> Row
    script: str                 # the file a child process runs
    default_out: str
    title: str = "tutorial"     # the first column of the table
    packages: tuple = ()        # distributions whose versions the children report


TUTORIALS = Suite(BY_KEY, os.path.abspath(__file__), DEFAULT_OUT)


# ------------------------------------------------------------------ timing (both sides): cuda_timing.py


# ------------------------------------------------------------------ child: one implementation
def first_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:300]


def run_row(row, dev, small, sample_dir):
    import torch
    cuda = dev == "cuda"
    torch.manual_seed(0)
    case = row.make(dev, small)
    r = {"key": row.key, "shape": case.shape, "unit": case.unit}
    if case.prepare:
        case.prepare()
    t0 = time.perf_counter()
    case.run()
    if cuda:
        torch.cuda.synchronize()
    r["first_call_s"] = time.perf_counter() - t0           # compile + one run
    err, ok, details = case.check()
    r.update(err=err, ok=bool(ok and math.isfinite(err)), **details)
    torch.save(sample(*case.outputs()), os.path.join(sample_dir, row.key + ".pt"))
    r["ms"] = bench_ms(case.run, cuda, case.prepare)
    if cuda:
        r["wall_ms"] = wall_ms(case.run, case.prepare, max(3, min(50, int(100 / max(r["ms"], 1e-3)))))
        try:
            r["kernel_ms"] = kernel_ms(case.run, case.prepare)
        except Exception as e:      # no CUPTI: the events' figure stands alone
            r["kernel_ms_error"] = first_line(e)
    r["rate"] = case.work / (r["ms"] * 1e-3) / (1e12 if case.unit == "TFLOP/s" else 1e9)
    return r


def versions(impl, dev, packages=()):
    import torch
    from importlib import metadata
    v = {"torch": torch.__version__, "python": platform.python_version()}
    for dist in packages:
        try:
            v[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            v[dist] = None
    if dev == "cuda":
        v.update(gpu=torch.cuda.get_device_name(), cuda=torch.version.cuda,
                 capability=".".join(map(str, torch.cuda.get_device_capability())))
    if impl == "triton":
        import triton
        v["triton"] = getattr(triton, "__version__", "?")
    else:
        import tilejit
        v["tilejit"] = getattr(tilejit, "__version__", "?")
    return v


def cuda_alive() -> bool:
    import torch
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").item()
        return True
    except Exception:
        return False


def child_main(ns):
    sys.path.insert(0, ROOT)
    if ns.impl == "tilejit" or ns.fake_triton:
        os.environ.setdefault("TILEJIT_BACKEND", "cuda" if ns.device == "cuda" else "cpu")
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    import torch
    _TMP[:] = [os.path.join(ns.samples, "_src")]      # the parent removes its work directory
    _SHARED[:] = [os.path.join(os.path.dirname(os.path.abspath(ns.samples)), "shared")]
    os.makedirs(_TMP[0], exist_ok=True)
    with open(ns.result, "a") as out:
        def emit(rec):
            out.write(json.dumps(rec) + "\n")
            out.flush()
        emit({"versions": versions(ns.impl, ns.device, ns.suite.packages)})
        for key in ns.rows.split(","):
            print(f"[{ns.impl}] {key} ...", flush=True)
            try:
                rec = run_row(ns.suite.rows[key], ns.device, ns.small, ns.samples)
            except Exception as e:   # a failure row, the other rows go on
                traceback.print_exc()
                rec = {"key": key, "error": first_line(e), "error_detail": str(e)[:2000], "ok": False}
                if ns.device == "cuda" and not cuda_alive():
                    emit(rec)
                    print(f"[{ns.impl}] the CUDA context is broken; a fresh process takes the rest",
                          flush=True)
                    return RESTART
            emit(rec)
            print(f"[{ns.impl}] {key}: " + (f"{rec['ms']:.4f} ms, err {rec['err']:.3g}"
                                            f"{'' if rec['ok'] else ' WRONG'}" if "ms" in rec else
                                            rec.get("error", "?")), flush=True)
            if ns.device == "cuda":
                torch.cuda.empty_cache()
    return 0


# ------------------------------------------------------------------ parent: orchestration
def run_child(impl, keys, ns, workdir, timeout):
    """Run one child for ``keys``: (the rows it wrote, by key; its versions; why it stopped
    early or None)."""
    device = "cpu" if ns.smoke else "cuda"
    result = os.path.join(workdir, f"{impl}.jsonl")
    samples = os.path.join(workdir, impl)
    os.makedirs(samples, exist_ok=True)
    fake = impl == "triton" and ns.pair
    cmd = [sys.executable, ns.suite.script, "--child", "--impl", impl, "--device", device,
           "--rows", ",".join(keys), "--result", result, "--samples", samples]
    cmd += (["--small"] if ns.smoke else []) + (["--fake-triton"] if fake else [])
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if impl == "tilejit" or fake:
        env["TILEJIT_BACKEND"] = device
    start = os.path.getsize(result) if os.path.exists(result) else 0
    why = None
    try:
        p = subprocess.run(cmd, env=env, stderr=subprocess.PIPE, text=True, timeout=timeout)
        if p.returncode == RESTART:
            why = RESTART
        elif p.returncode:
            tail = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
            why = f"child exited with status {p.returncode}: {tail[-1] if tail else ''}"
            print("\n".join(tail[-15:]), file=sys.stderr, flush=True)
    except subprocess.TimeoutExpired:
        why = f"timed out (the {impl} process ran past {timeout:.0f} s)"
    rows, versions_ = {}, {}
    if os.path.exists(result):
        with open(result) as f:
            f.seek(start)
            for line in f:
                rec = json.loads(line)
                versions_.update(rec.get("versions", {}))
                if "key" in rec:
                    rows[rec["key"]] = rec
    return rows, versions_, why


def failed(key, why):
    return {"key": key, "ok": False, "error": why}


def run_rows(impl, keys, ns, workdir, t_end):
    """``keys`` on ``impl``, in children: when one dies or hangs in a row (a CUDA error
    poisons its context, a spin lock can hang), that row fails and a fresh child takes
    the rest.  Returns (rows by key, versions)."""
    rows, versions_, todo = {}, {}, list(keys)
    while todo:
        left = t_end - time.monotonic()
        if left < 5:
            rows.update({k: failed(k, "skipped: bench time budget spent") for k in todo})
            break
        print(f"== {impl}: {', '.join(todo)}", flush=True)
        got, v, why = run_child(impl, todo, ns, workdir, min(ns.timeout, left))
        rows.update(got)
        versions_.update(v)
        todo = [k for k in todo if k not in rows]
        if todo and v and why == RESTART:   # it stopped after a row broke its CUDA context
            continue
        if todo and v and why:              # died in todo[0]: that row fails, the rest go on
            rows[todo[0]] = failed(todo[0], why)
            todo = todo[1:]
        elif todo:                          # died before its first row, or lost rows
            rows.update({k: failed(k, why or "no result") for k in todo})
            break
    return rows, versions_


def run_all(keys, impls, ns, workdir):
    """Each implementation's rows by key, and the versions the children reported.  One
    child per implementation per tutorial script (all rows in one child with --smoke),
    Triton's first; within the time budget."""
    groups = {"all": keys} if ns.smoke else {}
    for k in keys if not ns.smoke else ():
        groups.setdefault(ns.suite.rows[k].script, []).append(k)
    t_end = time.monotonic() + ns.budget
    got, versions_ = {impl: {} for impl in impls}, {}
    for ks in groups.values():
        for impl in impls:
            rows, v = run_rows(impl, ks, ns, workdir, t_end)
            got[impl].update(rows)
            versions_.update(v)
    return got, versions_


def compare(workdir, key):
    """Max |tilejit - triton| over the two outputs' samples (None when either is missing)."""
    paths = [os.path.join(workdir, impl, key + ".pt") for impl in ("tilejit", "triton")]
    if not all(os.path.exists(p) for p in paths):
        return None
    import torch
    a, b = (torch.load(p) for p in paths)
    if a.shape != b.shape:
        return float("inf")
    return (a - b).abs().max().item()


def combine(key, tj, tr, diff, rows=BY_KEY):
    row = rows[key]
    out = {"key": key, "tutorial": row.title,
           "script": row.source or f"tests/triton_scripts/{row.script}.py",
           "kernels": row.kernels, "shape": tj.get("shape") or (tr or {}).get("shape", ""), "tilejit": tj}
    if tr is not None:
        out["triton"] = tr
        out["max_abs_diff_vs_triton"] = diff
        if tj.get("ms") and tr.get("ms"):
            out["triton_over_tilejit"] = tr["ms"] / tj["ms"]
        if tj.get("kernel_ms") and tr.get("kernel_ms"):
            out["triton_over_tilejit_kernels"] = tr["kernel_ms"] / tj["kernel_ms"]
    return out


def status(rec):
    if "error" in rec:
        return "FAIL: " + rec["error"]
    return "pass" if rec.get("ok") else f"WRONG (max error {rec.get('err', float('nan')):.3g})"


def fmt(v, spec=".4f"):
    return "-" if v is None else format(v, spec)


def markdown(results, with_triton, title="tutorial"):
    cols = [title, "shape; config", "tilejit ms"]
    cols += ["Triton ms", "Triton/tilejit", "kernels only", "max abs diff vs Triton"] if with_triton else []
    cols += ["tilejit max error vs torch", "status"]
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for r in results:
        tj, tr = r["tilejit"], r.get("triton") or {}
        cells = [r["tutorial"], r["shape"], fmt(tj.get("ms"))]
        if with_triton:
            trs = fmt(tr.get("ms")) if "ms" in tr else "Triton " + status(tr)[:70]
            cells += [trs, fmt(r.get("triton_over_tilejit"), ".2f"), fmt(r.get("triton_over_tilejit_kernels"), ".2f"),
                      fmt(r.get("max_abs_diff_vs_triton"), ".3g")]
        cells += [fmt(tj.get("err"), ".3g"), status(tj)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except Exception:
        return ""


def meta_of(ns, versions_):
    timing = ("median wall-clock of 3 calls (smoke: cpu backend, tiny shapes)" if ns.smoke else
              "median of per-call CUDA-event times, L2 flushed (256 MB memset) before each call, "
              "after ~25 ms of warmup; ~100 ms of calls (10..1000), queued behind a GPU sleep "
              "of 1.5x the host's measured queueing time (device time; host launch overhead "
              "excluded); kernel_ms: CUPTI device activity per call (kernels and copies, "
              "preparation and flush subtracted); wall_ms: back-to-back calls, one synchronize")
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "smoke": ns.smoke,
            "device": "cpu" if ns.smoke else "cuda", "tilejit_commit": git_commit(),
            "python": platform.python_version(), **versions_, "timing": timing,
            "ratio": "triton_over_tilejit = Triton ms / tilejit ms (above 1: tilejit faster)"}


def parent_main(ns):
    by_key = ns.suite.rows
    keys = [k for k in (ns.only.split(",") if ns.only else by_key) if k]
    unknown = [k for k in keys if k not in by_key]
    if unknown:
        sys.exit(f"unknown rows {unknown}; rows: {', '.join(by_key)}")
    impls = ("triton", "tilejit") if (ns.pair or not ns.smoke) else ("tilejit",)
    workdir = tempfile.mkdtemp(prefix="tilejit_tutorials_bench_")
    try:
        got, versions_ = run_all(keys, impls, ns, workdir)
        results = [combine(k, got["tilejit"][k], got["triton"][k] if "triton" in got else None,
                           compare(workdir, k) if "triton" in got else None, by_key) for k in keys]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    doc = {"meta": meta_of(ns, versions_), "results": results}
    if ns.out:
        os.makedirs(os.path.dirname(os.path.abspath(ns.out)), exist_ok=True)
        with open(ns.out, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"wrote {ns.out}", flush=True)
    print("\n" + markdown(results, "triton" in got, ns.suite.title), flush=True)
    return 0 if all(r["tilejit"].get("ok") for r in results) else 1


def main(argv=None, suite=TUTORIALS, description=__doc__.split("\n")[0], budget=345.0):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", default=None, help=f"JSON output (default {suite.default_out}; none with --smoke)")
    ap.add_argument("--smoke", action="store_true",
                    help="tilejit only, cpu backend, torch CPU tensors, tiny shapes (no Triton, no GPU)")
    ap.add_argument("--only", default="", help="comma-separated rows: " + ",".join(suite.rows))
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per child process")
    ap.add_argument("--budget", type=float, default=budget, help="seconds for the whole bench")
    ap.add_argument("--table", default="", metavar="JSON", help="only print the markdown table of a saved run")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--impl", choices=("triton", "tilejit"), help=argparse.SUPPRESS)
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    ap.add_argument("--rows", default="", help=argparse.SUPPRESS)
    ap.add_argument("--result", default="", help=argparse.SUPPRESS)
    ap.add_argument("--samples", default="", help=argparse.SUPPRESS)
    ap.add_argument("--small", action="store_true", help=argparse.SUPPRESS)
    # --pair: with --smoke, run the "triton" side too, as tilejit behind the alias (tests the
    # two-implementation path of the parent without Triton or a GPU)
    ap.add_argument("--pair", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--fake-triton", action="store_true", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    ns.suite = suite
    if ns.child:
        return child_main(ns)
    if ns.table:
        with open(ns.table) as f:
            results = json.load(f)["results"]
        print(markdown(results, any("triton" in r for r in results), suite.title))
        return 0
    if ns.out is None and not ns.smoke:
        ns.out = suite.default_out
    return parent_main(ns)


if __name__ == "__main__":
    sys.exit(main())
