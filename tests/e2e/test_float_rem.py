"""Float ``%`` (C ``fmod``: the dividend's sign) against ``np.fmod``, bit for bit, on
every backend: huge quotients (NVPTX's ``frem`` expansion got ``1e30 % 3`` wrong by
2.8e22), subnormal dividends and divisors, zeros, infinities and NaN."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def rem_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, tl.load(x_ptr + o) % tl.load(y_ptr + o))


def _pairs(dt, rng, n=256):
    fi = np.finfo(dt)
    big = (rng.uniform(0.5, 1, 48) * 2.0 ** rng.integers(0, fi.maxexp, 48)).astype(dt)
    sub = (rng.integers(1, 1 << 9, 48) * fi.smallest_subnormal).astype(dt)
    with np.errstate(over="ignore"):                # 1e30 and 2**100 are inf in fp16
        edge = np.array([0.0, -0.0, 5.5, -5.5, 1e30, 2.0 ** 100, np.inf, -np.inf, np.nan, fi.max, fi.tiny,
                         fi.smallest_subnormal], dtype=dt)
    ex, ey = np.meshgrid(edge, edge[[0, 2, 3, 4, 6, 8, 10, 11]])
    x = np.concatenate([big, rng.standard_normal(48).astype(dt), sub, sub[::-1], ex.ravel()])
    y = np.concatenate([rng.standard_normal(48).astype(dt) * 3, sub, rng.standard_normal(48).astype(dt),
                        sub, ey.ravel()])
    return np.resize(x, n).astype(dt), np.resize(y, n).astype(dt)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_float_rem_matches_numpy_fmod(backend, dt, rng):
    x, y = _pairs(dt, rng)
    out = np.zeros_like(x)
    rem_kernel[(1,)](x, y, out, N=x.size)
    with np.errstate(invalid="ignore"):
        want = np.fmod(x, y)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(out), nan)
    np.testing.assert_array_equal(out[~nan], want[~nan])
    np.testing.assert_array_equal(np.signbit(out[~nan]), np.signbit(want[~nan]))
