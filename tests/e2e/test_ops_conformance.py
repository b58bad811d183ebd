"""Ops whose results Triton 3.6's own tests pin down: swizzle2d on sizes that are not
multiples of the group, Philox with 64-bit offsets, long reverse scans."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


# --------------------------------------------------------------------- swizzle2d
@tilejit.jit
def swizzle_kernel(out_ptr, size_i, size_j, size_g, BI: tl.constexpr, BJ: tl.constexpr):
    i = tl.arange(0, BI)[:, None]
    j = tl.arange(0, BJ)[None, :]
    new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
    mask = (i < size_i) & (j < size_j)
    tl.store(out_ptr + new_i * size_j + new_j, i * size_j + j, mask=mask)


def swizzle_reference(size_i, size_j, size_g):
    """Triton's definition, in Python integers, element by element."""
    out = np.zeros((size_i, size_j), np.int32)
    for i in range(size_i):
        for j in range(size_j):
            ij = i * size_j + j
            off_i = (ij // (size_g * size_j)) * size_g
            g = min(size_i - off_i, size_g)
            ij %= size_g * size_j
            out[off_i + ij % g, ij // g] = i * size_j + j
    return out


@pytest.mark.parametrize("size_i,size_j,size_g", [(5, 7, 3), (4, 4, 2), (7, 5, 4), (9, 3, 2), (6, 6, 6)])
def test_swizzle2d_matches_triton(backend, size_i, size_j, size_g):
    out = np.full((size_i, size_j), -1, np.int32)
    swizzle_kernel[(1,)](out, size_i, size_j, size_g, BI=16, BJ=16)
    np.testing.assert_array_equal(out, swizzle_reference(size_i, size_j, size_g))


def test_swizzle2d_upstream_order(backend):
    """The order Triton 3.6's test_swizzle2d expects for 5 x 7 in groups of 3."""
    out = np.full((5, 7), -1, np.int32)
    swizzle_kernel[(1,)](out, 5, 7, 3, BI=8, BJ=8)
    expected = [[0, 3, 6, 9, 12, 15, 18], [1, 4, 7, 10, 13, 16, 19], [2, 5, 8, 11, 14, 17, 20],
                [21, 23, 25, 27, 29, 31, 33], [22, 24, 26, 28, 30, 32, 34]]
    np.testing.assert_array_equal(out, np.array(expected, np.int32))


# --------------------------------------------------------------------- Philox
def philox4x32_reference(seed, c0, c1, rounds=10):
    """numpy Philox 4x32 on counters (c0, c1, 0, 0) keyed by the 64-bit seed: four words."""
    def umulhi(a, b):
        return ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)
    c0 = c0.astype(np.uint32)
    c1 = c1.astype(np.uint32)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    A, B = np.uint32(0xD2511F53), np.uint32(0xCD9E8D57)
    with np.errstate(over="ignore"):
        for _ in range(rounds):
            _c0, _c2 = c0, c2
            c0 = umulhi(B, _c2) ^ c1 ^ np.uint32(k0)
            c2 = umulhi(A, _c0) ^ c3 ^ np.uint32(k1)
            c1 = (B * _c2).astype(np.uint32)
            c3 = (A * _c0).astype(np.uint32)
            k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
            k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


@tilejit.jit
def randint4x_kernel(off_ptr, out_ptr, seed, N: tl.constexpr):
    offs = tl.arange(0, N)
    offset = tl.load(off_ptr + offs)
    r0, r1, r2, r3 = tl.randint4x(seed, offset)
    tl.store(out_ptr + offs, r0)
    tl.store(out_ptr + N + offs, r1)
    tl.store(out_ptr + 2 * N + offs, r2)
    tl.store(out_ptr + 3 * N + offs, r3)


@tilejit.jit
def randint_kernel(off_ptr, out_ptr, seed, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.randint(seed, tl.load(off_ptr + offs)))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("seed", [0, 2**31 + 5, 0x123456789AB])
def test_randint4x_offsets_of_every_width(backend, dtype, seed):
    n = 64
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    offsets = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    offsets[:4] = np.array([0, 1, info.max, info.min], dtype=dtype)
    out = np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](offsets, out, seed, N=n)
    wide = offsets.astype(np.uint64) if info.bits == 64 else offsets.astype(np.int64).astype(np.uint64)
    c0 = (wide & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    c1 = (wide >> np.uint64(32)).astype(np.uint32) if info.bits == 64 else np.zeros(n, np.uint32)
    ref = np.concatenate(philox4x32_reference(seed, c0, c1))
    np.testing.assert_array_equal(out, ref)
    single = np.zeros(n, np.uint32)
    randint_kernel[(1,)](offsets, single, seed, N=n)
    np.testing.assert_array_equal(single, ref[:n])


# --------------------------------------------------------------------- reverse scans
@tilejit.jit
def _first(a, b):
    return a


@tilejit.jit
def _roll(a1, b1_last, b1_cur, a2, b2_last, b2_cur):
    return a1 + a2, tl.where(a2 == 1, b1_cur, 0) + b2_last, b2_cur


@tilejit.jit
def rscan_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    if OP == "first":
        z = tl.associative_scan(x, axis=AXIS, combine_fn=_first, reverse=True)
    else:
        _, z, _ = tl.associative_scan((1 + 0 * x, 0 * x, x), axis=AXIS, combine_fn=_roll, reverse=True)
    tl.store(Z + offs, z)


@pytest.mark.parametrize("shape,axis", [((4, 64), 1), ((64, 2), 0), ((3, 12), 1), ((1, 2), 1)])
@pytest.mark.parametrize("op", ["first", "roll"])
def test_reverse_scan_non_commutative(backend, shape, axis, op):
    """A reverse scan keeps the operand order of the combine function (Triton's
    test_scan2d get_first_element and roll)."""
    x = np.random.default_rng(3).integers(-50, 50, shape).astype(np.int32)
    z = np.zeros_like(x)
    rscan_kernel[(1,)](x, z, M=shape[0], N=shape[1], AXIS=axis, OP=op)
    if op == "first":      # every output is the last element along the axis
        want = np.broadcast_to(np.take(x, [-1], axis=axis), shape)
    else:                  # the element after each one (0 past the end)
        want = np.roll(np.flip(x, axis), 1, axis=axis)
        (want[:1] if axis == 0 else want[:, :1])[...] = 0
        want = np.flip(want, axis)
    np.testing.assert_array_equal(z, want)


# --------------------------------------------------------------------- 3-d dot
@tilejit.jit
def dot3d_kernel(Q, K, O, ACC, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, KD: tl.constexpr,
                 OUT: tl.constexpr, USE_ACC: tl.constexpr):
    ob = tl.arange(0, B)[:, None, None]
    om = tl.arange(0, M)[None, :, None]
    on = tl.arange(0, N)[None, None, :]
    ok = tl.arange(0, KD)
    q = tl.load(Q + ob * (M * KD) + om * KD + ok[None, None, :])
    k = tl.load(K + ob * (KD * N) + ok[None, :, None] * N + on)
    if USE_ACC:
        acc = tl.load(ACC + ob * (M * N) + om * N + on)
        r = tl.dot(q, k, acc, input_precision="ieee")
    else:
        r = tl.dot(q, k, input_precision="ieee", out_dtype=OUT)
    tl.store(O + ob * (M * N) + om * N + on, r)


@pytest.mark.parametrize("b,m,n,k", [(1, 16, 16, 16), (2, 16, 32, 16), (4, 32, 16, 32), (3, 8, 8, 16)])
@pytest.mark.parametrize("dt", ["float32", "float16", "float16->float16", "int8", "float64"])
def test_dot_3d_batched(backend, b, m, n, k, dt):
    """Triton's test_dot3d: [B, M, K] @ [B, K, N] per batch item, against numpy."""
    rng = np.random.default_rng(b * 100 + m)
    src, _, out = dt.partition("->")
    if src == "int8":
        q = rng.integers(-8, 8, (b, m, k)).astype(np.int8)
        kk = rng.integers(-8, 8, (b, k, n)).astype(np.int8)
        o, odt = np.zeros((b, m, n), np.int32), tl.int32
    else:
        q = rng.standard_normal((b, m, k)).astype(src)
        kk = rng.standard_normal((b, k, n)).astype(src)
        odt = {"float16": tl.float16, "": tl.float32}[out] if src != "float64" else tl.float64
        o = np.zeros((b, m, n), {"float16": np.float16}.get(out, np.float64 if src == "float64" else np.float32))
    dot3d_kernel[(1,)](q, kk, o, o, B=b, M=m, N=n, KD=k, OUT=odt, USE_ACC=False)
    want = np.matmul(q.astype(np.float64), kk.astype(np.float64))
    if src == "int8":
        np.testing.assert_array_equal(o, want.astype(np.int32))
    else:
        tol = {np.float16: 2e-2, np.float32: 1e-4, np.float64: 1e-10}[o.dtype.type]
        np.testing.assert_allclose(o.astype(np.float64), want, rtol=tol, atol=tol * k)


def test_dot_3d_accumulates(backend):
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 16, 16)).astype(np.float32)
    kk = rng.standard_normal((2, 16, 16)).astype(np.float32)
    acc = rng.standard_normal((2, 16, 16)).astype(np.float32)
    o = np.zeros_like(acc)
    dot3d_kernel[(1,)](q, kk, o, acc, B=2, M=16, N=16, KD=16, OUT=tl.float32, USE_ACC=True)
    np.testing.assert_allclose(o, np.matmul(q.astype(np.float64), kk) + acc, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------- bf16x3 / bf16x6
@tilejit.jit
def dot_precision_kernel(X, Y, Z, P: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o[:, None] * N + o[None, :])
    y = tl.load(Y + o[:, None] * N + o[None, :])
    tl.store(Z + o[:, None] * N + o[None, :], tl.dot(x, y, input_precision=P))


@pytest.mark.parametrize("precision,tol", [("bf16x3", 2e-5), ("bf16x6", 2e-7)])
def test_dot_split_bf16_precisions(backend, precision, tol):
    """fp32 dots as sums of bf16 dots: bf16x3 keeps ~16 bits, bf16x6 ~24 (Triton's
    input_precision="bf16x3"/"bf16x6")."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((32, 32)).astype(np.float32)
    y = rng.standard_normal((32, 32)).astype(np.float32)
    z = np.zeros((32, 32), np.float32)
    dot_precision_kernel[(1,)](x, y, z, P=precision, N=32)
    want = x.astype(np.float64) @ y.astype(np.float64)
    err = np.abs(z - want).max() / np.abs(want).max()
    assert err < tol, err
    bf16 = lambda v: (v.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)    # noqa: E731
    coarse = np.abs(bf16(x).astype(np.float64) @ bf16(y) - want).max() / np.abs(want).max()
    assert err < coarse / 50          # far better than one bf16 dot
