"""libdevice erfc, erfcx, erfinv, normcdf and fmod (as TorchInductor emits them for
torch.erfc, torch.special.erfcx / log_ndtr, torch.erfinv, torch.fmod) against
scipy.special / numpy in float64, on fp32 and fp64 tiles, edge values included."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.language.extra import libdevice

special = pytest.importorskip("scipy.special", reason="scipy is the independent reference")
FNS = {"erfc": special.erfc, "erfcx": special.erfcx, "erfinv": special.erfinv, "normcdf": special.ndtr}


@tilejit.jit
def unary_kernel(x_ptr, out_ptr, FN: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, getattr(libdevice, FN)(tl.load(x_ptr + o)))


@tilejit.jit
def fmod_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, libdevice.fmod(tl.load(x_ptr + o), tl.load(y_ptr + o)))


def _inputs(rng, fn, dtype):
    if fn == "erfinv":
        x = np.concatenate([rng.uniform(-1, 1, 80), 1 - 10.0 ** -rng.uniform(1, 16, 30),
                            [0.0, -0.0, 0.5, -0.5, 0.49999, 1e-30, 1.0, -1.0, 1.5, -2.0, np.nan]])
    else:
        x = np.concatenate([rng.standard_normal(50) * 3, rng.uniform(-30, 30, 50),
                            [0.0, 1.0, -1.0, 0.99999, 1.00001, 7.99999, 8.0, -8.0, 26.0, -26.0, 30.0,
                             1e-30, 1e10, 1e60, -1e60, np.inf, -np.inf, np.nan]])
    x = np.resize(x, 128)
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", sorted(FNS))
def test_erf_family_against_scipy(backend, fn, dtype, rng):
    x = _inputs(rng, fn, dtype)
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, FN=fn, N=x.size)
    with np.errstate(all="ignore"):
        want = FNS[fn](x.astype(np.float64))
        narrow = want.astype(dtype)
    tiny = np.finfo(dtype).tiny * 2**20          # scipy flushes erfc near its underflow
    ok = np.isfinite(narrow) & (np.abs(want) > tiny)
    if dtype == np.float64:
        np.testing.assert_allclose(out[ok], want[ok], rtol=1e-13)
    else:       # one rounding of a float64 evaluation
        np.testing.assert_allclose(out[ok], narrow[ok], rtol=1.2e-7)
    special_ = ~np.isfinite(narrow)
    np.testing.assert_array_equal(out[special_], narrow[special_])     # inf, -inf, NaN alike
    assert (np.abs(out[np.abs(want) <= tiny]) <= tiny * 2).all()


def test_erf_family_edges(backend):
    x = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.0, 40.0, -40.0], dtype=np.float32)
    got = {}
    for fn in ("erfc", "erfcx", "erfinv"):
        pad, res = np.resize(x, 16), np.zeros(16, dtype=np.float32)
        unary_kernel[(1,)](pad, res, FN=fn, N=16)
        got[fn] = res[:x.size]
    np.testing.assert_array_equal(got["erfc"][[0, 2, 3, 7, 8]], [1, 0, 2, 0, 2])
    np.testing.assert_array_equal(got["erfcx"][[0, 2, 3, 8]], [1, 0, np.inf, np.inf])
    inv = got["erfinv"]
    assert inv[0] == 0 and np.signbit(inv[1]) and inv[4] == np.inf and inv[5] == -np.inf
    assert np.isnan(inv[[2, 3, 6, 7, 8]]).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fmod_matches_numpy(backend, dtype, rng):
    x = np.concatenate([rng.standard_normal(40) * 100, [5.5, -5.5, 0.0, -0.0, 1e30, -1e30, 7.0, np.inf, -np.inf,
                                                         np.nan, 3.0, 1e-30, 2.0**100, 3.0]])
    y = np.concatenate([rng.standard_normal(40) * 3, [2.0, 2.0, 3.0, 3.0, 7.0, 3.0, np.inf, 2.0, 2.0,
                                                      1.0, 0.0, 3.0, 3.0, -0.0]])
    x, y = np.resize(x, 64).astype(dtype), np.resize(y, 64).astype(dtype)
    out = np.zeros_like(x)
    fmod_kernel[(1,)](x, y, out, N=64)
    with np.errstate(invalid="ignore"):
        want = np.fmod(x, y)
    np.testing.assert_array_equal(out, want)        # exact, NaN where numpy's is
    np.testing.assert_array_equal(np.signbit(out[~np.isnan(out)]), np.signbit(want[~np.isnan(want)]))


def test_fmod_rejects_integers():
    with pytest.raises(Exception, match="fmod expects floating-point"):
        fmod_kernel[(1,)](np.arange(8, dtype=np.int32), np.ones(8, dtype=np.int32), np.zeros(8, dtype=np.int32), N=8)
