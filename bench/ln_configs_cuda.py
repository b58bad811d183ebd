"""Per-config device time of Inductor's layer-norm kernel (tests/torch_compile/models.py
CASES['layer_norm'] at the corpus size, float32 (4096, 128, 96)) on one implementation, and
the config Inductor's autotuner picks: for bisecting the corpus row ``inductor_layer_norm``.

    PYTHONPATH=$PWD python bench/ln_configs_cuda.py --capture /tmp/ln.py    # real Triton: capture, time
    PYTHONPATH=$PWD python bench/ln_configs_cuda.py --load /tmp/ln.py --impl tilejit

Each config is launched directly (``fn[grid](..., XBLOCK=, num_warps=)``) and timed by the GPU
benches' shared ``cuda_timing.bench_ms`` (CUDA-event medians; the 200 MB input and output do not fit
in L2 anyway).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture")
    ap.add_argument("--load")
    ap.add_argument("--impl", choices=["triton", "tilejit"], default="triton")
    a = ap.parse_args()
    if a.impl == "tilejit":
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    import torch
    import corpus_inductor as ci
    from cuda_timing import bench_ms
    import inductor_ptx as ip
    x, w, b = ci._big_inputs("cuda")["layer_norm"]()
    if a.capture:
        fn = ci._cases()["layer_norm"].make()
        with open(a.capture, "w") as f:
            f.write(ci._capture(fn, (x, w, b), "cuda"))
    from torch._inductor.codecache import PyCodeCache
    text = open(a.capture or a.load).read()
    mod = PyCodeCache.load(text)
    args = ci._arg_order(mod, [x, w, b])
    out = mod.call(list(args))[0]
    ref = torch.nn.functional.layer_norm(x.double(), (96,), w.double(), b.double(), 1e-5)
    name, src = ip.kernel_sources(text)[0]
    picked = [str(ln.config) for ln in getattr(getattr(mod, name), "launchers", [])]
    fn, configs, _ = ip.load(name, src, tempfile.mkdtemp())    # every config Inductor lists (an H200's)
    print(f"[{a.impl}] err {(out.double() - ref).abs().max().item():.2e}; autotuner picked {picked}")
    n_rows = xnumel = x.numel() // 96
    for c in configs:
        y = torch.empty_like(x)
        blk = c.kwargs["XBLOCK"]

        def launch():
            fn[(n_rows // blk,)](*args, y, xnumel, 96, XBLOCK=blk, num_warps=c.num_warps,
                                       num_stages=c.num_stages)
        ms = bench_ms(launch, True)
        err = (y.double() - ref).abs().max().item()
        print(f"[{a.impl}] {c}: {ms:.4f} ms, max error vs float64 torch {err:.2e}")


if __name__ == "__main__":
    main()
