"""PTX of Liger-Kernel 0.8.5's RMSNorm and LayerNorm kernels (forward and backward) and its
cross-entropy kernel (fp32 4096 x 128256 rows, 32 warps) and GeGLU and SwiGLU kernels (bf16
rows of 14336, 16 warps) from
tilejit (any machine) or Triton (``triton.compile(ASTSource)``: no GPU needed), at the
corpus bench's size (bf16, 8192 x 4096, Liger's own block size and warps), with
registers / spills / shared memory and an instruction histogram per kernel.

    PYTHONPATH=$PWD python bench/liger_norms_ptx.py --impl tilejit --out /tmp/ptx
    PYTHONPATH=/opt/tritonsite python bench/liger_norms_ptx.py --impl triton --out /tmp/ptx

(the second with Triton 3.6 installed apart: ``pip install --target /opt/tritonsite
triton==3.6.0``).  Specialisation as Triton's launcher makes it: integer arguments equal
to 1 become constexprs, pointers and integers divisible by 16 carry the divisibility.
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

T, H, SMS = 8192, 4096, 132
ROWS_PER_PROGRAM = -(-T // SMS)


def kernels(tl):
    """(module, kernel, {param: type or value}, num_warps): a type string is a runtime
    argument, anything else a constexpr (1 for the unit strides Triton specialises)."""
    bf, f32, i32 = "*bf16", "*fp32", "i32"
    return [
        ("rms_norm", "_rms_norm_forward_kernel",
         dict(Y_ptr=bf, Y_row_stride=i32, X_ptr=bf, X_row_stride=i32, W_ptr=bf, W_row_stride=1,
              RSTD_ptr=f32, RSTD_row_stride=1, n_cols=i32, eps="fp32", offset="fp32", casting_mode=0,
              elementwise_affine=True, BLOCK_SIZE=H), 8),
        ("rms_norm", "_rms_norm_backward_kernel",
         dict(dY_ptr=bf, dY_row_stride=i32, dX_ptr=bf, dX_row_stride=i32, X_ptr=bf, X_row_stride=i32,
              X_dtype=tl.bfloat16, W_ptr=bf, W_row_stride=1, RSTD_ptr=f32, RSTD_row_stride=1,
              dW_ptr=f32, dW_row_stride=i32, n_rows=i32, n_cols=i32, offset="fp32",
              rows_per_program="i32:odd", casting_mode=0, elementwise_affine=True, BLOCK_SIZE=H,
              COMPUTE_DW=True), 8),
        ("layer_norm", "_layer_norm_forward_kernel",
         dict(Y_ptr=bf, Y_row_stride=i32, X_ptr=bf, X_row_stride=i32, W_ptr=bf, W_row_stride=1,
              B_ptr=bf, B_row_stride=1, Mean_ptr=f32, Mean_row_stride=1, RSTD_ptr=f32,
              RSTD_row_stride=1, n_cols=i32, eps="fp32", BLOCK_SIZE=H), 8),
        ("layer_norm", "_layer_norm_backward_kernel",
         dict(X_ptr=bf, stride_x=i32, W_ptr=bf, Mean_ptr=f32, stride_mean=1, RSTD_ptr=f32,
              stride_rstd=1, DX_ptr=bf, stride_dx=i32, DW_ptr=f32, stride_dw=i32, DB_ptr=f32,
              stride_db=i32, DY_ptr=bf, stride_dy=i32, n_rows=i32, n_cols=i32,
              rows_per_program=ROWS_PER_PROGRAM, BLOCK_SIZE=H, COMPUTE_DW=True, COMPUTE_DB=True), 8),
        ("geglu", "_geglu_tanh_forward_kernel",
         dict(a=bf, b=bf, c=bf, stride=i32, n_cols=14336, BLOCK_SIZE=16384), 16),
        ("geglu", "_geglu_tanh_backward_kernel",
         dict(dc=bf, a=bf, b=bf, stride=i32, n_cols=14336, BLOCK_SIZE=16384), 16),
        ("swiglu", "_swiglu_forward_kernel",
         dict(a_ptr=bf, b_ptr=bf, c_ptr=bf, stride=i32, gate_multiplier="fp32", n_cols=14336,
              BLOCK_SIZE=16384), 16),
        ("swiglu", "_swiglu_backward_kernel",
         dict(dc_ptr=bf, a_ptr=bf, b_ptr=bf, stride=i32, gate_multiplier="fp32", n_cols=14336,
              BLOCK_SIZE=16384), 16),
        ("cross_entropy", "liger_cross_entropy_kernel",
         dict(X_ptr=f32, X_stride=i32, Y_ptr="*i64", Y_stride=1, weight_ptr=None, loss_ptr=f32,
              z_loss_ptr=None, loss_stride=1, token_accuracy_ptr=None, token_accuracy_stride=i32,
              predicted_tokens_ptr=None, predicted_tokens_stride=i32, n_cols=i32, n_non_ignore=i32,
              sum_non_ignore_weight=i32, weight_sum="fp32", ignore_index="i32:odd", lse_square_scale=0.0,
              label_smoothing=0.0, reduction="mean", softcap=None, RETURN_Z_LOSS=False,
              RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False, BLOCK_SIZE=32768,
              HAS_WEIGHT=False, HAS_SOFTCAPPING=False, HAS_GRADIENTS=True), 32),
    ]


def split(params):
    """(signature, constexprs, names divisible by 16)."""
    runtime = {k: v for k, v in params.items() if isinstance(v, str) and (v[0] in "*if" or ":" in v)}
    sig = {k: v.split(":")[0] for k, v in runtime.items()}
    cex = {k: v for k, v in params.items() if k not in runtime}
    div = tuple(k for k, v in runtime.items() if ":" not in v and v != "fp32")
    return sig, cex, div


def run_triton(fn, params, warps):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    sig, cex, div = split(params)
    names = list(fn.arg_names)
    full = {k: ("constexpr" if k in cex else sig[k]) for k in names if k in sig or k in cex}
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in div}
    src = ASTSource(fn=fn, signature=full, constexprs={(names.index(k),): v for k, v in cex.items()},
                    attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    md = k.metadata
    return k.asm["ptx"], f"shared={md.shared} (ptxas: see below)"


def run_tilejit(fn, params, warps):
    import tilejit
    sig, cex, div = split(params)
    k = tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=div, target="cuda:90",
                        num_warps=warps)
    return k.asm["ptx"], ""


def ptxas_info(ptx, path):
    import subprocess
    open(path, "w").write(ptx)
    exe = os.environ.get("PTXAS", "ptxas")
    r = subprocess.run([exe, "-v", "-arch=sm_90a", path, "-o", "/dev/null"], capture_output=True, text=True)
    return " ".join(ln.split(":", 1)[-1].strip() for ln in r.stderr.splitlines() if "Used" in ln or "spill" in ln)


def report(impl, out_dir, name, fn, params, warps, top):
    """Compile ``fn`` with ``impl`` (tilejit or triton), keep and assemble its PTX in
    ``out_dir``, and print ptxas' figures and the ``top`` most frequent instructions."""
    from memory_bound_ptx import histogram
    ptx, info = (run_triton if impl == "triton" else run_tilejit)(fn, params, warps)
    info += " " + ptxas_info(ptx, os.path.join(out_dir, f"{name}.{impl}.ptx"))
    h = histogram(ptx)
    most = " ".join(f"{k}:{v}" for k, v in h.most_common(top))
    print(f"== {name} [{impl}] {info} total={sum(h.values())}\n   {most}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["tilejit", "triton"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.impl == "tilejit":
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    import importlib
    import triton.language as tl
    for mod, name, params, warps in kernels(tl):
        if a.only and name not in a.only.split(","):
            continue
        fn = getattr(importlib.import_module("liger_kernel.ops." + mod), name)
        try:
            report(a.impl, a.out, name, fn, params, warps, 40)
        except Exception as e:  # one kernel's failure is one line
            print(f"{name}: FAILED {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
