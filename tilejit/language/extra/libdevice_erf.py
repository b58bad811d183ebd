"""libdevice's complementary error functions and remainder, as TorchInductor emits them
(``torch.erfc``, ``torch.special.erfcx`` and ``log_ndtr``, ``torch.erfinv``,
``torch.fmod``): ``erfc``, ``erfcx``, ``erfinv``, ``normcdf``, ``fmod``.

The error functions are evaluated in float64 on tiles, both branches computed and the
one for each lane selected, then rounded once to the input's type (about one ulp for
fp32; a few ulp of float64 for fp64 inputs):

* ``erfc``: Cephes ``ndtr.c`` -- ``1 - erf(x)`` for ``|x| < 1`` (``erf = x T(x^2) /
  U(x^2)``), else ``exp(-x^2) P(|x|) / Q(|x|)`` (``R / S`` from 8 on), with
  ``exp(-x^2)`` as ``exp(-m^2) exp(-(2mf + f^2))`` for ``|x| = m + f``, ``m`` a multiple
  of 1/128, so the rounding of ``x^2`` is not amplified; ``2 - erfc(-x)`` below 0.
* ``erfcx = exp(x^2) erfc(x)``: the rational part alone from 1 on (``1 / (x sqrt(pi))``
  beyond 1e50, where ``R / S`` would overflow), ``exp(x^2) erfc(x)`` below.
* ``erfinv``: Giles' single-precision approximation ("Approximating the erfinv
  function", GPU Computing Gems, 2011) (erfc's asymptotic inverse beyond its range) refined by three steps: Halley on ``erf(y) - |x|``
  below ``|x| = 0.5``, Newton on ``log erfc(y) - log(1 - |x|)`` from there on (``1 - |x|``
  is exact there, and ``-y^2 + log erfcx(y)`` is nearly quadratic, so the steps
  converge up to ``1 - 2**-53``).
* ``normcdf(x) = erfc(-x / sqrt(2)) / 2``.
"""
from __future__ import annotations

import math

from .. import semantic as sem
from .. import semantic_tile as st
from ..core import builtin
from .bessel import _poly, _poly1
from .f64eval import _m, _unary_wide

# Cephes ndtr.c (Cephes Math Library Release 2.9, Copyright 1984-2000 Stephen L. Moshier)
_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
      7.00332514112805075473E3, 5.55923013010394962768E4)
_U = (3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
      2.26290000613890934246E4, 4.92673942608635921086E4)
_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
      4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
      9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_Q = (1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
      9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
      1.65666309194161350182E3, 5.57535340817727675546E2)
_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
      6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_S = (2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
      1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)
# Giles' erfinv for single precision: w = -log((1 - x)(1 + x)); p(w - 2.5) below 5,
# q(sqrt(w) - 3) from 5 on (highest degree first)
_GILES_P = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_Q = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
            -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_NAN, _INF = float("nan"), float("inf")
_STEPS = 3                   # from _guess: one suffices for fp32 inputs, three near 1 in fp64


def _lt(a, b):
    return sem.compare(a, b, "lt")


def _erf_small(w):
    """erf for |w| < 1 (Cephes: w T(w^2) / U(w^2))."""
    z = sem.mul(w, w)
    return sem.truediv(sem.mul(w, _poly(z, _T)), _poly1(z, _U))


def _exp_sq(a, sign):
    """``exp(sign * a*a)`` for ``0 <= a <= 30`` without amplifying the rounding of
    ``a*a`` (Cephes ``expx2``): ``a = m + f`` with ``m`` a multiple of 1/128."""
    m = sem.mul(_m("floor", sem.add(sem.mul(a, 128.0), 0.5)), 1.0 / 128)
    f = sem.sub(a, m)
    u = sem.mul(m, m)                                   # exact
    u1 = sem.add(sem.mul(sem.mul(m, 2.0), f), sem.mul(f, f))
    return sem.mul(_m("exp", sem.mul(u, sign)), _m("exp", sem.mul(u1, sign)))


def _ratio(ac):
    """``exp(a^2) erfc(a)`` for ``1 <= a <= 1e50`` (Cephes' P/Q below 8, R/S above)."""
    near = sem.truediv(_poly(ac, _P), _poly1(ac, _Q))
    far = sem.truediv(_poly(ac, _R), _poly1(ac, _S))
    return st.where(_lt(ac, 8.0), near, far)


def _keep_nan(w, r):
    return st.where(sem.compare(w, w, "ne"), w, r)


def _erfc_wide(w):
    a = st.abs(w)
    ac = st.where(_lt(a, 1.0), 1.0, st.where(_lt(a, 30.0), a, 30.0))    # inf, NaN: 30
    y = sem.mul(_exp_sq(ac, -1.0), _ratio(ac))              # 0 from 26.6 on
    big = st.where(_lt(w, 0.0), sem.sub(2.0, y), y)
    small = sem.sub(1.0, _erf_small(st.where(_lt(a, 1.0), w, 0.0)))
    return _keep_nan(w, st.where(_lt(a, 1.0), small, big))


def _erfcx_wide(w):
    a = st.abs(w)
    hi = st.where(_lt(w, 1.0), 1.0, st.where(_lt(w, 1e50), w, 1e50))
    far = sem.truediv(1.0 / math.sqrt(math.pi), st.where(_lt(w, 1e50), 1.0, w))  # inf: 0
    pos = st.where(_lt(w, 1e50), _ratio(hi), far)
    lo = st.where(_lt(a, 27.0), a, 27.0)                     # exp(27^2) overflows: inf
    low = sem.mul(_exp_sq(lo, 1.0), _erfc_wide(st.where(_lt(w, 1.0), w, 0.0)))
    return _keep_nan(w, st.where(_lt(w, 1.0), low, pos))


def _erf_wide(w):
    """erf on float64 (the residual of the erfinv iteration)."""
    a = st.abs(w)
    big = sem.sub(1.0, _erfc_wide(st.where(_lt(a, 1.0), 1.0, a)))
    big = st.where(_lt(w, 0.0), sem.minus(big), big)
    return st.where(_lt(a, 1.0), _erf_small(st.where(_lt(a, 1.0), w, 0.0)), big)


def _guess(a):
    """A first erfinv(a) for 0 <= a < 1: Giles' single-precision approximation up to
    ``w = -log((1 - a)(1 + a)) = 16`` (fp32's range), then erfc's asymptotic inverse
    ``sqrt(L - log(pi L) / 2)``, ``L = -log(1 - a)`` (within 4e-3 up to 1 - 2**-53)."""
    c = sem.sub(1.0, a)
    w = sem.minus(_m("log", sem.mul(c, sem.add(1.0, a))))
    p = _poly(sem.sub(w, 2.5), _GILES_P)
    q = _poly(sem.sub(_m("sqrt", w), 3.0), _GILES_Q)
    big_l = sem.minus(_m("log", st.where(_lt(w, 16.0), 0.5, c)))
    tail = _m("sqrt", sem.sub(big_l, sem.mul(_m("log", sem.mul(big_l, math.pi)), 0.5)))
    return st.where(_lt(w, 5.0), sem.mul(p, a), st.where(_lt(w, 16.0), sem.mul(q, a), tail))


def _erfinv_wide(w):
    a = st.abs(w)
    safe = st.where(_lt(a, 1.0), a, 0.0)                     # |x| >= 1, NaN: fixed below
    tail = sem.compare(safe, 0.5, "ge")
    log_c = _m("log", st.where(tail, sem.sub(1.0, safe), 1.0))   # 1 - a exact from 0.5 on
    y = _guess(safe)
    for _ in range(_STEPS):
        # below 0.5: Halley on erf(y) - a; from 0.5 on: Newton on log(erfc(y)) - log(1 - a)
        # = -y^2 + log(erfcx(y)) - log(1 - a), nearly quadratic in y (fast even at 1 - 1e-16)
        t = sem.truediv(sem.sub(_erf_wide(y), safe),
                        sem.mul(_m("exp", sem.minus(sem.mul(y, y))), _TWO_OVER_SQRT_PI))
        near = sem.sub(y, sem.truediv(t, sem.add(1.0, sem.mul(y, t))))
        yt = st.where(tail, y, 1.0)
        r = _erfcx_wide(yt)
        g = sem.sub(sem.sub(_m("log", r), sem.mul(yt, yt)), log_c)
        far = sem.add(yt, sem.mul(sem.mul(g, r), math.sqrt(math.pi) / 2))
        y = st.where(tail, far, near)
    y = st.where(sem.compare(a, 1.0, "eq"), _INF, st.where(sem.compare(a, 1.0, "gt"), _NAN, y))
    r = st.where(_lt(w, 0.0), sem.minus(y), st.where(sem.compare(w, 0.0, "eq"), w, y))   # -0: -0
    return _keep_nan(w, r)


erfc = _unary_wide(_erfc_wide, "Complementary error function ``1 - erf(x)``, accurate where it is small.", "erfc")
erfcx = _unary_wide(_erfcx_wide, "Scaled complementary error function ``exp(x*x) * erfc(x)``.", "erfcx")
erfinv = _unary_wide(_erfinv_wide, "Inverse error function (+-inf at +-1, NaN beyond).", "erfinv")
normcdf = _unary_wide(lambda w: sem.mul(_erfc_wide(sem.mul(w, -math.sqrt(0.5))), 0.5),
                      "Standard normal cumulative distribution function.", "normcdf")


@builtin
def fmod(arg0, arg1):
    """Floating-point remainder of ``x / y`` with the sign of ``x`` (C ``fmod``: exact;
    NaN for ``y = 0`` or infinite ``x``)."""
    x, y = sem.binary_op_type_checking_impl(arg0, arg1)
    if not x.dtype.is_floating():
        raise TypeError(f"fmod expects floating-point tensors, got {x.dtype}")
    return sem.mod(x, y)


__all__ = ["erfc", "erfcx", "erfinv", "normcdf", "fmod"]
