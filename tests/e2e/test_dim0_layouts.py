"""Tiles whose accesses move along dim 0, as TorchInductor writes reductions over a
non-last axis (``x.amax(1)`` of a ``[B, N, C]`` tensor: ``x0 = xindex % C``, ``x1 = xindex
// C``, ``tl.load(in_ptr0 + (x0 + C*r0 + C*N*x1))``, an ``[XBLOCK, R0_BLOCK]`` accumulator
reduced over axis 1 after the loop).  The cuda backend lays such tiles out with
neighbouring threads along dim 0 (backends/cuda/dim_order.py); every rule that meets
them -- broadcasts into them, masked loads, reductions over either axis and the whole
block, argmax, reshapes, stores along dim 1 -- is checked here against numpy, under every
backend, with and without ``CudaTuning.dim0_layouts``."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import switched
from tests.e2e.test_inductor_reduce_helpers import _add, _nan_max  # Inductor's combine helpers

SWITCHES = {"no_dim0": {"dim0_layouts": False}}


@pytest.fixture(params=["default", *SWITCHES])
def switches(request, backend):
    yield from switched(request.param, SWITCHES, backend)


@tilejit.jit
def amax_mid(in_ptr, max_ptr, sum_ptr, xnumel: tl.constexpr, C: tl.constexpr, N: tl.constexpr,
             XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    """max and sum over the middle axis of a [B, N, C] tensor, Inductor's addressing."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    x0 = xindex % C
    x1 = xindex // C
    mx = tl.full([XBLOCK, R0_BLOCK], float("-inf"), tl.float32)
    sm = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, N, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < N
        t = tl.load(in_ptr + (x0 + C * r0_index + (C * N) * x1), r0_mask & xmask, other=0.0)
        mx = tl.where(r0_mask & xmask, tl.maximum(mx, t), mx)
        sm = tl.where(r0_mask & xmask, sm + t, sm)
    tl.store(max_ptr + xindex, tl.max(mx, 1)[:, None], xmask)
    tl.store(sum_ptr + xindex, tl.sum(sm, 1)[:, None], xmask)


@pytest.mark.parametrize("B,N,C,xblock,rblock", [(3, 40, 33, 64, 8), (2, 17, 65, 16, 4), (2, 33, 65, 16, 16),
                                                 (4, 64, 7, 32, 16)])
def test_reduce_middle_axis(backend, switches, rng, B, N, C, xblock, rblock):
    x = rng.standard_normal((B, N, C)).astype(np.float32)
    mx = np.zeros(B * C, np.float32)
    sm = np.zeros(B * C, np.float32)
    amax_mid[(tilejit.cdiv(B * C, xblock),)](x, mx, sm, B * C, C, N, XBLOCK=xblock, R0_BLOCK=rblock)
    np.testing.assert_array_equal(mx, x.max(1).reshape(-1))
    np.testing.assert_allclose(sm, x.astype(np.float64).sum(1).reshape(-1), rtol=1e-5, atol=1e-4)


@tilejit.jit
def col_tile_ops(X, bias_ptr, out_ptr, col_ptr, all_ptr, arg_ptr, rows_ptr, M, N,
                 BM: tl.constexpr, BN: tl.constexpr):
    """One [BM, BN] tile of a column-major X (x[m, n] at X + m + n*M): every rule meets it."""
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    n = tl.arange(0, BN)
    mask = (m[:, None] < M) & (n[None, :] < N)
    x = tl.load(X + m[:, None] + n[None, :] * M, mask, other=0.0)
    b = tl.load(bias_ptr + m, m < M, other=0.0)
    y = x * 2.0 + b[:, None]                                    # a broadcast into the tile
    ld = tl.num_programs(0) * BM
    tl.store(out_ptr + m[:, None] + n[None, :] * ld, y, mask)   # stored column-major too
    tl.store(col_ptr + tl.program_id(0) * BN + n, tl.sum(y, 0), n < N)     # over axis 0
    tl.store(all_ptr + tl.program_id(0), tl.sum(tl.reshape(y, [BM * BN]), 0))  # the whole block
    tl.store(arg_ptr + m, tl.argmax(tl.where(mask, y, float("-inf")), 1), m < M)
    r = tl.reshape(y, [BM, BN // 2, 2])                         # a reshape: pairs of columns
    tl.store(rows_ptr + m[:, None] * (BN // 2) + tl.arange(0, BN // 2)[None, :], tl.sum(r, 2),
             (m[:, None] < M) & (tl.arange(0, BN // 2)[None, :] < N // 2))


@pytest.mark.parametrize("M,N,BM,BN", [(100, 16, 64, 16), (64, 8, 32, 8), (37, 6, 32, 8)])
def test_column_major_tile_rules(backend, switches, rng, M, N, BM, BN):
    x = rng.standard_normal((N, M)).astype(np.float32)          # x[n, m]: X is column-major in (m, n)
    bias = rng.standard_normal(M).astype(np.float32)
    G = tilejit.cdiv(M, BM)
    out = np.zeros((BN, G * BM), np.float32)                   # out[n, m]
    col = np.zeros((G, BN), np.float32)
    tot = np.zeros(G, np.float32)
    arg = np.zeros(M, np.int32)
    rows = np.zeros((G * BM, BN // 2), np.float32)
    col_tile_ops[(G,)](x, bias, out, col, tot, arg, rows, M, N, BM=BM, BN=BN)
    y = np.zeros((G * BM, BN), np.float64)                     # masked-off x is 0: y is the bias there
    y[:M] = bias[:, None]
    y[:M, :N] += x.T.astype(np.float64) * 2
    np.testing.assert_allclose(out.T[:M, :N], y[:M, :N], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(col[:, :N], y.reshape(G, BM, BN).sum(1)[:, :N], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(tot, y.reshape(G, -1).sum(1), rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(arg, np.argmax(np.where(np.arange(BN) < N, y[:M], -np.inf), 1))
    want = y[:, :BN // 2 * 2].reshape(G * BM, BN // 2, 2).sum(2)
    np.testing.assert_allclose(rows[:M, :N // 2], want[:M, :N // 2], rtol=1e-5, atol=1e-5)


@tilejit.jit
def clone_t(in_ptr0, out_ptr0, ynumel, xnumel, YS: tl.constexpr, XS: tl.constexpr,
            YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    """``(x.t().contiguous() * 2)`` of a [XS, YS] tensor as Inductor writes it (a 2-D
    pointwise tiling): loaded along dim 0, stored along dim 1 (restaged on CUDA)."""
    yindex = tl.program_id(1) * YBLOCK + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + (yindex + YS * xindex), xmask & ymask)
    tl.store(out_ptr0 + (xindex + XS * yindex), tmp0 * 2.0, xmask & ymask)


@pytest.mark.parametrize("XS,YS,block", [(64, 32, 32), (100, 36, 32), (48, 72, 16)])
def test_inductor_transpose(backend, switches, rng, XS, YS, block):
    x = rng.standard_normal((XS, YS)).astype(np.float32)
    y = np.full((YS, XS), 7.0, np.float32)
    grid = (tilejit.cdiv(XS, block), tilejit.cdiv(YS, block))
    clone_t[grid](x, y, YS, XS, YS=YS, XS=XS, YBLOCK=block, XBLOCK=block)
    np.testing.assert_array_equal(y, x.T * 2)


@tilejit.jit
def nan_amax_cumsum_mid(in_ptr, max_ptr, cum_ptr, xnumel: tl.constexpr, C: tl.constexpr, N: tl.constexpr,
                        XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    """Inductor's amax (``max2``: NaN-propagating) over the middle axis of [B, N, C], and a
    cumsum along the loaded tile's axis 1 (N <= R0_BLOCK: one block)."""
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0 = tl.arange(0, R0_BLOCK)[None, :]
    rmask = r0 < N
    x0 = xindex % C
    x1 = xindex // C
    t = tl.load(in_ptr + (x0 + C * r0 + (C * N) * x1), rmask & xmask, other=float("-inf"))
    m = tl.reduce(t, 1, _nan_max)[:, None]
    tl.store(max_ptr + xindex, m, xmask)
    (c,) = tl.associative_scan((tl.where(rmask, t, 0.0),), 1, _add)
    tl.store(cum_ptr + (r0 + N * xindex), c, rmask & xmask)


@pytest.mark.parametrize("B,N,C,xblock", [(2, 16, 65, 64), (3, 13, 40, 32)])
def test_nan_max_and_cumsum_middle_axis(backend, switches, rng, B, N, C, xblock):
    x = rng.standard_normal((B, N, C)).astype(np.float32)
    x[0, 3, 5] = np.nan                                      # one NaN: that output is NaN
    x[1, :, 7] = np.nan                                      # a whole column of NaNs
    mx = np.zeros(B * C, np.float32)
    cum = np.zeros((B * C, N), np.float32)
    rb = 1 << (N - 1).bit_length()
    nan_amax_cumsum_mid[(tilejit.cdiv(B * C, xblock),)](x, mx, cum, B * C, C, N, XBLOCK=xblock, R0_BLOCK=rb)
    want = np.where(np.isnan(x).any(1), np.nan, np.nanmax(np.where(np.isnan(x), -np.inf, x), 1)).reshape(-1)
    np.testing.assert_array_equal(mx, want.astype(np.float32))
    wc = np.cumsum(x.astype(np.float64).transpose(0, 2, 1), axis=2).reshape(B * C, N)
    np.testing.assert_allclose(cum, wc, rtol=1e-5, atol=1e-5, equal_nan=True)
