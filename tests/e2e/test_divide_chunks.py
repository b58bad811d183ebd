"""fp32 ``x / y`` with a divisor per element and ``1 / y`` (``tl.sigmoid``'s form) are
correctly rounded on every backend: on CUDA a thread's slots take div.rn.f32's fast path
behind one range check (``rules_elementwise._div_chunk``), the rest ``div.rn.f32``.
Checked bit for bit against numpy's IEEE fp32 division, over chunks wholly in range and
chunks holding zeros, subnormals, huge values, infinities and NaN."""
import numpy as np

import tilejit
import tilejit.language as tl

BLOCK = 1024


@tilejit.jit
def divide_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)
    tl.store(out_ptr + offs, x / y, mask=m)
    tl.store(out_ptr + n + offs, 1 / y, mask=m)
    d = 1 + tl.exp(-x)
    tl.store(out_ptr + 2 * n + offs, d, mask=m)
    tl.store(out_ptr + 3 * n + offs, tl.sigmoid(x), mask=m)


def _edges():
    p = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 1.1754942e-38, 1.1754944e-38,
         2.0 ** -126, 2.0 ** 126, 2.0 ** 126 * 0.99999994, 2.0 ** 127, 3.4e38, -3.4e38,
         2.0 ** -60, 2.0 ** 60, 2.0 ** -61, 2.0 ** 61, 8.6e-19, 1.16e18, 1.0, -1.0, 3.0, 0.1]
    return np.float32(p)


def _inputs(rng):
    n = 64 * BLOCK
    x = rng.standard_normal(n).astype(np.float32) * np.float32(8)
    y = (rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))).astype(np.float32)
    e = _edges()
    # the first half of the programs: every element in range; the second: edge values
    # scattered so that some threads' chunks take the exact path and others do not
    at = rng.choice(np.arange(n // 2, n), size=600, replace=False)
    x[at[:300]] = rng.choice(e, 300)
    y[at[300:]] = rng.choice(e, 300)
    x[-len(e):], y[-len(e) - 7:-7] = e, e[::-1]
    # sigmoid's denominators past 2**126 (x below -87.3) and at the range's edge
    x[n // 2: n // 2 + 8] = np.float32([-87.0, -87.5, -88.8, -90.0, -104.0, -150.0, -1e30, 88.0])
    return x, y


def test_divide_correctly_rounded(backend, rng):
    x, y = _inputs(rng)
    if backend == "interpreter":
        x, y = x[-8 * BLOCK:], y[-8 * BLOCK:]
    n = len(x)
    out = np.full(4 * n, -7.0, np.float32)
    divide_kernel[(tilejit.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[:n], x / y)
        np.testing.assert_array_equal(out[n:2 * n], np.float32(1) / y)
        d = out[2 * n:3 * n]
        np.testing.assert_array_equal(out[3 * n:], np.float32(1) / d)   # 1 / (1 + exp(-x)) exactly
        q = x / y
    num = ~np.isnan(q)                                                  # (a NaN's sign is the target's)
    assert np.array_equal(np.signbit(out[:n][num]), np.signbit(q[num]))  # signed zeros too
