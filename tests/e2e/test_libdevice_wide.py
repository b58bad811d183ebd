"""The wider libdevice set (libdevice_more.py) against numpy references in float64."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.language.extra import libdevice

N = 128


@tilejit.jit
def unary_kernel(x_ptr, out_ptr, FN: tl.constexpr):
    o = tl.arange(0, 128)
    tl.store(out_ptr + o, getattr(libdevice, FN)(tl.load(x_ptr + o)))


@tilejit.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, FN: tl.constexpr):
    o = tl.arange(0, 128)
    tl.store(out_ptr + o, getattr(libdevice, FN)(tl.load(x_ptr + o), tl.load(y_ptr + o)))


def _x(rng, lo, hi, extra=()):
    x = np.concatenate([rng.uniform(lo, hi, N - len(extra)), extra])
    return x


def _round_away(x):
    a = np.abs(x)
    return np.copysign(np.floor(a) + (a - np.floor(a) >= 0.5), x)


UNARY = {   # name: (reference, input range, special inputs)
    "atan": (np.arctan, (-50, 50), [0.0, -0.0, np.inf, -np.inf, np.nan, 0.66, 2.4142135623730951, 1e-30]),
    "asin": (np.arcsin, (-1, 1), [1.0, -1.0, 0.0, 1.5, -2.0, 0.5, 1e-20]),
    "acos": (np.arccos, (-1, 1), [1.0, -1.0, 0.0, 1.5, 0.5]),
    "asinh": (np.arcsinh, (-100, 100), [0.0, 1e-10, -1e-8, 1e200, -1e200]),
    "acosh": (np.arccosh, (1, 100), [1.0, 1.0 + 1e-12, 0.5, 1e200]),
    "atanh": (np.arctanh, (-1, 1), [0.0, 1e-10, 1.0, -1.0, 2.0]),
    "cbrt": (np.cbrt, (-1000, 1000), [0.0, -0.0, 27.0, -8.0, 1e-300, np.inf, -np.inf]),
    "log10": (np.log10, (1e-3, 1e6), [1.0, 10.0, 1000.0]),
    "exp10": (lambda x: 10.0 ** x, (-30, 30), [0.0, 1.0, 2.0]),
    "rint": (np.rint, (-10, 10), [0.5, 1.5, 2.5, -0.5, -2.5, 1e20, -0.0]),
    "round": (_round_away, (-10, 10), [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 1e20]),
    "sinpi": (lambda x: np.sin(np.pi * x), (-3, 3), [0.0]),
    "cospi": (lambda x: np.cos(np.pi * x), (-3, 3), [0.0]),
    "saturatef": (lambda x: np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0)), (-2, 3), [np.nan, 1.0, 0.0]),
}
BINARY = {
    "atan2": (np.arctan2, [(0.0, -1.0), (-0.0, -1.0), (0.0, 0.0), (-0.0, -0.0), (1.0, 0.0), (np.inf, np.inf),
                           (-np.inf, -np.inf), (np.inf, 1.0), (1.0, -np.inf), (np.nan, 1.0)]),
    "hypot": (np.hypot, [(3.0, 4.0), (1e300, 1e300), (np.inf, np.nan), (0.0, 0.0), (-5.0, 12.0)]),
    "fdim": (lambda x, y: np.where(x > y, x - y, np.where(np.isnan(x) | np.isnan(y), np.nan, 0.0)),
             [(1.0, 2.0), (2.0, 1.0), (np.nan, 1.0)]),
    "copysign": (np.copysign, [(1.0, -0.0), (-2.0, 3.0), (0.0, -1.0), (np.inf, -1.0)]),
}


def _check(out, want, dtype):
    if dtype == np.float32:
        want = want.astype(np.float32)
        np.testing.assert_allclose(out, want, rtol=3e-7, atol=0, equal_nan=True)
    else:
        np.testing.assert_allclose(out, want, rtol=4e-15, atol=1e-300, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", sorted(UNARY))
def test_unary(backend, fn, dtype, rng):
    ref, (lo, hi), extra = UNARY[fn]
    x = _x(rng, lo, hi, extra).astype(dtype)
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, FN=fn)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    if fn in ("rint", "round", "cbrt") or dtype == np.float32:
        _check(out, want, dtype)
    else:       # transcendental in float64: a few ulp
        np.testing.assert_allclose(out, want, rtol=5e-15 if fn != "exp10" else 2e-13, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", sorted(BINARY))
def test_binary(backend, fn, dtype, rng):
    ref, special = BINARY[fn]
    xs, ys = zip(*special)
    x = np.concatenate([rng.uniform(-10, 10, N - len(xs)), xs]).astype(dtype)
    y = np.concatenate([rng.uniform(-10, 10, N - len(ys)), ys]).astype(dtype)
    out = np.zeros_like(x)
    binary_kernel[(1,)](x, y, out, FN=fn)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64), y.astype(np.float64))
    _check(out, want, dtype)
    np.testing.assert_array_equal(np.signbit(out[~np.isnan(out)]), np.signbit(want[~np.isnan(out)]))


@tilejit.jit
def int_kernel(x_ptr, out_ptr, FN: tl.constexpr):
    o = tl.arange(0, 128)
    tl.store(out_ptr + o, getattr(libdevice, FN)(tl.load(x_ptr + o)).to(out_ptr.dtype.element_ty))


def _bits(x, width):
    return [int(v) & ((1 << width) - 1) for v in x]


INT_FNS = {
    "popc": lambda v, w: bin(v).count("1"),
    "clz": lambda v, w: w - v.bit_length(),
    "ffs": lambda v, w: (v & -v).bit_length(),
    "brev": lambda v, w: int(format(v, f"0{w}b")[::-1], 2),
}


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("fn", sorted(INT_FNS))
def test_integer_bits(backend, fn, dtype, rng):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    x[:4] = np.array([0, 1, info.max, info.min], dtype=dtype)
    width = info.bits
    out_dtype = dtype if fn == "brev" else np.int32
    out = np.zeros(N, out_dtype)
    int_kernel[(1,)](x, out, FN=fn)
    want = [INT_FNS[fn](v, width) for v in _bits(x, width)]
    if fn == "brev":
        want = np.array(want, dtype=np.uint64).astype(dtype)
    np.testing.assert_array_equal(out, np.array(want).astype(out_dtype))


@tilejit.jit
def to_int_kernel(x_ptr, out_ptr, FN: tl.constexpr):
    o = tl.arange(0, 128)
    tl.store(out_ptr + o, getattr(libdevice, FN)(tl.load(x_ptr + o)))


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
@pytest.mark.parametrize("src", ["float", "double"])
def test_float_to_int_rounding(backend, src, mode, rng):
    x = np.concatenate([rng.uniform(-1000, 1000, N - 8), [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -3.7]])
    x = x.astype(np.float32 if src == "float" else np.float64)
    out = np.zeros(N, np.int32)
    to_int_kernel[(1,)](x, out, FN=f"{src}2int_{mode}")
    rounder = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode]
    np.testing.assert_array_equal(out, rounder(x.astype(np.float64)).astype(np.int32))


@tilejit.jit
def misc_kernel(f_ptr, i_ptr, out_f, out_i, out_d):
    o = tl.arange(0, 128)
    f = tl.load(f_ptr + o)
    i = tl.load(i_ptr + o)
    tl.store(out_i + o, libdevice.float_as_int(f))
    tl.store(out_f + o, libdevice.int_as_float(i))
    tl.store(out_f + 128 + o, libdevice.ldexp(f, i % 40 - 20))
    tl.store(out_f + 256 + o, libdevice.norm3d(f, f, f))
    tl.store(out_f + 384 + o, libdevice.fast_expf(f * 0.01))
    tl.store(out_d + o, libdevice.llrint(f).to(tl.float64))


def test_bitcasts_ldexp_norms(backend, rng):
    f = rng.uniform(-100, 100, N).astype(np.float32)
    i = rng.integers(-2**31, 2**31 - 1, N).astype(np.int32)
    out_f = np.zeros(4 * N, np.float32)
    out_i = np.zeros(N, np.int32)
    out_d = np.zeros(N, np.float64)
    misc_kernel[(1,)](f, i, out_f, out_i, out_d)
    np.testing.assert_array_equal(out_i, f.view(np.int32))
    np.testing.assert_array_equal(out_f[:N].view(np.int32), i)
    np.testing.assert_array_equal(out_f[N:2 * N], np.ldexp(f, (np.fmod(i, 40) - 20)).astype(np.float32))
    np.testing.assert_allclose(out_f[2 * N:3 * N], np.sqrt(3.0) * np.abs(f.astype(np.float64)), rtol=3e-7)
    np.testing.assert_allclose(out_f[3 * N:], np.exp(f * np.float32(0.01)), rtol=2e-6)
    np.testing.assert_array_equal(out_d, np.rint(f.astype(np.float64)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["lgamma", "tgamma"])
def test_gamma(backend, fn, dtype, rng):
    special = pytest.importorskip("scipy.special", reason="scipy is the reference")
    x = np.concatenate([rng.uniform(-15, 35, N - 12), [0.5, 1.0, 2.0, 3.0, 1e-8, -0.5, -2.5, 0.0, -0.0,
                                                      -3.0, np.inf, 170.5]]).astype(dtype)
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, FN=fn)
    with np.errstate(all="ignore"):
        want = (special.gammaln if fn == "lgamma" else special.gamma)(x.astype(np.float64))
    if fn == "tgamma":
        want = np.where(x == -3.0, np.nan, want)          # C: NaN at negative integers
    want = want.astype(dtype)
    fin = np.isfinite(want)
    np.testing.assert_array_equal(out[~fin], want[~fin])
    tol = 1e-11 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(out[fin], want[fin], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exponents_and_nextafter(backend, dtype, rng):
    x = np.concatenate([rng.standard_normal(N - 8) * 1e3, [0.0, -0.0, np.inf, np.nan, 1.0, 0.75,
                                                           np.finfo(dtype).tiny / 8, -np.finfo(dtype).max]])
    x = x.astype(dtype)
    y = np.concatenate([rng.standard_normal(N - 8) * 1e3, [1.0, -1.0, 0.0, 1.0, 1.0, 0.75, 1.0, 0.0]]).astype(dtype)
    out = np.zeros_like(x)
    binary_kernel[(1,)](x, y, out, FN="nextafter")
    np.testing.assert_array_equal(out, np.nextafter(x, y))
    logb = np.zeros_like(x)
    unary_kernel[(1,)](x, logb, FN="logb")
    with np.errstate(all="ignore"):
        want = np.where(np.isfinite(x) & (x != 0), np.frexp(x)[1] - 1.0, np.log2(np.abs(x)))
    np.testing.assert_array_equal(logb, want.astype(dtype))
