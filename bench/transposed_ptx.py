"""PTX of bench_transposed_cuda.py's kernels (transpose fp32/fp16, dot_colmajor) from
tilejit or Triton, offline (no GPU), at the bench's specialisation (unit strides
constexpr, the others divisible by 16; 4 warps; sm_90), with ptxas's registers and an
instruction histogram per kernel:

    PYTHONPATH=$PWD python bench/transposed_ptx.py --impl tilejit --out /tmp/ptx
    PYTHONPATH=/opt/tritonsite python bench/transposed_ptx.py --impl triton --out /tmp/ptx
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["tilejit", "triton"], required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.impl == "tilejit":
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    import triton
    import triton.language as tl
    import bench_transposed_cuda as b
    from liger_norms_ptx import report
    tr, dc = b._kernels(triton.jit, tl) if a.impl == "triton" else b._kernels(triton.jit)
    cases = [(f"transpose_{d}", tr, dict(X=f"*{d}", sxm=1, sxn="i32", Y=f"*{d}", sym="i32", syn=1,
                                         BM=64, BN=64)) for d in ("fp32", "fp16")]
    cases.append(("dot_colmajor", dc, dict(X="*fp16", sxm=1, sxk="i32", Y="*fp16", syk=1, syn="i32",
                                           Z="*fp32", B=64)))
    for name, fn, params in cases:
        report(a.impl, a.out, name, fn, params, 4, 24)


if __name__ == "__main__":
    main()
