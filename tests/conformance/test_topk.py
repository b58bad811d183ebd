"""tl.topk (Triton 3.6's test_sort[...-8-*], 32 H200 failures: it was missing): the k
largest elements along the last dimension, largest first, bit-exact against numpy on
every backend; the cuda backend's PTX for Triton's test shapes assembled with ptxas."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def topk_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_m = tl.arange(0, M)
    x = tl.load(X + offs_m[:, None] * N + tl.arange(0, N)[None, :])
    z = tl.topk(x, K)
    tl.store(Z + offs_m[:, None] * K + tl.arange(0, K)[None, :], z)


@pytest.mark.parametrize("m,n,k,dtype", [(1, 128, 8, np.float32), (2, 64, 8, np.int32),
                                         (4, 16, 16, np.float16), (2, 32, 1, np.float32)])
def test_topk_values(backend, m, n, k, dtype):
    rng = np.random.default_rng(m * n + k)
    x = (rng.standard_normal((m, n)) * 100).astype(dtype)
    x[0, :3] = x[0, 3]                                   # ties
    z = np.zeros((m, k), dtype)
    topk_kernel[(1,)](x, z, M=m, N=n, K=k)
    want = -np.sort(-x.astype(np.float64), axis=1)[:, :k]
    np.testing.assert_array_equal(z.astype(np.float64), want)


def test_topk_rejects_bad_k():
    with pytest.raises(tilejit.CompilationError, match="power of two"):
        tilejit.compile(topk_kernel, signature={0: "*fp32", 1: "*fp32"},
                        constexprs=dict(M=2, N=16, K=3), target="cpu")


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("m,n", [(1, 512), (256, 16)])
def test_topk_ptx_assembles(m, n):
    ker = tilejit.compile(topk_kernel, signature={0: "*bf16", 1: "*bf16"},
                          constexprs=dict(M=m, N=n, K=8), target="cuda:90", num_warps=8)
    tgt.ptxas(ker.asm["ptx"], 90)
