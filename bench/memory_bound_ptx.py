"""PTX of the memory-bound tutorial kernels (04 dropout, 05 layer norm backward) from
tilejit (any machine) or Triton (a GPU machine), with ptxas resource figures.

    PYTHONPATH=$PWD python bench/memory_bound_ptx.py --impl tilejit --out /tmp/ptx
    PYTHONPATH=$PWD python bench/memory_bound_ptx.py --impl triton --out $OUT/ptx

Writes <kernel>.<impl>.ptx per kernel and prints, per kernel, registers / spills (ptxas
-v for tilejit; Triton's n_regs / n_spills) and an instruction histogram of the PTX.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

# (stem, kernel, signature, constexprs, num_warps)
KERNELS = [
    ("low_memory_dropout", "_seeded_dropout",
     {"x_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32", "p": "fp32", "seed": "i32"},
     {"BLOCK_SIZE": 1024}, 4),
    ("layer_norm", "_layer_norm_bwd_dx_fused",
     {"DX": "*fp16", "DY": "*fp16", "DW": "*fp16", "DB": "*fp16", "X": "*fp16", "W": "*fp16",
      "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"},
     {"GROUP_SIZE_M": 96, "BLOCK_SIZE_N": 8192}, 8),
    ("layer_norm", "_layer_norm_bwd_dwdb",
     {"DW": "*fp16", "DB": "*fp16", "FINAL_DW": "*fp16", "FINAL_DB": "*fp16", "M": "i32", "N": "i32"},
     {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128}, 4),
    ("layer_norm", "_layer_norm_fwd_fused",
     {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32", "Rstd": "*fp32",
      "stride": "i32", "N": "i32", "eps": "fp32"},
     {"BLOCK_SIZE": 8192}, 8),
]
DIV16 = {"x_ptr", "output_ptr", "n_elements", "DX", "DY", "DW", "DB", "X", "W", "Mean", "Rstd",
         "Lock", "stride", "N", "FINAL_DW", "FINAL_DB", "Y", "B"}


def histogram(ptx):
    c = collections.Counter()
    for line in ptx.splitlines():
        s = line.strip()
        if not s or s.startswith(("//", ".", "{", "}", "$", "@%")) and not s.startswith("@%p"):
            continue
        s = re.sub(r"^@!?%\w+\s+", "", s)
        op = s.split()[0].rstrip(";")
        if op.endswith(":"):
            continue
        c[op] += 1
    return c




OUTDIR = [""]


def run_triton(mod, name, sig, cex, warps):
    """Compile through a real launch-free path: triton.compile(ASTSource)."""
    import triton
    from triton.compiler import ASTSource
    fn = getattr(mod, name)
    full = dict(sig)
    full.update({k: "constexpr" for k in cex})
    attrs = {}
    try:
        params = list(fn.arg_names)
        div = [[params.index(k)] for k in sig if k in DIV16]
        attrs = {tuple(d): [["tt.divisibility", 16]] for d in div}
    except Exception:
        pass
    src = ASTSource(fn=fn, signature=full, constexprs={k: v for k, v in cex.items()}, attrs=attrs)
    k = triton.compile(src, options={"num_warps": warps})
    md = k.metadata
    k._init_handles()
    if "cubin" in k.asm:
        with open(os.path.join(OUTDIR[0], f"{fn.__name__}.triton.cubin"), "wb") as f:
            f.write(k.asm["cubin"])
    return k.asm["ptx"], f"regs={k.n_regs} spills={k.n_spills} shared={md.shared}"


def run_tilejit(mod, name, sig, cex, warps, outdir):
    import tilejit
    from tilejit.backends.cuda import target as tgt
    fn = getattr(mod, name)
    k = tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=tuple(s for s in sig if s in DIV16),
                        target="cuda:90", num_warps=warps)
    ptx = k.asm["ptx"]
    path = os.path.join(outdir, f"{name}.tmp.ptx")
    open(path, "w").write(ptx)
    r = subprocess.run([tgt.find_ptxas(), "-v", "-arch=sm_90a", path, "-o", "/dev/null"],
                       capture_output=True, text=True)
    info = " ".join(l.split(":", 1)[-1].strip() for l in r.stderr.splitlines() if "Used" in l or "spill" in l)
    os.remove(path)
    return ptx, info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["tilejit", "triton"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    OUTDIR[0] = a.out
    if a.impl == "tilejit":
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    import bench_tutorials_cuda as B
    for stem, name, sig, cex, warps in KERNELS:
        if a.only and name not in a.only.split(","):
            continue
        mod = B.kernels(stem)
        try:
            if a.impl == "triton":
                ptx, info = run_triton(mod, name, sig, cex, warps)
            else:
                ptx, info = run_tilejit(mod, name, sig, cex, warps, a.out)
        except Exception as e:  # keep going: one kernel's failure is one line
            print(f"{name}: FAILED {type(e).__name__}: {e}")
            continue
        open(os.path.join(a.out, f"{name}.{a.impl}.ptx"), "w").write(ptx)
        h = histogram(ptx)
        top = " ".join(f"{k}:{v}" for k, v in h.most_common(40))
        print(f"== {name} [{a.impl}] {info} total={sum(h.values())}\n   {top}")


if __name__ == "__main__":
    main()
