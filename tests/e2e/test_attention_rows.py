"""Dot loops whose softmax rows stay in the mma layout on CUDA (cuda/mma_rows.py): the
attention forward loop at several shapes, warps and dtypes (one or two 16-row tiles per
warp; K's transposed tile loaded K-major when its pointers are aligned, as the launch
specialises them here), its row statistics read after the loop, a causal band whose mask is computed
outside the region (the fallback conversions), and a loop with every reduction kind.
Run on every backend against float64 references."""
from __future__ import annotations

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import switched


@tilejit.jit
def attn_rows(Q, K, V, sm_scale, Out, M, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, BF16: tl.constexpr):
    """Tutorial 06's loop with plain pointers (K read transposed), the row statistic
    ``m_i + log2(l_i)`` stored after the loop, and an optional causal mask."""
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    if BF16:
        q = q.to(tl.bfloat16)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        if BF16:
            k = k.to(tl.bfloat16)
        qk = tl.dot(q, k)
        if CAUSAL:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        if BF16:
            acc = tl.dot(p.to(tl.bfloat16), v.to(tl.bfloat16), acc)
        else:
            acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + tl.program_id(1) * N_CTX + offs_m, m_i)
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16))


def _bf16(x):
    """float16 values rounded to bfloat16 (nearest even), as float64."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _ref(q, k, v, scale, causal):
    s = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    lse = (mx[..., 0] + np.log(p.sum(-1))) / np.log(2.0)
    return np.einsum("hmn,hnd->hmd", p / p.sum(-1, keepdims=True), v.astype(np.float64)), lse


CASES = [  # H, N, D, BLOCK_M, BLOCK_N, warps, causal, bf16
    (2, 256, 64, 128, 64, 8, False, False),     # the bench's blocks: 16 rows per warp
    (2, 256, 64, 128, 64, 4, False, False),     # 32 rows per warp (two 16-row tiles)
    (2, 128, 32, 64, 32, 4, False, True),       # bf16, narrow tiles
    (1, 256, 64, 128, 64, 8, True, False),      # causal: the mask as index tiles in the region
    (2, 256, 32, 64, 64, 4, False, False),      # K-major K tiles wider than deep ...
    (2, 256, 64, 64, 32, 4, False, False),      # ... and deeper than wide
]


SWITCHES = {"strided K": {"kmajor_b": False, "row_ring": False},
            "no ring": {"row_ring": False},
            "ring in order": {"ring_rotate_first": False},
            "no cap": {"ring_occupancy": False},
            "last dot waited": {"wgmma_inflight": False},
            "mma.sync ring": {"ring_wgmma": False},
            "mma.sync ring in order": {"ring_wgmma": False, "ring_rotate_first": False},
            "no index tiles": {"index_tiles": False},
            "no index tiles mma.sync": {"index_tiles": False, "ring_wgmma": False}}


@pytest.fixture(params=["default", *SWITCHES])
def switches(request, backend):
    """cuda/mma_rows' and cuda/rows_ring's switches (``CudaTuning`` fields): as shipped (K-major B,
    index tiles in the region -- causal masks at the mma coordinates, so the causal case's loop
    takes the ring too -- and the cp.async ring of B tiles with the first dot an iteration
    ahead, on wgmma where it fits: sm_90a, one 16-row tile per warp, there under the register
    cap with the first dot in order and the last dot's wgmma group in flight over the loop
    edge), with that group waited for in its iteration, with the ring's dots in order, without the cap (the
    first dot ahead on wgmma), the ring's dots on mma.sync (ahead or in order), without index
    tiles (the causal mask outside the region: its loop on the register path), and on the
    register path (ring off), with K-major B off too (K's transposed tile in strided loads)
    (tests/cuda_switches.py: run on cuda, and on cpu with the PTX check)."""
    yield from switched(request.param, SWITCHES, backend)


@pytest.mark.parametrize("H,N,D,BM,BN,W,causal,bf16", CASES)
def test_attention_rows(backend, rng, switches, H, N, D, BM, BN, W, causal, bf16):
    if backend == "interpreter" and N > 128 and W == 4:
        pytest.skip("covered by the other shapes on the interpreter")
    q, k, v = ((rng.standard_normal((H, N, D)) / 2).astype(np.float16) for _ in range(3))
    out = np.full((H, N, D), np.nan, np.float16)
    lse = np.full((H, N), np.nan, np.float32)
    scale = 0.3
    attn_rows[(N // BM, H)](q, k, v, scale, out, lse, N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN,
                            CAUSAL=causal, BF16=bf16, num_warps=W, num_stages=3)
    ref, ref_lse = _ref(*(_bf16(x) if bf16 else x for x in (q, k, v)), scale, causal)
    tol = 3e-2 if bf16 else 1e-2
    np.testing.assert_allclose(out.astype(np.float64), ref, atol=tol, rtol=tol)
    np.testing.assert_allclose(lse.astype(np.float64), ref_lse, atol=1e-2, rtol=1e-3)


@tilejit.jit
def row_stats(A, B, Out, R, K_TOTAL, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """Each iteration: s = A_blk @ B_j; carried row max, min and sum of s * 0.5, and
    an accumulator scaled by a row vector; everything read after the loop."""
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, BN)
    a = tl.load(A + offs_m[:, None] * D + offs_d[None, :])
    mx = tl.zeros([BM], dtype=tl.float32) - float("inf")
    mn = tl.zeros([BM], dtype=tl.float32) + float("inf")
    sm = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for j in range(0, K_TOTAL, BN):
        b = tl.load(B + offs_d[:, None] * K_TOTAL + (j + offs_n)[None, :])
        s = tl.dot(a, b) * 0.5
        mx = tl.maximum(mx, tl.max(s, 1))
        mn = tl.minimum(mn, tl.min(s, 1))
        sm = sm + tl.sum(s, 1)
        w = tl.where(s > 0, s, 0.0).to(tl.float16)
        acc = acc * (1.0 / (1.0 + tl.abs(tl.min(s, 1))))[:, None]
        acc = tl.dot(w, tl.trans(b), acc)
    tl.store(R + offs_m * 3, mx)
    tl.store(R + offs_m * 3 + 1, mn)
    tl.store(R + offs_m * 3 + 2, sm)
    tl.store(Out + offs_m[:, None] * D + offs_d[None, :], acc)


def test_row_stats_every_reduction(backend, rng):
    BM, BN, D, KT, W = 64, 32, 32, 128, 4
    a = (rng.standard_normal((2 * BM, D)) / 2).astype(np.float16)
    b = (rng.standard_normal((D, KT)) / 2).astype(np.float16)
    out = np.full((2 * BM, D), np.nan, np.float32)
    r = np.full((2 * BM, 3), np.nan, np.float32)
    row_stats[(2,)](a, b, out, r, KT, BM=BM, BN=BN, D=D, num_warps=W, num_stages=3)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((2 * BM, D))
    mx, mn, sm = np.full(2 * BM, -np.inf), np.full(2 * BM, np.inf), np.zeros(2 * BM)
    for j in range(0, KT, BN):
        bj = b64[:, j:j + BN]
        s = a64 @ bj * 0.5
        mx, mn, sm = np.maximum(mx, s.max(1)), np.minimum(mn, s.min(1)), sm + s.sum(1)
        w = np.where(s > 0, s, 0.0).astype(np.float16).astype(np.float64)
        acc = acc * (1.0 / (1.0 + np.abs(s.min(1))))[:, None] + w @ bj.T
    np.testing.assert_allclose(r[:, 0], mx, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(r[:, 1], mn, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(r[:, 2], sm, rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(out, acc, rtol=1e-2, atol=2e-2)


@tilejit.jit
def mixed_rows(A, B1, B2, Bias, Out, R, K_TOTAL, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """A region loop (row max, p -> second dot) with one consumer outside the region
    between its dots (``s + bias`` with a blocked loop-invariant tile: a conversion through
    shared memory after both B tiles were staged, so the second is staged again)."""
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, BN)
    a = tl.load(A + offs_m[:, None] * D + offs_d[None, :])
    bias = tl.load(Bias + offs_m[:, None] * BN + offs_n[None, :])
    mx = tl.zeros([BM], dtype=tl.float32) - float("inf")
    tot = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for j in range(0, K_TOTAL, BN):
        b1 = tl.load(B1 + offs_d[:, None] * K_TOTAL + (j + offs_n)[None, :])
        s = tl.dot(a, b1)
        tot += tl.sum(s + bias, 1)
        mx = tl.maximum(mx, tl.max(s, 1))
        b2 = tl.load(B2 + (j + offs_n)[:, None] * D + offs_d[None, :])
        acc = tl.dot(tl.where(s > 0, s, 0.0).to(tl.float16), b2, acc)
    tl.store(R + offs_m * 2, mx)
    tl.store(R + offs_m * 2 + 1, tot)
    tl.store(Out + offs_m[:, None] * D + offs_d[None, :], acc)


@pytest.mark.parametrize("BN,D", [(32, 32), (64, 64)])
def test_region_with_a_conversion_between_its_dots(backend, rng, switches, BN, D):
    """(64, 64): both B tiles fit the ring (rows_ring), which then lives above the
    body's scratch conversion."""
    BM, KT, W = 64, 128, 4
    a = (rng.standard_normal((2 * BM, D)) / 2).astype(np.float16)
    b1 = (rng.standard_normal((D, KT)) / 2).astype(np.float16)
    b2 = (rng.standard_normal((KT, D)) / 2).astype(np.float16)
    bias = rng.standard_normal((2 * BM, BN)).astype(np.float32)
    out = np.full((2 * BM, D), np.nan, np.float32)
    r = np.full((2 * BM, 2), np.nan, np.float32)
    mixed_rows[(2,)](a, b1, b2, bias, out, r, KT, BM=BM, BN=BN, D=D, num_warps=W, num_stages=3)
    a64, b164, b264 = a.astype(np.float64), b1.astype(np.float64), b2.astype(np.float64)
    s = a64 @ b164
    w = np.where(s > 0, s, 0.0).astype(np.float16).astype(np.float64)
    tot = sum((s[:, j:j + BN] + bias).sum(1) for j in range(0, KT, BN))
    np.testing.assert_allclose(r[:, 0], s.max(1), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(r[:, 1], tot, rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(out, w @ b264, rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize("stages", [3, 2])
def test_block_pointer_attention(backend, rng, switches, stages):
    """Tutorial 06's loop with block pointers (tests/e2e/test_ring_computed_pointers.py),
    N_CTX 384 (6 iterations: the ring's 3 stages wrap twice), against float64 attention."""
    from tests.e2e.test_ring_computed_pointers import attn_fwd
    H, N, D, BM, BN = 2, 384, 64, 128, 64
    q, k, v = ((rng.standard_normal((H, N, D)) / 2).astype(np.float16) for _ in range(3))
    out = np.full((H, N, D), np.nan, np.float16)
    scale = 0.125
    attn_fwd[(N // BM, H)](q, k, v, scale, out, D, D, D, D, N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN,
                           num_warps=8, num_stages=stages)
    ref, _ = _ref(q, k, v, scale, False)
    np.testing.assert_allclose(out.astype(np.float64), ref, atol=1e-2, rtol=1e-2)
