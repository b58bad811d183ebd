"""tl.associative_scan / tl.reduce with user @jit combine functions (tuples too),
cumprod, histogram, against numpy."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def _add(a, b):
    return a + b


@tilejit.jit
def _mul(a, b):
    return a * b


@tilejit.jit
def _affine(a1, b1, a2, b2):
    """Composition of x -> a*x + b maps (associative, not commutative)."""
    return a1 * a2, b1 * a2 + b2


@tilejit.jit
def _argmax_combine(v1, i1, v2, i2):
    take2 = (v2 > v1) | ((v2 == v1) & (i2 < i1))
    return tl.where(take2, v2, v1), tl.where(take2, i2, i1)


@tilejit.jit
def _absmax(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))


@tilejit.jit
def scan_kernel(x_ptr, y_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr,
                REVERSE: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if MODE == "add":
        r = tl.associative_scan(x, AXIS, _add, reverse=REVERSE)
    elif MODE == "cumprod":
        r = tl.cumprod(y, AXIS, reverse=REVERSE)
    else:
        a, r = tl.associative_scan((y, x), AXIS, _affine, reverse=REVERSE)
    tl.store(out_ptr + offs, r)


def _affine_ref(a, b, axis, reverse):
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    out = np.empty_like(b)
    n = a.shape[-1]
    order = range(n - 1, -1, -1) if reverse else range(n)
    acc_a = acc_b = None
    for j in order:
        if acc_a is None:
            acc_a, acc_b = a[..., j], b[..., j]
        else:
            acc_a, acc_b = acc_a * a[..., j], acc_b * a[..., j] + b[..., j]
        out[..., j] = acc_b
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("mode,axis,reverse", [("add", 0, False), ("add", 1, True), ("cumprod", 1, False),
                                               ("cumprod", 0, True), ("affine", 0, True), ("affine", 1, False)])
def test_scans(backend, rng, axis, reverse, mode):
    R, C = 4, 16
    x = rng.integers(-5, 6, (R, C)).astype(np.int32)
    y = rng.integers(1, 3, (R, C)).astype(np.int32) * rng.choice([-1, 1], (R, C)).astype(np.int32)
    out = np.zeros((R, C), np.int32)
    scan_kernel[(1,)](x, y, out, R=R, C=C, AXIS=axis, REVERSE=reverse, MODE=mode)
    if mode == "add":
        src = np.flip(x, axis) if reverse else x
        want = np.cumsum(src, axis=axis)
        want = np.flip(want, axis) if reverse else want
    elif mode == "cumprod":
        src = np.flip(y, axis) if reverse else y
        want = np.cumprod(src, axis=axis)
        want = np.flip(want, axis) if reverse else want
    else:
        want = _affine_ref(y, x, axis, reverse)
    np.testing.assert_array_equal(out, want.astype(np.int32))


@tilejit.jit
def float_scan_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), tl.cumprod(x, 0))


def test_float_cumprod(backend, rng):
    x = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    out = np.zeros(64, np.float32)
    float_scan_kernel[(1,)](x, out, N=64)
    np.testing.assert_allclose(out, np.cumprod(x.astype(np.float64)), rtol=1e-5)


@tilejit.jit
def user_reduce_kernel(x_ptr, vals_ptr, idx_ptr, absmax_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    offs = rows[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    idx = tl.broadcast_to(tl.arange(0, C)[None, :], (R, C))
    v, i = tl.reduce((x, idx), 1, _argmax_combine)
    tl.store(vals_ptr + rows, v)
    tl.store(idx_ptr + rows, i)
    tl.store(absmax_ptr, tl.reduce(x, None, _absmax))
    tl.store(absmax_ptr + 1 + tl.arange(0, C), tl.reduce(x, 0, _mul))


def test_reduce_user_combine_tuples(backend, rng):
    R, C = 8, 32
    x = rng.integers(-4, 5, (R, C)).astype(np.float32)
    vals, idx = np.zeros(R, np.float32), np.zeros(R, np.int32)
    am = np.zeros(1 + C, np.float32)
    user_reduce_kernel[(1,)](x, vals, idx, am, R=R, C=C)
    np.testing.assert_array_equal(vals, x.max(1))
    np.testing.assert_array_equal(idx, x.argmax(1))
    assert am[0] == np.abs(x).max()
    np.testing.assert_array_equal(am[1:], np.prod(x.astype(np.float64), axis=0))


@tilejit.jit
def histogram_builtin_kernel(x_ptr, out_ptr, n, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    h = tl.histogram(x, BINS, mask=offs < n)
    tl.store(out_ptr + tl.arange(0, BINS), h)


def test_histogram_builtin(backend, rng):
    n, N, B = 100, 128, 16
    x = rng.integers(-2, B + 2, N).astype(np.int32)
    out = np.zeros(B, np.int32)
    histogram_builtin_kernel[(1,)](x, out, n, N=N, BINS=B)
    xs = x[:n]
    np.testing.assert_array_equal(out, np.bincount(xs[(xs >= 0) & (xs < B)], minlength=B))


@tilejit.jit
def gather_kernel(x_ptr, i_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, M: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    idx = tl.load(i_ptr + tl.arange(0, R)[:, None] * M + tl.arange(0, M)[None, :])
    tl.store(out_ptr + tl.arange(0, R)[:, None] * M + tl.arange(0, M)[None, :], tl.gather(x, idx, 1))


def test_gather(backend, rng):
    R, C, M = 4, 16, 8
    x = rng.standard_normal((R, C)).astype(np.float32)
    x[0, 3] = -0.0
    idx = rng.integers(0, C, (R, M)).astype(np.int32)
    idx[0, 0] = 3
    out = np.zeros((R, M), np.float32)
    gather_kernel[(1,)](x, idx, out, R=R, C=C, M=M)
    want = np.take_along_axis(x, idx, 1)
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))


@tilejit.jit
def cumsum_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr,
                  REVERSE: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=AXIS, reverse=REVERSE))


@pytest.mark.parametrize("shape,axis,reverse,dtype", [((2, 1024), 1, False, np.int32),
                                                      ((1024, 2), 0, True, np.float32),
                                                      ((1, 1024), 1, True, np.int32),
                                                      ((32, 32), 0, False, np.int64)])
def test_cumsum_long_axis(backend, rng, shape, axis, reverse, dtype):
    """A long cumsum axis (an n x n masked tile would need MiBs of a GPU program's shared
    memory) is scanned pairwise: valid on every backend, sm_90 included."""
    x = rng.integers(-50, 51, shape).astype(dtype)
    out = np.zeros(shape, dtype)
    cumsum_kernel[(1,)](x, out, R=shape[0], C=shape[1], AXIS=axis, REVERSE=reverse, num_warps=16)
    src = np.flip(x, axis) if reverse else x
    want = np.cumsum(src.astype(np.float64), axis=axis)
    want = np.flip(want, axis) if reverse else want
    np.testing.assert_array_equal(out, want.astype(dtype))
