"""CPU tier of the pipelined tensor-core dot: a matmul main loop compiles to a
cp.async ring feeding wgmma (cuda:90, sm_90a) or ldmatrix + mma.sync (cuda:80), and
the PTX assembles; loops the ring cannot take keep the register path.  No GPU needed."""
from __future__ import annotations

import re

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tilejit.backends.cuda.layout import make_layout

import test_cuda_ptx as K

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")


def _compile(BM, BN, BK, warps, stages, arch, dtype="fp16", **tuning):
    """``tuning``: CudaTuning fields changed (``ring_late_issue=False``)."""
    from tilejit.backends import get_backend
    from tilejit.runtime.options import CudaTuning, Options
    func = K.matmul_kernel(BM, BN, BK, dtype)
    func.attrs.update(num_warps=warps, target=f"cuda:{arch}")
    if stages is not None:
        func.attrs["num_stages"] = stages
    return get_backend("cuda").compile(func, Options(cuda=CudaTuning(**tuning)))


def _count(ptx, pat):
    return len(re.findall(pat, ptx))


@pytest.mark.parametrize("BM,BN,warps,stages", [(128, 128, 8, 3), (128, 256, 8, 4), (64, 128, 4, 4),
                                                (64, 64, 4, 2)])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_hopper_matmul_is_cp_async_ring_and_wgmma(BM, BN, warps, stages, dtype):
    k = _compile(BM, BN, 64, warps, stages, 90, dtype)
    ptx = k.ptx
    kind = "f16" if dtype == "fp16" else "bf16"
    assert re.search(r"^\.target sm_90a\b", ptx, re.M)
    assert _count(ptx, rf"wgmma\.mma_async\.sync\.aligned\.m64n{BN}k16\.f32\.{kind}\.{kind}") == 4
    assert "mma.sync" not in ptx and "ldmatrix" not in ptx
    assert "wgmma.fence.sync.aligned" in ptx and "wgmma.commit_group.sync.aligned" in ptx
    inflight = 1                      # one wgmma group in flight; copies issued after it retires
    dist = stages - 1
    assert f"wgmma.wait_group.sync.aligned {inflight};" in ptx
    assert f"cp.async.wait_group {dist - 1};" in ptx and "fence.proxy.async.shared::cta" in ptx
    chunks = (BM * 64 + 64 * BN) // 8 // (warps * 32)           # 16-byte copies per thread per tile
    assert _count(ptx, r"cp\.async\.cg\.shared\.global \[%r\d+(?:\+\d+)?\], \[%rd\d+\], 16;") == chunks * (dist + 1)
    assert _count(ptx, r"cp\.async\.commit_group") == dist + 1
    assert ".extern .shared .align 1024" in ptx
    assert k.shared >= stages * (BM * 64 + 64 * BN) * 2


@pytest.mark.parametrize("BM,BN,warps", [(128, 128, 8), (64, 128, 4), (128, 128, 4)])
def test_ampere_matmul_is_cp_async_ring_and_ldmatrix(BM, BN, warps):
    ptx = _compile(BM, BN, 64, warps, 3, 80).ptx
    assert re.search(r"^\.target sm_80\b", ptx, re.M) and "wgmma" not in ptx
    assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group 1;" in ptx
    assert _count(ptx, r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16") > 0
    assert _count(ptx, r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16") > 0
    assert _count(ptx, r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32") == BM * BN * 64 // (16 * 8 * 16) // warps


@needs_ptxas
@pytest.mark.parametrize("arch,BM,BN,warps,stages", [(90, 128, 128, 8, 4), (90, 128, 256, 8, 4),
                                                     (90, 64, 128, 4, 3), (80, 128, 128, 8, 3),
                                                     (80, 64, 128, 4, 4)])
def test_pipelined_matmul_assembles_without_wgmma_serialization(arch, BM, BN, warps, stages):
    k = _compile(BM, BN, 64, warps, stages, arch)
    msgs = tgt.ptxas(k.ptx, arch, verbose=True)
    assert ("sm_90a" in msgs) == (arch == 90)
    assert "serializ" not in msgs.lower(), msgs          # wgmma kept asynchronous
    assert not re.search(r"[1-9]\d* bytes spill", msgs), msgs


# Which loops the ring takes (BK=32, num_stages=1, sm_75 keep the register path or plain
# code) is the planning stage's decision: tests/golden/cuda_plan/matmul.py.


def test_sanitize_mode_keeps_accesses_in_program_order():
    import tilejit
    from tilejit.runtime.options import Options
    func = K.matmul_kernel(128, 128, 64, "fp16")
    func.attrs["num_stages"] = 3
    ptx = tilejit.compile(func, target="cuda:90", num_warps=8, options=Options(sanitize=True)).asm["ptx"]
    assert "cp.async" not in ptx and "wgmma" not in ptx


# An fp32 dot is multiply-adds, its loop no ring: tests/golden/cuda_plan/dot_fp32.py.


def test_default_num_stages_is_three():
    ptx = _compile(128, 128, 64, 8, None, 90).ptx
    assert "wgmma.wait_group.sync.aligned 1;" in ptx and "cp.async.wait_group 1;" in ptx


@pytest.mark.parametrize("late,inflight,wait", [(True, 1, 2), (False, 1, 1), (True, 0, 2)])
def test_ring_distance_follows_the_issue_point(late, inflight, wait):
    """Early issue with a wgmma group in flight must skip the stage that group reads."""
    ptx = _compile(128, 128, 64, 8, 4, 90, ring_late_issue=late, wgmma_inflight=bool(inflight)).ptx
    assert f"cp.async.wait_group {wait};" in ptx
    assert f"wgmma.wait_group.sync.aligned {inflight};" in ptx
    body = ptx[ptx.index("wgmma.fence"):]
    assert body.count("bar.sync") >= (2 if late and inflight else 1)


@tilejit.jit
def jit_mm(a_ptr, b_ptr, c_ptr, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           MASKED: tl.constexpr, FOLD: tl.constexpr):
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    on = tl.program_id(1) * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    ap = a_ptr + om[:, None] * sam + ok[None, :]
    bp = b_ptr + ok[:, None] * sbk + on[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        if MASKED:
            a = tl.load(ap, mask=ok[None, :] < K - k * BK, other=0.0)
            b = tl.load(bp, mask=ok[:, None] < K - k * BK, other=0.0)
        else:
            a = tl.load(ap)
            b = tl.load(bp)
        if FOLD:
            acc += tl.dot(a, b)
        else:
            acc = tl.dot(a, b, acc)
        ap += BK
        bp += BK * sbk
    tl.store(c_ptr + om[:, None] * scm + on[None, :], acc)


SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32", "sam": "i32", "sbk": "i32", "scm": "i32"}


def _jit_matmul(masked: bool, fold: bool):
    k = tilejit.compile(jit_mm, signature=SIG, constexprs=dict(BM=128, BN=128, BK=64, MASKED=masked, FOLD=fold),
                        divisible_by_16=tuple(SIG), target="cuda:90", num_warps=8, num_stages=4)
    return k.asm["ptx"]


def test_masked_loads_copy_with_zero_fill_above_the_loop_scratch():
    """The K mask is re-evaluated for each copy's iteration and becomes src-size 0/16;
    its broadcast's scratch shared memory sits below the ring (no overlap)."""
    ptx = _jit_matmul(masked=True, fold=False)
    assert "mma.sync" not in ptx and _count(ptx, r"wgmma\.mma_async") == 4
    assert _count(ptx, r"cp\.async\.cg\.shared\.global \[%r\d+(?:\+\d+)?\], \[%rd\d+\], 16, %r\d+;") == 32
    k = tilejit.compile(jit_mm, signature=SIG, constexprs=dict(BM=128, BN=128, BK=64, MASKED=True, FOLD=False),
                        divisible_by_16=tuple(SIG), target="cuda:90", num_warps=8, num_stages=4)
    ring = 4 * (128 * 64 + 64 * 128) * 2
    assert k.shared >= ring + 1024           # the mask broadcast's scratch (one 1024-aligned block), then the ring
    assert _count(k.asm["llir_opt"], r"tj_ring_off") == 0       # the placeholder offset folded away


def test_vec8_layout_for_ring_operands():
    lay = make_layout((128, 64), 256, max_vec=8)
    assert (lay.vec, lay.reps, lay.exact) == (8, 4, True)
    assert make_layout((128, 64), 256).vec == 4


def test_acc_plus_dot_form_is_folded_into_the_ring():
    """``acc += tl.dot(a, b)`` (add of a zero-acc dot) takes the same pipeline."""
    for fold in (False, True):
        ptx = _jit_matmul(masked=False, fold=fold)
        assert _count(ptx, r"wgmma\.mma_async") == 4 and "cp.async.cg" in ptx
