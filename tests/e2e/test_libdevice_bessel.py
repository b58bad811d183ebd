"""libdevice Bessel functions (j0, j1, y0, y1, cyl_bessel_i0, cyl_bessel_i1) against
scipy.special in float64, on fp32 and fp64 tiles, and the edge values torch gives."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.language.extra import libdevice

special = pytest.importorskip("scipy.special", reason="scipy is the independent reference")
FNS = {"j0": special.j0, "j1": special.j1, "y0": special.y0, "y1": special.y1,
       "cyl_bessel_i0": special.i0, "cyl_bessel_i1": special.i1}


@tilejit.jit
def bessel_kernel(x_ptr, out_ptr, FN: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr + o)
    tl.store(out_ptr + o, getattr(libdevice, FN)(x))


def _inputs(rng, dtype):
    x = np.concatenate([rng.standard_normal(64) * 3, rng.uniform(0, 40, 48), rng.uniform(-700, 700, 8),
                        [0.0, 1e-6, -1e-6, 4.999, 5.0, 5.001, 7.999, 8.0, 8.001, 2.404825557695773,
                         3.8317059702075125, 0.8935769662791675, 2.197141326031017, -3.0, 1e3, 1e-30]])
    return x[:128].astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", sorted(FNS))
def test_bessel_against_scipy(backend, fn, dtype, rng):
    x = _inputs(rng, dtype)
    out = np.zeros_like(x)
    bessel_kernel[(1,)](x, out, FN=fn, N=x.size)
    with np.errstate(all="ignore"):
        want = FNS[fn](x.astype(np.float64))
    ok = np.isfinite(want) & (np.abs(want) < np.finfo(dtype).max)
    if dtype == np.float64:
        np.testing.assert_allclose(out[ok], want[ok], rtol=1e-12, atol=1e-15)
    else:       # one rounding of a float64 evaluation
        np.testing.assert_allclose(out[ok], want[ok].astype(np.float32), rtol=2e-7, atol=1e-30)
    if fn.startswith("y"):      # negative arguments: NaN; zero: -inf
        assert np.isnan(out[x < 0]).all() and (out[x == 0] == -np.inf).all()


def test_fast_dividef_imports_by_name():
    from tilejit.language.extra.libdevice import fast_dividef
    assert fast_dividef.__doc__
