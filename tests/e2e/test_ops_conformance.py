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
