"""Full reductions of one block done together (CUDA, as shipped: ``CudaTuning.fuse_siblings``
-- per-thread and in-warp steps of each, one exchange across warps for all), on every
backend against numpy: sum, max, min and xor_sum of fp32, fp16 and int32 rows beside
one reduction that needs another's result (not fused).  On CUDA the results must be
bit-identical with the reductions done one by one."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import cuda_tuning


@tilejit.jit
def many_sums(X, H, I, Out, N, BLOCK: tl.constexpr, TAG: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + row * N + cols, mask=m, other=0.0)
    h = tl.load(H + row * N + cols, mask=m, other=0.0)
    k = tl.load(I + row * N + cols, mask=m, other=0)
    xm = tl.where(m, x, -float("inf"))
    km = tl.where(m, k, 2 ** 30)
    s = tl.sum(x, axis=0)
    mx = tl.max(xm, axis=0)
    mn = tl.min(km, axis=0)
    xs = tl.xor_sum(k, axis=0)
    hs = tl.sum(h, axis=0)
    mean = s / N
    var = tl.sum(tl.where(m, (x - mean) * (x - mean), 0.0), axis=0)    # needs s: not fused
    tl.store(Out + row * 6 + 0, s)
    tl.store(Out + row * 6 + 1, mx)
    tl.store(Out + row * 6 + 2, mn.to(tl.float32))
    tl.store(Out + row * 6 + 3, xs.to(tl.float32))
    tl.store(Out + row * 6 + 4, hs.to(tl.float32))
    tl.store(Out + row * 6 + 5, var)


@pytest.mark.parametrize("M,N,block,warps", [(3, 1000, 1024, 8), (2, 200, 256, 4), (4, 64, 64, 1)])
def test_sibling_reductions(backend, rng, M, N, block, warps):
    x = rng.standard_normal((M, N)).astype(np.float32)
    h = rng.uniform(-1, 1, (M, N)).astype(np.float16)
    k = rng.integers(-1000, 1000, (M, N)).astype(np.int32)

    def run(tag):
        out = np.full((M, 6), -7.0, np.float32)
        many_sums[(M,)](x, h, k, out, N, BLOCK=block, TAG=tag, num_warps=warps)
        return out
    with cuda_tuning(fuse_siblings=True):
        out = run(0)
    xf = x.astype(np.float64)
    ref = np.stack([xf.sum(1), xf.max(1), k.min(1), np.bitwise_xor.reduce(k, axis=1),
                    h.astype(np.float64).sum(1), ((xf - xf.mean(1, keepdims=True)) ** 2).sum(1)], 1)
    np.testing.assert_allclose(out[:, [0, 1, 2, 3, 5]], ref[:, [0, 1, 2, 3, 5]], rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(out[:, 4], ref[:, 4], rtol=1e-2, atol=0.25)     # an fp16 sum
    if backend == "cuda":
        with cuda_tuning(fuse_siblings=False):
            off = run(1)
        np.testing.assert_array_equal(out.view(np.uint32), off.view(np.uint32))
