"""Reductions and scans with a user combine function over 2-D tiles, as TorchInductor's
``triton_helpers.max2`` (a NaN-propagating maximum) and its cumsum helper write them,
on rows holding -inf (a causal softmax mask), and the step under them: ``tl.split`` of a
tile reshaped to ``[XBLOCK, R // 2, 2]``.  On an H200 the cuda backend got these wrong
for (XBLOCK 8, 1 warp) and (32, 2 warps) -- the reshape reused registers although the
blocked layout's chunk width follows the last dimension -- which made torch.compile's
argmax, amax, cumsum and masked softmax wrong on CUDA."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def _nan_max(a, b):
    mask = a > b
    mask |= a != a
    return tl.where(mask, a, b)


@tilejit.jit
def _add(a, b):
    return a + b


@tilejit.jit
def masked_softmax_rows(p, out, n, XBLOCK: tl.constexpr, R: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xm = xi < n
    r = tl.arange(0, R)[None, :]
    x = tl.load(p + (r + R * xi), xm, other=0.0)
    x = tl.where(r > xi % R, float("-inf"), x)
    m = tl.reduce(tl.where(xm, x, float("-inf")), 1, _nan_max)[:, None]
    e = tl.exp(x - m)
    s = tl.sum(tl.where(xm, e, 0), 1)[:, None]
    tl.store(out + (r + R * xi), e / s, xm)


@tilejit.jit
def split_pairs(p, lo, hi, XBLOCK: tl.constexpr, R: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    x = tl.load(p + (tl.arange(0, R)[None, :] + R * xi))
    a, b = tl.split(tl.reshape(x, [XBLOCK, R // 2, 2]))
    h = tl.arange(0, R // 2)[None, :]
    tl.store(lo + (h + (R // 2) * xi), a)
    tl.store(hi + (h + (R // 2) * xi), b)


@tilejit.jit
def row_cumsum(p, out, n, XBLOCK: tl.constexpr, R: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xm = xi < n
    r = tl.arange(0, R)[None, :]
    x = tl.load(p + (r + R * xi), xm, other=0.0)
    (c,) = tl.associative_scan((x,), 1, _add)
    tl.store(out + (r + R * xi), c, xm)


@pytest.mark.parametrize("xblock,warps", [(1, 1), (8, 1), (8, 4), (32, 2)])
def test_custom_combine_reduce_with_neg_inf(backend, rng, xblock, warps):
    n, R = 64, 16
    x = rng.standard_normal((n, R)).astype(np.float32)
    out = np.zeros_like(x)
    masked_softmax_rows[(n // xblock,)](x, out, n, XBLOCK=xblock, R=R, num_warps=warps)
    rows = np.arange(n)[:, None] % R
    xm = np.where(np.arange(R)[None, :] > rows, -np.inf, x.astype(np.float64))
    e = np.exp(xm - xm.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("xblock,warps", [(1, 2), (32, 2)])
def test_custom_combine_scan_rows(backend, rng, xblock, warps):
    n, R = 64, 8
    x = rng.standard_normal((n, R)).astype(np.float32)
    out = np.zeros_like(x)
    row_cumsum[(n // xblock,)](x, out, n, XBLOCK=xblock, R=R, num_warps=warps)
    np.testing.assert_allclose(out, np.cumsum(x.astype(np.float64), 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("xblock,warps", [(8, 1), (32, 2), (8, 4)])
def test_split_of_reshaped_rows(backend, rng, xblock, warps):
    x = rng.standard_normal((64, 16)).astype(np.float32)
    lo, hi = np.zeros((64, 8), np.float32), np.zeros((64, 8), np.float32)
    split_pairs[(64 // xblock,)](x, lo, hi, XBLOCK=xblock, R=16, num_warps=warps)
    np.testing.assert_array_equal(lo, x[:, 0::2])
    np.testing.assert_array_equal(hi, x[:, 1::2])
