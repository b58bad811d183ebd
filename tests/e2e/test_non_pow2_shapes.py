"""Block shapes that are not powers of two (a tilejit extension; Triton rejects them,
triton #3722): the tile has exactly the shape written, under every backend, against
numpy.  The CUDA tier without a GPU: each kernel compiles for sm_80/sm_90 and ptxas
assembles it (tests at the end)."""
import re

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


# --------------------------------------------------------------------------- 1-d
@tilejit.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, x * 2.0 + y, mask=m)


@pytest.mark.parametrize("block", [10, 100, 3 * 128])
def test_masked_elementwise(backend, rng, block):
    n = 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 7, 123.0, np.float32)              # the tail must stay untouched
    add_kernel[(tilejit.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    np.testing.assert_array_equal(out[:n], x * np.float32(2.0) + y)
    assert (out[n:] == 123.0).all()


@tilejit.jit
def exact_copy(x_ptr, out_ptr, idx_ptr, BLOCK: tl.constexpr):
    """No mask at all: a tile of BLOCK lanes touches exactly BLOCK elements."""
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)
    tl.store(idx_ptr + offs, offs)


@pytest.mark.parametrize("block", [1, 3, 10, 100, 781])
def test_unmasked_tile_touches_exactly_its_lanes(backend, block):
    x = np.arange(block, dtype=np.int32) * 3
    out = np.full(block + 5, -1, np.int32)
    idx = np.full(block + 5, -1, np.int32)
    exact_copy[(1,)](x, out, idx, BLOCK=block)
    np.testing.assert_array_equal(out[:block], x + 1)
    np.testing.assert_array_equal(idx[:block], np.arange(block))
    assert (out[block:] == -1).all() and (idx[block:] == -1).all()


# --------------------------------------------------------------------------- 2-d
@tilejit.jit
def reduce2d(x_ptr, f_ptr, i_ptr, R: tl.constexpr, C: tl.constexpr):
    """Row-major (R, C) tile; f_ptr gets sum/max/min along axis 0 (C each) then along
    axis 1 (R each); i_ptr gets argmax/argmin along axis 0 then axis 1."""
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    t = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(f_ptr + c, tl.sum(t, axis=0))
    tl.store(f_ptr + C + c, tl.max(t, axis=0))
    tl.store(f_ptr + 2 * C + c, tl.min(t, axis=0))
    tl.store(f_ptr + 3 * C + r, tl.sum(t, axis=1))
    tl.store(f_ptr + 3 * C + R + r, tl.max(t, axis=1))
    tl.store(f_ptr + 3 * C + 2 * R + r, tl.min(t, axis=1))
    tl.store(f_ptr + 3 * C + 3 * R, tl.sum(t))
    tl.store(i_ptr + c, tl.argmax(t, axis=0))
    tl.store(i_ptr + C + c, tl.argmin(t, axis=0))
    tl.store(i_ptr + 2 * C + r, tl.argmax(t, axis=1))
    tl.store(i_ptr + 2 * C + R + r, tl.argmin(t, axis=1))


@pytest.mark.parametrize("shape", [(6, 12), (3, 5), (1, 7), (12, 1)])
def test_reductions_along_each_axis(backend, rng, shape):
    R, C = shape
    x = rng.integers(-40, 40, shape).astype(np.float32)        # exact sums in any order
    f = np.zeros(3 * C + 3 * R + 1, np.float32)
    i = np.zeros(2 * C + 2 * R, np.int32)
    reduce2d[(1,)](x, f, i, R=R, C=C)
    want_f = np.concatenate([x.sum(0), x.max(0), x.min(0), x.sum(1), x.max(1), x.min(1), [x.sum()]])
    want_i = np.concatenate([x.argmax(0), x.argmin(0), x.argmax(1), x.argmin(1)])
    np.testing.assert_array_equal(f, want_f)
    np.testing.assert_array_equal(i, want_i)


@tilejit.jit
def scans2d(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    t = tl.load(x_ptr + r * C + c)
    n = R * C
    tl.store(out_ptr + r * C + c, tl.cumsum(t, axis=0))
    tl.store(out_ptr + n + r * C + c, tl.cumsum(t, axis=1))
    tl.store(out_ptr + 2 * n + r * C + c, tl.cumsum(t, axis=1, reverse=True))
    tl.store(out_ptr + 3 * n + r * C + c, tl.cumprod(t % 3 - 1, axis=1))
    tl.store(out_ptr + 4 * n + r * C + c, tl.associative_scan(t, 0, _add, reverse=True))


@tilejit.jit
def _add(a, b):
    return a + b


def test_scans(backend, rng):
    R, C = 6, 12
    x = rng.integers(-9, 10, (R, C)).astype(np.int32)
    out = np.zeros((5, R, C), np.int32)
    scans2d[(1,)](x, out, R=R, C=C)
    np.testing.assert_array_equal(out[0], np.cumsum(x, 0))
    np.testing.assert_array_equal(out[1], np.cumsum(x, 1))
    np.testing.assert_array_equal(out[2], np.flip(np.cumsum(np.flip(x, 1), 1), 1))
    np.testing.assert_array_equal(out[3], np.cumprod(np.fmod(x, 3) - 1, 1))
    np.testing.assert_array_equal(out[4], np.flip(np.cumsum(np.flip(x, 0), 0), 0))


@tilejit.jit
def _argmax_combine(v1, i1, v2, i2):
    take2 = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1)


@tilejit.jit
def _sum_count(s1, n1, s2, n2):
    """A tuple combine (never a built-in reduction): a padded lane would add to the count."""
    return s1 + s2, n1 + n2


@tilejit.jit
def compositions(x_ptr, f_ptr, i_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    t = tl.load(x_ptr + r * C + c)
    n = R * C
    tl.store(f_ptr + r * C + c, tl.sort(t))
    tl.store(f_ptr + n + r * C + c, tl.sort(t, descending=True))
    tl.store(f_ptr + 2 * n + r * C + c, tl.flip(t, 1))
    tl.store(f_ptr + 3 * n + r * C + c, tl.flip(t, 0))
    _, am = tl.reduce((t, c + r * 0), 1, _argmax_combine)
    tl.store(i_ptr + tl.arange(0, R), am)
    fin = tl.where(tl.abs(t) < 1000.0, t, 0.0).to(tl.int32)
    tot, cnt = tl.reduce((fin, tl.full((R, C), 1, tl.int32)), 0, _sum_count)
    tl.store(i_ptr + R + tl.arange(0, C), tot * 1000 + cnt)
    h = tl.histogram((tl.abs(fin) % 10).reshape(R * C), 10)
    tl.store(i_ptr + R + C + tl.arange(0, 10), h)


@pytest.mark.parametrize("shape", [(5, 6), (3, 5)])
def test_sort_flip_user_reduce_histogram(backend, rng, shape):
    R, C = shape
    x = rng.integers(-20, 20, shape).astype(np.float32)
    x[0, 0] = np.inf                      # sorts last even against the padding
    x[-1, -1] = -np.inf
    f = np.zeros((4, R, C), np.float32)
    i = np.zeros(R + C + 10, np.int32)
    compositions[(1,)](x, f, i, R=R, C=C)
    np.testing.assert_array_equal(f[0], np.sort(x, 1))
    np.testing.assert_array_equal(f[1], -np.sort(-x, 1))
    np.testing.assert_array_equal(f[2], np.flip(x, 1))
    np.testing.assert_array_equal(f[3], np.flip(x, 0))
    np.testing.assert_array_equal(i[:R], x.argmax(1))
    fin = np.where(np.isfinite(x), x, 0).astype(np.int32)
    np.testing.assert_array_equal(i[R:R + C], fin.sum(0) * 1000 + R)
    np.testing.assert_array_equal(i[R + C:], np.bincount((np.abs(fin) % 10).ravel(), minlength=10))


# --------------------------------------------------------------------------- creation, shape ops
@tilejit.jit
def shape_ops(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    t = tl.load(x_ptr + r[:, None] * C + c[None, :])
    n = R * C
    tl.store(out_ptr + c[:, None] * R + r[None, :], tl.trans(t))                 # (C, R)
    z = tl.zeros((R, C), tl.float32) + tl.full((R, 1), 2.0, tl.float32)
    tl.store(out_ptr + n + r[:, None] * C + c[None, :], t * z + tl.expand_dims(r, 1).to(tl.float32))
    flat = tl.reshape(tl.reshape(t, (C, R)), (n,))
    tl.store(out_ptr + 2 * n + tl.arange(0, n), flat)
    b = tl.broadcast_to(tl.expand_dims(c.to(tl.float32), 0), (R, C))
    tl.store(out_ptr + 3 * n + r[:, None] * C + c[None, :], b)
    small = tl.zeros((3, 5), tl.float32) + 1.5
    tl.store(out_ptr + 4 * n + tl.arange(0, 3)[:, None] * 5 + tl.arange(0, 5)[None, :], small)


def test_creation_and_shape_ops(backend, rng):
    R, C = 6, 12
    x = rng.standard_normal((R, C)).astype(np.float32)
    out = np.zeros(4 * R * C + 15, np.float32)
    shape_ops[(1,)](x, out, R=R, C=C)
    n = R * C
    np.testing.assert_array_equal(out[:n].reshape(C, R), x.T)
    np.testing.assert_array_equal(out[n:2 * n].reshape(R, C), x * np.float32(2) + np.arange(R, dtype=np.float32)[:, None])
    np.testing.assert_array_equal(out[2 * n:3 * n], x.ravel())
    np.testing.assert_array_equal(out[3 * n:4 * n].reshape(R, C), np.broadcast_to(np.arange(C), (R, C)))
    np.testing.assert_array_equal(out[4 * n:], np.full(15, 1.5, np.float32))


@tilejit.jit
def loop_acc(x_ptr, out_ptr, n_iter, R: tl.constexpr, C: tl.constexpr):
    """A loop-carried (R, C) accumulator and a 1-d running max."""
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    acc = tl.zeros((R, C), tl.float32)
    best = tl.full((C,), -float("inf"), tl.float32)
    for k in range(n_iter):
        t = tl.load(x_ptr + k * R * C + r * C + c)
        acc += t
        best = tl.maximum(best, tl.max(t, axis=0))
    tl.store(out_ptr + r * C + c, acc)
    tl.store(out_ptr + R * C + tl.arange(0, C), best)


def test_loop_carried_tiles(backend, rng):
    R, C, K = 6, 12, 5
    x = rng.integers(-9, 10, (K, R, C)).astype(np.float32)
    out = np.zeros(R * C + C, np.float32)
    loop_acc[(1,)](x, out, K, R=R, C=C)
    np.testing.assert_array_equal(out[:R * C].reshape(R, C), x.sum(0))
    np.testing.assert_array_equal(out[R * C:], x.max(axis=(0, 1)))


# --------------------------------------------------------------------------- dot
@tilejit.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    acc = tl.full((M, N), 1.0, tl.float32)
    acc = tl.dot(a, b, acc)
    tl.store(c_ptr + m[:, None] * N + n[None, :], acc)


DOT_SHAPES = [(48, 40, 24), (48, 32, 16), (48, 40, 48), (6, 12, 10)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mnk", DOT_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("num_warps", [1, 4])
def test_dot(backend, rng, mnk, dtype, num_warps):
    M, N, K = mnk
    a = rng.integers(-3, 4, (M, K)).astype(dtype)           # exact products and sums
    b = rng.integers(-3, 4, (K, N)).astype(dtype)
    c = np.zeros((M, N), np.float32)
    dot_kernel[(1,)](a, b, c, M=M, N=N, K=K, num_warps=num_warps)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64) + 1.0)


@tilejit.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  MASK_MN: tl.constexpr = True):
    """Tiled matmul with a K loop and masks on every edge (MASK_MN=False: on K only,
    the form the CUDA cp.async ring and wgmma take)."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        if MASK_MN:
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        else:
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=rk[None, :] < K, other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=rk[:, None] < K, other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


MATMUL_BLOCKS = [(48, 40, 24), (48, 32, 16), (96, 48, 48), (64, 192, 64)]


def test_matmul_loop_k_masks_only(backend, rng):
    BM, BN, BK = 64, 192, 64
    M, N, K = 128, 384, 130
    a = rng.integers(-3, 4, (M, K)).astype(np.float16)
    b = rng.integers(-3, 4, (K, N)).astype(np.float16)
    c = np.full((M, N), 7.0, np.float32)
    matmul_kernel[(M // BM, N // BN)](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, MASK_MN=False)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("blocks", MATMUL_BLOCKS, ids=lambda s: "x".join(map(str, s)))
def test_matmul_loop(backend, rng, blocks):
    BM, BN, BK = blocks
    M, N, K = 100, 210, 130
    a = rng.integers(-3, 4, (M, K)).astype(np.float16)
    b = rng.integers(-3, 4, (K, N)).astype(np.float16)
    c = np.full((M, N), 7.0, np.float32)
    grid = (tilejit.cdiv(M, BM), tilejit.cdiv(N, BN))
    matmul_kernel[grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


# --------------------------------------------------------------------------- softmax
@tilejit.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=m)


@pytest.mark.parametrize("n_cols", [781, 700])
def test_softmax_row_in_one_tile(backend, rng, n_cols):
    x = rng.standard_normal((5, n_cols)).astype(np.float32) * 3
    out = np.zeros_like(x)
    softmax_kernel[(5,)](x, out, n_cols, BLOCK=781)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=2e-5, atol=1e-7)


# --------------------------------------------------------------------------- random
@tilejit.jit
def rand_kernel(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs))
    tl.store(out_ptr + BLOCK + offs, tl.randint(seed, offs).to(tl.float32))


def test_rand_is_the_same_philox_stream(backend):
    a, b = np.zeros(20, np.float32), np.zeros(32, np.float32)
    rand_kernel[(1,)](a, 1234, BLOCK=10)
    rand_kernel[(1,)](b, 1234, BLOCK=16)
    np.testing.assert_array_equal(a[:10], b[:10])
    np.testing.assert_array_equal(a[10:], b[16:26])
    assert ((a[:10] >= 0) & (a[:10] < 1)).all() and len(set(a[:10].tolist())) == 10


# --------------------------------------------------------------------------- atomics
@tilejit.jit
def atomic_kernel(x_ptr, acc_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(acc_ptr + offs % 3, v, mask=m)
    tl.atomic_max(acc_ptr + 3, v, mask=m)
    old = tl.atomic_xchg(old_ptr + offs, v + 1, mask=m)
    tl.store(old_ptr + n + offs, old, mask=m)


@pytest.mark.parametrize("block", [10, 6, 100])
def test_atomics(backend, rng, block):
    n = 47
    x = rng.integers(-50, 50, n).astype(np.int32)
    acc = np.array([0, 0, 0, -1000, 77], np.int32)
    old = np.full(2 * n + 3, 5, np.int32)
    atomic_kernel[(tilejit.cdiv(n, block),)](x, acc, old, n, BLOCK=block)
    want = [x[k::3].sum() for k in range(3)] + [x.max(), 77]
    np.testing.assert_array_equal(acc, want)
    np.testing.assert_array_equal(old[:n], x + 1)
    np.testing.assert_array_equal(old[n:2 * n], np.full(n, 5))
    assert (old[2 * n:] == 5).all()


# --------------------------------------------------------------------------- more ops
@tilejit.jit
def misc_kernel(x_ptr, f_ptr, i_ptr, M, N, R: tl.constexpr, C: tl.constexpr):
    """Block pointers with boundary checks, join/split/cat/interleave, gather,
    keep_dims, max with indices, xor_sum, bool tiles and a device_assert."""
    pid = tl.program_id(0)
    bp = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(N, 1), offsets=(pid * R, 0),
                           block_shape=(R, C), order=(1, 0))
    t = tl.load(bp, boundary_check=(0, 1), padding_option="zero")
    out = tl.make_block_ptr(f_ptr, shape=(M, N), strides=(N, 1), offsets=(pid * R, 0),
                            block_shape=(R, C), order=(1, 0))
    tl.store(out, t - tl.max(t, axis=1, keep_dims=True), boundary_check=(0, 1))
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    base = i_ptr + pid * (4 * C + 3 * R + 1)
    ti = t.to(tl.int32)
    a, b = tl.split(tl.join(ti, ti + 1))
    tl.store(base + c, tl.sum(a * 10 + b, axis=0))
    row0 = tl.sum(tl.where(r[:, None] == 0, ti, 0), axis=0)                 # (C,)
    tl.store(base + C + tl.arange(0, 2 * C), tl.interleave(row0, tl.flip(row0, 0)))
    tl.store(base + 3 * C + c, tl.gather(row0, (c * 7) % C, 0))
    mx, idx = tl.max(ti, axis=1, return_indices=True)
    tl.store(base + 4 * C + r, idx)
    tl.store(base + 4 * C + R + r, tl.xor_sum(ti, axis=1))
    pos = ti > 0
    tl.store(base + 4 * C + 2 * R + r, tl.sum(pos.to(tl.int32), axis=1))
    tl.store(base + 4 * C + 3 * R, tl.sum(tl.cat(row0, row0), axis=0))
    tl.device_assert(mx >= tl.min(ti, axis=1), "max below min")


def test_block_pointers_and_data_movement(backend, rng):
    M, N, R, C = 10, 11, 3, 12                     # 4 programs; the last block of rows and
    x = rng.integers(-9, 10, (M, N)).astype(np.float32)   # the 12th column are padding
    f = np.full((M, N), 99.0, np.float32)
    progs = tilejit.cdiv(M, R)
    i = np.zeros((progs, 4 * C + 3 * R + 1), np.int32)
    misc_kernel[(progs,)](x, f, i, M, N, R=R, C=C)
    np.testing.assert_array_equal(f, x - x.max(1, keepdims=True).clip(0))
    xp = np.zeros((progs * R, C), np.int32)
    xp[:M, :N] = x
    for p in range(progs):
        t, row = xp[p * R:(p + 1) * R], i[p]
        np.testing.assert_array_equal(row[:C], (t * 10 + t + 1).sum(0))
        want_il = np.empty(2 * C, np.int32)
        want_il[0::2], want_il[1::2] = t[0], t[0][::-1]
        np.testing.assert_array_equal(row[C:3 * C], want_il)
        np.testing.assert_array_equal(row[3 * C:4 * C], t[0][(np.arange(C) * 7) % C])
        np.testing.assert_array_equal(row[4 * C:4 * C + R], t.argmax(1))
        np.testing.assert_array_equal(row[4 * C + R:4 * C + 2 * R], np.bitwise_xor.reduce(t, axis=1))
        np.testing.assert_array_equal(row[4 * C + 2 * R:4 * C + 3 * R], (t > 0).sum(1))
        assert row[4 * C + 3 * R] == 2 * t[0].sum()


# --------------------------------------------------------------------------- analysis
def test_analysis_claims_for_non_pow2_arange():
    """arange(0, 10) is one run of 10 starting at 0 (a multiple of anything); the
    vector plan groups lanes in powers of two that divide the row."""
    from tilejit import analysis, frontend
    from tilejit.analysis.vector import access_plan
    from tilejit.ir.types import PointerType, float32, int32
    func = frontend.build_ir(exact_copy, {"x_ptr": PointerType(int32), "out_ptr": PointerType(int32),
                                          "idx_ptr": PointerType(int32)}, {"BLOCK": 10})
    facts = analysis.analyze(func)
    rng_op = next(op for op in func.walk() if op.name == "tt.make_range")
    assert facts.axis(rng_op.result).contiguity == (10,)
    assert facts.range(rng_op.result) == (0, 9)
    loads = [op for op in func.walk() if op.name == "tt.load"]
    assert access_plan(facts, loads[0].ptr).width in (1, 2)
    del float32


# --------------------------------------------------------------------------- CUDA tier (no GPU)
needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
F32 = "*fp32"
PTX_CASES = {
    "add10": (add_kernel, {0: F32, 1: F32, 2: F32, 3: "i32"}, {"BLOCK": 10}, 4, None),
    "add384": (add_kernel, {0: F32, 1: F32, 2: F32, 3: "i32"}, {"BLOCK": 384}, 4, None),
    # 128 threads, 10 lanes: loads read element tid % 10, stores are predicated on tid < 10
    "copy10": (exact_copy, {0: "*i32", 1: "*i32", 2: "*i32"}, {"BLOCK": 10}, 4,
               r"setp\.lt\.u32\s+(%p\d+), %r\d+, 10;[\s\S]*@\1 st\.global"),
    "copy781": (exact_copy, {0: "*i32", 1: "*i32", 2: "*i32"}, {"BLOCK": 781}, 4, None),
    "reduce2d": (reduce2d, {0: F32, 1: F32, 2: "*i32"}, {"R": 6, "C": 12}, 4, None),
    "scans2d": (scans2d, {0: "*i32", 1: "*i32"}, {"R": 6, "C": 12}, 4, None),
    "compositions": (compositions, {0: F32, 1: F32, 2: "*i32"}, {"R": 3, "C": 5}, 4, None),
    "shape_ops": (shape_ops, {0: F32, 1: F32}, {"R": 6, "C": 12}, 4, None),
    "loop_acc": (loop_acc, {0: F32, 1: F32, 2: "i32"}, {"R": 6, "C": 12}, 4, None),
    "dot_f32": (dot_kernel, {0: F32, 1: F32, 2: F32}, {"M": 48, "N": 40, "K": 24}, 4, None),
    "dot_f16_fma": (dot_kernel, {0: "*fp16", 1: "*fp16", 2: F32}, {"M": 48, "N": 40, "K": 24}, 4, None),
    "dot_f16_mma": (dot_kernel, {0: "*fp16", 1: "*fp16", 2: F32}, {"M": 48, "N": 32, "K": 16}, 4,
                    r"mma\.sync\.aligned\.m16n8k16"),
    "dot_f16_mma_w1": (dot_kernel, {0: "*fp16", 1: "*fp16", 2: F32}, {"M": 48, "N": 40, "K": 48}, 1,
                       r"mma\.sync\.aligned\.m16n8k16"),
    **{f"matmul_{bm}x{bn}x{bk}": (matmul_kernel, {0: "*fp16", 1: "*fp16", 2: F32, 3: "i32", 4: "i32", 5: "i32"},
                                  {"BM": bm, "BN": bn, "BK": bk, "MASK_MN": True}, 4, None) for bm, bn, bk in MATMUL_BLOCKS[:3]},
    "softmax781": (softmax_kernel, {0: F32, 1: F32, 2: "i32"}, {"BLOCK": 781}, 4, r"shfl\.sync\.bfly"),
    "rand10": (rand_kernel, {0: F32, 1: "i32"}, {"BLOCK": 10}, 4, None),
    "misc": (misc_kernel, {0: F32, 1: F32, 2: "*i32", 3: "i32", 4: "i32"}, {"R": 3, "C": 12}, 4, None),
    "atomics10": (atomic_kernel, {0: "*i32", 1: "*i32", 2: "*i32", 3: "i32"}, {"BLOCK": 10}, 4,
                  r"atom(\.\w+)*\.add"),
}


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", sorted(PTX_CASES))
def test_cuda_ptx_assembles(name, arch):
    kernel, sig, cx, warps, pattern = PTX_CASES[name]
    ker = tilejit.compile(kernel, signature=sig, constexprs=cx, target=f"cuda:{arch}", num_warps=warps)
    ptx = ker.asm["ptx"]
    assert re.search(r"\.entry\s+\w+", ptx)
    if pattern:
        assert re.search(pattern, ptx), ptx[-3000:]
    tgt.ptxas(ptx, arch)


def test_cuda_layout_owns_each_element_once():
    """The blocked layout of a non-power-of-two tile: every element has exactly one
    owned slot; the other slots hold copies (the padding), never new elements."""
    from tilejit.backends.cuda.layout import make_layout
    for shape in [(10,), (781,), (384,), (6, 12), (3, 5), (48, 40)]:
        for threads in (32, 128):
            lay = make_layout(shape, threads)
            owned = []
            for t in range(threads):
                for s in range(lay.nslots):
                    raw = (s // lay.vec * threads + t) * lay.vec + s % lay.vec
                    assert raw == t * lay.vec + lay.slot_base(s)
                    if raw < lay.numel:
                        owned.append(raw)
            assert sorted(owned) == list(range(lay.numel)), (shape, threads)
            assert lay.numel % lay.vec == 0 and shape[-1] % lay.vec == 0


@needs_ptxas
@pytest.mark.parametrize("name", ["copy781", "reduce2d", "atomics10", "softmax781"])
def test_cuda_sanitized_ptx_assembles(name):
    """Sanitize mode checks every owned lane's address (the padding copies too)."""
    from tilejit.runtime.options import Options
    kernel, sig, cx, warps, _ = PTX_CASES[name]
    ker = tilejit.compile(kernel, signature=sig, constexprs=cx, target="cuda:90", num_warps=warps,
                          options=Options(sanitize=True))
    assert ker.reports
    tgt.ptxas(ker.asm["ptx"], 90)


@tilejit.jit
def extrema_axis0(x_ptr, mx_ptr, mn_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    t = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(mx_ptr + c, tl.max(t, axis=0))
    tl.store(mn_ptr + c, tl.min(t, axis=0))


@pytest.mark.parametrize("shape", [(6, 12), (5, 16), (7, 20), (3, 8), (8, 16)])
@pytest.mark.parametrize("nans", [False, True])
def test_float_extrema_over_rows_not_a_multiple_of_the_vector_width(backend, rng, shape, nans):
    """max/min along axis 0 of R rows, R not a multiple of 4 or 8: every row counts
    (LLVM 22's vectorized maxnum reduction once skipped the rows past the last full
    vector on AVX-512), and NaNs are skipped as np.fmax/np.fmin do."""
    R, C = shape
    x = rng.standard_normal(shape).astype(np.float32)
    x[R - 1, ::3] = 50.0                      # the extreme values sit in the last row
    x[R - 1, 1::3] = -50.0
    if nans:
        x[0, ::2] = np.nan
        x[:, C - 1] = np.nan                  # an all-NaN column gives NaN
    mx, mn = np.zeros(C, np.float32), np.zeros(C, np.float32)
    with np.errstate(invalid="ignore"):
        extrema_axis0[(1,)](x, mx, mn, R=R, C=C)
    np.testing.assert_array_equal(mx, np.fmax.reduce(x, axis=0))
    np.testing.assert_array_equal(mn, np.fmin.reduce(x, axis=0))
