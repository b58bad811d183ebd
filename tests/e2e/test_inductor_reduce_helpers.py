"""Reductions and scans with a user combine function over 2-D tiles, as TorchInductor's
``triton_helpers.max2`` (a NaN-propagating maximum) and its cumsum helper write them,
on rows holding -inf (a causal softmax mask), and the step under them: ``tl.split`` of a
tile reshaped to ``[XBLOCK, R // 2, 2]``.  On an H200 the cuda backend got these wrong
for (XBLOCK 8, 1 warp) and (32, 2 warps) -- the reshape reused registers although the
blocked layout's chunk width follows the last dimension -- which made torch.compile's
argmax, amax, cumsum and masked softmax wrong on CUDA."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def _nan_max(a, b):
    mask = a > b
    mask |= a != a
    return tl.where(mask, a, b)


@tilejit.jit
def _add(a, b):
    return a + b


@tilejit.jit
def masked_softmax_rows(p, out, n, XBLOCK: tl.constexpr, R: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xm = xi < n
    r = tl.arange(0, R)[None, :]
    x = tl.load(p + (r + R * xi), xm, other=0.0)
    x = tl.where(r > xi % R, float("-inf"), x)
    m = tl.reduce(tl.where(xm, x, float("-inf")), 1, _nan_max)[:, None]
    e = tl.exp(x - m)
    s = tl.sum(tl.where(xm, e, 0), 1)[:, None]
    tl.store(out + (r + R * xi), e / s, xm)


@tilejit.jit
def split_pairs(p, lo, hi, XBLOCK: tl.constexpr, R: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    x = tl.load(p + (tl.arange(0, R)[None, :] + R * xi))
    a, b = tl.split(tl.reshape(x, [XBLOCK, R // 2, 2]))
    h = tl.arange(0, R // 2)[None, :]
    tl.store(lo + (h + (R // 2) * xi), a)
    tl.store(hi + (h + (R // 2) * xi), b)


@tilejit.jit
def row_cumsum(p, out, n, XBLOCK: tl.constexpr, R: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xm = xi < n
    r = tl.arange(0, R)[None, :]
    x = tl.load(p + (r + R * xi), xm, other=0.0)
    (c,) = tl.associative_scan((x,), 1, _add)
    tl.store(out + (r + R * xi), c, xm)


@pytest.mark.parametrize("xblock,warps", [(1, 1), (8, 1), (8, 4), (32, 2)])
def test_custom_combine_reduce_with_neg_inf(backend, rng, xblock, warps):
    n, R = 64, 16
    x = rng.standard_normal((n, R)).astype(np.float32)
    out = np.zeros_like(x)
    masked_softmax_rows[(n // xblock,)](x, out, n, XBLOCK=xblock, R=R, num_warps=warps)
    rows = np.arange(n)[:, None] % R
    xm = np.where(np.arange(R)[None, :] > rows, -np.inf, x.astype(np.float64))
    e = np.exp(xm - xm.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("xblock,warps", [(1, 2), (32, 2)])
def test_custom_combine_scan_rows(backend, rng, xblock, warps):
    n, R = 64, 8
    x = rng.standard_normal((n, R)).astype(np.float32)
    out = np.zeros_like(x)
    row_cumsum[(n // xblock,)](x, out, n, XBLOCK=xblock, R=R, num_warps=warps)
    np.testing.assert_allclose(out, np.cumsum(x.astype(np.float64), 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("xblock,warps", [(8, 1), (32, 2), (8, 4)])
def test_split_of_reshaped_rows(backend, rng, xblock, warps):
    x = rng.standard_normal((64, 16)).astype(np.float32)
    lo, hi = np.zeros((64, 8), np.float32), np.zeros((64, 8), np.float32)
    split_pairs[(64 // xblock,)](x, lo, hi, XBLOCK=xblock, R=16, num_warps=warps)
    np.testing.assert_array_equal(lo, x[:, 0::2])
    np.testing.assert_array_equal(hi, x[:, 1::2])


# ---- compare-and-select extrema as one tt.reduce (frontend: scan.extremum_kind)
@tilejit.jit
def _nan_min(a, b):
    mask = a < b
    mask |= a != a
    return tl.where(mask, a, b)


@tilejit.jit
def _int_max(a, b):
    return tl.where(b < a, a, b)        # the compare written the other way round


@tilejit.jit
def _ge_no_nan_test(a, b):
    return tl.where(a >= b, a, b)       # floats without the NaN test: not an extremum kind


@tilejit.jit
def row_extremum(p, out, n, ncols, XBLOCK: tl.constexpr, R: tl.constexpr, WHICH: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    r = tl.arange(0, R)[None, :]
    m = (xi < n) & (r < ncols)
    if WHICH == 0:
        x = tl.load(p + (r + ncols * xi), m, other=float("-inf"))
        v = tl.reduce(x, 1, _nan_max)
    elif WHICH == 1:
        x = tl.load(p + (r + ncols * xi), m, other=float("inf"))
        v = tl.reduce(x, 1, _nan_min)
    elif WHICH == 2:
        x = tl.load(p + (r + ncols * xi), m, other=-2147483648)
        v = tl.reduce(x, 1, _int_max)
    else:
        x = tl.load(p + (r + ncols * xi), m, other=float("-inf"))
        v = tl.reduce(x, 1, _ge_no_nan_test)
    tl.store(out + xi, v[:, None], xi < n)


def _special_rows(rng, n, ncols):
    x = rng.standard_normal((n, ncols)).astype(np.float32)
    x[1, 3] = np.nan                      # one NaN
    x[2, :] = np.nan                      # all NaN
    x[3, :] = -np.inf
    x[4, :] = 0.0
    x[4, ::2] = -0.0                      # +-0 ties
    x[5, :] = -np.abs(x[5, :])
    x[5, -1] = -0.0
    x[6, -1] = np.nan                     # NaN in the last column (a partial lane)
    x[7, 0] = np.float32(-np.nan)         # a negative NaN
    x[8, :] = np.inf
    return x


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("xblock,ncols,R", [(1, 64, 64), (8, 13, 16), (4, 37, 64), (16, 32, 32)])
def test_nan_propagating_extremum(backend, rng, which, xblock, ncols, R):
    n = 21                                 # not a multiple of XBLOCK: masked rows
    x = _special_rows(rng, n, ncols)
    out = np.full(n, 7.0, np.float32)
    row_extremum[(-(-n // xblock),)](x, out, n, ncols, XBLOCK=xblock, R=R, WHICH=which)
    want = x.max(1) if which == 0 else x.min(1)         # numpy's max/min propagate NaN
    np.testing.assert_array_equal(out, want)            # +-0 compare equal: the sign is unspecified
    assert np.isnan(out[[1, 2, 6, 7]]).all()


def _nan_extremum_ref(x, which):
    """Rows' NaN-propagating max (min) as bit patterns: float("nan") where a row holds a
    NaN, else the extreme; a zero result as +0.0 (its sign is unspecified)."""
    with np.errstate(invalid="ignore"):
        out = np.where(np.isnan(x).any(1), np.nan, x.max(1) if which == 0 else x.min(1)).astype(x.dtype)
    return np.where(out == 0, 0, out).astype(x.dtype).view(f"u{x.dtype.itemsize}")


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("xblock,ncols,R", [(1, 37, 64), (8, 13, 16)])
def test_nan_extremum_bits(backend, rng, which, dtype, xblock, ncols, R):
    """Bit-exact on every backend (float("nan") for a row with a NaN): NaN first, middle,
    last, alone, negative, all; ties of +-0 (a zero's sign unspecified); infinities."""
    n = 19
    x = _special_rows(rng, n, ncols).astype(dtype)
    x[9, 0] = np.nan
    x[10, ncols // 2] = np.nan
    x[11, :] = 0.0
    x[11, -1] = -0.0
    x[12, :] = -0.0
    x[12, 0] = 0.0
    x[13, 0], x[13, -1] = -np.inf, np.inf
    out = np.full(n, 7.0, dtype)
    row_extremum[(-(-n // xblock),)](x, out, n, ncols, XBLOCK=xblock, R=R, WHICH=which)
    out[out == 0] = 0
    np.testing.assert_array_equal(out.view(f"u{out.itemsize}"), _nan_extremum_ref(x, which))


@pytest.mark.parametrize("xblock,ncols,R", [(1, 64, 64), (8, 13, 16)])
def test_int_select_max(backend, rng, xblock, ncols, R):
    n = 19
    x = rng.integers(-2**31, 2**31 - 1, (n, ncols), dtype=np.int32)
    x[3, :] = -2**31
    out = np.zeros(n, np.int32)
    row_extremum[(-(-n // xblock),)](x, out, n, ncols, XBLOCK=xblock, R=R, WHICH=2)
    np.testing.assert_array_equal(out, x.max(1))


def test_select_without_nan_test_stays_a_combine_reduce(backend, rng):
    n, ncols = 8, 16
    x = rng.standard_normal((n, ncols)).astype(np.float32)
    out = np.zeros(n, np.float32)
    row_extremum[(n,)](x, out, n, ncols, XBLOCK=1, R=16, WHICH=3)
    np.testing.assert_array_equal(out, x.max(1))


def test_extremum_combines_become_one_reduce():
    from tilejit.frontend import build_ir
    from tilejit.ir.printer import print_function
    from tilejit.ir.types import dtype_from_name
    for which, kinds in ((0, {"max"}), (1, {"min", "max"}), (2, {"max"}), (3, set())):   # max: the NaN test
        el = dtype_from_name("*i32" if which == 2 else "*fp32")
        types = {"p": el, "out": el, "n": dtype_from_name("i32"), "ncols": dtype_from_name("i32")}
        text = print_function(build_ir(row_extremum, types, {"XBLOCK": 8, "R": 16, "WHICH": which}))
        found = {k for k in ("max", "min") if f'kind = "{k}"' in text}
        assert found == kinds, (which, found)
        assert ('tt.combine_reduce' in text) == (which == 3)     # any other combine: its own op


# ---- tl.max / tl.min along the last axis: W partial lanes per row as one vector (cpu)
@tilejit.jit
def rows_max_min(p, mx, mn, n, ncols, M: tl.constexpr, R: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, R)[None, :]
    m = (rows < n) & (cols < ncols)
    x = tl.load(p + rows * ncols + cols, m, other=float("nan"))      # NaN: skipped by tl.max/min
    tl.store(mx + tl.arange(0, M), tl.max(x, 1), tl.arange(0, M) < n)
    tl.store(mn + tl.arange(0, M), tl.min(x, 1), tl.arange(0, M) < n)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n,ncols,M,R", [(5, 64, 8, 64), (3, 40, 4, 64), (7, 8, 8, 8), (2, 19, 2, 32)])
def test_last_axis_max_min_partial_lanes(backend, rng, dtype, n, ncols, M, R):
    x = rng.standard_normal((n, ncols)).astype(dtype)
    x[0, ncols // 2] = np.nan
    x[-1, :] = np.nan                     # all NaN: NaN
    if n > 2:
        x[1, :] = -np.inf
        x[1, -1] = 3.0                    # the extreme in the last lane
    mx, mn = np.zeros(n, dtype), np.zeros(n, dtype)
    rows_max_min[(1,)](x, mx, mn, n, ncols, M=M, R=R)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(mx, np.fmax.reduce(x, axis=1))
        np.testing.assert_array_equal(mn, np.fmin.reduce(x, axis=1))


# ---- Inductor's looped reductions: a vector-planned load deferred into the carried update
@tilejit.jit
def red_rows(p, out, xnumel, rnumel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr, ZERO: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, rnumel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < rnumel
        tmp0 = tl.load(p + (r0_index + rnumel * xindex), r0_mask & xmask, other=0.0)
        tmp3 = _tmp2 + tmp0
        if ZERO:       # a write between the load and the carried update: the load stays first
            tl.store(p + (r0_index + rnumel * xindex), tl.zeros([XBLOCK, R0_BLOCK], tl.float32),
                     r0_mask & xmask)
        _tmp2 = tl.where(r0_mask & xmask, tmp3, _tmp2)
    tl.store(out + xindex, tl.sum(_tmp2, 1)[:, None], xmask)


@pytest.mark.parametrize("zero", [False, True])
@pytest.mark.parametrize("xnumel,rnumel,xblock,rblock", [(7, 1000, 4, 64), (64, 2048, 1, 256), (3, 17, 2, 16)])
def test_looped_row_sum(backend, rng, zero, xnumel, rnumel, xblock, rblock):
    x = rng.standard_normal((xnumel, rnumel)).astype(np.float32)
    want = x.astype(np.float64).sum(1)
    out = np.zeros(xnumel, np.float32)
    red_rows[(-(-xnumel // xblock),)](x, out, xnumel, rnumel, XBLOCK=xblock, R0_BLOCK=rblock, ZERO=zero)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    assert (x == 0).all() == zero
