"""Tutorial 03's matmul as published (tests/triton_scripts/matmul_tutorial03.py: `% M` /
`% N` offsets, no hints) and a bias + GELU kernel loading `bias_ptr + offs % C`, against
numpy on every backend.  On cuda they take the range-versioned cp.async ring and the
grid-bounded vector bias loads (tests/unit/test_range_version.py checks the PTX)."""
import math

import numpy as np
import pytest

import tilejit
import tilejit.language as tl

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


@tilejit.jit
def _shifted_cols(A, B, C, M, N, K, shift, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C[:, j] = A @ B[:, N + fmod(j - shift * BN, N)] (B has 2N columns): programs with
    ``pid_n < shift`` have a negative range root and take the fallback loop."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    cols = ((pid_n - shift) * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(A + rm[:, None] * K + (k * BK + rk)[None, :], mask=(k * BK + rk)[None, :] < K, other=0.0)
        b = tl.load(B + (k * BK + rk)[:, None] * (2 * N) + (N + cols)[None, :],
                    mask=(k * BK + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(C + rm[:, None] * N + cn[None, :], acc, mask=(rm[:, None] < M) & (cn[None, :] < N))


@pytest.mark.parametrize("shift", [0, 2, 5])
def test_range_root_fallback_results(backend, shift):
    """Programs whose ``(pid_n - shift) * BN`` is negative read columns through a negative
    truncated remainder: the fallback loop's results, against numpy."""
    M, N, K, BN = 32, 128, 48, 32
    rng = np.random.default_rng(shift)
    A = rng.integers(-3, 4, (M, K)).astype(np.float32)
    B = rng.integers(-3, 4, (K, 2 * N)).astype(np.float32)
    a, b, c = _to(backend, A, B, np.full((M, N), np.nan, np.float32))
    _shifted_cols[(M // 16, N // BN)](a, b, c, M, N, K, shift, BM=16, BN=BN, BK=16)
    j = np.arange(N)
    src = N + np.fmod(j - shift * BN, N)     # truncated remainder, as tl's %
    want = A.astype(np.float64) @ B[:, src].astype(np.float64)
    np.testing.assert_array_equal(_back(backend, c), want.astype(np.float32))
