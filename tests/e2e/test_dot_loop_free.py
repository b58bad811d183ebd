"""A ``tl.dot`` outside any loop (Triton's ``test_dot`` kernels) on every backend:
fp16/bf16 operands loaded row- or column-major, an fp32 tile of an operand's shape in
the epilogue, against float64 numpy.  On CUDA the 2-byte operand tiles of such kernels
load in 16-byte chunks (rules_mma.widen_operand_chunks); the PTX side is in
tests/unit/test_cuda_ptx.py."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def dot_epilogue(X, sxm, sxk, Y, syk, syn, W, Z, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 SCALE: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    x = tl.load(X + m[:, None] * sxm + k[None, :] * sxk)
    y = tl.load(Y + k[:, None] * syk + n[None, :] * syn)
    if SCALE:
        x = x * 2.0
    z = tl.dot(x, y)
    z += tl.load(W + m[:, None] * BN + n[None, :])          # an fp32 tile in the epilogue
    tl.store(Z + m[:, None] * BN + n[None, :], z)


def _operand(rng, shape, dtype, col):
    a = rng.uniform(-1, 1, shape).astype(dtype)
    if col:
        a = np.asfortranarray(a)
    return a


@pytest.mark.parametrize("M,N,K,warps,col_a,col_b,scale", [
    (128, 128, 64, 4, False, False, False), (64, 64, 64, 4, False, False, True),
    (32, 128, 64, 2, False, False, False), (64, 64, 32, 2, True, True, False)])
def test_loop_free_dot(backend, M, N, K, warps, col_a, col_b, scale):
    rng = np.random.default_rng(M + N + K)
    x = _operand(rng, (M, K), np.float16, col_a)
    y = _operand(rng, (K, N), np.float16, col_b)
    w = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    z = np.full((M, N), np.nan, np.float32)
    st = [s // 2 for s in x.strides] + [s // 2 for s in y.strides]
    dot_epilogue[(1,)](x, st[0], st[1], y, st[2], st[3], w, z, BM=M, BN=N, BK=K, SCALE=scale,
                       num_warps=warps)
    xs = x.astype(np.float64) * (2.0 if scale else 1.0)
    want = xs @ y.astype(np.float64) + w
    np.testing.assert_allclose(z, want, rtol=1e-3, atol=1e-3 * np.sqrt(K))


@tilejit.jit
def dot_fp16_out(X, Y, Z, B: tl.constexpr):
    r = tl.arange(0, B)
    x = tl.load(X + r[:, None] * B + r[None, :])
    y = tl.load(Y + r[:, None] * B + r[None, :])
    tl.store(Z + r[:, None] * B + r[None, :], tl.dot(x, y, out_dtype=tl.float16))


def test_loop_free_dot_with_fp16_result(backend):
    rng = np.random.default_rng(5)
    x, y = (rng.uniform(-1, 1, (64, 64)).astype(np.float16) for _ in range(2))
    z = np.full((64, 64), np.nan, np.float16)
    dot_fp16_out[(1,)](x, y, z, B=64)
    want = x.astype(np.float64) @ y.astype(np.float64)
    np.testing.assert_allclose(z.astype(np.float64), want, rtol=2e-2, atol=2e-2)


@tilejit.jit
def dot_int8_operands(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(X + m[:, None] * K + k[None, :]).to(tl.float16)     # 1-byte tiles
    y = tl.load(Y + k[:, None] * N + n[None, :]).to(tl.float16)
    tl.store(Z + m[:, None] * N + n[None, :], tl.dot(x, y).to(tl.float16))


@pytest.mark.parametrize("M,N,K", [(128, 128, 64), (32, 64, 128), (64, 64, 64)])
def test_loop_free_dot_of_int8_tiles_with_fp16_result(backend, M, N, K):
    """1-byte operand tiles (16-byte chunks of 16 elements on CUDA) and a 2-byte result
    (chunks of 8), of shapes that are and are not shared between them."""
    rng = np.random.default_rng(M + 2 * N + 3 * K)
    x = rng.integers(-8, 8, (M, K)).astype(np.int8)
    y = rng.integers(-8, 8, (K, N)).astype(np.int8)
    z = np.full((M, N), np.nan, np.float16)
    dot_int8_operands[(1,)](x, y, z, M=M, N=N, K=K)
    want = x.astype(np.float64) @ y.astype(np.float64)         # exact in fp32 and fp16
    np.testing.assert_array_equal(z.astype(np.float64), want)


@tilejit.jit
def dot_fp16_acc_loop(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BK: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, BK)
    acc = tl.full((M, N), 1.0, tl.float16)
    for k0 in range(0, K, BK):
        x = tl.load(X + m[:, None] * K + (k0 + k)[None, :])
        y = tl.load(Y + (k0 + k)[:, None] * N + n[None, :])
        acc = tl.dot(x, y, acc, out_dtype=tl.float16)
    tl.store(Z + m[:, None] * N + n[None, :], acc)


def test_dot_with_fp16_accumulator(backend):
    """out_dtype=fp16 (the accumulator fp16, carried through a loop; on CUDA mma with
    fp32 accumulation, rounded once per dot): small integers, so every sum is exact."""
    rng = np.random.default_rng(11)
    M, N, K = 32, 64, 128
    x = rng.integers(-2, 3, (M, K)).astype(np.float16)
    y = rng.integers(-2, 3, (K, N)).astype(np.float16)
    z = np.full((M, N), np.nan, np.float16)
    dot_fp16_acc_loop[(1,)](x, y, z, M=M, N=N, K=K, BK=32)
    want = 1.0 + x.astype(np.float64) @ y.astype(np.float64)
    np.testing.assert_array_equal(z.astype(np.float64), want)
    z2 = np.full((64, 64), np.nan, np.float16)
    dot_fp16_out[(1,)](x[:, :64].repeat(2, 0), y[:64], z2, B=64)
    np.testing.assert_array_equal(z2.astype(np.float64), x[:, :64].repeat(2, 0).astype(np.float64) @ y[:64].astype(np.float64))
