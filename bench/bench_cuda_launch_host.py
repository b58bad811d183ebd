"""Host cost of one CUDA kernel launch as TorchInductor drives it: tilejit's
``CompiledKernel.run`` (compat/triton_api/launch.py -> cuda/native_launch.py) next to
Triton 3.6's launcher and torch's static launcher.

    python bench/bench_cuda_launch_host.py [--launches 10000] [--out DIR]              # no GPU
    python bench/bench_cuda_launch_host.py --device cuda [--launches 10000] [--out DIR]
    python bench/bench_cuda_launch_host.py --inductor [--only softmax,gelu] [--profile] [--out DIR]

The kernel is Inductor's shape of a tiny pointwise kernel: ``(in_ptr0, in_ptr1,
out_ptr0, xnumel, XBLOCK: constexpr)``, one program of 128 elements, launched with
Inductor's convention ``run(grid_0, grid_1, grid_2, stream, function, metadata, None,
None, None, *args)`` on torch tensors.  Rows (microseconds per launch, medians of
batches; peers interleaved per batch):

* ``tilejit run``: the steady-state launcher (argument checks, the native builtin,
  cuLaunchKernel);  ``tilejit run, general path``: the same launcher with the native
  builtin off (``kernel.launch``: placement, device, the Launcher);
* ``triton run`` (Triton 3.6's ``CompiledKernel.run``: ``CudaLauncher.__call__`` and
  its generated C ``launch``); ``torch static launcher`` (Inductor's default for real
  Triton kernels: ``StaticallyLaunchedCudaKernel.run``, GPU only);
* ``python floor``: a Python function taking the same arguments and doing nothing.

``--inductor`` (GPU): bench_torch_compile.py's models through torch.compile with tilejit
and with real Triton, each call's time split into host time (calls queued behind a GPU
sleep), the GPU's kernel time (CUPTI) and wall time (back-to-back calls): which rows are
host-bound, and by how much.  ``--profile`` adds, per model and side, each call's GPU
kernels (count, device us) and the host's hottest Python functions (cProfile).

Without a GPU (default): the driver is a stub ``libcuda.so.1`` built here with gcc
(every entry point returns CUDA_SUCCESS at once), so the rows are the host work up to
the driver call; tilejit's rows take torch CPU tensors marked as CUDA tensors (``torch.Tensor.is_cuda``
set to True and ``get_device`` to 0 in the bench process; dtype and data_ptr are torch's),
Triton's row runs in a separate process (``PYTHONPATH=/opt/tritonsite``; its launcher
calls ``data_ptr`` and ``cuPointerGetAttribute`` per pointer).  The stub and the fakes
live in this script only.  With ``--device cuda``: the real driver; each batch of 500
launches is queued behind ``torch.cuda._sleep`` so the GPU never throttles the host.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
TRITON_SITE = os.environ.get("TRITON_SITE", "/opt/tritonsite")
N, BLOCK, BATCH = 128, 128, 500


def add_kernel(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):  # noqa: F821
    xoffset = tl.program_id(0) * XBLOCK  # noqa: F821
    xindex = xoffset + tl.arange(0, XBLOCK)  # noqa: F821
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + xindex, xmask)  # noqa: F821
    tmp1 = tl.load(in_ptr1 + xindex, xmask)  # noqa: F821
    tl.store(out_ptr0 + xindex, tmp0 + tmp1, xmask)  # noqa: F821


SIG = {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32",
       "XBLOCK": "constexpr"}


def kernel_for(language):
    """``add_kernel`` with ``tl`` bound to ``language`` (tilejit's or Triton's)."""
    import types
    return types.FunctionType(add_kernel.__code__, {**globals(), "tl": language}, "add_kernel")


def _floor(grid_0, grid_1, grid_2, stream, function, metadata, launch_metadata, enter_hook,
           exit_hook, a0, a1, a2, a3, a4):
    return None


def time_rows(rows: dict, launches: int, before=lambda: None, after=lambda: None) -> dict:
    """Median microseconds per call of each ``rows[k]()`` over batches of BATCH calls,
    the rows interleaved per batch; ``before``/``after`` run untimed around a batch."""
    times = {k: [] for k in rows}
    for f in rows.values():
        for _ in range(3):
            f()
    for _ in range(max(1, launches // BATCH)):
        for k, f in rows.items():
            before()
            t0 = time.perf_counter()
            for _ in range(BATCH):
                f()
            times[k].append((time.perf_counter() - t0) / BATCH * 1e6)
            after()
    return {k: statistics.median(v) for k, v in times.items()}


# ------------------------------------------------------------------ no GPU: a stub driver
STUB_C = r"""
#include <stdint.h>
#include <stddef.h>
typedef int CUresult;
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{ return 0; }
CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra) { return 0; }
CUresult cuPointerGetAttribute(void *data, int attribute, uint64_t ptr)
{ *(uint64_t *)data = ptr; return 0; }
CUresult cuCtxGetCurrent(void **ctx) { *ctx = (void *)16; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { return 0; }
CUresult cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)16; return 0; }
CUresult cuFuncSetAttribute(void *f, int attr, int value) { return 0; }
CUresult cuGetErrorString(CUresult e, const char **s) { *s = "stub"; return 0; }
"""


def build_stub(d: str) -> str:
    """A do-nothing ``libcuda.so.1`` in ``d`` (gcc); returns its path."""
    src, so = os.path.join(d, "stub.c"), os.path.join(d, "libcuda.so.1")
    with open(src, "w") as f:
        f.write(STUB_C)
    subprocess.check_call(["gcc", "-O2", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", src, "-o", so])
    return so


def _mark_cuda(torch):
    """Make every torch tensor of this process say it is on cuda:0 (``is_cuda``,
    ``get_device``; dtype and data_ptr stay torch's own).  Bench process only."""
    torch.Tensor.is_cuda = True
    torch.Tensor.get_device = lambda self: 0


class _StubDevice:
    ordinal = 0

    def __init__(self, handle):
        self.handle = handle

    def function(self, kernel):
        return self.handle

    def make_current(self):
        pass


def tilejit_stub_rows(stub: str) -> dict:
    """tilejit's rows against the stub driver (this process)."""
    import ctypes
    import torch
    import tilejit
    import tilejit.language as tl
    from tilejit.backends.cuda import driver
    from tilejit.compat.triton_api.backends import GPUTarget
    from tilejit.compat.triton_api.compiler import ASTSource, compile as tj_compile
    from tilejit.compat.triton_api.launch import make_launcher
    ctypes.CDLL(stub, mode=ctypes.RTLD_GLOBAL)
    driver._RAW.update(fn=driver._raw_launch(), loaded=True, ok=False)
    handle = 0x5150
    driver._devices[0] = _StubDevice(handle)
    if not hasattr(torch._C, "_cuda_getCurrentRawStream"):      # CPU torch: the general path asks
        torch._C._cuda_getCurrentRawStream = lambda idx: 0
    ck = tj_compile(ASTSource(tilejit.jit(kernel_for(tl)), SIG, {"XBLOCK": BLOCK}),
                    target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    ck.function = handle                                      # what load() gives on a GPU
    ck.kernel._launcher = driver.Launcher(ck.kernel)
    ck.kernel._launcher.cu = object()                         # no cuda-bindings here: unused
    x, y, out = (torch.zeros(N) for _ in range(3))
    _mark_cuda(torch)
    runs = {}
    for label, native in (("tilejit run", True), ("tilejit run, general path", False)):
        run = make_launcher(ck)
        args = (1, 1, 1, 0, handle, ck.packed_metadata, None, None, None, x, y, out, N, BLOCK)
        run(*args)                                            # first launch arms the builtin
        if not native:
            run.__globals__.update(NATIVE=lambda *a: 1, ARM=False)
        elif run.__globals__.get("NATIVE") is None or run.__globals__.get("ARM", True):
            print(f"warning: {label}: the native launch is not armed", file=sys.stderr)
        runs[label] = (run, args)
    rows = {k: (lambda r=r, a=a: r(*a)) for k, (r, a) in runs.items()}
    floor_args = runs["tilejit run"][1]
    rows["python floor"] = lambda: _floor(*floor_args)
    return rows


def triton_stub_worker(stubdir: str, launches: int) -> dict:
    """Triton 3.6's launcher against the stub driver (runs with PYTHONPATH=/opt/tritonsite)."""
    import types
    import torch
    import triton.backends.nvidia.driver as nv
    import triton.language as tl
    from triton.compiler.compiler import ASTSource
    nv.library_dirs = lambda: [stubdir]
    fn = triton_jit(kernel_for(tl))
    src = ASTSource(fn, SIG, {"XBLOCK": BLOCK})
    meta = types.SimpleNamespace(num_ctas=1, global_scratch_size=0, global_scratch_align=1,
                                 profile_scratch_size=0, profile_scratch_align=1,
                                 launch_cooperative_grid=False, launch_pdl=False, tensordesc_meta=None)
    launcher = nv.CudaLauncher(src, meta)
    x, y, out = (torch.zeros(N) for _ in range(3))
    packed = (4, 1, 0)                                          # num_warps, num_ctas, shared
    args = (1, 1, 1, 0, 0x5150, packed, None, None, None, x, y, out, N, BLOCK)
    rows = {"triton run": lambda: launcher(*args), "python floor": lambda: _floor(*args)}
    return time_rows(rows, launches)


def triton_jit(fn):
    import triton
    return triton.jit(fn)


def stub_main(launches: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="tilejit-stub-cuda-") as d:
        stub = build_stub(d)
        out = time_rows(tilejit_stub_rows(stub), launches)
        triton = {}
        if os.path.isdir(os.path.join(TRITON_SITE, "triton")):
            env = dict(os.environ, PYTHONPATH=TRITON_SITE + os.pathsep + ROOT, LD_LIBRARY_PATH=d,
                       TRITON_CACHE_DIR=os.path.join(d, "triton-cache"))
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--triton-stub-worker", d,
                                   "--launches", str(launches)], env=env, capture_output=True, text=True)
            if proc.returncode:
                print(f"triton worker failed:\n{proc.stderr[-3000:]}", file=sys.stderr)
            else:
                triton = json.loads(proc.stdout.strip().splitlines()[-1])
        if triton:
            out["triton run"] = triton["triton run"]
            out["python floor (triton process)"] = triton["python floor"]
    return out


# ------------------------------------------------------------------ on the GPU
def cuda_rows():
    """(rows, checks) on the GPU: each row launches the real kernel; checks are
    (label, output tensor) whose contents must equal x + y after the timing."""
    import torch
    import tilejit
    import tilejit.language as tl
    from tilejit.compat.triton_api.backends import GPUTarget
    from tilejit.compat.triton_api.compiler import ASTSource, compile as tj_compile
    arch = torch.cuda.get_device_capability()
    target = GPUTarget("cuda", arch[0] * 10 + arch[1], 32)
    x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    rows, checks = {}, []
    ck = tj_compile(ASTSource(tilejit.jit(kernel_for(tl)), SIG, {"XBLOCK": BLOCK}), target=target,
                    options={"num_warps": 4})
    ck._init_handles()
    for label, native in (("tilejit run", True), ("tilejit run, general path", False)):
        from tilejit.compat.triton_api.launch import make_launcher
        run, out = make_launcher(ck), torch.zeros(N, device="cuda")
        args = (1, 1, 1, stream, ck.function, ck.packed_metadata, None, None, None, x, y, out, N, BLOCK)
        run(*args)
        if not native:
            run.__globals__.update(NATIVE=lambda *a: 1, ARM=False)
        rows[label] = lambda r=run, a=args: r(*a)
        checks.append((label, out))
    try:
        import triton
        import triton.language as ttl
        from triton.compiler.compiler import ASTSource as TAST
        tk = triton.compile(TAST(triton.jit(kernel_for(ttl)), SIG, {"XBLOCK": BLOCK}), target=None,
                            options={"num_warps": 4})
        tk._init_handles()
        out = torch.zeros(N, device="cuda")
        targs = (1, 1, 1, stream, tk.function, tk.packed_metadata, None, None, None, x, y, out, N, BLOCK)
        rows["triton run"] = lambda: tk.run(*targs)
        checks.append(("triton run", out))
        sout = torch.zeros(N, device="cuda")
        static = _static_launcher(tk, lambda s: s.run(1, 1, 1, stream, x, y, sout, N))
        if static is not None:
            rows["torch static launcher"] = lambda: static.run(1, 1, 1, stream, x, y, sout, N)
            checks.append(("torch static launcher", sout))
    except Exception as e:        # no Triton here: tilejit's rows only
        print(f"triton rows skipped: {type(e).__name__}: {e}", file=sys.stderr)
    fargs = (1, 1, 1, stream, 0, None, None, None, None, x, y, x, N, BLOCK)
    rows["python floor"] = lambda: _floor(*fargs)
    return rows, checks, x + y


def _static_launcher(tk, first_launch):
    """torch's StaticallyLaunchedCudaKernel for Triton's compiled kernel (launched once
    with ``first_launch``), or None where this torch has none or it fails."""
    try:
        from torch._inductor.runtime.static_triton_launcher import StaticallyLaunchedCudaKernel
        d = tempfile.mkdtemp(prefix="static-launch-")
        path = os.path.join(d, "add_kernel.cubin")
        with open(path, "wb") as f:
            f.write(tk.asm["cubin"])
        tk._cubin_path = path
        s = StaticallyLaunchedCudaKernel(tk)
        s.load_kernel(0)
        first_launch(s)
        return s
    except Exception as e:
        print(f"torch static launcher skipped: {type(e).__name__}: {e}", file=sys.stderr)
        return None


def cuda_main(launches: int) -> dict:
    import torch
    rows, checks, want = cuda_rows()
    out = time_rows(rows, launches, before=lambda: torch.cuda._sleep(20_000_000),
                    after=torch.cuda.synchronize)
    for label, got in checks:
        if not torch.equal(got, want):
            raise SystemExit(f"{label}: wrong result")
    return out


# ------------------------------------------------------------------ torch.compile rows, split
def inductor_worker(label: str, only: list, profile: bool = False) -> None:
    """Per model of bench_torch_compile.py (those whose name holds one of ``only``):
    host_us (calls queued behind a GPU sleep: the host's time per call alone),
    kernel_us (CUPTI: the GPU's time in kernels per call) and wall_us (back-to-back
    calls, one sync: what bench_torch_compile.py's steady state sees).  With
    ``profile``: also each call's GPU kernels and the host's hottest Python functions
    (``PROF`` lines, see :func:`_profile`)."""
    if label == "tilejit":
        import tilejit.compat
        tilejit.compat.install_triton_alias()
    import torch
    from bench_torch_compile import _models
    from cuda_timing import kernel_ms, wall_ms
    torch._inductor.config.force_disable_caches = True
    for name, (make, inputs) in _models(torch).items():
        if only and not any(o in name for o in only):
            continue
        torch._dynamo.reset()
        fn = make()
        fn = fn.to("cuda") if isinstance(fn, torch.nn.Module) else fn
        args = [a.to("cuda") for a in inputs()]
        compiled = torch.compile(fn)
        with torch.no_grad():
            call = lambda: compiled(*args)       # noqa: E731
            for _ in range(5):
                call()
            rec = {"host_us": _host_us(call, torch), "kernel_us": (kernel_ms(call, calls=10) or 0) * 1e3,
                   "wall_us": statistics.median(wall_ms(call, calls=20) for _ in range(10)) * 1e3}
            print("SPLIT " + json.dumps({name: rec}), flush=True)
            if profile:
                for line in _profile(call, torch):
                    print(f"PROF {label} {name} {line}", flush=True)


def _profile(call, torch, calls=200, top=14):
    """Lines: per GPU kernel or copy of a call, its count and device microseconds per
    call (torch.profiler, 20 calls); then the ``top`` functions by own time over
    ``calls`` calls (cProfile; microseconds per call, cumulative in brackets)."""
    import cProfile
    import pstats
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            call()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            n, t = per.get(e.name, (0, 0.0))
            per[e.name] = (n + 1, t + e.time_range.elapsed_us())
    out = [f"gpu {n / 20:4.1f}x {t / 20:8.2f} us  {k[:90]}" for k, (n, t) in sorted(per.items())]
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(calls):
        call()
    pr.disable()
    torch.cuda.synchronize()
    st = pstats.Stats(pr)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:top]
    for (f, line, fn), (_cc, nc, tt, ct, _callers) in rows:
        where = f"{os.path.basename(f)}:{line}({fn})"[:80]
        out.append(f"host {tt / calls * 1e6:7.2f} us [{ct / calls * 1e6:7.2f}] x{nc / calls:g}  {where}")
    return out


def _host_us(call, torch, calls=20, reps=10):
    """Median host microseconds per call, each batch queued behind ~25 ms of GPU sleep."""
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        torch.cuda._sleep(50_000_000)
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def inductor_main(only: list, timeout: float, profile: bool = False) -> dict:
    """The split per model and backend (one worker process each; what a worker
    finished before ``timeout`` seconds is kept)."""
    res = {}
    for label in ("tilejit", "triton"):
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.setdefault("TILEJIT_CACHE_DIR", tempfile.mkdtemp(prefix="tilejit-bench-launch-"))
        cmd = [sys.executable, os.path.abspath(__file__), "--inductor-worker", label, "--only", ",".join(only)]
        cmd += ["--profile"] if profile else []
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
            out, err, rc = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            out, err, rc = e.stdout or "", f"timed out after {timeout} s", "timeout"
            out = out.decode() if isinstance(out, bytes) else out
        if rc:
            print(f"{label} worker exited {rc}:\n{err[-3000:]}", file=sys.stderr)
        for line in out.splitlines():
            if line.startswith("PROF "):
                print(line[5:])
            if line.startswith("SPLIT "):
                for name, rec in json.loads(line[6:]).items():
                    for k, v in rec.items():
                        res[f"{name} {label} {k}"] = v
    return res


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=("stub", "cuda"), default="stub",
                    help="stub: no GPU, a do-nothing libcuda; cuda: the real driver")
    ap.add_argument("--launches", type=int, default=10000)
    ap.add_argument("--out", default="")
    ap.add_argument("--inductor", action="store_true",
                    help="(cuda) instead: torch.compile rows split into host, kernel and wall time")
    ap.add_argument("--only", default="", help="with --inductor: comma-separated model name parts")
    ap.add_argument("--timeout", type=float, default=300, help="with --inductor: seconds per worker")
    ap.add_argument("--profile", action="store_true",
                    help="with --inductor: also each call's GPU kernels and the host's hottest functions")
    ap.add_argument("--triton-stub-worker", default="", help=argparse.SUPPRESS)
    ap.add_argument("--inductor-worker", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    only = [o for o in args.only.split(",") if o]
    if args.triton_stub_worker:
        print(json.dumps(triton_stub_worker(args.triton_stub_worker, args.launches)))
        return
    if args.inductor_worker:
        return inductor_worker(args.inductor_worker, only, args.profile)
    if args.inductor:
        res = inductor_main(only, args.timeout, args.profile)
    else:
        res = cuda_main(args.launches) if args.device == "cuda" else stub_main(args.launches)
    for k, v in res.items():
        print(f"{k:44s} {v:8.2f} us" + ("" if args.inductor else " per launch"))
    if args.out:
        from bench_cpu import machine_info, save_result
        doc = {**machine_info(), "device": args.device, "launches": args.launches,
               "command": "python bench/bench_cuda_launch_host.py " + " ".join(argv or sys.argv[1:]),
               "us": res}
        save_result(doc, args.out, "cuda-launch-inductor" if args.inductor else f"cuda-launch-host-{args.device}")


if __name__ == "__main__":
    main()
