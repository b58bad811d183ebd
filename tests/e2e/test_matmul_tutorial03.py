"""Tutorial 03's matmul as published (tests/triton_scripts/matmul_tutorial03.py: `% M` /
`% N` offsets, no hints) and a bias + GELU kernel loading `bias_ptr + offs % C`, against
numpy on every backend.  On cuda they take the range-versioned cp.async ring and the
grid-bounded vector bias loads (tests/unit/test_range_version.py checks the PTX)."""
import math

import numpy as np
import pytest

from tests.shared_kernels import bias_gelu, script_kernels


def _to(backend, *arrays):
    if backend != "cuda":
        return arrays
    torch = pytest.importorskip("torch")
    return tuple(torch.from_numpy(x).cuda() for x in arrays)


def _back(backend, x):
    return x.cpu().numpy() if backend == "cuda" else x


@pytest.mark.parametrize("M,N,K,act", [(256, 384, 192, ""), (200, 136, 80, "leaky_relu")])
def test_tutorial03_as_published(backend, M, N, K, act):
    kernel = script_kernels("matmul_tutorial03.py")["matmul_kernel"]
    big = backend == "cuda"
    if not big:
        M, N, K = M // 4, N // 4, K // 2 + 8
    cfg = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8) if big else \
        dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=2)
    rng = np.random.default_rng(M + N + K)
    A = rng.integers(-3, 4, (M, K)).astype(np.float16)
    B = rng.integers(-3, 4, (K, N)).astype(np.float16)
    want = A.astype(np.float64) @ B.astype(np.float64)
    if act:
        want = np.where(want >= 0, want, 0.01 * want)
    a, b, c = _to(backend, A, B, np.full((M, N), np.nan, np.float16))
    grid = (-(-M // cfg["BLOCK_SIZE_M"]) * -(-N // cfg["BLOCK_SIZE_N"]),)
    kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, **cfg, ACTIVATION=act,
                 num_warps=8 if big else 4, num_stages=3)
    np.testing.assert_allclose(_back(backend, c).astype(np.float64), want.astype(np.float16).astype(np.float64),
                               rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("n,C", [(4096 + 512, 48), (3000, 1000)])
def test_bias_gelu(backend, n, C):
    rng = np.random.default_rng(n)
    X = (rng.standard_normal(n) / 2).astype(np.float16)
    bias = (rng.standard_normal(C) / 2).astype(np.float16)
    x, b, out = _to(backend, X, bias, np.zeros(n, np.float16))
    bias_gelu[(-(-n // 1024),)](x, b, out, n, C, BLOCK=1024)
    y = X.astype(np.float64) + bias[np.arange(n) % C].astype(np.float64)
    want = 0.5 * y * (1 + np.vectorize(math.erf)(y / math.sqrt(2)))
    np.testing.assert_allclose(_back(backend, out).astype(np.float64), want, rtol=2e-3, atol=2e-3)
