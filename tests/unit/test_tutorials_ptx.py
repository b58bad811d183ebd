"""The kernels of the tutorial scripts in tests/triton_scripts/ compile for CUDA
(sm_80, sm_90) and ptxas assembles their PTX — no GPU needed.  Only the scripts'
imports and function definitions are executed (under the ``triton`` alias)."""
import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tests.shared_kernels import script_kernels

_kernels = script_kernels


def _sig(*types):
    return {i: t for i, t in enumerate(types)}


CASES = [
    ("low_memory_dropout.py", "_seeded_dropout", _sig("*fp32", "*fp32", "i32", "fp32", "i32"),
     {"BLOCK_SIZE": 1024}),
    ("layer_norm.py", "_layer_norm_fwd_fused", _sig(*["*fp32"] * 6, "i32", "i32", "fp32"), {"BLOCK_SIZE": 256}),
    ("layer_norm.py", "_layer_norm_bwd_dx_fused", _sig(*["*fp32"] * 8, "*i32", "i32", "i32"),
     {"GROUP_SIZE_M": 256, "BLOCK_SIZE_N": 256}),
    ("layer_norm.py", "_layer_norm_bwd_dwdb", _sig(*["*fp32"] * 4, "i32", "i32"),
     {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128}),
    ("fused_attention.py", "_attn_fwd", _sig("*fp16", "*fp16", "*fp16", "fp32", "*fp32", "*fp16", *["i32"] * 19),
     {"N_CTX": 128, "HEAD_DIM": 32, "BLOCK_M": 32, "BLOCK_N": 32, "STAGE": 3}),
    ("grouped_gemm.py", "grouped_matmul_kernel", _sig("*i64", "*i64", "*i64", "*i32", "*i32", "i32"),
     {"NUM_SM": 4, "BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32}),
    ("persistent_matmul.py", "matmul_kernel_persistent", _sig("*fp16", "*fp16", "*fp16", *["i32"] * 9),
     {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2, "NUM_SMS": 4}),
]


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("script,kernel,sig,cx", CASES, ids=[c[1] for c in CASES])
def test_tutorial_kernel_assembles(script, kernel, sig, cx, arch):
    ns = _kernels(script)
    ker = tilejit.compile(ns[kernel], signature=sig, constexprs=cx, target=f"cuda:{arch}")
    ptx = ker.asm["ptx"]
    assert f".target sm_{arch}" in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)
