"""PTX of the kernels of one TorchInductor output module, from tilejit (any machine) or
Triton 3.6 (``triton.compile(ASTSource)``: no GPU needed), at every config Inductor's
heuristics list for an H200 (its autotuner picks one of them on the GPU), with ptxas
registers / spills and an instruction histogram per kernel and config.

    PYTHONPATH=$PWD python bench/inductor_ptx.py MODULE.py --impl tilejit --out /tmp/ptx
    PYTHONPATH=/opt/tritonsite:$PWD python bench/inductor_ptx.py MODULE.py --impl triton --out /tmp/ptx

MODULE.py: an output module as ``bench/corpus_inductor.py`` captures it (a GPU capture, or
the cpu backend's ``cpu_backend="triton"`` capture: same kernels, the device swapped for
an H200's here, and every pointer argument taken as 16-byte aligned, as a CUDA
allocation is).  Specialisation as Inductor's ``triton_meta`` says: its ``configs``
attributes (``tt.divisibility``) on the same arguments, ``constexpr`` parameters from the
config.  ``--only NAME[,NAME]`` picks kernels; ``--config I`` one config by its index.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

KERNEL_RE = re.compile(r"async_compile\.triton\('(\w+)', '''\n(.*?)''', device_str=", re.S)
HEURISTICS = ("reduction", "persistent_reduction", "pointwise")


def kernel_sources(module_text):
    """[(kernel name, its source module text)] of an Inductor output module."""
    return [(m.group(1), m.group(2).replace("triton_helpers.set_driver_to_cpu()\n", ""))
            for m in KERNEL_RE.finditer(module_text)]


def h200():
    from torch._inductor.runtime.hints import DeviceProperties
    return DeviceProperties(type="cuda", index=0, multi_processor_count=132, cc=90, major=9,
                            regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048,
                            max_threads_per_block=1024, warp_size=32)


def load(name, text, out):
    """(the @triton.jit function, its H200 configs, its triton_meta): the source imported
    with Inductor's heuristic decorators recording their arguments instead."""
    from torch._inductor.runtime import triton_heuristics as th
    seen, saved = {}, {k: getattr(th, k) for k in HEURISTICS}

    def recorder(kind):
        def heuristic(*args, **kw):
            def deco(fn):
                seen.update(kind=kind, args=args, kw=kw, fn=fn)
                return fn
            return deco
        return heuristic
    path = os.path.join(out, f"{name}.py")
    with open(path, "w") as f:
        f.write(text)
    try:
        for k in HEURISTICS:
            setattr(th, k, recorder(k))
        spec = importlib.util.spec_from_file_location(f"inductor_ptx_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            setattr(th, k, v)
    kw = dict(seen["kw"])
    meta = kw["triton_meta"]
    if meta["device"].type == "cpu":    # CUDA allocations are 512-byte aligned, host ones need not be
        ptrs = [(i,) for i, t in enumerate(meta["signature"].values()) if t.startswith("*")]
        attrs = dict((meta.get("configs") or [{}])[0])
        attrs.update({i: [["tt.divisibility", 16]] for i in ptrs})
        meta = dict(meta, configs=[attrs])
    kw["triton_meta"] = dict(meta, device=h200())
    configs = getattr(th, seen["kind"])(*seen["args"], **kw, return_configs=True)
    return getattr(mod, name), configs, kw["triton_meta"]


def _split(fn, config, meta):
    """(signature, constexprs, names divisible by 16) of one config."""
    names = list(fn.arg_names)
    sig = {k: v for k, v in meta["signature"].items() if v != "constexpr"}
    cex = {k: v for k, v in config.kwargs.items() if k in names}
    attrs = (meta.get("configs") or [{}])[0]
    div = tuple(names[i[0]] for i, a in attrs.items() if ["tt.divisibility", 16] in a)
    return sig, cex, div


def run_triton(fn, config, meta):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    sig, cex, div = _split(fn, config, meta)
    names = list(fn.arg_names)
    full = {k: ("constexpr" if k in cex else sig[k]) for k in names}
    src = ASTSource(fn=fn, signature=full, constexprs={(names.index(k),): v for k, v in cex.items()},
                    attrs={(names.index(k),): [["tt.divisibility", 16]] for k in div})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": config.num_warps, "num_stages": config.num_stages})
    return k.asm["ptx"]


def run_tilejit(fn, config, meta):
    import tilejit
    sig, cex, div = _split(fn, config, meta)
    k = tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=div, target="cuda:90",
                        num_warps=config.num_warps)
    return k.asm["ptx"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--impl", choices=["tilejit", "triton"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--config", type=int, default=-1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.impl == "tilejit":
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    from liger_norms_ptx import ptxas_info
    from memory_bound_ptx import histogram
    with open(a.module) as f:
        text = f.read()
    for name, src in kernel_sources(text):
        if a.only and name not in a.only.split(","):
            continue
        fn, configs, meta = load(name, src, a.out)
        for i, cfg in enumerate(configs):
            if a.config >= 0 and i != a.config:
                continue
            tag = " ".join(f"{k}={v}" for k, v in cfg.kwargs.items()) + f" warps={cfg.num_warps}"
            try:
                ptx = (run_triton if a.impl == "triton" else run_tilejit)(fn, cfg, meta)
            except Exception as e:  # one kernel's failure is one line
                print(f"== {name} #{i} {tag} [{a.impl}] FAILED {type(e).__name__}: {e}")
                continue
            info = ptxas_info(ptx, os.path.join(a.out, f"{name}.{i}.{a.impl}.ptx"))
            h = histogram(ptx)
            top = " ".join(f"{k}:{v}" for k, v in h.most_common(30))
            print(f"== {name} #{i} {tag} [{a.impl}] {info} total={sum(h.values())}\n   {top}")


if __name__ == "__main__":
    main()
