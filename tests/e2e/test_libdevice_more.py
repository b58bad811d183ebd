"""libdevice compositions (log1p, expm1, sinh, cosh, pow, signbit, isfinited) vs numpy."""
import numpy as np

import tilejit
import tilejit.language as tl
from tilejit.language.extra import libdevice


@tilejit.jit
def fns_kernel(x_ptr, y_ptr, out_ptr, flags_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + 0 * N + offs, libdevice.log1p(x))
    tl.store(out_ptr + 1 * N + offs, libdevice.expm1(x))
    tl.store(out_ptr + 2 * N + offs, libdevice.sinh(x))
    tl.store(out_ptr + 3 * N + offs, libdevice.cosh(x))
    tl.store(out_ptr + 4 * N + offs, libdevice.pow(x, y))
    tl.store(flags_ptr + offs, libdevice.signbit(x).to(tl.int32) + 2 * libdevice.isfinited(x).to(tl.int32))


def test_libdevice_compositions(backend, rng):
    N = 64
    x = np.concatenate([rng.uniform(-0.9, 3, 40), [1e-9, -1e-12, 0.0, -0.0, -2.0, -2.0, -8.0, 1.0,
                                                   np.inf, -np.inf, np.nan, 0.5],
                        rng.uniform(-0.01, 0.01, 12)]).astype(np.float32)
    y = np.concatenate([rng.uniform(-3, 3, 40), [2.0, 3.0, 0.0, 2.0, 3.0, 0.5, 1 / 3, np.nan,
                                                 2.0, 3.0, 0.0, -1.0], rng.uniform(-2, 2, 12)]).astype(np.float32)
    out = np.zeros((5, N), np.float32)
    flags = np.zeros(N, np.int32)
    fns_kernel[(1,)](x, y, out, flags, N=N)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        want = [np.log1p(xd), np.expm1(xd), np.sinh(xd), np.cosh(xd), np.power(xd, yd)]
    for got, ref in zip(out, want):   # fp64 exp/log inside, one rounding to fp32
        np.testing.assert_allclose(got, ref.astype(np.float32), rtol=2e-6, equal_nan=True)
    np.testing.assert_array_equal(flags, np.signbit(x).astype(np.int32) + 2 * np.isfinite(x))
