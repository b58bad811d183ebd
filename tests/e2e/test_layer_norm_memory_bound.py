"""Numerics behind the memory-bound tutorials (04 dropout, 05 layer norm backward), on
every backend against numpy: division by one scalar (CUDA: div.rn.f32's fast path
with the reciprocal made once, the exact fdiv outside its range), umulhi paired with
the multiply of the same operands (CUDA: one mul.wide.u32), compares whose result the
analysis proves constant over a chunk (CUDA: one compare per chunk), and layer-norm
backward's spin lock (CUDA: atom.acq_rel.gpu) under contention."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def div_by_scalar(X, Out, d, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(Out + offs, tl.load(X + offs, mask=m) / d, mask=m)


def _special_dividends(rng, n):
    """fp32 values over the whole exponent range, with zeros, subnormals, infinities,
    NaN and the edges of the fast path's range (2**-60, 2**60) and their neighbours."""
    mant = rng.uniform(1.0, 2.0, n)
    expo = rng.integers(-149, 128, n)
    x = (mant * np.exp2(expo.astype(np.float64))).astype(np.float32)
    x *= np.where(rng.random(n) < 0.5, -1, 1).astype(np.float32)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38,
                      2.0 ** -60, 2.0 ** 60, 3.4028235e38, 1.0, -1.0], np.float32)
    with np.errstate(all="ignore"):
        near = np.concatenate([np.nextafter(edges[5:], np.float32(np.inf)),
                               np.nextafter(edges[5:], np.float32(-np.inf))]).astype(np.float32)
    k = len(edges) + len(near)
    x[:k] = np.concatenate([edges, near])
    return x


def _assert_same_floats(out, ref):
    nan = np.isnan(ref)
    assert (np.isnan(out) == nan).all()
    np.testing.assert_array_equal(out[~nan].view(np.uint32), ref[~nan].view(np.uint32))


@pytest.mark.parametrize("d", [0.5, 3.0, -0.1, 7.0e-19, 1.1e18, 1.0e-30, 3.0e30, 1e-40,
                               0.0, -0.0, np.inf, np.nan, 1.0 - 0.3])
def test_division_by_a_scalar_is_correctly_rounded(backend, rng, d):
    n = 3000
    x = _special_dividends(rng, n)
    out = np.full(n, -7.0, np.float32)
    d32 = np.float32(d)
    div_by_scalar[(tilejit.cdiv(n, 1024),)](x, out, d32, n, BLOCK=1024)
    with np.errstate(all="ignore"):
        ref = x / d32
    _assert_same_floats(out, ref)


def test_division_by_scalar_random_mantissas(backend, rng):
    """Fast-path operands only (normal, in range): every rounding case of many divisors."""
    n = 1 << 14
    x = (rng.uniform(-4, 4, n) * np.exp2(rng.integers(-40, 40, n))).astype(np.float32)
    for d in rng.uniform(1.0, 2.0, 6).astype(np.float32) * np.float32(2.0 ** -20):
        out = np.empty(n, np.float32)
        div_by_scalar[(tilejit.cdiv(n, 1024),)](x, out, d, n, BLOCK=1024)
        _assert_same_floats(out, x / d)


@tilejit.jit
def hi_lo(X, Y, Hi, Lo, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(X + offs, mask=m)
    y = tl.load(Y + offs, mask=m)
    hi = tl.umulhi(x, y)
    lo = x * y
    lo2 = y * x + 0                      # the same product, operands swapped
    tl.store(Hi + offs, hi ^ (x * 3), mask=m)
    tl.store(Lo + offs, lo ^ lo2 ^ lo, mask=m)


def test_umulhi_and_multiply_of_the_same_operands(backend, rng):
    n = 2000
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    y = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    x[:4] = [0, 0xFFFFFFFF, 1, 0x80000000]
    y[:4] = [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 2]
    hi, lo = np.empty(n, np.uint32), np.empty(n, np.uint32)
    hi_lo[(tilejit.cdiv(n, 512),)](x, y, hi, lo, n, BLOCK=512)
    p = x.astype(np.uint64) * y.astype(np.uint64)
    np.testing.assert_array_equal(hi, (p >> np.uint64(32)).astype(np.uint32) ^ (x * np.uint32(3)))
    np.testing.assert_array_equal(lo, (p & np.uint64(0xFFFFFFFF)).astype(np.uint32))


@tilejit.jit
def masked_where(X, Out, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0)
    y = tl.where(mask, x * 2.0, -1.0)
    tl.store(Out + cols, y)


@pytest.mark.parametrize("n", [0, 5, 16, 200, 256])
def test_chunk_constant_compare(backend, rng, n):
    """``cols < N`` with N a multiple of 16 (divisibility specialisation) is constant over
    runs of 16; with other N it is not, and every element is compared on its own."""
    x = rng.standard_normal(256).astype(np.float32)
    out = np.full(256, 7.0, np.float32)
    masked_where[(1,)](x, out, n, BLOCK=256)
    ref = np.where(np.arange(256) < n, x * 2, -1).astype(np.float32)
    np.testing.assert_array_equal(out, ref)


@tilejit.jit
def ln_bwd_dx(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
              GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@pytest.mark.parametrize("M,N,G,block,dt", [(64, 200, 4, 256, np.float32), (256, 1024, 3, 1024, np.float32),
                                            (96, 512, 2, 512, np.float16)])
def test_layer_norm_backward_lock(backend, rng, M, N, G, block, dt):
    """Tutorial 05's dx kernel: partial dW/dB rows summed under G spin locks by M programs
    (a lost update or a read before the previous holder's stores shows in the sums)."""
    if backend == "interpreter" and M > 64:
        pytest.skip("slow on the interpreter")
    x = rng.standard_normal((M, N)).astype(dt)
    dy = (0.1 * rng.standard_normal((M, N))).astype(dt)
    w = rng.random(N).astype(dt)
    xf = x.astype(np.float64)
    mean = xf.mean(1).astype(np.float32)
    rstd = (1 / np.sqrt(xf.var(1) + 1e-5)).astype(np.float32)
    dx = np.full((M, N), 9.0, dt)
    dw_part = np.full((G, N), 5.0, dt)
    db_part = np.full((G, N), 5.0, dt)
    locks = np.zeros(2 * G, np.int32)
    ln_bwd_dx[(M,)](dx, dy, dw_part, db_part, x, w, mean, rstd, locks, N, N,
                    GROUP_SIZE_M=G, BLOCK_SIZE_N=block, num_warps=4)
    assert (locks[:G] == 0).all() and (locks[G:] == 1).all()
    xhat = (xf - mean[:, None].astype(np.float64)) * rstd[:, None]
    dyf = dy.astype(np.float64)
    wdy = w.astype(np.float64) * dyf
    c1 = (xhat * wdy).sum(1, keepdims=True) / N
    c2 = wdy.sum(1, keepdims=True) / N
    ref_dx = (wdy - (xhat * c1 + c2)) * rstd[:, None]
    tol = 1e-4 if dt == np.float32 else 2e-2
    np.testing.assert_allclose(dx.astype(np.float64), ref_dx, rtol=tol, atol=tol)
    rows = np.arange(M) % G
    for g in range(G):
        sel = rows == g
        np.testing.assert_allclose(dw_part[g].astype(np.float64), (dyf * xhat)[sel].sum(0),
                                   rtol=tol, atol=tol * np.sqrt(sel.sum()))
        np.testing.assert_allclose(db_part[g].astype(np.float64), dyf[sel].sum(0),
                                   rtol=tol, atol=tol * np.sqrt(sel.sum()))


@tilejit.jit
def broadcast_index_math(Out, M, N, s, BM: tl.constexpr, BN: tl.constexpr):
    i = tl.program_id(0) * BM
    rows = i + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    colf = (cols.to(tl.float32) * s) / 3.0
    v = colf[None, :] + rows[:, None].to(tl.float32) * 0.25 + tl.where(cols % 3 == 0, 1.0, 0.0)[None, :]
    tl.store(Out + offs, v, mask=mask)


@pytest.mark.parametrize("M,N,BM,BN", [(70, 128, 32, 128), (5, 7, 4, 8), (33, 10, 16, 16), (3, 64, 1, 64),
                                       (64, 1, 64, 1), (40, 300, 8, 512)])
def test_broadcast_of_index_expressions(backend, M, N, BM, BN):
    """2-D tiles built from broadcast 1-D index expressions (CUDA: recomputed per slot
    in the 2-D layout instead of moved through shared memory)."""
    out = np.full(M * N + 5, -9.0, np.float32)
    s = np.float32(0.7)
    broadcast_index_math[(tilejit.cdiv(M, BM),)](out, M, N, s, BM=BM, BN=BN)
    r = np.arange(M, dtype=np.float32)[:, None]
    c = np.arange(N, dtype=np.float32)[None, :]
    ref = (c * s) / np.float32(3.0) + r * np.float32(0.25) + (np.arange(N)[None, :] % 3 == 0).astype(np.float32)
    np.testing.assert_array_equal(out[:M * N].reshape(M, N), ref.astype(np.float32))
    assert (out[M * N:] == -9.0).all()
