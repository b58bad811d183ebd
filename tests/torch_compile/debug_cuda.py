"""runner.py with every CUDA launch of a kernel from ``triton.compile`` checked: the
same kernel and specialization is re-run on tilejit's interpreter with CPU copies of
the arguments and each tensor argument compared afterwards; the first mismatch per
kernel prints the kernel, its launch and its source.

    python tests/torch_compile/debug_cuda.py --device=cuda [NAME ...]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilejit.compat
tilejit.compat.install_triton_alias()
import torch
from tilejit.compat.triton_api import launch as L, compiler as C
from tilejit.compat.triton_api.drivers import GPUTarget
orig = L.make_launcher
seen = set()

def checked(ck):
    run = orig(ck)
    if ck.metadata.backend != "cuda":
        return run
    ref = C.compile(ck.src, target=GPUTarget("interpreter", "", 1), options={"num_warps": ck.metadata.num_warps})
    ref_run = orig(ref)

    def wrapped(g0, g1, g2, stream, fn, md, lm, eh, xh, *args):
        cpu = [a.detach().cpu().clone() if isinstance(a, torch.Tensor) else a for a in args]
        run(g0, g1, g2, stream, fn, md, lm, eh, xh, *args)
        torch.cuda.synchronize()
        ref_run(g0, g1, g2, 0, None, None, None, None, None, *cpu)
        for i, (a, c) in enumerate(zip(args, cpu)):
            if isinstance(a, torch.Tensor) and not torch.allclose(a.cpu().double(), c.double(), rtol=1e-4, atol=1e-4, equal_nan=True):
                key = (ck.name, str(ck.src.constants))
                if key in seen:
                    continue
                seen.add(key)
                d = (a.cpu().double() - c.double()).abs()
                print(f"MISMATCH {ck.name} arg {i} grid {(g0, g1, g2)} warps {ck.metadata.num_warps} consts {ck.src.constants} sig {ck.src.signature} attrs {ck.src.attrs} maxdiff {d.max().item()} args {[tuple(x.shape) if isinstance(x, torch.Tensor) else x for x in args]}")
                print(ck.src.fn.src)
    return wrapped

L.make_launcher = checked
import runner
runner.main(sys.argv[1:])
