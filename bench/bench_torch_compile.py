"""torch.compile on tilejit against torch.compile's own backends, per model: compile
time and steady-state time.

    python bench/bench_torch_compile.py [--device cpu|cuda] [--threads 2] [--clock wall|cpu]
                                        [--rounds N] [--only NAME] [--out DIR]

``--device cpu`` (default): Inductor's Triton kernels on tilejit (``cpu_backend="triton"``
under the ``triton`` alias) against torch.compile's default C++ CPU backend and eager.
``--device cuda``: the models on CUDA tensors, torch.compile through tilejit's CUDA
backend (the alias wins over the installed ``triton``) against torch.compile with the
real Triton, and eager.

Each backend runs in its own process (``--worker LABEL``; the alias is installed only in
tilejit's), so the real Triton never meets the alias.  Per model: compile time (the
first call after ``torch._dynamo.reset()`` with Inductor's caches disabled, so every
kernel is generated and compiled; tilejit's disk cache is a fresh directory) and
steady-state time (median of timed calls after warm-up; on CUDA, batches of calls
ended by a synchronize).  On CUDA each compiled backend's process also times the model
eagerly, alternating with the compiled calls (``--control``, on by default there): these
models take 10-200 us per call, mostly host time, which drifts between processes by
10-50%; ``tilejit_vs_triton_controlled`` divides each side's compiled time by its own
process's eager time before comparing, so drift common to a process cancels.  ``--rounds N`` runs the backends' processes N times in turn
and reports each model's median (the per-round times are kept in the JSON).  Saves JSON with the machine, versions, load average and date
under bench/results/ (bench_cpu.save_result).
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
sys.path.insert(0, os.path.join(ROOT, "tests", "torch_compile"))

# label -> (uses the tilejit alias, torch.compile options; None = eager), per device
BACKENDS = {"cpu": {"tilejit": (True, {"cpu_backend": "triton"}), "cpp": (False, {}), "eager": (False, None)},
            "cuda": {"tilejit": (True, {}), "triton": (False, {}), "eager": (False, None)}}
PEER = {"cpu": "cpp", "cuda": "triton"}


def _models(torch):
    import torch.nn.functional as F
    from models import MLP, Attention

    def r(*shape):
        return torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    return {
        "elementwise_chain": (lambda: lambda x, y: (torch.relu(x * 2 + y) - 0.5).exp() * torch.sigmoid(y),
                              lambda: (r(1 << 20), r(1 << 20))),
        "softmax_512x1024": (lambda: lambda x: torch.softmax(x, -1), lambda: (r(512, 1024),)),
        "layer_norm_2048x1024": (lambda: lambda x, w, b: F.layer_norm(x, (1024,), w, b),
                                 lambda: (r(2048, 1024), r(1024), r(1024))),
        "gelu_4M": (lambda: lambda x: F.gelu(x), lambda: (r(1 << 22),)),
        "row_sum_64x20000": (lambda: lambda x: x.sum(-1), lambda: (r(64, 20000),)),
        "col_mean_4096x256": (lambda: lambda x: x.mean(0), lambda: (r(4096, 256),)),
        "mlp_forward_b256": (MLP, lambda: (r(256, 32),)),
        "attention_forward": (Attention, lambda: (r(8, 64, 32),)),
    }


def _steady(fn, args, sync, clock, min_time=0.5, min_reps=5, batch=1):
    for _ in range(3):
        fn(*args)
    sync()
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = clock()
        for _ in range(batch):
            fn(*args)
        sync()
        times.append((clock() - t0) / batch)
    return statistics.median(times)


def _worker(label, device, only, threads, clock_name, control=False):
    """Run every model for one backend in this process; print one JSON line each.
    ``control``: a compiled backend also times the model eagerly, alternating
    compiled, eager, compiled, eager (``ms`` and ``eager_ms``: the means of each's two)."""
    use_alias, options = BACKENDS[device][label]
    if use_alias:
        import tilejit.compat
        tilejit.compat.install_triton_alias()
    import torch
    torch.set_num_threads(threads)
    torch._inductor.config.force_disable_caches = True
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    clock = time.process_time if clock_name == "cpu" else time.perf_counter
    for name, (make, inputs) in _models(torch).items():
        if only and only not in name:
            continue
        torch._dynamo.reset()
        fn = make()
        if isinstance(fn, torch.nn.Module):
            fn = fn.to(device)
        args = [a.to(device) for a in inputs()]
        compiled = torch.compile(fn, options=options) if options is not None else fn
        with torch.no_grad():
            t0 = time.perf_counter()
            compiled(*args)
            sync()
            first = time.perf_counter() - t0
            batch = 10 if device == "cuda" else 1
            steady = _steady(compiled, args, sync, clock, batch=batch)
            rec = {"model": name, "label": label, "compile_s": first if options is not None else None,
                   "ms": steady * 1e3}
            if control and options is not None:
                eager = [_steady(fn, args, sync, clock, batch=batch)]
                steady2 = _steady(compiled, args, sync, clock, batch=batch)
                eager.append(_steady(fn, args, sync, clock, batch=batch))
                rec.update(ms=statistics.mean([steady, steady2]) * 1e3, eager_ms=statistics.mean(eager) * 1e3)
        print("BENCH_TC " + json.dumps(rec), flush=True)


def _run_worker(label, args):
    env = dict(os.environ, TILEJIT_NUM_THREADS=str(args.threads),
               TILEJIT_CACHE_DIR=tempfile.mkdtemp(prefix="tilejit-bench-tc-"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", label, "--device", args.device,
           "--threads", str(args.threads), "--only", args.only, "--clock", args.clock]
    cmd += ["--control" if args.control else "--no-control"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:      # keep the models it finished
        out, err, rc = e.stdout or "", f"timed out after {args.timeout} s", "timeout"
        out = out.decode() if isinstance(out, bytes) else out
    recs = [json.loads(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("BENCH_TC ")]
    if rc != 0:
        print(f"{label} worker exited {rc}:\n{err[-3000:]}", file=sys.stderr)
    return {r["model"]: r for r in recs}


def _table(results, device):
    peer = PEER[device]
    for rec in results:
        print(f"{rec['model']:24s} tilejit {rec.get('tilejit_ms', float('nan')):8.3f} ms "
              f"(compile {rec.get('tilejit_compile_s') or float('nan'):5.1f} s)  {peer} "
              f"{rec.get(peer + '_ms', float('nan')):8.3f} ms (compile "
              f"{rec.get(peer + '_compile_s') or float('nan'):5.1f} s)  eager "
              f"{rec.get('eager_ms', float('nan')):8.3f} ms  speed vs {peer} "
              f"{rec.get('tilejit_vs_' + peer, float('nan')):.2f}x"
              + (f" (against each process's own eager: {rec['tilejit_vs_' + peer + '_controlled']:.2f}x)"
                 if 'tilejit_vs_' + peer + '_controlled' in rec else ""), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--timeout", type=float, default=900, help="seconds per backend process")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="steady-state time as wall-clock or as the process's CPU time (on a loaded "
                         "host, --threads 1 --clock cpu measures each backend's work, not the wait)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every backend's process this many times, alternating, and report "
                         "per-model medians (a loaded host's drift hits every backend alike)")
    ap.add_argument("--control", action=argparse.BooleanOptionalAction, default=None,
                    help="compiled backends' processes also time eager, alternating, and the ratio "
                         "is also given against each process's own eager time (default: on for cuda)")
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.device == "cuda" and args.clock == "cpu":
        raise SystemExit("--clock cpu is for --device cpu")
    if args.control is None:
        args.control = args.device == "cuda"
    if args.worker:
        return _worker(args.worker, args.device, args.only, args.threads, args.clock, args.control)
    from bench_cpu import machine_info, save_result
    peer = PEER[args.device]
    load_before = os.getloadavg()
    rounds = [{label: _run_worker(label, args) for label in BACKENDS[args.device]}
              for _ in range(args.rounds)]      # backends alternate: tilejit, peer, eager, tilejit, ...
    results = []
    for name in rounds[0]["tilejit"]:
        rec = {"model": name}
        for label in BACKENDS[args.device]:
            got = [r[label][name] for r in rounds if name in r[label]]
            if got:
                comp = [g["compile_s"] for g in got if g["compile_s"] is not None]
                rec[f"{label}_compile_s"] = statistics.median(comp) if comp else None
                rec[f"{label}_ms"] = statistics.median(g["ms"] for g in got)
                own = [g["eager_ms"] for g in got if "eager_ms" in g]
                if own:
                    rec[f"{label}_own_eager_ms"] = statistics.median(own)
                if args.rounds > 1:
                    rec[f"{label}_ms_rounds"] = [g["ms"] for g in got]
        if f"{peer}_ms" in rec:
            rec[f"tilejit_vs_{peer}"] = rec[f"{peer}_ms"] / rec["tilejit_ms"]      # > 1: tilejit faster
            if "tilejit_own_eager_ms" in rec and f"{peer}_own_eager_ms" in rec:     # drift cancelled
                rec[f"tilejit_vs_{peer}_controlled"] = ((rec[f"{peer}_ms"] / rec[f"{peer}_own_eager_ms"])
                                                        / (rec["tilejit_ms"] / rec["tilejit_own_eager_ms"]))
        results.append(rec)
    _table(results, args.device)
    import torch
    ratios = [r[f"tilejit_vs_{peer}"] for r in results if f"tilejit_vs_{peer}" in r]
    controlled = [r[f"tilejit_vs_{peer}_controlled"] for r in results if f"tilejit_vs_{peer}_controlled" in r]
    doc = {**machine_info(), "device": args.device, "threads": args.threads, "clock": args.clock,
           "rounds": args.rounds,
           "load_avg_before": load_before, "load_avg_after": os.getloadavg(),
           "command": "python bench/bench_torch_compile.py " + " ".join(argv or sys.argv[1:]),
           f"geomean_tilejit_vs_{peer}": statistics.geometric_mean(ratios) if ratios else None,
           f"geomean_tilejit_vs_{peer}_controlled": statistics.geometric_mean(controlled) if controlled else None,
           "results": results}
    doc["versions"]["torch"] = torch.__version__
    if args.device == "cuda":
        doc["machine"]["gpu"] = torch.cuda.get_device_name() if torch.cuda.is_available() else None
        try:
            import triton
            doc["versions"]["triton"] = triton.__version__
        except ImportError:
            doc["versions"]["triton"] = None
    if ratios:
        print(f"geomean steady-state speed vs {peer}: {doc[f'geomean_tilejit_vs_{peer}']:.2f}x"
              + (f" (against each process's own eager: {doc[f'geomean_tilejit_vs_{peer}_controlled']:.2f}x)"
                 if controlled else ""))
    save_result(doc, args.out, f"torch-compile-{args.device}")


if __name__ == "__main__":
    main()
