"""Launch overhead and interpreter throughput, side by side with peers.

    python bench/bench_launch.py [--torch] [--out bench/results]

* launch: Python time of ``kernel[grid](x, y, out, n, BLOCK=...)`` on the repeated
  path (binding, specialization, cache lookup) with a no-op compiled kernel, next to a
  plain Python call with the same arguments and to numpy's ``np.add(x, y, out)`` on
  16 elements.  (Triton 3.6 measured 20.9 us per 4-argument launch on an H200 host.)
* cpu launch: the same call running the real compiled add (CPU backend, 1 program,
  16 elements), next to the backend's own ``CompiledKernel.launch`` with prepared
  arguments (the part no binding can remove); with ``--torch`` also on torch CPU
  tensors, next to ``torch.add(x, y, out=out)``.
* interpreter: vector add on the reference interpreter (BLOCK 1024) in GB/s, next to
  numpy's ``np.add`` on the same arrays.  (Triton's interpreter: ~0.025 GB/s here.)
Peers are interleaved per repetition (the machine is noisy); medians are reported.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tilejit  # noqa: E402
import tilejit.language as tl  # noqa: E402
from tilejit.runtime.options import get_options, set_options, use_options  # noqa: E402


@tilejit.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def side_by_side(fns: dict, reps: int, inner: int, options: dict | None = None) -> dict:
    """Median seconds per call of each function; peers interleaved per repetition.
    ``options[k]``: option changes each timing block of ``fns[k]`` runs under (one
    Options object per key, made once; three untimed calls per block refill the launch
    lanes after a change of options)."""
    base = get_options()
    opts = {k: base.with_(**(options or {}).get(k, {})) if (options or {}).get(k) else base for k in fns}
    times = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            set_options(opts[k])
            try:
                for _ in range(3):
                    f()
                t = time.perf_counter()
                for _ in range(inner):
                    f()
                times[k].append((time.perf_counter() - t) / inner)
            finally:
                set_options(base)
    return {k: float(np.median(v)) for k, v in times.items()}


class _Null:
    def launch(self, grid, args, **kw):
        pass


def bench_launch() -> dict:
    x = np.zeros(16, np.float32)
    y = np.zeros(16, np.float32)
    out = np.zeros(16, np.float32)
    with use_options(backend="interpreter"):
        add_kernel.warmup(x, y, out, 16, BLOCK=16, grid=(1,))
        for k in list(add_kernel.cache):
            add_kernel.cache[k] = _Null()

        def plain(x_ptr, y_ptr, out_ptr, n, BLOCK=16):
            return None
        res = side_by_side({"tilejit launch": lambda: add_kernel[(1,)](x, y, out, 16, BLOCK=16),
                            "python call": lambda: plain(x, y, out, 16, BLOCK=16),
                            "np.add(16)": lambda: np.add(x, y, out=out)}, reps=41, inner=250)
    add_kernel.cache.clear()
    return {k: v * 1e6 for k, v in res.items()}


def bench_cpu_launch() -> dict:
    from tilejit.backends import LaunchArgs, available_backends
    if "cpu" not in available_backends():
        return {}
    x = np.ones(16, np.float32)
    y = np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    with use_options(backend="cpu"):
        kernel = add_kernel[(1,)](x, y, out, 16, BLOCK=16)
        assert np.array_equal(out, x + y)
        args = LaunchArgs([x.ctypes.data, y.ctypes.data, out.ctypes.data, 16])
        fns = {"tilejit launch, cpu, 1 program": lambda: add_kernel[(1,)](x, y, out, 16, BLOCK=16),
               "same, no native builtin": lambda: add_kernel[(1,)](x, y, out, 16, BLOCK=16),
               "cpu backend launch only": lambda: kernel.launch((1, 1, 1), args)}
        if "torch" in sys.modules:
            import torch
            tx, ty, to = torch.from_numpy(x), torch.from_numpy(y), torch.zeros(16)
            fns["tilejit launch, cpu, torch tensors"] = lambda: add_kernel[(1,)](tx, ty, to, 16, BLOCK=16)
            fns["torch.add(16, out=)"] = lambda: torch.add(tx, ty, out=to)
        res = side_by_side(fns, reps=41, inner=250, options={"same, no native builtin": {"native_call": False}})
    add_kernel.cache.clear()
    return {k: v * 1e6 for k, v in res.items()}


def bench_interpreter(n=1 << 20) -> dict:
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    with use_options(backend="interpreter"):
        run = lambda: add_kernel[(tilejit.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)  # noqa: E731
        run()
        assert np.array_equal(out, x + y)
        res = side_by_side({"interpreter": run, "numpy": lambda: np.add(x, y, out=out)}, reps=5, inner=1)
    return {k: 3 * 4 * n / v / 1e9 for k, v in res.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    p.add_argument("--torch", action="store_true", help="also launch on torch CPU tensors")
    args = p.parse_args(argv)
    if args.torch:
        import torch  # noqa: F401  (imported: the cpu launch case adds torch rows)
    launch = bench_launch()
    launch.update(bench_cpu_launch())
    interp = bench_interpreter()
    print(f"{'case':<34} {'value':>12}   ratio")
    base = launch["python call"]
    for k, v in launch.items():
        print(f"{'launch: ' + k:<34} {v:9.2f} us   {v / base:5.1f}x a plain call")
    for k, v in interp.items():
        print(f"{'vector add 4 MiB: ' + k:<34} {v:9.3f} GB/s {v / interp['numpy']:7.4f}x numpy")
    rec = {"machine": platform.machine(), "cpu_count": os.cpu_count(), "python": platform.python_version(),
           "numpy": np.__version__, "tilejit": tilejit.__version__,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "load_avg": os.getloadavg(), "launch_us": launch, "interpreter_gbps": interp}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"launch-{datetime.date.today().isoformat()}.json")
    with open(path, "w") as f:
        json.dump(rec, f, indent=1)
    print(f"\nsaved {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
