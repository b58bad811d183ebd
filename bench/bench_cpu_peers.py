"""tilejit's CPU backend against numpy, numba, torch eager and torch.compile (issue 20).

    python bench/bench_cpu_peers.py [--threads 2] [--quick] [--no-compile] [--no-load]
                                    [--only NAME] [--clock wall|cpu] [--out bench/results]

Workloads (kernels: bench/kernels_cpu.py's add, softmax and matmul; bench/kernels_cpu_peers.py's
row sum and Triton tutorial 05's layer norm forward):

* vector add fp32, 2^16 / 2^20 / 2^24 elements (GB/s, 12 bytes per element);
* ``kernel[grid](...)`` launch, 4 arguments, 16 elements (us per call; numpy arrays, and
  torch CPU tensors for tilejit's second figure);
* row sum 8192 x 8192 fp32 (GB/s of input);
* layer norm forward 8192 x 1024 fp32 (GB/s, input read + output written);
* matmul fp32 512^3 / 1024^3 / 2048^3 (GFLOP/s);
* row softmax 4096 x 4096 fp32 into a preallocated output (GB/s, read + write);
* vector add fp32 2^20 and matmul fp32 1024^3 under background load (2 x nproc busy
  processes): tilejit's pool against tilejit on one thread and the peers.

Every framework gets the same thread count (``--threads``: tilejit's ``num_threads``,
``torch.set_num_threads``, ``numba.set_num_threads``, and OMP/OpenBLAS/MKL thread counts
set before numpy is imported); OpenBLAS and OpenMP threads sleep when idle
(``OPENBLAS_THREAD_TIMEOUT=4``, ``OMP_WAIT_POLICY=PASSIVE``) so that no framework's
spinning threads hold a core through the next one's call.  numba kernels are ``@njit(parallel=True, fastmath=True)``
loops (fastmath lets numba vectorize reductions, as tilejit's tree reductions do);
numba's matmul would call numpy's BLAS, so it is not listed there.  torch eager writes
into preallocated outputs where an ``out=`` form exists (``aten._softmax.out`` for
softmax); torch.compile'd functions return new tensors.  numba, torch and torch.compile
are optional: a missing one is skipped with a note.  Peers are interleaved inside each
repetition and medians reported; ratio = tilejit / the best peer (throughput; for the
launch row, the best peer's time / tilejit's).  ``--quick``: 3 repetitions, the middle
sizes only, no torch.compile.  ``--clock cpu --threads 1``: each call timed by the
process's CPU time, which a loaded machine does not inflate (one thread everywhere, so
that it is each framework's work).  JSON (machine, versions, load average, date) goes to
bench/results/cpu-peers-<date>.json through bench_cpu.save_result.
"""
from __future__ import annotations

import os
import sys


def _threads_from_argv(argv) -> int:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
    return 2


_THREADS = _threads_from_argv(sys.argv[1:])
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, str(_THREADS))
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")      # see bench_cpu.py
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")        # likewise for torch's and numba's OpenMP threads

import argparse  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tilejit  # noqa: E402
from tilejit.runtime.options import get_options, set_options, use_options  # noqa: E402
import kernels_cpu as K  # noqa: E402
import kernels_cpu_peers as KP  # noqa: E402
from bench_cpu import machine_info, save_result  # noqa: E402


# ---------------------------------------------------------------- peers
class Peers:
    """The optional peers that are installed, set to ``threads`` threads."""

    def __init__(self, threads: int, compile_: bool):
        self.notes: list = []
        self.versions: dict = {}
        self.numba = self.torch = self.compile = None
        try:
            import numba
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            self.numba = numba_kernels(numba)
            self.versions["numba"] = numba.__version__
        except ImportError:
            self.notes.append("numba not installed (pip install numba): skipped")
        try:
            import torch
            torch.set_num_threads(threads)
            self.torch = torch
            self.versions["torch"] = torch.__version__
        except ImportError:
            self.notes.append("torch not installed: torch eager and torch.compile skipped")
        if self.torch is not None and compile_:
            self.compile = lambda fn: self.torch.compile(fn, dynamic=False)
        elif self.torch is not None:
            self.notes.append("torch.compile skipped (--quick or --no-compile)")

    def t(self, a):
        return self.torch.from_numpy(a)


def numba_kernels(nb):
    prange = nb.prange
    par = dict(parallel=True, fastmath=True, cache=False)

    @nb.njit(**par)
    def add(x, y, out):
        for i in prange(x.shape[0]):
            out[i] = x[i] + y[i]

    @nb.njit(fastmath=True)
    def add_serial(x, y, out, n):
        for i in range(n):
            out[i] = x[i] + y[i]

    @nb.njit(**par)
    def row_sum(x, out):
        for r in prange(x.shape[0]):
            s = np.float32(0)
            for c in range(x.shape[1]):
                s += x[r, c]
            out[r] = s

    @nb.njit(**par)
    def layer_norm(x, w, b, out, eps):
        n = x.shape[1]
        for r in prange(x.shape[0]):
            m = np.float32(0)
            for c in range(n):
                m += x[r, c]
            m /= n
            v = np.float32(0)
            for c in range(n):
                d = x[r, c] - m
                v += d * d
            rstd = np.float32(1) / np.sqrt(v / n + eps)
            for c in range(n):
                out[r, c] = (x[r, c] - m) * rstd * w[c] + b[c]

    @nb.njit(**par)
    def softmax(x, out):
        for r in prange(x.shape[0]):
            mx = -np.inf
            for c in range(x.shape[1]):
                mx = max(mx, x[r, c])
            s = np.float32(0)
            for c in range(x.shape[1]):
                e = np.exp(x[r, c] - mx)
                out[r, c] = e
                s += e
            inv = np.float32(1) / s
            for c in range(x.shape[1]):
                out[r, c] *= inv
    return {"add": add, "add_serial": add_serial, "row_sum": row_sum, "layer_norm": layer_norm,
            "softmax": softmax}


# ---------------------------------------------------------------- timing
CLOCK = [time.perf_counter]   # --clock cpu: time.process_time (set by main)


def measure(fns: dict, reps: int, inner: int = 1, warmup: int = 2) -> dict:
    """Median seconds per call of each function, peers interleaved per repetition in
    a new shuffled order each time (seeded), so that none always runs right after the
    same peer: a rotation keeps every peer's successor, and with ``--clock cpu`` work a
    peer leaves running (or dirty cache lines it leaves) was always charged to the same
    next one -- tilejit, after torch, at 2^20 adds 0.69-0.87x numpy in rotated runs."""
    clock = CLOCK[0]
    for f in fns.values():
        for _ in range(warmup):
            f()
    times = {k: [] for k in fns}
    names = list(fns)
    order = np.random.default_rng(len(names) * 1000 + reps)
    for r in range(reps):                     # a different order each repetition
        for k in order.permutation(names):
            f = fns[k]
            t = clock()
            for _ in range(inner):
                f()
            times[k].append((clock() - t) / inner)
    return {k: float(np.median(v)) for k, v in times.items()}


def row(case: str, unit: str, seconds: dict, amount: float | None, **extra) -> dict:
    """A result row: values per framework (``amount / seconds`` or us per call when
    ``amount`` is None), the best peer and tilejit's ratio to it (higher is better)."""
    if amount is None:
        values = {k: v * 1e6 for k, v in seconds.items()}
        better = min
    else:
        values = {k: amount / v / 1e9 for k, v in seconds.items()}
        better = max
    peers = {k: v for k, v in values.items() if not k.startswith("tilejit")}
    best = better(peers, key=peers.get) if peers else None
    tj = values["tilejit"]
    ratio = None if best is None else (tj / peers[best] if amount is not None else peers[best] / tj)
    return {"case": case, "unit": unit, "values": values, "best_peer": best,
            "best_value": peers.get(best), "tilejit": tj, "ratio": ratio, **extra}


def outputs(make):
    """``(out, outs)``: ``out(k)`` is ``outs[k]``, made by ``make()`` the first time ``k``
    asks -- each framework's output allocated once, outside the timed calls."""
    outs = {}

    def out(k):
        o = outs.get(k)
        if o is None:
            o = outs[k] = make()
        return o
    return out, outs


# ---------------------------------------------------------------- workloads
def vector_add(P, reps, sizes, block=4096):
    rows = []
    rng = np.random.default_rng(0)
    for e in sizes:
        n = 1 << e
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        out, outs = outputs(lambda: np.empty_like(x))
        fns = {"tilejit": lambda: K.add_kernel[(tilejit.cdiv(n, block),)](x, y, out("tilejit"), n, BLOCK=block),
               "numpy": lambda: np.add(x, y, out=out("numpy"))}
        if P.numba:
            fns["numba"] = lambda: P.numba["add"](x, y, out("numba"))
        if P.torch:
            tx, ty, to = P.t(x), P.t(y), P.t(out("torch"))
            fns["torch"] = lambda: P.torch.add(tx, ty, out=to)
        if P.compile:
            cadd = P.compile(lambda a, b: a + b)
            fns["torch.compile"] = lambda: cadd(tx, ty)
        t = measure(fns, reps)
        for k, o in outs.items():
            np.testing.assert_array_equal(o, x + y, err_msg=k)
        rows.append(row(f"vector add fp32 2^{e}", "GB/s", t, 12 * n))
    return rows


def launch(P, reps):
    x, y = np.ones(16, np.float32), np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    fns = {"tilejit": lambda: K.add_kernel[(1,)](x, y, out, 16, BLOCK=16),
           "numpy": lambda: np.add(x, y, out=out)}
    if P.torch:
        tx, ty, to = P.t(x), P.t(y), P.t(np.zeros(16, np.float32))
        fns["tilejit (torch tensors)"] = lambda: K.add_kernel[(1,)](tx, ty, to, 16, BLOCK=16)
        fns["torch"] = lambda: P.torch.add(tx, ty, out=to)
    if P.numba:
        fns["numba"] = lambda: P.numba["add_serial"](x, y, out, 16)
    if P.compile:
        cadd = P.compile(lambda a, b: a + b)
        fns["torch.compile"] = lambda: cadd(tx, ty)
    t = measure(fns, max(reps, 7) * 5, inner=250)     # short blocks: a loaded machine preempts long ones
    np.testing.assert_array_equal(out, x + y)
    return [row("kernel[grid] launch, 4 args, 16 elements", "us", t, None)]


def row_sum(P, reps, R=8192, C=8192):
    x = np.random.default_rng(1).random((R, C), dtype=np.float32)
    out, outs = outputs(lambda: np.empty(R, np.float32))
    fns = {"tilejit": lambda: KP.row_sum_kernel[(R,)](x, out("tilejit"), C, C, BLOCK=1024),
           "numpy": lambda: np.sum(x, axis=1, out=out("numpy"))}
    if P.numba:
        fns["numba"] = lambda: P.numba["row_sum"](x, out("numba"))
    if P.torch:
        tx, to = P.t(x), P.t(out("torch"))
        fns["torch"] = lambda: P.torch.sum(tx, dim=1, out=to)
    if P.compile:
        csum = P.compile(lambda a: a.sum(1))
        fns["torch.compile"] = lambda: csum(tx)
    t = measure(fns, reps)
    ref = x.astype(np.float64).sum(axis=1)
    for k, o in outs.items():
        np.testing.assert_allclose(o, ref, rtol=1e-4, err_msg=k)
    return [row(f"row sum {R}x{C} fp32", "GB/s", t, 4 * R * C)]


def layer_norm(P, reps, R=8192, C=1024, eps=1e-5):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((R, C)) * 3 + 1).astype(np.float32)
    w, b = rng.standard_normal(C).astype(np.float32), rng.standard_normal(C).astype(np.float32)
    mean, rstd = np.empty(R, np.float32), np.empty(R, np.float32)
    out, outs = outputs(lambda: np.empty_like(x))

    def numpy_ln():
        m = x.mean(axis=1, keepdims=True)
        v = x.var(axis=1, keepdims=True)
        o = out("numpy")
        np.subtract(x, m, out=o)
        o *= 1 / np.sqrt(v + eps)
        o *= w
        o += b
    fns = {"tilejit": lambda: KP._layer_norm_fwd_fused[(R,)](x, out("tilejit"), w, b, mean, rstd, C, C, eps,
                                                              BLOCK_SIZE=C),
           "numpy": numpy_ln}
    if P.numba:
        fns["numba"] = lambda: P.numba["layer_norm"](x, w, b, out("numba"), np.float32(eps))
    if P.torch:
        F = P.torch.nn.functional
        tx, tw, tb = P.t(x), P.t(w), P.t(b)
        fns["torch"] = lambda: F.layer_norm(tx, (C,), tw, tb, eps)
    if P.compile:
        cln = P.compile(lambda a, ww, bb: F.layer_norm(a, (C,), ww, bb, eps))
        fns["torch.compile"] = lambda: cln(tx, tw, tb)
    t = measure(fns, reps)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + eps) * w + b
    for k, o in outs.items():
        np.testing.assert_allclose(o, ref, rtol=1e-3, atol=1e-3, err_msg=k)
    return [row(f"layer norm fwd {R}x{C} fp32", "GB/s", t, 8 * R * C)]


def matmul(P, reps, sizes, BM=128, BN=128, BK=64):
    rows = []
    rng = np.random.default_rng(3)
    for n in sizes:
        a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
        out, outs = outputs(lambda: np.empty((n, n), np.float32))
        fns = {"tilejit": lambda: K.matmul_kernel[(n // BM, n // BN)](a, b, out("tilejit"), n, n, n, n, 1, n, 1,
                                                                      n, 1, BM=BM, BN=BN, BK=BK),
               "numpy": lambda: np.matmul(a, b, out=out("numpy"))}
        if P.torch:
            ta, tb, tc = P.t(a), P.t(b), P.t(out("torch"))
            fns["torch"] = lambda: P.torch.mm(ta, tb, out=tc)
        if P.compile:
            cmm = P.compile(lambda u, v: u @ v)
            fns["torch.compile"] = lambda: cmm(ta, tb)
        t = measure(fns, max(3, reps // 2) if n >= 2048 else reps)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        for k, o in outs.items():
            np.testing.assert_allclose(o, ref, rtol=1e-3, atol=1e-2 * np.sqrt(n), err_msg=k)
        rows.append(row(f"matmul fp32 {n}^3", "GFLOP/s", t, 2 * n ** 3, blocks=[BM, BN, BK]))
    return rows


def softmax(P, reps, R=4096, C=4096):
    x = np.random.default_rng(4).standard_normal((R, C)).astype(np.float32)
    out, outs = outputs(lambda: np.empty_like(x))

    def numpy_softmax():
        o = out("numpy")
        np.subtract(x, x.max(axis=1, keepdims=True), out=o)
        np.exp(o, out=o)
        o /= o.sum(axis=1, keepdims=True)
    fns = {"tilejit": lambda: K.softmax_kernel[(R,)](out("tilejit"), x, C, C, C, BLOCK=C),
           "numpy": numpy_softmax}
    if P.numba:
        fns["numba"] = lambda: P.numba["softmax"](x, out("numba"))
    if P.torch:
        tx, to = P.t(x), P.t(out("torch"))
        fns["torch"] = lambda: P.torch.ops.aten._softmax.out(tx, 1, False, out=to)
    if P.compile:
        csm = P.compile(lambda a: P.torch.softmax(a, dim=1))
        fns["torch.compile"] = lambda: csm(tx)
    t = measure(fns, reps)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    for k, o in outs.items():
        np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-7, err_msg=k)
    return [row(f"row softmax {R}x{R} fp32, preallocated output", "GB/s", t, 8 * R * C)]


def under_load(P, reps, threads, e=20, block=4096, mm=1024):
    """Vector add 2^e and matmul mm^3 while 2 x nproc busy processes run: tilejit's
    pool (``threads`` at most, sized by the pool) against tilejit on one thread and
    the peers."""
    n = 1 << e
    x, y = np.random.default_rng(5).random(n, dtype=np.float32), np.random.default_rng(6).random(n, dtype=np.float32)
    a, b = (np.random.default_rng(s).standard_normal((mm, mm)).astype(np.float32) for s in (7, 8))
    outs = {}

    def out(k, like):
        if k not in outs:
            outs[k] = np.empty_like(like)
        return outs[k]
    add = (f"vector add fp32 2^{e}", 12 * n, lambda o: K.add_kernel[(tilejit.cdiv(n, block),)](x, y, o, n, BLOCK=block),
           {"numpy": lambda: np.add(x, y, out=out("add numpy", x))}, x, lambda o: np.testing.assert_array_equal(o, x + y))
    mat = (f"matmul fp32 {mm}^3", 2 * mm ** 3,
           lambda o: K.matmul_kernel[(mm // 128, mm // 128)](a, b, o, mm, mm, mm, mm, 1, mm, 1, mm, 1,
                                                            BM=128, BN=128, BK=64),
           {"numpy": lambda: np.matmul(a, b, out=out("mm numpy", a))}, a,
           lambda o: np.testing.assert_allclose(o, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-2 * np.sqrt(mm)))
    if P.numba:
        add[3]["numba"] = lambda: P.numba["add"](x, y, out("add numba", x))
    if P.torch:
        tx, ty, to = P.t(x), P.t(y), P.t(out("add torch", x))
        add[3]["torch"] = lambda: P.torch.add(tx, ty, out=to)
        ta, tb, tc = P.t(a), P.t(b), P.t(out("mm torch", a))
        mat[3]["torch"] = lambda: P.torch.mm(ta, tb, out=tc)
    for w in (add, mat):                              # compiled before the load starts
        w[2](out(w[0] + "pool", w[4]))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 1))]
    try:
        time.sleep(1.0)
        rows = [_loaded(reps, w, out, len(busy)) for w in (add, mat)]
    finally:
        for p in busy:
            p.kill()
        for p in busy:
            p.wait()
    return rows


def _loaded(reps, work, out, nbusy):
    """One workload's row under load: tilejit's two ways side by side, alternating
    blocks of launches (a peer's lingering threads would favour the one after it),
    then the peers."""
    case, amount, launch, peers, like, check = work
    pool_opts, one_opts = get_options(), get_options().with_(num_threads=1)

    def tj(opts, o):
        """Seconds per launch under ``opts`` (after an untimed one: a change of
        options sends the first launch through the general path)."""
        saved = get_options()
        set_options(opts)
        try:
            launch(o)
            t = time.perf_counter()
            launch(o)
            return time.perf_counter() - t
        finally:
            set_options(saved)
    o1, o2 = out(case + "pool", like), out(case + "one", like)
    ours = {"tilejit": lambda: tj(pool_opts, o1), "tilejit (1 thread)": lambda: tj(one_opts, o2)}
    load = os.getloadavg()
    per = {k: [] for k in ours}
    for r in range(max(reps, 15)):
        for k in (list(ours) if r % 2 else list(ours)[::-1]):
            per[k].append(ours[k]())
    t = {**{k: float(np.median(v)) for k, v in per.items()}, **measure(peers, max(reps, 5), warmup=1)}
    check(o1)
    check(o2)
    r = row(f"{case}, {nbusy} busy processes", "GB/s" if "add" in case else "GFLOP/s", t, amount, load_during=load)
    r["pool_vs_one_thread"] = r["values"]["tilejit"] / r["values"]["tilejit (1 thread)"]
    return r


# ---------------------------------------------------------------- report
def table(rows) -> str:
    lines = ["| workload | best peer | tilejit | ratio |", "|---|---|---|---|"]
    for r in rows:
        unit = r["unit"]
        best = f"{r['best_peer']} {r['best_value']:.3g} {unit}" if r["best_peer"] else "-"
        tj = f"{r['tilejit']:.3g} {unit}"
        if "tilejit (torch tensors)" in r["values"]:
            tj += f" (torch tensors {r['values']['tilejit (torch tensors)']:.3g})"
        if "pool_vs_one_thread" in r:
            tj += f" (1 thread {r['values']['tilejit (1 thread)']:.3g}; pool/1 thread {r['pool_vs_one_thread']:.2f})"
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        lines.append(f"| {r['case']} | {best} | {tj} | {ratio} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-load", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: the process's CPU time (needs --threads 1), which other "
                         "processes on a busy machine do not inflate")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    if args.clock == "cpu":
        if args.threads != 1:
            ap.error("--clock cpu needs --threads 1 (CPU time adds up every thread's)")
        CLOCK[0] = time.process_time
    reps = 3 if args.quick else args.reps
    P = Peers(args.threads, compile_=not (args.quick or args.no_compile))
    load_before = os.getloadavg()
    cases = [("add", lambda: vector_add(P, reps, (20,) if args.quick else (16, 20, 24))),
             ("launch", lambda: launch(P, reps)),
             ("rowsum", lambda: row_sum(P, reps)),
             ("layernorm", lambda: layer_norm(P, reps)),
             ("matmul", lambda: matmul(P, reps, (1024,) if args.quick else (512, 1024, 2048))),
             ("softmax", lambda: softmax(P, reps))]
    if not args.no_load:
        cases.append(("load", lambda: under_load(P, reps, args.threads)))
    rows = []
    with use_options(backend="cpu", num_threads=args.threads):
        for name, run in cases:
            if args.only and args.only not in name:
                continue
            got = run()
            rows += got
            for r in got:
                print(r["case"], {k: round(v, 3) for k, v in r["values"].items()}, flush=True)
    print()
    print(table(rows))
    for note in P.notes:
        print("note:", note)
    info = machine_info()
    info["versions"].update(P.versions)
    doc = {**info, "threads": args.threads, "quick": args.quick, "notes": P.notes, "clock": args.clock,
           "load_avg_before": load_before, "load_avg_after": os.getloadavg(),
           "command": "python bench/bench_cpu_peers.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "table": table(rows), "results": rows}
    save_result(doc, args.out, "cpu-peers" + ("-quick" if args.quick else "") + ("-cputime" if args.clock == "cpu" else ""))


if __name__ == "__main__":
    main()
