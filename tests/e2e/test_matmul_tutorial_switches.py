"""Tutorial 03's grouped-ordering matmul (K masks: K a multiple of 16, not of BLOCK_K, so the
cp.async ring zero-fills a tail) and tutorial 08's grouped GEMM (pointers from memory,
aligned and misaligned groups in one launch: the versioned ring and register paths)
against numpy on every backend, under the dot-ring switches (``CudaTuning`` fields) of
cuda/rules_wgmma (imm_offsets, uniform_wg) and cuda/async_pipeline (fresh_tid, proxy_fence):
as shipped and each one flipped (tests/cuda_switches.py: run on cuda, and on cpu with the PTX
check), and without the register cap of range-versioned ring kernels (cuda/occupancy.py)."""

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import switched

SWITCHES = {"no imm offsets": {"imm_offsets": False},
            "no uniform wg": {"uniform_wg": False},
            "no fresh tid": {"fresh_tid": False},
            "no proxy fence": {"proxy_fence": False},
            "no cap": {"ring_occupancy": False},
            "all before": {"imm_offsets": False, "uniform_wg": False, "fresh_tid": False}}


@pytest.fixture(params=["default", *SWITCHES])
def switches(request, backend):
    yield from switched(request.param, SWITCHES, backend)


@tilejit.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_am = tl.where(offs_am < M, offs_am, 0)
    offs_bn = tl.where(offs_bn < N, offs_bn, 0)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@pytest.mark.parametrize("M,N,K,BM,BN,W", [(256, 256, 208, 128, 128, 8), (192, 128, 144, 64, 64, 4)])
def test_grouped_ordering_matmul(backend, switches, M, N, K, BM, BN, W):
    if backend == "interpreter" and M * N * K > 2 ** 22:
        pytest.skip("large for the interpreter")
    rng = np.random.default_rng(3)
    A = rng.integers(-3, 4, (M, K)).astype(np.float16)
    B = rng.integers(-3, 4, (K, N)).astype(np.float16)
    want = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)
    if backend == "cuda":
        torch = pytest.importorskip("torch")
        a, b = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
        c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    else:
        a, b, c = A, B, np.full((M, N), np.nan, np.float16)
    grid = (-(-M // BM) * -(-N // BN),)
    matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=64,
                        GROUP_SIZE_M=2, num_warps=W, num_stages=3)
    got = c.cpu().numpy() if backend == "cuda" else c
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["aligned", "mixed_groups"])
def test_grouped_gemm(backend, switches, case):
    from test_align_version_e2e import test_grouped_gemm_aligned_and_misaligned
    test_grouped_gemm_aligned_and_misaligned(backend, case)
