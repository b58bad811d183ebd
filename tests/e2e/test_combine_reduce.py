"""``tl.reduce`` with a general combine function (tuples included) -- one
``tt.combine_reduce`` op -- under every backend, against numpy references that
apply the combine function in the op's documented order (a pairwise tree along the
axis: round r pairs x[i], x[i + 2**r] for i = 0, 2**(r+1), ...)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


# ---------------------------------------------------------------- combine functions
@tilejit.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    # TorchInductor's triton_helpers.welford_combine, verbatim
    delta = tl.where(mean_1 == mean_2, 0.0, mean_2 - mean_1)
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (
        mean_1 + delta * w2_over_w,
        m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
        new_weight,
    )


@tilejit.jit
def maximum_with_index(a_value, a_index, b_value, b_index):
    # TorchInductor's triton_helpers.maximum_with_index (is_floating settled by the caller)
    mask = a_value > b_value
    equal = a_value == b_value
    a_isnan = a_value != a_value
    b_isnan = b_value != b_value
    mask |= a_isnan & (not b_isnan)
    equal |= a_isnan & b_isnan
    mask |= equal & (a_index < b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)


@tilejit.jit
def minimum_with_index(a_value, a_index, b_value, b_index):
    mask = a_value < b_value
    equal = a_value == b_value
    a_isnan = a_value != a_value
    b_isnan = b_value != b_value
    mask |= a_isnan & (not b_isnan)
    equal |= a_isnan & b_isnan
    mask |= equal & (a_index < b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)


@tilejit.jit
def poly(a, b):
    # not commutative nor associative: the order of combination shows in the result
    return a * 3 + b


@tilejit.jit
def three(a0, a1, a2, b0, b1, b2):
    return a0 + b0, tl.maximum(a1, b1), a2 * 2 - b2


# ---------------------------------------------------------------- references
def tree(xs, axis, combine):
    """The op's order in numpy: pairwise rounds along ``axis`` (None: flattened)."""
    if axis is None:
        xs = [x.reshape(-1) for x in xs]
        axis = 0
    xs = [np.moveaxis(x, axis, -1).copy() for x in xs]
    n, s = xs[0].shape[-1], 1
    with np.errstate(all="ignore"):
        while s < n:
            lo = np.arange(0, n - s, 2 * s)
            res = combine(*[x[..., lo] for x in xs], *[x[..., lo + s] for x in xs])
            for x, r in zip(xs, res):
                x[..., lo] = r
            s *= 2
    return [x[..., 0] for x in xs]


def np_welford(m1, s1, w1, m2, s2, w2):
    f = np.float32
    delta = np.where(m1 == m2, f(0), m2 - m1)
    nw = w1 + w2
    r = np.where(nw == 0, f(0), w2 / np.where(nw == 0, f(1), nw))
    return m1 + delta * r, s1 + s2 + delta * delta * w1 * r, nw


def np_argext(greater):
    def comb(av, ai, bv, bi):
        an, bn = np.isnan(av), np.isnan(bv)
        mask = (av > bv if greater else av < bv) | (an & ~bn)
        mask |= ((av == bv) | (an & bn)) & (ai < bi)
        return np.where(mask, av, bv), np.where(mask, ai, bi)
    return comb


# ---------------------------------------------------------------- kernels
@tilejit.jit
def welford_rows(x_ptr, mean_ptr, m2_ptr, w_ptr, R: tl.constexpr, C: tl.constexpr, NC: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    m = cols < NC
    x = tl.load(x_ptr + rows * NC + cols, m, other=0.0)
    w = tl.where(m, 1.0, 0.0) + tl.zeros([R, C], tl.float32)
    mean, m2, wt = tl.reduce((x, tl.zeros_like(x), w), 1, welford_combine)
    tl.store(mean_ptr + tl.arange(0, R), mean)
    tl.store(m2_ptr + tl.arange(0, R), m2)
    tl.store(w_ptr + tl.arange(0, R), wt)


@pytest.mark.parametrize("R,C,NC", [(4, 64, 64), (3, 128, 100), (1, 1024, 1000)])
def test_welford(backend, rng, R, C, NC):
    x = rng.standard_normal((R, NC)).astype(np.float32) * 3 + 1
    mean, m2, w = (np.zeros(R, np.float32) for _ in range(3))
    welford_rows[(1,)](x, mean, m2, w, R=R, C=C, NC=NC)
    np.testing.assert_array_equal(w, np.full(R, NC, np.float32))
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m2 / NC, x.astype(np.float64).var(1), rtol=1e-4)
    xp = np.zeros((R, C), np.float32)
    xp[:, :NC] = x
    wp = (np.arange(C) < NC).astype(np.float32)[None, :].repeat(R, 0)
    ref = tree([xp, np.zeros_like(xp), wp], 1, np_welford)
    np.testing.assert_allclose(mean, ref[0], rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(m2, ref[1], rtol=2e-6)


@tilejit.jit
def argext_kernel(x_ptr, vmax, imax, vmin, imin, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    idx = tl.broadcast_to(tl.arange(0, C)[None, :], (R, C)) if AXIS == 1 else \
        tl.broadcast_to(tl.arange(0, R)[:, None], (R, C))
    N: tl.constexpr = R if AXIS == 1 else C
    v, i = tl.reduce((x, idx), AXIS, maximum_with_index)
    tl.store(vmax + tl.arange(0, N), v)
    tl.store(imax + tl.arange(0, N), i)
    v, i = tl.reduce((x, idx), AXIS, minimum_with_index)
    tl.store(vmin + tl.arange(0, N), v)
    tl.store(imin + tl.arange(0, N), i)


@pytest.mark.parametrize("axis", [0, 1])
def test_argmax_argmin_ties_nan(backend, rng, axis):
    R, C = 8, 16
    x = rng.integers(-2, 3, (R, C)).astype(np.float32)      # many ties
    x[1, 5] = x[1, 9] = np.nan                                  # NaN wins, first NaN
    x[3, :] = 1.0                                               # all equal: index 0
    N = R if axis == 1 else C
    outs = [np.zeros(N, np.float32), np.zeros(N, np.int32), np.zeros(N, np.float32), np.zeros(N, np.int32)]
    argext_kernel[(1,)](x, *outs, R=R, C=C, AXIS=axis)
    idx = np.broadcast_to(np.arange(C)[None, :] if axis == 1 else np.arange(R)[:, None], (R, C)).astype(np.int32)
    for k, greater in ((0, True), (2, False)):
        v, i = tree([x, idx], axis, np_argext(greater))
        np.testing.assert_array_equal(outs[k + 1], i)
        np.testing.assert_array_equal(outs[k], v)
        # Triton's semantics: the first index of the extreme (NaN counts as the extreme)
        y = np.where(np.isnan(x), np.inf if greater else -np.inf, x)
        first = (np.argmax if greater else np.argmin)(y, axis=axis)
        np.testing.assert_array_equal(outs[k + 1], first)


@tilejit.jit
def poly_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr,
                KEEP: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + (a * B + b) * C + c)
    r = tl.reduce(x, AXIS, poly, keep_dims=KEEP)
    if AXIS == 0:
        o = b * C + c
    elif AXIS == 1:
        o = a * C + c
    else:
        o = a * B + b
    if KEEP:
        tl.store(out_ptr + o, r)
    else:
        tl.store(out_ptr + tl.reshape(o, r.shape), r)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("axis,keep", [(0, False), (1, True), (2, False), (2, True)])
def test_custom_combine_3d(backend, rng, dtype, axis, keep):
    A, B, C = 2, 4, 8
    x = rng.integers(-3, 4, (A, B, C)).astype(dtype)
    out = np.zeros([A, B, C][:axis] + [A, B, C][axis + 1:], dtype)
    poly_kernel[(1,)](x, out, A=A, B=B, C=C, AXIS=axis, KEEP=keep)
    with np.errstate(over="ignore"):
        (want,) = tree([x], axis, lambda a, b: (a * dtype(3) + b,))
    np.testing.assert_array_equal(out, want.astype(dtype))


@tilejit.jit
def three_kernel(x_ptr, y_ptr, z_ptr, out_ptr, N: tl.constexpr, NP: tl.constexpr):
    i = tl.arange(0, NP)
    m = i < N
    x = tl.load(x_ptr + i, m, other=0)
    y = tl.load(y_ptr + i, m, other=-1000.0)
    z = tl.load(z_ptr + i, m, other=0)
    s, mx, p = tl.reduce((x, y, z), None, three)           # axis None: scalars
    tl.store(out_ptr, s.to(tl.float32))
    tl.store(out_ptr + 1, mx)
    tl.store(out_ptr + 2, p.to(tl.float32))


@pytest.mark.parametrize("n", [1, 7, 24, 33])
def test_tuple_of_three_scalar(backend, rng, n):
    x = rng.integers(-5, 6, n).astype(np.int32)
    y = rng.standard_normal(n).astype(np.float32)
    z = rng.integers(-3, 4, n).astype(np.int64)
    out = np.zeros(3, np.float32)
    np2 = 1 << max(0, (n - 1).bit_length())
    three_kernel[(1,)](x, y, z, out, N=n, NP=max(np2, 1))
    pad = np2 - n                                            # the kernel reduces its padding too
    xp, yp, zp = np.pad(x, (0, pad)), np.pad(y, (0, pad), constant_values=-1000), np.pad(z, (0, pad))
    s, mx, p = tree([xp, yp, zp], None, lambda a0, a1, a2, b0, b1, b2: (a0 + b0, np.maximum(a1, b1), a2 * 2 - b2))
    np.testing.assert_array_equal(out, np.array([s, mx, p], np.float32))
    assert s == x.sum() and mx == y.max()


@tilejit.jit
def half_flag(a, af, b, bf):
    return tl.where(a > b, a, b), af ^ bf


@tilejit.jit
def half_flag_kernel(x_ptr, f_ptr, out_ptr, of_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    f = tl.load(f_ptr + offs) != 0
    m, p = tl.reduce((x, f), 1, half_flag)
    tl.store(out_ptr + tl.arange(0, R), m)
    tl.store(of_ptr + tl.arange(0, R), p.to(tl.int8))


def test_fp16_and_bool_operands(backend, rng):
    R, C = 4, 24
    x = rng.standard_normal((R, C)).astype(np.float16)
    f = rng.integers(0, 2, (R, C)).astype(np.int8)
    out, of = np.zeros(R, np.float16), np.zeros(R, np.int8)
    half_flag_kernel[(1,)](x, f, out, of, R=R, C=C)
    np.testing.assert_array_equal(out, x.max(1))
    np.testing.assert_array_equal(of, np.bitwise_xor.reduce(f, axis=1))
