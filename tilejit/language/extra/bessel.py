"""Bessel functions of libdevice (``j0``, ``j1``, ``y0``, ``y1``, ``cyl_bessel_i0``,
``cyl_bessel_i1``): the Cephes approximations (:mod:`.bessel_coeffs`) evaluated in
float64 on tiles, both branches computed and the one for each lane selected, then
rounded once to the input's type.  As in Cephes (and unlike torch.special, whose
loops drop the implicit leading 1 of the QQ/RQ/YQ denominators and lose ~1e-7
relative accuracy), the denominators are monic: about 1e-15 relative in float64."""
from __future__ import annotations

import math

from .. import semantic as sem
from .. import semantic_tile as st
from ..core import builtin
from .f64eval import _m, _narrow, _wide
from . import bessel_coeffs as C

_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_TWO_PI = 2.0 / math.pi




def _poly(z, coeffs):
    """``coeffs[0] * z**(n-1) + ... + coeffs[-1]`` by Horner's rule (Cephes ``polevl``)."""
    r = sem.add(sem.mul(z, coeffs[0]), coeffs[1])
    for c in coeffs[2:]:
        r = sem.add(sem.mul(r, z), c)
    return r


def _poly1(z, coeffs):
    """``z**n + coeffs[0] * z**(n-1) + ... + coeffs[-1]`` (Cephes ``p1evl``: the
    denominators QQ, RQ, YQ have an implicit leading 1)."""
    r = sem.add(z, coeffs[0])
    for c in coeffs[1:]:
        r = sem.add(sem.mul(r, z), c)
    return r


def _cheb(y, coeffs):
    """Cephes ``chbevl``: the Chebyshev series ``coeffs`` (highest order first) at y/2."""
    b0, b1, b2 = sem.add(sem.mul(y, 0.0), coeffs[0]), None, None
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = sem.add(sem.mul(y, b1), c) if b2 is None else sem.add(sem.sub(sem.mul(y, b1), b2), c)
    return sem.mul(sem.sub(b0, b2), 0.5)


def _asymptotic(a, tab, shift, first):
    """Hankel's asymptotic form for ``a > 5``: ``(P cos(a - shift) - 5/a Q sin(a - shift))
    * sqrt(2 / (pi a))`` (``first`` = "cos"), or with sin/cos exchanged and a plus."""
    w = sem.truediv(25.0, sem.mul(a, a))
    p = sem.truediv(_poly(w, tab["PP"]), _poly(w, tab["PQ"]))
    q = sem.mul(sem.truediv(5.0, a), sem.truediv(_poly(w, tab["QP"]), _poly1(w, tab["QQ"])))
    xn = sem.sub(a, shift)
    c, s = _m("cos", xn), _m("sin", xn)
    r = sem.sub(sem.mul(p, c), sem.mul(q, s)) if first == "cos" else sem.add(sem.mul(p, s), sem.mul(q, c))
    return sem.mul(r, sem.truediv(_SQRT_2_PI, _m("sqrt", a)))


def _j0_wide(w):
    a = st.abs(w)
    z = sem.mul(a, a)
    near = sem.mul(sem.mul(sem.sub(z, 5.78318596294678452118), sem.sub(z, 30.4712623436620863991)),
                   sem.truediv(_poly(z, C.J0["RP"]), _poly1(z, C.J0["RQ"])))
    near = st.where(sem.compare(a, 1e-5, "lt"), sem.sub(1.0, sem.mul(z, 0.25)), near)
    return st.where(sem.compare(a, 5.0, "le"), near, _asymptotic(a, C.J0, math.pi / 4, "cos"))


def _j1_wide(w):
    a = st.abs(w)
    z = sem.mul(a, a)
    near = sem.mul(sem.mul(sem.truediv(_poly(z, C.J1["RP"]), _poly1(z, C.J1["RQ"])), a),
                   sem.mul(sem.sub(z, 14.6819706421238932572), sem.sub(z, 49.2184563216946036703)))
    r = st.where(sem.compare(a, 5.0, "le"), near, _asymptotic(a, C.J1, 3 * math.pi / 4, "cos"))
    return st.where(sem.compare(w, 0.0, "lt"), sem.minus(r), r)


def _y_edges(w, r):
    """Y0, Y1: -inf at 0, NaN for negative arguments."""
    r = st.where(sem.compare(w, 0.0, "eq"), float("-inf"), r)
    return st.where(sem.compare(w, 0.0, "lt"), float("nan"), r)


@builtin
def j0(arg0):
    """Bessel function of the first kind of order 0."""
    x, w = _wide(arg0)
    return _narrow(_j0_wide(w), x)


@builtin
def j1(arg0):
    """Bessel function of the first kind of order 1."""
    x, w = _wide(arg0)
    return _narrow(_j1_wide(w), x)


@builtin
def y0(arg0):
    """Bessel function of the second kind of order 0 (NaN for x < 0, -inf at 0)."""
    x, w = _wide(arg0)
    a = st.abs(w)
    z = sem.mul(a, a)
    near = sem.add(sem.truediv(_poly(z, C.Y0["YP"]), _poly1(z, C.Y0["YQ"])),
                   sem.mul(sem.mul(_m("log", a), _TWO_PI), _j0_wide(a)))
    r = st.where(sem.compare(a, 5.0, "le"), near, _asymptotic(a, C.Y0, math.pi / 4, "sin"))
    return _narrow(_y_edges(w, r), x)


@builtin
def y1(arg0):
    """Bessel function of the second kind of order 1 (NaN for x < 0, -inf at 0)."""
    x, w = _wide(arg0)
    a = st.abs(w)
    z = sem.mul(a, a)
    near = sem.add(sem.mul(a, sem.truediv(_poly(z, C.Y1["YP"]), _poly1(z, C.Y1["YQ"]))),
                   sem.mul(sem.sub(sem.mul(_j1_wide(a), _m("log", a)), sem.truediv(1.0, a)), _TWO_PI))
    r = st.where(sem.compare(a, 5.0, "le"), near, _asymptotic(a, C.Y1, 3 * math.pi / 4, "sin"))
    return _narrow(_y_edges(w, r), x)


def _i_wide(w, near_coeffs, far_coeffs, order):
    a = st.abs(w)
    e = _m("exp", a)
    near = sem.mul(e, _cheb(sem.sub(sem.mul(a, 0.5), 2.0), near_coeffs))
    if order == 1:
        near = sem.mul(near, a)
    far = sem.truediv(sem.mul(e, _cheb(sem.sub(sem.truediv(32.0, a), 2.0), far_coeffs)), _m("sqrt", a))
    r = st.where(sem.compare(a, 8.0, "le"), near, far)
    return r if order == 0 else st.where(sem.compare(w, 0.0, "lt"), sem.minus(r), r)


@builtin
def cyl_bessel_i0(arg0):
    """Modified Bessel function of the first kind of order 0."""
    x, w = _wide(arg0)
    return _narrow(_i_wide(w, C.I0A, C.I0B, 0), x)


@builtin
def cyl_bessel_i1(arg0):
    """Modified Bessel function of the first kind of order 1."""
    x, w = _wide(arg0)
    return _narrow(_i_wide(w, C.I1A, C.I1B, 1), x)


__all__ = ["j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1"]
