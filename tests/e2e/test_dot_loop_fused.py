"""K loops of ``tl.dot`` (the tutorial matmul shape) on every backend, against float64
numpy: trip counts that are and are not multiples of the CPU backend's fusion factor
(backends/cpu/lower_dot_loop.py: ``U`` iterations as one dot, the accumulator in
place), zero trips, masked tiles of odd sizes, ``acc = tl.dot(a, b, acc)`` and
``acc += tl.dot(a, b)``, fp16 and fp64 operands, other loop-carried values."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends


@tilejit.jit
def mm_steps(a_ptr, b_ptr, c_ptr, K, sam, sak, sbk, sbn, scm, scn,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The tutorial loop: pointer tiles advanced by BK each step, no masks."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc)


@tilejit.jit
def mm_masked(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 03's loop: masked K remainder, ``acc = tl.dot(a, b, acc)``, a scalar
    counter carried beside the accumulator, edges masked at the store."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M)[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + (rn % N)[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    steps = 0
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        steps += 1
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    acc = acc * (steps == tl.cdiv(K, BK)).to(tl.float32)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilejit.jit
def mm_f64(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float64)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _check(c, a, b, rtol=1e-4):
    want = a.astype(np.float64) @ b.astype(np.float64)
    K = max(a.shape[1], 1)
    np.testing.assert_allclose(c, want, rtol=rtol, atol=rtol * 4 * np.sqrt(K))


# (M, N, K, BM, BN, BK): fp32 fusion factors 4 (BK=16), 2 (BK=32), 1 (BK=64);
# trip counts 5, 3, 1, 2 and 0; N and M not multiples of the micro-kernel's blocks
@pytest.mark.parametrize("M,N,K,BM,BN,BK", [
    (64, 64, 80, 32, 32, 16), (80, 96, 96, 40, 48, 32), (64, 64, 64, 64, 64, 64),
    (32, 48, 256, 32, 48, 128), (32, 32, 0, 32, 32, 16), (28, 40, 144, 28, 40, 16)])
def test_tutorial_loop(backend, M, N, K, BM, BN, BK):
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    mm_steps[(M // BM, N // BN)](a, b, c, K, K, 1, N, 1, N, 1, BM=BM, BN=BN, BK=BK)
    _check(c, a, b)


@pytest.mark.parametrize("M,N,K,BM,BN,BK", [(50, 37, 45, 32, 32, 16), (33, 70, 100, 16, 64, 32),
                                            (17, 19, 7, 16, 16, 16)])
def test_masked_loop_odd_sizes(backend, M, N, K, BM, BN, BK):
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    grid = (tilejit.cdiv(M, BM), tilejit.cdiv(N, BN))
    mm_masked[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=BM, BN=BN, BK=BK)
    _check(c, a, b)


def test_fp16_operands(backend):
    M, N, K = 64, 64, 112                                   # 7 steps of 16: one fused group of 4, 3 left
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    mm_steps[(2, 2)](a, b, c, K, K, 1, N, 1, N, 1, BM=32, BN=32, BK=16)
    _check(c, a, b, rtol=1e-3)


def test_fp64_accumulator(backend):
    M, N, K = 16, 16, 40                                    # fp64: 32 values of k per fused dot
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    c = np.full((M, N), np.nan)
    mm_f64[(1,)](a, b, c, K, BM=M, BN=N, BK=8)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")
def test_cpu_fuses_the_tutorial_loop(monkeypatch):
    """The loops above do take the fused path on the cpu backend (not only the
    ordinary loop), with the factors the module documents."""
    from tilejit.backends.cpu import lower_dot_loop as L
    from tilejit.ir.types import float32, float64
    from tilejit.runtime.options import use_options
    assert [L.fuse_factor(32, 32, bk, float32) for bk in (16, 32, 64, 128)] == [4, 2, 1, 1]
    assert L.fuse_factor(16, 16, 8, float64) == 4
    assert [L.fuse_factor(32, 32, bk, float32, shared=True) for bk in (16, 32, 64, 256)] == [8, 4, 2, 1]
    seen = []
    real = L._dot_loop
    monkeypatch.setattr(L, "_dot_loop", lambda ctx, op, m, *a: seen.append(m.factor) or real(ctx, op, m, *a))
    M, N, K = 32, 32, 144                                   # 9 steps of 16; A may be shared: 8 at a time
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    with use_options(backend="cpu", sanitize=False):           # sanitized loads keep the plain loop
        tilejit.jit(mm_steps.fn)[(1, 1)](a, b, c, K, K, 1, N, 1, N, 1, BM=M, BN=N, BK=16)
    assert seen == [8, 1]                                    # 8 at a time, then the one left
    _check(c, a, b)
