"""CPU tier of cuda/occupancy.py: the register cap for two CTAs per SM of kernels whose
expected-path dots all run in wgmma rings, read off the PTX (``.maxnreg``) and ptxas -v.

Tutorial 03 as published (``% M`` offsets, no hints): its dot loop is range-versioned
(transforms/align_version.py); the fast version is a cp.async/wgmma ring, the fallback (the
``else`` of the versioned ``scf.if``) the register path, whose 219 registers would leave one
CTA per SM: capped at 128 (H200: 0.2683 -> 0.2237 ms).  The hinted kernel (one ring, 110
registers), the grouped GEMM (its ring inside the persistent tile loop) and sm_80 (mma.sync)
are left as they are; the launch's own ``maxnreg`` / ``min_ctas_per_sm`` win.  The attention
side of the rule: tests/unit/test_cuda_ptx_attention.py.  No GPU needed."""
from __future__ import annotations

import functools
import re

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tilejit.runtime.compiler import build
from tests.cuda_switches import cuda_tuning
from tests.shared_kernels import script_kernels

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")

MM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **{
    n: "i32" for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")}}
# what the launcher specialises for contiguous fp16 matrices with sizes divisible by 16
MM_DIV16 = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
MM_EQ1 = ("stride_ak", "stride_bn", "stride_cn")
MM_CFG = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)


def _compile(script, kernel, cx, arch=90, stages=3, **attrs):
    func, _ = build(script_kernels(script)[kernel], MM_SIG, cx, MM_DIV16, MM_EQ1)
    func.attrs.update(attrs)
    return tilejit.compile(func, target=f"cuda:{arch}", num_warps=8, num_stages=stages)


@functools.lru_cache(maxsize=None)
def _t03(arch=90, stages=3, ring_occupancy=True, **attrs):
    """Tutorial 03 verbatim at the bench's config: its PTX."""
    with cuda_tuning(ring_occupancy=ring_occupancy):
        return _compile("matmul_tutorial03.py", "matmul_kernel", dict(MM_CFG, ACTIVATION=""), arch, stages,
                        **attrs).asm["ptx"]


def _maxnreg(ptx):
    return re.findall(r"\.maxnreg (\d+)", ptx)


def test_tutorial03_capped_for_two_ctas_per_sm():
    """The versioned loop's fast copy is a wgmma ring, its fallback the register path:
    .maxnreg 65536 // (2 * 256); the cap is the only difference it makes."""
    ptx = _t03()
    assert _maxnreg(ptx) == ["128"]
    assert "wgmma.mma_async" in ptx and "mma.sync" in ptx        # the ring and the fallback
    off = _t03(ring_occupancy=False)
    assert _maxnreg(off) == [] and ptx.replace(".maxnreg 128\n", "") == off


def test_explain_reports_the_cap():
    from tilejit.analysis.explain import explain
    with cuda_tuning(ring_occupancy=True):
        k = _compile("matmul_tutorial03.py", "matmul_kernel", dict(MM_CFG, ACTIVATION=""))
    assert k.reg_cap == 128
    assert "registers capped at 128 per thread for two CTAs per SM" in explain(k, k.func)


@needs_ptxas
def test_tutorial03_assembles_within_the_cap():
    msg = tgt.ptxas(_t03(), 90, verbose=True)
    regs = int(re.search(r"Used (\d+) registers", msg).group(1))
    assert regs <= 128, msg
    assert "serialized" not in msg, msg


def test_launch_options_win():
    """The launch's own choice is kept: its maxnreg, or no cap under min_ctas_per_sm."""
    assert _maxnreg(_t03(maxnreg=168)) == ["168"]
    assert _maxnreg(_t03(min_ctas_per_sm=1)) == [] and ".minnctapersm 1" in _t03(min_ctas_per_sm=1)


# No cap with four stages, on sm_80, or for tutorial 09's hinted kernel: the planning
# stage's decision, tests/golden/cuda_plan/matmul_tutorial03.py.


def test_persistent_grouped_gemm_left_alone():
    """Tutorial 08's grouped GEMM (its versioned ring inside the persistent tile loop:
    one program per SM) gets no cap."""
    fn = script_kernels("grouped_gemm.py")["grouped_matmul_kernel"]
    func, _ = build(fn, {0: "*i64", 1: "*i64", 2: "*i64", 3: "*i32", 4: "*i32", 5: "i32"},
                    dict(NUM_SM=132, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64), (0, 1, 2, 3, 4), ())
    on = tilejit.compile(func, target="cuda:90", num_warps=8, num_stages=3).asm["ptx"]
    assert _maxnreg(on) == [] and "wgmma.mma_async" in on and func.attrs.get("align_versioned")
