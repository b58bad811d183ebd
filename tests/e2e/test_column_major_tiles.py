"""2-D tiles contiguous along dim 0 only (column-major operands, transposed stores) on
every backend, against numpy: masks varying along either dimension, ``other`` where masked
off.  (On CUDA a tile loaded along dim 0 takes the dim-0-first layout, in vectors along dim 0
where aligned, and a store of it along dim 1 is restaged row-major through shared memory:
backends/cuda/dim_order.py.)"""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def copy2d(X, sxm, sxn, Y, sym, syn, M, N, BM: tl.constexpr, BN: tl.constexpr, MASKED: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    xp = X + m[:, None] * sxm + n[None, :] * sxn
    yp = Y + m[:, None] * sym + n[None, :] * syn
    if MASKED:
        mask = (m[:, None] < M) & (n[None, :] < N)
        x = tl.load(xp, mask=mask, other=-7)
        tl.store(yp, x * 2 + 1, mask=(m[:, None] != 3) & (n[None, :] < BN))
    else:
        x = tl.load(xp)
        tl.store(yp, x * 2 + 1)


def _strided(a, col):
    return np.asfortranarray(a) if col else np.ascontiguousarray(a)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
@pytest.mark.parametrize("col_x,col_y", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("BM,BN", [(64, 32), (16, 128)])
def test_column_major_copy(backend, dtype, col_x, col_y, BM, BN):
    rng = np.random.default_rng(BM * 3 + BN + col_x + 2 * col_y)
    x = _strided(rng.integers(-20, 20, (BM, BN)).astype(dtype), col_x)
    y = _strided(np.zeros((BM, BN), dtype), col_y)
    sz = x.itemsize
    copy2d[(1,)](x, x.strides[0] // sz, x.strides[1] // sz, y, y.strides[0] // sz, y.strides[1] // sz,
                 BM, BN, BM=BM, BN=BN, MASKED=False)
    np.testing.assert_array_equal(y, (x * 2 + 1).astype(dtype))


@pytest.mark.parametrize("M,N", [(60, 32), (64, 17), (33, 5)])
def test_column_major_copy_masked(backend, M, N):
    """Masks varying along dim 0 (rows past M) and dim 1; ``other`` where masked off."""
    BM, BN = 64, 32
    rng = np.random.default_rng(M * N)
    x = np.asfortranarray(rng.integers(-20, 20, (BM, BN)).astype(np.float32))
    y = np.asfortranarray(np.full((BM, BN), 5, np.float32))
    copy2d[(1,)](x, 1, BM, y, 1, BM, M, N, BM=BM, BN=BN, MASKED=True)
    want = np.full((BM, BN), -7 * 2 + 1, np.float32)       # ``other`` where the load is masked
    want[:M, :N] = x[:M, :N] * 2 + 1
    want[3, :] = 5
    np.testing.assert_array_equal(y, want)
