"""Tutorial 06 (fused attention forward, non-causal and causal) and tutorial 08 (grouped
GEMM) compiled for sm_90a by tilejit or by Triton, offline (no GPU), at the corpus bench's
configuration (attention BLOCK 128x64 D64, grouped GEMM 128x128x64, 8 warps, 3 stages),
specialised as Triton's launcher does (pointers, sizes and strides divisible by 16, unit
strides as constexprs), with ptxas' registers / spills and, from ``cuobjdump -sass``, the
SASS instruction count of every loop (label to backward branch, innermost first).

    PYTHONPATH=$PWD python bench/attn_gg_ptx.py --impl tilejit --out /tmp/ptx
    PYTHONPATH=/opt/tritonsite python bench/attn_gg_ptx.py --impl triton --out /tmp/ptx

``TILEJIT_CUDA_TUNING`` picks tilejit's variant (e.g. ``index_tiles=0``).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, ROOT)

NV_BIN = "/opt/tritonsite/triton/backends/nvidia/bin"
_STRIDES = ("stride_qz stride_qh stride_qm stride_qk stride_kz stride_kh stride_kn stride_kk "
            "stride_vz stride_vh stride_vk stride_vn stride_oz stride_oh stride_om stride_on").split()
ATTN_SIG = dict(Q="*fp16", K="*fp16", V="*fp16", sm_scale="fp32", M="*fp32", Out="*fp16",
                **{k: "i32" for k in _STRIDES}, Z="i32", H="i32", N_CTX="i32")
ATTN_UNIT = ("stride_qk", "stride_kk", "stride_vn", "stride_on")
ATTN_DIV = ("Q", "K", "V", "M", "Out", "stride_qz", "stride_qh", "stride_qm", "stride_kz", "stride_kh",
            "stride_kn", "stride_vz", "stride_vh", "stride_vk", "stride_oz", "stride_oh", "stride_om",
            "H", "N_CTX")
GG_SIG = dict(group_a_ptrs="*i64", group_b_ptrs="*i64", group_c_ptrs="*i64", group_gemm_sizes="*i32",
              g_lds="*i32", group_size="i32")
GG_DIV = ("group_a_ptrs", "group_b_ptrs", "group_c_ptrs", "group_gemm_sizes", "g_lds")


def cases():
    """(name, script stem, kernel, signature, constexprs, divisible-by-16 names)."""
    attn = dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, **{k: 1 for k in ATTN_UNIT})
    sig = {k: v for k, v in ATTN_SIG.items() if k not in ATTN_UNIT}
    return [("attn_fwd", "fused_attention", "_attn_fwd", sig, dict(attn, STAGE=1), ATTN_DIV),
            ("attn_causal", "fused_attention", "_attn_fwd", sig, dict(attn, STAGE=3), ATTN_DIV),
            ("grouped_gemm", "grouped_gemm", "grouped_matmul_kernel", GG_SIG,
             dict(NUM_SM=132, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64), GG_DIV)]


def compile_triton(fn, sig, cex, div):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    names = list(fn.arg_names)
    full = {k: ("constexpr" if k in cex else sig[k]) for k in names}
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in div}
    src = ASTSource(fn=fn, signature=full, constexprs={(names.index(k),): v for k, v in cex.items()},
                    attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3})
    return k.asm["ptx"]


def compile_tilejit(fn, sig, cex, div):
    import tilejit
    return tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=div, target="cuda:90",
                           num_warps=8, num_stages=3).asm["ptx"]


def sass_loops(cubin):
    """[(instructions, label offset)] of each backward branch's loop in the SASS."""
    exe = os.path.join(NV_BIN, "cuobjdump")
    text = subprocess.run([exe, "-sass", cubin], capture_output=True, text=True).stdout
    ins = [(int(m.group(1), 16), m.group(2)) for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", text)]
    loops = []
    for off, body in ins:
        m = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", body)
        if m and int(m.group(1), 16) <= off:
            start = int(m.group(1), 16)
            loops.append((sum(1 for o, _ in ins if start <= o <= off), start))
    return sorted(loops)


def ptxas_report(ptx, path):
    """(ptxas -v's registers / spill line, SASS loops)."""
    with open(path, "w") as f:
        f.write(ptx)
    cubin = path[:-4] + ".cubin"
    exe = os.environ.get("PTXAS", "ptxas")
    r = subprocess.run([exe, "-v", "-arch=sm_90a", path, "-o", cubin], capture_output=True, text=True)
    info = " ".join(ln.split(":", 1)[-1].strip() for ln in r.stderr.splitlines() if "Used" in ln or "spill" in ln)
    return info or r.stderr.strip()[-300:], sass_loops(cubin)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["tilejit", "triton"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--tag", default="", help="suffix of the PTX file names (a variant's name)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.impl == "tilejit":
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    else:       # no GPU: the scripts' module-level DEVICE line asks the driver for a device
        import types
        import triton
        triton.runtime.driver.set_active(types.SimpleNamespace(get_active_torch_device=lambda: "cpu"))
    from bench_tutorials_cuda import kernels
    from memory_bound_ptx import histogram
    for name, stem, kname, sig, cex, div in cases():
        if a.only and name not in a.only.split(","):
            continue
        fn = getattr(kernels(stem), kname)
        ptx = (compile_triton if a.impl == "triton" else compile_tilejit)(fn, sig, cex, div)
        info, loops = ptxas_report(ptx, os.path.join(a.out, f"{name}.{a.impl}{a.tag}.ptx"))
        h = histogram(ptx)
        keys = ("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "bar.sync", "st.local", "ld.local",
                "ex2.approx.ftz.f32", "shfl.sync.bfly.b32", "cp.async.cg.shared.global")
        print(f"== {name} [{a.impl}{a.tag}] {info}\n   SASS loops (instructions@label): "
              + " ".join(f"{n}@{s:#x}" for n, s in loops)
              + f"\n   PTX total {sum(h.values())}; " + " ".join(f"{k.split('.')[0]}:{h[k]}" for k in keys if h[k]),
              flush=True)


if __name__ == "__main__":
    main()
