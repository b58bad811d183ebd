"""Reductions over the last axis of 2-D blocks as TorchInductor writes them
(``[XBLOCK, R0_BLOCK]`` tiles reduced over axis 1): ``XBLOCK = 1`` (one row: a reduction of
the whole block) and rows spanning whole warps (``R0_BLOCK`` of 128 and more per row), on
every backend against numpy -- sum, max, min, xor_sum, argmax and argmin of fp32, fp16 and
int32, with ragged (masked) rows, several warps, and rows of a length that is not a power
of two (a tilejit extension).  On CUDA the results are bit-identical with the sibling
reductions of a one-row block fused (``CudaTuning.fuse_siblings``) or done one by one."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import cuda_tuning


@tilejit.jit
def row_block_reduce(X, K, Out, Idx, M, N, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < M
    r = tl.arange(0, R0_BLOCK)[None, :]
    m = xmask & (r < N)
    x = tl.load(X + xindex * N + r, mask=m, other=0.0).to(tl.float32)
    k = tl.load(K + xindex * N + r, mask=m, other=0)
    s = tl.sum(x, 1)[:, None]
    mx = tl.max(tl.where(m, x, float("-inf")), 1)[:, None]
    mn = tl.min(tl.where(m, k, 2 ** 30), 1)[:, None]
    xs = tl.xor_sum(k, 1)[:, None]
    am = tl.argmax(tl.where(m, x, float("-inf")), 1)[:, None]
    an = tl.argmin(tl.where(m, k, 2 ** 30), 1)[:, None]
    # the row's results used against the whole row again (a softmax-like second pass)
    e = tl.sum(tl.where(m, tl.exp(x - mx), 0.0), 1)[:, None]
    o = Out + xindex * 5
    tl.store(o + 0, s, xmask)
    tl.store(o + 1, mx, xmask)
    tl.store(o + 2, mn.to(tl.float32), xmask)
    tl.store(o + 3, xs.to(tl.float32), xmask)
    tl.store(o + 4, e, xmask)
    tl.store(Idx + xindex * 2 + 0, am, xmask)
    tl.store(Idx + xindex * 2 + 1, an, xmask)


@pytest.mark.parametrize("M,N,xblock,rblock,warps,dtype", [
    (3, 2000, 1, 2048, 16, np.float32),     # one row per program (Inductor's INNER configs)
    (2, 4096, 1, 4096, 8, np.float16),      # one row, several repetitions per thread
    (5, 1000, 2, 1024, 8, np.float32),      # two rows of 256 lanes each
    (6, 500, 4, 512, 4, np.float32),        # a row of 128 lanes: one warp piece per row
    (7, 300, 2, 512, 2, np.float32),        # a row over two repetitions of the block
    (3, 100, 1, 128, 1, np.float16),        # one warp
    (5, 1500, 2, 1536, 8, np.float32),      # rows of 384 lanes (not a power of two: a tilejit
    (3, 1400, 1, 1536, 4, np.float32),      # extension) over 256 threads; one such row
])
def test_row_block_reductions(backend, rng, M, N, xblock, rblock, warps, dtype):
    x = rng.standard_normal((M, N)).astype(dtype)
    x[0, N // 3] = x[0, N // 2] = 9.0          # a tie: argmax takes the first
    k = rng.integers(-1000, 1000, (M, N)).astype(np.int32)
    def run():
        out = np.full((M, 5), -7.0, np.float32)
        idx = np.full((M, 2), -7, np.int32)
        grid = (-(-M // xblock),)
        row_block_reduce[grid](x, k, out, idx, M, N, XBLOCK=xblock, R0_BLOCK=rblock, num_warps=warps)
        return out, idx
    out, idx = run()
    xf = x.astype(np.float64)
    ref = np.stack([xf.sum(1), xf.max(1), k.min(1), np.bitwise_xor.reduce(k, axis=1),
                    np.exp(xf - xf.max(1, keepdims=True)).sum(1)], 1)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(idx, np.stack([xf.argmax(1), k.argmin(1)], 1))
    if backend == "cuda":      # sibling reductions fused (one exchange across warps): bit-identical
        with cuda_tuning(fuse_siblings=False):
            off, off_idx = run()
        np.testing.assert_array_equal(out.view(np.uint32), off.view(np.uint32))
        np.testing.assert_array_equal(idx, off_idx)
