"""Block-size sweep of the tl.dot matmul on the CPU backend vs numpy's BLAS.

    python bench/tune_matmul_cpu.py [--threads 2] [--size 1024] [--reps 9]
                                    [--blocks 128,128,64 64,128,32 ...] [--huge] [--out DIR]

Each block size is timed interleaved with numpy (``a @ b``) and the medians are
compared (this machine is shared and noisy).  With one thread the clock is the
process's CPU time, which other processes cannot inflate (not the calling thread's:
a block size whose tiles exceed the stack runs its programs on a big-stack worker
thread, ``runner.run_on_worker``, and a thread clock reported 256x512x64 at 6590
GFLOP/s).

OpenBLAS worker threads spin for a while after each call (2**28 cycles by
default), so with ``OPENBLAS_NUM_THREADS=2`` a tilejit launch that follows a numpy
call shares a core with a spinning thread and runs at about half speed.  Set
``OPENBLAS_THREAD_TIMEOUT=4`` (the shortest spin) for a fair comparison; see
bench/results/cpu_matmul_notes.md.  With ``--threads 1`` numpy runs on one thread too
(``OPENBLAS_NUM_THREADS=1``, set before numpy loads: the process CPU clock would
otherwise count only the calling thread's share of numpy's work).

``--huge`` puts A and B on 2 MB transparent huge pages (madvise, 2 MB-aligned
mappings; needs THP ``madvise`` or ``always``).  Each row of a 1024-wide fp32 matrix
is one 4 KB page, so every K step of a 128x128x64 program touches 192 new pages;
the notes measure what that costs.  ``--out DIR`` saves the rows as JSON there.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import time


def _one_thread_argv(argv) -> bool:
    """``--threads 1`` (or ``--threads=1``) in argv: read before numpy is imported."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1].strip() == "1"
        if a.startswith("--threads="):
            return a.split("=", 1)[1].strip() == "1"
    return False


if _one_thread_argv(sys.argv[1:]):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tilejit.runtime.options import use_options  # noqa: E402
from kernels_cpu import matmul_kernel  # noqa: E402

BLOCKS = ("64,64,32", "64,128,64", "128,128,32", "128,128,64", "128,128,128", "64,256,32",
          "128,256,32", "256,128,32", "256,128,64")


def interleaved(fns: dict, reps: int, clock) -> dict:
    """Median seconds per call of each function, the functions alternating."""
    for f in fns.values():
        f()
    ts = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            t = clock()
            f()
            ts[k].append(clock() - t)
    return {k: float(np.median(v)) for k, v in ts.items()}


def on_huge_pages(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` in an anonymous mapping advised MADV_HUGEPAGE, 2 MB-aligned."""
    import ctypes
    import mmap
    n, huge = x.nbytes, 2 << 20
    raw = mmap.mmap(-1, n + huge)
    buf = np.frombuffer(raw, np.uint8)
    off = (-buf.ctypes.data) % huge
    libc = ctypes.CDLL(None)
    if libc.madvise(ctypes.c_void_p(buf.ctypes.data + off), ctypes.c_size_t(n), 14) != 0:  # MADV_HUGEPAGE
        raise OSError("madvise(MADV_HUGEPAGE) failed")
    y = buf[off:off + n].view(x.dtype).reshape(x.shape)
    y[...] = x                  # first touch: the kernel faults in huge pages
    return y


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--blocks", nargs="*", default=list(BLOCKS), help="BM,BN,BK ...")
    ap.add_argument("--huge", action="store_true", help="A and B on 2 MB huge pages")
    ap.add_argument("--out", default="", help="directory for a JSON record of the rows")
    args = ap.parse_args(argv)
    M = args.size
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, M)).astype(np.float32), rng.standard_normal((M, M)).astype(np.float32)
    if args.huge:
        a, b = on_huge_pages(a), on_huge_pages(b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    c = np.empty_like(a)
    clock = time.process_time if args.threads == 1 else time.perf_counter
    if args.threads > 1 and os.environ.get("OPENBLAS_THREAD_TIMEOUT") is None:
        print("note: OPENBLAS_THREAD_TIMEOUT unset: OpenBLAS threads spinning after numpy's call "
              "slow down the tilejit launch that follows", flush=True)
    print(f"{'BM':>4} {'BN':>4} {'BK':>4}  tilejit GFLOP/s  numpy GFLOP/s  ratio  maxerr", flush=True)
    rows = []
    with use_options(backend="cpu", num_threads=args.threads):
        for spec in args.blocks:
            bm, bn, bk = (int(x) for x in spec.split(","))
            if M % bm or M % bn or M % bk:
                continue

            def run(bm=bm, bn=bn, bk=bk):
                matmul_kernel[(M // bm, M // bn)](a, b, c, M, M, M, M, 1, M, 1, M, 1, BM=bm, BN=bn, BK=bk)
            t = interleaved({"tilejit": run, "numpy": lambda: a @ b}, args.reps, clock)
            gf = {k: 2 * M ** 3 / v / 1e9 for k, v in t.items()}
            err = float(np.abs(c - ref).max())
            print(f"{bm:>4} {bn:>4} {bk:>4}  {gf['tilejit']:15.1f}  {gf['numpy']:13.1f}  "
                  f"{gf['tilejit'] / gf['numpy']:5.3f}  {err:.2e}", flush=True)
            rows.append({"blocks": [bm, bn, bk], **gf, "ratio_vs_numpy": gf["tilejit"] / gf["numpy"],
                         "maxerr": err})
    if args.out:
        save(args, rows)


def save(args, rows):
    """``cpu-<date>-tune-matmul[-huge]-<threads>t.json`` under ``args.out``."""
    now = datetime.datetime.now(datetime.timezone.utc)
    doc = {"command": "python bench/tune_matmul_cpu.py " + " ".join(sys.argv[1:]),
           "date": now.isoformat(timespec="seconds"), "platform": platform.platform(),
           "numpy": np.__version__, "threads": args.threads, "size": args.size, "reps": args.reps,
           "huge_pages": args.huge, "clock": "process_time" if args.threads == 1 else "perf_counter",
           "env": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OPENBLAS_THREAD_TIMEOUT")},
           "rows": rows}
    name = f"cpu-{now:%Y-%m-%d}-tune-matmul{'-huge' if args.huge else ''}-{args.threads}t.json"
    path = os.path.join(args.out, name)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)
    print("saved", path, flush=True)


if __name__ == "__main__":
    main()
