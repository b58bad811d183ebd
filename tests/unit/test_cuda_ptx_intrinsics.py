"""Intrinsics declared once per CUDA module: the CPU-shared math (backends/llvm/mathlib.py:
fp32 tanh/erf/log polynomials, which call llvm.fabs / llvm.maxnum) and the CUDA lowering's
own calls (a float max reduction, tl.abs) in one kernel -- Liger-Kernel's softcapped
cross entropy failed with "DuplicatedNameError: llvm.fabs.f32" on the H200."""
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tilejit.language.extra import libdevice


@tilejit.jit
def softcapped_max(x_ptr, out_ptr, n, softcap, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf")).cast(tl.float32)
    x = softcap * libdevice.tanh(x / softcap)
    e = libdevice.erf(x) + tl.log(tl.abs(x) + 1.0)
    tl.store(out_ptr, tl.max(x) + tl.sum(tl.abs(e)))


@pytest.mark.parametrize("arch", [80, 90])
def test_shared_math_and_lowering_intrinsics_in_one_module(arch):
    k = tilejit.compile(softcapped_max, signature={0: "*fp32", 1: "*fp32", 2: "i32", 3: "fp32"},
                        num_warps=4, constexprs=dict(BLOCK=1024), target=f"cuda:{arch}")
    if tgt.find_ptxas() is not None:
        tgt.ptxas(k.asm["ptx"], arch)
