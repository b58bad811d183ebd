"""Cold compile time per stage: Triton tutorials 01-05, the unrolled 3x3 stencil and
TorchInductor kernels, for the cpu backend and for CUDA PTX (no GPU needed).

    python bench/bench_compile_time.py [--reps 3] [--targets cpu,cuda:90] [--only NAME]
                                       [--inductor softmax,layer_norm,...] [--no-inductor]
                                       [--second-process] [--torch-compile MODEL,...]
                                       [--profile NAME] [--llvm-passes NAME] [--out bench/results]

Each sample is a cold compile: ``tilejit.compile`` of a fresh ``tilejit.jit`` object
with an empty cache directory, so every stage runs.  Each case is compiled once first,
not counted, so that imports (the compiler's modules are imported lazily) and LLVM's
one-time initialisation are not charged to a row; ``--second-process`` measures those
separately (below).  Medians of ``--reps``.

Stages (CPU seconds of this process, exclusive: a stage called inside another is
charged to itself only; the machine is shared, so CPU time is the figure to compare,
wall time is recorded too):

* ``frontend``   AST -> tile IR (``frontend.build_ir``)
* ``passes``     the tile-IR pass pipeline (``transforms.run_pipeline``)
* ``analysis``   range/axis analysis and versioning (``align_version``, the backends'
  fact choice)
* ``irgen``      tile IR -> LLVM IR text (cpu ``codegen.build_module``, cuda
  ``lowering.lower_kernel``, ``llvmlite.ir`` printing)
* ``llvm_parse`` parsing + verifying LLVM IR text
* ``llvm_opt``   LLVM's optimisation pipeline
* ``codegen``    machine code (cpu: MCJIT, object cache) / PTX emission (cuda)
* ``other``      the rest of the compile call (keys, disk cache, kernel object)

Inductor kernels: for each case of tests/torch_compile/models.py (or model of
bench/bench_torch_compile.py, e.g. ``col_mean_4096x256``) named by ``--inductor``, ``torch.compile(..., options={"cpu_backend": "triton"})`` runs once
under the ``triton`` alias and its output code is saved in ``--capture-dir`` (reused by
later runs: capturing takes ~1 min per case on a loaded 2-core machine).  Each
``@triton.jit`` kernel in it is compiled with every config Inductor's heuristics list
(what its autotuner compiles), for the cpu backend and for PTX.

``warm_cache_cpu_s``: the same compile again with the cache directory the cold compile
filled (a fresh jit object, so the frontend, passes, analysis and LLVM IR generation run;
the optimized IR and the object code / PTX come from disk): what a later process pays.

``--impl triton`` (Triton importable, no alias: ``PYTHONPATH=/opt/tritonsite``): real
Triton's cold ``triton.compile`` of the same kernels for sm_90, no GPU needed; its CPU
time includes ptxas (Triton makes a cubin; tilejit stops at PTX, which the driver
assembles at load).

``--second-process``: the first call of a vector add in a new Python process, with an
empty cache directory and then again with the directory the first process filled
(what the on-disk cache saves a second process).

``--torch-compile col_mean_4096x256,...``: the first call of models of
bench/bench_torch_compile.py, each in a fresh process (one thread, Inductor's caches
off, an empty tilejit cache), through tilejit (``cpu_backend="triton"``) and through
Inductor's default C++ backend: CPU seconds of the process and of its children (the C++
backend's compiler), wall seconds, and for tilejit its compiles, the autotuner's kernel
runs and Inductor's ``torch_key`` (a hash of torch's sources its Triton path computes
once per process).  CPU time, unlike the wall time, is not inflated by a loaded machine.

``--profile NAME``: cProfile of one cold compile of the first case matching NAME;
``--llvm-passes NAME`` (cpu): LLVM's pass timing report for it under the pipeline the
options choose (``TILEJIT_CPU_OPT_LEVEL``, ``TILEJIT_CPU_LOOP_UNROLL``).

JSON (``compile-time-<date>.json``) through ``bench_cpu.save_result``.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

STAGES = ("frontend", "passes", "analysis", "irgen", "llvm_parse", "llvm_opt", "codegen", "other")


# ------------------------------------------------------------------ stage clock
class StageClock:
    """Exclusive CPU and wall seconds per stage, from wrapped functions."""

    def __init__(self):
        self.cpu = dict.fromkeys(STAGES, 0.0)
        self.wall = dict.fromkeys(STAGES, 0.0)
        self._stack = []            # [stage, cpu0, wall0, child cpu, child wall]
        self._undo = []

    def reset(self):
        self.cpu = dict.fromkeys(STAGES, 0.0)
        self.wall = dict.fromkeys(STAGES, 0.0)

    def wrap(self, owner, attr, stage):
        inner = getattr(owner, attr)
        clock = self

        def timed(*a, **kw):
            clock._stack.append([stage, time.process_time(), time.perf_counter(), 0.0, 0.0])
            try:
                return inner(*a, **kw)
            finally:
                st, c0, w0, cc, cw = clock._stack.pop()
                c, w = time.process_time() - c0, time.perf_counter() - w0
                clock.cpu[st] += c - cc
                clock.wall[st] += w - cw
                if clock._stack:
                    clock._stack[-1][3] += c
                    clock._stack[-1][4] += w
        setattr(owner, attr, timed)
        self._undo.append((owner, attr, inner))

    def install(self):
        """Wrap the stage functions of the frontend, passes and both backends."""
        import llvmlite.binding as llvm
        import llvmlite.ir as lir
        import tilejit.frontend as fe
        import tilejit.transforms as tr
        import tilejit.transforms.align_version as av
        import tilejit.runtime.cache as cache
        import tilejit.backends.cpu.backend as cpu
        import tilejit.backends.cuda.backend as cuda
        import tilejit.backends.cuda.target as tgt
        from tilejit.backends.llvm import binding
        for owner, attr, stage in (
                (fe, "build_ir", "frontend"), (tr, "run_pipeline", "passes"),
                (av, "align_version", "analysis"), (cpu, "choose_facts", "analysis"),
                (cuda, "_facts", "analysis"), (cpu, "build_module", "irgen"),
                (cuda, "lower_kernel", "irgen"), (lir.Module, "__str__", "irgen"),
                (llvm, "parse_assembly", "llvm_parse"), (binding, "optimize", "llvm_opt"),
                (tgt, "llvm_to_ptx", "llvm_opt"),                # minus its parse and emission
                (llvm.TargetMachine, "emit_assembly", "codegen"),
                (cache, "cpu_compile_cached", "codegen")):       # minus its parse and optimisation
            self.wrap(owner, attr, stage)

    def uninstall(self):
        for owner, attr, inner in reversed(self._undo):
            setattr(owner, attr, inner)
        self._undo.clear()


# ------------------------------------------------------------------ cases
# (name, tests/triton_scripts stem, kernel, signature, constexprs, num_warps) per target kind
def _tutorials(kind):
    f = "fp32" if kind == "cpu" else "fp16"
    mm_sig = {"a_ptr": f"*{f}", "b_ptr": f"*{f}", "c_ptr": f"*{f}", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
              "stride_cm": "i32", "stride_cn": "i32"}
    mm_cfg = ({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64} if kind == "cpu" else
              {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64})
    from memory_bound_ptx import KERNELS as MB        # 04 dropout, 05 layer norm (bench/memory_bound_ptx.py)
    rows = [("01 vector add", "vector_add", "add_kernel",
             {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"},
             {"BLOCK_SIZE": 1024}, 4),
            ("02 fused softmax", "fused_softmax", "softmax_kernel",
             {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32",
              "output_row_stride": "i32", "n_cols": "i32"}, {"BLOCK_SIZE": 1024}, 4),
            ("03 matmul", "matmul_tutorial03", "matmul_kernel", mm_sig,
             {**mm_cfg, "GROUP_SIZE_M": 8, "ACTIVATION": ""}, 8)]
    for stem, name, sig, cex, warps in MB:
        label = "04 dropout" if stem == "low_memory_dropout" else "05 " + name.strip("_").replace("_", " ")
        rows.append((label, stem, name, sig, cex, warps))
    return rows


def _div16(sig):
    """Pointers and integer arguments specialised as divisible by 16 (aligned buffers,
    multiples of 16: what a launch on such arrays would give)."""
    return [n for n, t in sig.items() if t.startswith("*") or t == "i32"]


def _stencil_case():
    from bench_compile_cpu import stencil3x3_kernel
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "H": "i32", "W": "i32"}
    return ("stencil 3x3 unrolled 64x64", stencil3x3_kernel, sig, {"BH": 64, "BW": 64}, 4, _div16(sig))


def tutorial_cases(kind):
    import bench_tutorials_cuda as bt
    out = []
    for label, stem, name, sig, cex, warps in _tutorials(kind):
        out.append((label, getattr(bt.kernels(stem), name), sig, cex, warps, _div16(sig)))
    out.append(_stencil_case())
    return out


# ------------------------------------------------------------------ inductor
def capture_inductor(names, capture_dir):
    """Inductor's output code per case (``<capture_dir>/<case>.py``), captured where missing."""
    os.makedirs(capture_dir, exist_ok=True)
    paths = {}
    for n in names:
        path = os.path.join(capture_dir, f"{n}.py")
        if not os.path.exists(path):
            import corpus_inductor as ci
            make, inputs = _inductor_model(n)
            t = time.perf_counter()
            code = ci._capture(make(), inputs(), "cpu")
            with open(path + ".tmp", "w") as f:
                f.write(code)
            os.replace(path + ".tmp", path)
            print(f"captured {n} in {time.perf_counter() - t:.1f} s -> {path}", flush=True)
        paths[n] = path
    return paths


def _inductor_model(name):
    """(make, inputs) of a case of tests/torch_compile/models.py or, failing that, of a
    model of bench/bench_torch_compile.py (e.g. ``col_mean_4096x256``)."""
    import corpus_inductor as ci
    cases = ci._cases()
    if name in cases:
        return cases[name].make, cases[name].inputs
    import torch
    import bench_torch_compile
    models = bench_torch_compile._models(torch)
    if name not in models:
        raise SystemExit(f"--inductor {name}: no such case in tests/torch_compile/models.py "
                         f"or model in bench/bench_torch_compile.py")
    return models[name]


_KERNEL_RE = re.compile(r"^(\w+) = async_compile\.triton\('(\w+)', '''(.*?)'''", re.S | re.M)


def inductor_cases(paths, kind, tmp):
    """(label, jit function, signature, constexprs, num_warps, divisible) per kernel and
    config of each captured output module."""
    out = []
    for case, path in paths.items():
        code = open(path).read()
        for _, name, src in _KERNEL_RE.findall(code):
            file = os.path.join(tmp, f"{name}.py")
            with open(file, "w") as f:
                f.write(src)
            spec = importlib.util.spec_from_file_location(name, file)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            tuner = getattr(mod, name)
            meta = tuner.triton_meta
            sig = {k: v for k, v in meta["signature"].items() if v != "constexpr"}
            names = list(meta["signature"])
            div = sorted({names[i[0]] for cfg in meta.get("configs", []) for i in cfg} & set(sig))
            for j, cfg in enumerate(tuner.configs):
                cex = {**meta.get("constants", {}), **cfg.kwargs}
                cex = {k: v for k, v in cex.items() if k in names}
                label = f"inductor {case}: {name} [{j}]"
                out.append((label, tuner.fn, sig, cex, cfg.num_warps if kind != "cpu" else 4, div))
    return out


# ------------------------------------------------------------------ measuring
def compile_once(fn, sig, cex, warps, div, target, clock, cache_dir=None):
    """One compile of a fresh jit object: (total cpu s, total wall s, stage cpu, stage
    wall); cold with an empty cache directory, else with ``cache_dir`` as it is."""
    import tilejit
    from tilejit.runtime.options import use_options
    clock.reset()
    with tempfile.TemporaryDirectory() as fresh, use_options(cache_dir=cache_dir or fresh):
        c0, w0 = time.process_time(), time.perf_counter()
        tilejit.compile(tilejit.jit(fn.fn if hasattr(fn, "fn") else fn), signature=sig, constexprs=cex,
                        divisible_by_16=div, target=target, num_warps=warps)
        c, w = time.process_time() - c0, time.perf_counter() - w0
    stage_cpu, stage_wall = dict(clock.cpu), dict(clock.wall)
    stage_cpu["other"] = max(0.0, c - sum(stage_cpu.values()))
    stage_wall["other"] = max(0.0, w - sum(stage_wall.values()))
    return c, w, stage_cpu, stage_wall


def measure(cases, target, reps, clock, only=""):
    rows = []
    for label, fn, sig, cex, warps, div in cases:
        if only and only not in label:
            continue
        samples = []
        try:
            compile_once(fn, sig, cex, warps, div, target, clock)    # untimed: lazy imports
            warm = []
            for _ in range(reps):
                with tempfile.TemporaryDirectory() as d:
                    samples.append(compile_once(fn, sig, cex, warps, div, target, clock, d))
                    warm.append(compile_once(fn, sig, cex, warps, div, target, clock, d)[0])
        except Exception as e:          # one kernel's failure is one row
            rows.append({"case": label, "target": target, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            print(f"{target:8s} {label}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        med = lambda xs: float(statistics.median(xs))
        r = {"case": label, "target": target, "cpu_s": med([s[0] for s in samples]),
             "wall_s": med([s[1] for s in samples]), "warm_cache_cpu_s": med(warm),
             "stages_cpu_s": {k: med([s[2][k] for s in samples]) for k in STAGES},
             "stages_wall_s": {k: med([s[3][k] for s in samples]) for k in STAGES}}
        rows.append(r)
        st = " ".join(f"{k}={v * 1e3:.0f}" for k, v in r["stages_cpu_s"].items())
        print(f"{target:8s} {label:52s} cpu {r['cpu_s']:.3f} s (wall {r['wall_s']:.3f}, warm cache "
              f"{r['warm_cache_cpu_s']:.3f})  ms: {st}", flush=True)
    return rows


# ------------------------------------------------------------------ second process
_FIRST_CALL = r"""
import time
c0, w0 = time.process_time(), time.perf_counter()
import numpy as np, tilejit, tilejit.language as tl
@tilejit.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
x = np.ones(4096, np.float32)
c1, w1 = time.process_time(), time.perf_counter()
add_kernel[(4,)](x, x, x.copy(), 4096, BLOCK=1024)
c2, w2 = time.process_time(), time.perf_counter()
print({"import_cpu_s": c1 - c0, "import_wall_s": w1 - w0, "first_call_cpu_s": c2 - c1,
       "first_call_wall_s": w2 - w1})
"""


def second_process(reps):
    """First call of a vector add in fresh processes: empty cache, then the filled one."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TILEJIT_BACKEND": "cpu"}
    out = {"cold": [], "warm": []}
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "first_call.py")     # a file: the kernel's source is read back
            with open(script, "w") as f:
                f.write(_FIRST_CALL)
            env["TILEJIT_CACHE_DIR"] = os.path.join(d, "cache")
            for phase in ("cold", "warm"):
                p = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True)
                if p.returncode:
                    raise RuntimeError(f"first-call process failed:\n{p.stderr[-2000:]}")
                out[phase].append(eval(p.stdout.strip().splitlines()[-1]))
    res = {ph: {k: float(statistics.median(s[k] for s in v)) for k in v[0]} for ph, v in out.items()}
    res["python_bytecode_cache"] = not sys.flags.dont_write_bytecode
    for ph in ("cold", "warm"):
        r = res[ph]
        print(f"new process, {ph} cache: import {r['import_cpu_s']:.3f} s cpu, first call "
              f"{r['first_call_cpu_s']:.3f} s cpu ({r['first_call_wall_s']:.3f} s wall)", flush=True)
    return res


_TC_WORKER = r"""
import json, resource, sys, time
label, name, root = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [root, root + "/bench", root + "/tests/torch_compile"]
split = {}
if label == "tilejit":
    import tilejit.compat
    tilejit.compat.install_triton_alias()
    from tilejit.backends.cpu import backend as B

    def wrap(owner, attr, key):
        inner = getattr(owner, attr)
        split[key] = 0.0

        def timed(*a, **k):
            c = time.process_time()
            try:
                return inner(*a, **k)
            finally:
                split[key] += time.process_time() - c
        setattr(owner, attr, timed)
    wrap(B.CPUBackend, "compile", "tilejit_compile")
    wrap(B.CPUKernel, "_run", "kernel_runs")
import torch
import bench_torch_compile
torch.set_num_threads(1)
torch._inductor.config.force_disable_caches = True
make, inputs = bench_torch_compile._models(torch)[name]
fn, args = make(), inputs()
compiled = torch.compile(fn, options={"cpu_backend": "triton"} if label == "tilejit" else {})
kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
c0, w0 = time.process_time(), time.perf_counter()
if label == "tilejit":      # Inductor's hash of torch's sources (once per process, its Triton path only)
    from torch._inductor.codecache import torch_key
    torch_key()
    split["torch_key"] = time.process_time() - c0
with torch.no_grad():
    compiled(*args)
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
children = (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
print("TC " + json.dumps({"label": label, "model": name, "cpu_s": cpu, "children_cpu_s": children,
                          "wall_s": wall, "split_cpu_s": split}))
"""


def torch_compile_first_call(names, reps):
    """The first call of ``torch.compile``'d models of bench/bench_torch_compile.py, in
    fresh processes (tilejit under the alias, then Inductor's C++ backend, alternating):
    CPU seconds of the process and of its children (the C++ backend's compiler runs in
    them), wall seconds, and tilejit's share (its compiles, the autotuner's kernel runs,
    Inductor's ``torch_key``).  Medians of ``reps``."""
    out = []
    for name in names:
        runs = {"tilejit": [], "cpp": []}
        for _ in range(reps):
            for label in runs:
                with tempfile.TemporaryDirectory() as d:
                    env = {**os.environ, "TILEJIT_CACHE_DIR": d, "TILEJIT_NUM_THREADS": "1",
                           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
                    p = subprocess.run([sys.executable, "-c", _TC_WORKER, label, name, ROOT], env=env,
                                       capture_output=True, text=True, cwd=d)
                lines = [ln for ln in p.stdout.splitlines() if ln.startswith("TC ")]
                if p.returncode or not lines:
                    raise RuntimeError(f"torch.compile worker {label} {name} failed:\n{p.stderr[-2000:]}")
                runs[label].append(json.loads(lines[-1][3:]))
        for label, rs in runs.items():
            med = lambda k: float(statistics.median(r[k] for r in rs))
            r = {"model": name, "label": label, "cpu_s": med("cpu_s"), "children_cpu_s": med("children_cpu_s"),
                 "wall_s": med("wall_s"),
                 "split_cpu_s": {k: float(statistics.median(x["split_cpu_s"][k] for x in rs))
                                 for k in rs[0]["split_cpu_s"]}}
            out.append(r)
            split = " ".join(f"{k}={v:.2f}" for k, v in r["split_cpu_s"].items())
            print(f"torch.compile {name} [{label}] first call: cpu {r['cpu_s']:.2f} s + children "
                  f"{r['children_cpu_s']:.2f} s (wall {r['wall_s']:.2f})  {split}", flush=True)
    return out


def _cpu_with_children() -> float:
    """CPU seconds of this process and its finished children (Triton runs ptxas)."""
    import resource
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class _OfflineDriver:
    """Real Triton's active driver on a host without a GPU: what the tutorial scripts ask
    of it at import (a torch device) and the sm_90 target; nothing is launched."""

    def get_active_torch_device(self):
        return "cpu"

    def get_current_target(self):
        from triton.backends.compiler import GPUTarget
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 0


def triton_rows(cases, reps, only=""):
    """Real Triton's cold compile of the same kernels for sm_90 (``--impl triton``: run with
    Triton importable and no alias, e.g. ``PYTHONPATH=/opt/tritonsite``).  Each sample has
    a fresh ``TRITON_CACHE_DIR``; its CPU time includes ptxas (Triton makes a cubin)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    rows = []
    for label, fn, sig, cex, warps, div in cases:
        if only and only not in label:
            continue
        names = list(fn.arg_names)
        full = {k: ("constexpr" if k in cex else sig[k]) for k in names if k in sig or k in cex}
        attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in div}
        consts = {(names.index(k),): v for k, v in cex.items()}
        samples = []
        try:
            for i in range(reps + 1):                   # the first: imports, untimed
                with tempfile.TemporaryDirectory() as d:
                    os.environ["TRITON_CACHE_DIR"] = d
                    triton.knobs.cache.dir = d
                    c0, w0 = _cpu_with_children(), time.perf_counter()
                    triton.compile(ASTSource(fn=fn, signature=full, constexprs=consts, attrs=attrs),
                                   target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
                    if i:
                        samples.append((_cpu_with_children() - c0, time.perf_counter() - w0))
        except Exception as e:
            rows.append({"case": label, "target": "triton:cuda:90", "error": f"{type(e).__name__}: {str(e)[:300]}"})
            print(f"triton   {label}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        r = {"case": label, "target": "triton:cuda:90", "cpu_s": float(statistics.median(s[0] for s in samples)),
             "wall_s": float(statistics.median(s[1] for s in samples))}
        rows.append(r)
        print(f"triton   {label:52s} cpu {r['cpu_s']:.3f} s (wall {r['wall_s']:.3f}, with ptxas)", flush=True)
    return rows


def profile(cases, target, only):
    """cProfile of one cold compile of the first case matching ``only``."""
    import cProfile
    import pstats
    import tilejit
    from tilejit.runtime.options import use_options
    label, fn, sig, cex, warps, div = next(c for c in cases if only in c[0])
    with tempfile.TemporaryDirectory() as d, use_options(cache_dir=d):
        pr = cProfile.Profile()
        pr.enable()
        tilejit.compile(tilejit.jit(fn.fn), signature=sig, constexprs=cex, divisible_by_16=div,
                        target=target, num_warps=warps)
        pr.disable()
    print(f"== {label} [{target}]")
    pstats.Stats(pr).sort_stats("tottime").print_stats(30)


def llvm_passes(cases, only, lines=25):
    """LLVM's own pass timing report (``PassBuilder.start_pass_timing``) for the CPU
    pipeline that the options choose for the first case matching ``only``, then the
    code generation time; the module is compiled first (untimed) for its LLVM IR."""
    import tilejit
    from tilejit.backends.llvm import binding
    from tilejit.runtime.options import get_options, use_options
    label, fn, sig, cex, warps, div = next(c for c in cases if only in c[0])
    with tempfile.TemporaryDirectory() as d, use_options(cache_dir=d):
        llir = tilejit.compile(tilejit.jit(fn.fn if hasattr(fn, "fn") else fn), signature=sig, constexprs=cex,
                               divisible_by_16=div, target="cpu", num_warps=warps).asm["llir"]
    tm = binding.host_target_machine()
    mod = binding.parse_module(llir, tm)
    pipe = binding.pipeline_for(llir, get_options())
    c0 = time.process_time()
    report = binding.optimize(mod, tm, pipe, timing=True)
    opt_s = time.process_time() - c0
    out_lines = str(mod).count("\n  ")
    c0 = time.process_time()
    binding.create_engine(mod)
    print(f"== {label}: {pipe}; {llir.count(chr(10) + '  ')} instructions in, {out_lines} out; "
          f"optimisation {opt_s * 1e3:.0f} ms, code generation {(time.process_time() - c0) * 1e3:.0f} ms CPU")
    print("\n".join(report.splitlines()[:lines]))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--targets", default="cpu,cuda:90")
    ap.add_argument("--only", default="")
    ap.add_argument("--inductor", default="softmax,layer_norm,gelu_erf,reduce_long_rows,mlp_forward")
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--capture-dir", default=os.path.join(tempfile.gettempdir(), "tilejit_bench_inductor"))
    ap.add_argument("--second-process", action="store_true")
    ap.add_argument("--torch-compile", default="",
                    help="models of bench_torch_compile.py (comma-separated): first torch.compile call, "
                         "tilejit against Inductor's C++ backend, in fresh processes")
    ap.add_argument("--profile", default="", help="cProfile the first case matching this name")
    ap.add_argument("--llvm-passes", default="",
                    help="LLVM's pass timing report for the first cpu case matching this name")
    ap.add_argument("--impl", choices=("tilejit", "triton"), default="tilejit",
                    help="triton: real Triton's sm_90 compile of the same kernels (no stencil)")
    ap.add_argument("--tag", default="")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args(argv)
    if args.impl == "tilejit":
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    from bench_cpu import machine_info, save_result
    doc = {**machine_info(), "load_average_before": list(os.getloadavg()),
           "command": "python bench/bench_compile_time.py " + " ".join(argv or sys.argv[1:]),
           "stages": list(STAGES), "results": []}
    if args.second_process:
        doc["second_process"] = second_process(args.reps)
    if args.torch_compile:
        doc["torch_compile_first_call"] = torch_compile_first_call(args.torch_compile.split(","), args.reps)
    names = [] if args.no_inductor else [n for n in args.inductor.split(",") if n]
    paths = capture_inductor(names, args.capture_dir) if names else {}
    if args.impl == "triton":
        import triton
        triton.runtime.driver.set_active(_OfflineDriver())
        doc["versions"]["triton"] = triton.__version__
        with tempfile.TemporaryDirectory() as tmp:
            cases = tutorial_cases("cuda")[:-1] + inductor_cases(paths, "cuda", tmp)   # no stencil
            doc["results"] = triton_rows(cases, args.reps, args.only)
        save_result(doc, args.out, "compile-time-triton" + (f"-{args.tag}" if args.tag else ""))
        return
    clock = StageClock()
    clock.install()
    with tempfile.TemporaryDirectory() as tmp:
        for target in [t for t in args.targets.split(",") if t]:
            kind = target.partition(":")[0]
            cases = tutorial_cases(kind) + inductor_cases(paths, kind, tmp)
            if args.llvm_passes and kind == "cpu":
                llvm_passes(cases, args.llvm_passes)
                return
            if args.profile:
                clock.uninstall()
                profile(cases, target, args.profile)
                return
            doc["results"] += measure(cases, target, args.reps, clock, args.only)
    doc["load_average_after"] = list(os.getloadavg())
    save_result(doc, args.out, "compile-time" + (f"-{args.tag}" if args.tag else ""))


if __name__ == "__main__":
    main()
