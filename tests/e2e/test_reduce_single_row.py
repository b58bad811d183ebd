"""Reductions of a tile whose other axes all have size 1 -- Inductor's persistent
reductions with XBLOCK=1 reduce a [1, R] tile over R -- on every backend against numpy
(CUDA: the full-reduction path, registers and shuffles; PTX in
tests/unit/test_cuda_ptx_reduce_row.py)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def row_stats(X, Out, Idx, n, R: tl.constexpr, ROW: tl.constexpr):
    if ROW:
        offs = tl.arange(0, R)[None, :]          # [1, R], reduced over axis 1
        axis: tl.constexpr = 1
    else:
        offs = tl.arange(0, R)[:, None]          # [R, 1], reduced over axis 0
        axis: tl.constexpr = 0
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    m = tl.max(tl.where(offs < n, x, float("-inf")), axis)
    s = tl.sum(tl.exp(x - m[:, None] if ROW else x - m[None, :]) * (offs < n), axis)
    i = tl.argmax(tl.where(offs < n, x, float("-inf")), axis)
    tl.store(Out + tl.arange(0, 1), m)
    tl.store(Out + 1 + tl.arange(0, 1), s)
    tl.store(Idx + tl.arange(0, 1), i)


@pytest.mark.parametrize("row", [True, False])
@pytest.mark.parametrize("n,R", [(4096, 4096), (1000, 1024), (37, 64)])
def test_single_row_reductions(backend, rng, row, n, R):
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(2, np.float32)
    idx = np.full(1, -1, np.int32)
    row_stats[(1,)](x, out, idx, n, R=R, ROW=row, num_warps=8)
    x64 = x.astype(np.float64)
    assert out[0] == x.max() and idx[0] == int(np.argmax(x))
    np.testing.assert_allclose(out[1], np.exp(x64 - x64.max()).sum(), rtol=1e-5)
