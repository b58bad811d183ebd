"""Per-kernel GPU times and autotuner choices of one Inductor corpus row (bench/corpus_inductor.py),
on one side (Triton 3.6 or tilejit behind the ``triton`` alias), for finding which of a
row's kernels makes its ratio.

    python bench/inductor_kernel_times.py --impl triton  --case reduce_non_last_dim --module M.py --out D
    PYTHONPATH=$PWD python bench/inductor_kernel_times.py --impl tilejit --case reduce_non_last_dim --module M.py --out D

The Triton side captures the case's output module at the corpus sizes and saves it to
``--module`` (unless that file exists); the tilejit side loads that file (the same source
on both sides).  ``--strip-eviction`` (an experiment: what the ``eviction_policy`` hints,
which tilejit's CUDA loads ignore, are worth) removes the hints from the loaded text.  Prints,
per kernel, the config Inductor's autotuner chose and the mean CUDA time per call (CUPTI,
through torch.profiler, over ``--calls`` calls, L2 not flushed), and writes the chosen
variant's PTX to ``D/<kernel>.<impl>.ptx``.  ``--autotune-log`` prints the autotuner's
timings of every config with its register count, and the configs with a halved R0_BLOCK
that Inductor adds where a config's registers limit occupancy (``_dynamic_scale_rblock``:
a different register count on the two sides gives them different candidates).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def _ptx(launcher):
    """The PTX of one of Inductor's launchers (Triton: its CompiledKernel; tilejit: the alias's)."""
    for obj in (getattr(launcher, "bin", None), getattr(launcher, "kernel", None)):
        asm = getattr(obj, "asm", None)
        if asm and asm.get("ptx"):
            return asm["ptx"]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["tilejit", "triton"], required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--strip-eviction", action="store_true",
                    help="an experiment, not a corpus row: the module's eviction_policy hints removed")
    ap.add_argument("--autotune-log", action="store_true",
                    help="print Inductor's autotuner debug lines: every config's time, registers and "
                         "spills, and the R0_BLOCK halvings its register-occupancy rule adds")
    ap.add_argument("--device", default="cuda", help="cpu: a smoke run of this script (tilejit cpu, smoke sizes)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.impl == "tilejit":
        os.environ.setdefault("TILEJIT_BACKEND", a.device)
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    import torch
    import torch._inductor.config as icfg
    from torch._inductor.codecache import PyCodeCache
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    import corpus_inductor as ci
    icfg.compile_threads = 1
    if a.autotune_log:
        import logging
        lg = logging.getLogger("torch._inductor.runtime.triton_heuristics")
        lg.setLevel(logging.DEBUG)
        h = logging.StreamHandler(sys.stdout)
        h.setFormatter(logging.Formatter(f"{a.impl} autotune: %(message)s"))
        lg.addHandler(h)
        lg.propagate = False
    fn = ci._cases()[a.case].make()
    cpu = a.device == "cpu"
    inputs = ci._cases()[a.case].inputs() if cpu else ci._big_inputs("cuda")[a.case]()
    if (a.impl == "triton" or cpu) and not os.path.exists(a.module):
        with open(a.module, "w") as f:
            f.write(ci._capture(fn, inputs, a.device))
    with open(a.module) as f:
        text = f.read()
    if a.strip_eviction:
        text, n = re.subn(r", eviction_policy='evict_\w+'", "", text)
        print(f"{a.impl}: {n} eviction_policy hints removed (an experiment)", flush=True)
    mod = PyCodeCache.load(text)
    args = ci._arg_order(mod, inputs)
    mod.call(list(args))                     # compile and autotune
    if not cpu:
        torch.cuda.synchronize()
    for name in dir(mod):
        k = getattr(mod, name)
        launchers = getattr(k, "launchers", None)
        if not launchers or not name.startswith("triton_"):
            continue
        cfg = getattr(launchers[0], "config", None)
        print(f"{a.impl} {name} chose {getattr(cfg, 'kwargs', cfg)} warps={getattr(cfg, 'num_warps', '?')} "
              f"of {len(getattr(k, 'configs', []) or [])}", flush=True)
        ptx = _ptx(launchers[0])
        if ptx:
            tag = a.impl + (".noevict" if a.strip_eviction else "")
            with open(os.path.join(a.out, f"{name}.{tag}.ptx"), "w") as f:
                f.write(ptx)
    if cpu:
        return
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.calls):
            mod.call(list(args))
        torch.cuda.synchronize()
    per = collections.defaultdict(float)
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            per[e.name] += e.time_range.elapsed_us() / a.calls
    for name, us in sorted(per.items(), key=lambda kv: -kv[1]):
        print(f"{a.impl} {a.case} {us:9.1f} us/call  {name[:90]}", flush=True)


if __name__ == "__main__":
    main()
