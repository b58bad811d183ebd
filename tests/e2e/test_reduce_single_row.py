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


@tilejit.jit
def rows_reduce(X, Out, XB: tl.constexpr, R: tl.constexpr, KIND: tl.constexpr):
    """[XB, R] tiles reduced over R: on CUDA rows of whole warps (R / 4 lanes a multiple
    of 32 dividing the threads) take cuda/rules_reduce.py's warp-rows path."""
    rows = tl.program_id(0) * XB + tl.arange(0, XB)[:, None]
    cols = tl.arange(0, R)[None, :]
    x = tl.load(X + rows * R + cols)
    if KIND == 0:
        r = tl.sum(x, 1)
    elif KIND == 1:
        r = tl.max(x, 1)
    else:
        r = tl.min(x, 1)
    tl.store(Out + tl.program_id(0) * XB + tl.arange(0, XB), r)


@pytest.mark.parametrize("kind", [0, 1, 2])
@pytest.mark.parametrize("xb,r,warps", [(4, 1024, 8), (2, 512, 4), (16, 256, 8), (8, 4096, 16)])
def test_rows_of_whole_warps(backend, rng, kind, xb, r, warps):
    programs = 3
    x = rng.standard_normal((programs * xb, r)).astype(np.float32)
    out = np.full(programs * xb, np.nan, np.float32)
    rows_reduce[(programs,)](x, out, XB=xb, R=r, KIND=kind, num_warps=warps)
    if kind == 0:
        np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(out, x.max(1) if kind == 1 else x.min(1))
