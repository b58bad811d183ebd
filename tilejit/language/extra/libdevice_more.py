"""More libdevice functions, composed of existing ops: inverse trigonometric and
hyperbolic functions, roots and norms, rounding and float->int conversions with a
rounding mode, bit reinterpretations, integer bit counts, and the ``fast_*`` / ``*_rn``
spellings of existing operations.  Float compositions are evaluated in float64 and
rounded once to the input's type (about one ulp for fp32; fp64 inputs get float64's
own rounding).  The directed-rounding variants (``_rd``, ``_ru``, ``_rz`` of
arithmetic) are not provided: tilejit has no rounding-mode control."""
from __future__ import annotations

import math

from ...ir.types import float32, float64, int16, int32, int64, uint32, uint64
from .. import semantic as sem
from .. import semantic_tile as st
from ..core import builtin
from .bessel import _m, _narrow, _poly, _poly1, _wide
from .f64eval import _unary_wide

# Cephes atan: rational approximation on [0, 0.66] after range reduction
_ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
           -1.228866684490136173410e2, -6.485021904942025371773e1)
_ATAN_Q = (2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
           4.853903996359136964868e2, 1.945506571482613964425e2)
_MOREBITS = 6.123233995736765886130e-17
_NAN = float("nan")


def _lt(a, b):
    return sem.compare(a, b, "lt")


def _atan_wide(w):
    a = st.abs(w)
    big = sem.compare(a, 2.414213562373095, "gt")
    mid = sem.logical_and(sem.not_(big), sem.compare(a, 0.66, "gt"))
    safe = st.where(sem.compare(a, 0.0, "eq"), 1.0, a)
    xr = st.where(big, sem.minus(sem.truediv(1.0, safe)),
                  st.where(mid, sem.truediv(sem.sub(a, 1.0), sem.add(a, 1.0)), a))
    z = sem.mul(xr, xr)
    z = sem.add(sem.mul(xr, sem.truediv(sem.mul(z, _poly(z, _ATAN_P)), _poly1(z, _ATAN_Q))), xr)
    zero = sem.scalar_constant(0.0, w.dtype, w.shape)
    base = st.where(big, math.pi / 2 + _MOREBITS, st.where(mid, math.pi / 4 + 0.5 * _MOREBITS, zero))
    r = sem.add(base, z)
    r = st.where(sem.compare(a, float("inf"), "eq"), math.pi / 2, r)
    return st.where(_lt(w, 0.0), sem.minus(r), st.where(sem.compare(w, w, "ne"), w, r))


def _atan2_wide(y, x):
    """C ``atan2`` quadrants (signed zeros: +-0 by the sign of y; pi by the sign of x)."""
    ax, ay = st.abs(x), st.abs(y)
    both_inf = sem.logical_and(sem.compare(ax, float("inf"), "eq"), sem.compare(ay, float("inf"), "eq"))
    safe_x = st.where(sem.compare(ax, 0.0, "eq"), 1.0, ax)
    t = st.where(sem.compare(ax, 0.0, "eq"), math.pi / 2, _atan_wide(sem.truediv(ay, safe_x)))
    t = st.where(both_inf, math.pi / 4, t)
    t = st.where(sem.compare(ay, 0.0, "eq"), 0.0, t)
    neg_x = _lt(_bits_signed(x), 0)                 # x < 0 or x is -0.0
    t = st.where(neg_x, sem.sub(math.pi, t), t)
    t = st.where(_lt(_bits_signed(y), 0), sem.minus(t), t)
    nan = sem.logical_or(sem.compare(x, x, "ne"), sem.compare(y, y, "ne"))
    return st.where(nan, _NAN, t)


def _bits_signed(w):
    return sem.bitcast(w, int64 if w.dtype == float64 else int32)


def _asin_wide(w):
    return _atan2_wide(w, _m("sqrt", sem.mul(sem.sub(1.0, w), sem.add(1.0, w))))


def _acos_wide(w):
    return _atan2_wide(_m("sqrt", sem.mul(sem.sub(1.0, w), sem.add(1.0, w))), w)


def _log1p_wide(w):
    u = sem.add(w, 1.0)
    d = sem.sub(u, 1.0)
    safe_d = st.where(sem.compare(d, 0.0, "eq"), 1.0, d)
    r = st.where(sem.compare(d, 0.0, "eq"), w, sem.mul(_m("log", u), sem.truediv(w, safe_d)))
    return st.where(sem.compare(u, float("inf"), "eq"), u, r)


def _asinh_wide(w):
    a = st.abs(w)
    big = sem.compare(a, 1e150, "gt")
    small = _log1p_wide(sem.add(a, sem.truediv(sem.mul(a, a), sem.add(1.0, _m("sqrt", sem.add(sem.mul(a, a), 1.0))))))
    r = st.where(big, sem.add(_m("log", a), math.log(2.0)), small)
    return st.where(_lt(w, 0.0), sem.minus(r), r)


def _acosh_wide(w):
    big = sem.compare(w, 1e150, "gt")
    t = sem.sub(w, 1.0)
    r = _log1p_wide(sem.add(t, _m("sqrt", sem.add(sem.mul(t, t), sem.mul(t, 2.0)))))
    return st.where(big, sem.add(_m("log", w), math.log(2.0)), st.where(_lt(w, 1.0), _NAN, r))


def _atanh_wide(w):
    a = st.abs(w)
    r = sem.mul(_log1p_wide(sem.truediv(sem.mul(a, 2.0), sem.sub(1.0, a))), 0.5)
    r = st.where(sem.compare(a, 1.0, "gt"), _NAN, r)
    return st.where(_lt(w, 0.0), sem.minus(r), r)


def _cbrt_wide(w):
    a = st.abs(w)
    r = _m("exp", sem.truediv(_m("log", a), 3.0))
    r = sem.sub(r, sem.truediv(sem.sub(sem.mul(sem.mul(r, r), r), a), sem.mul(sem.mul(r, r), 3.0)))
    fin = sem.logical_and(sem.compare(a, 0.0, "gt"), sem.compare(a, float("inf"), "lt"))
    r = st.where(fin, r, a)
    return st.where(_lt(_bits_signed(w), 0), sem.minus(r), r)


acos = _unary_wide(_acos_wide, "Arc cosine (NaN outside [-1, 1]).", "acos")
asin = _unary_wide(_asin_wide, "Arc sine (NaN outside [-1, 1]).", "asin")
atan = _unary_wide(_atan_wide, "Arc tangent.", "atan")
asinh = _unary_wide(_asinh_wide, "Inverse hyperbolic sine.", "asinh")
acosh = _unary_wide(_acosh_wide, "Inverse hyperbolic cosine (NaN below 1).", "acosh")
atanh = _unary_wide(_atanh_wide, "Inverse hyperbolic tangent (NaN outside [-1, 1]).", "atanh")
cbrt = _unary_wide(_cbrt_wide, "Cube root.", "cbrt")
rcbrt = _unary_wide(lambda w: sem.truediv(1.0, _cbrt_wide(w)), "1 / cube root.", "rcbrt")
log10 = _unary_wide(lambda w: sem.mul(_m("log", w), 1 / math.log(10.0)), "Base-10 logarithm.", "log10")
exp10 = _unary_wide(lambda w: _m("exp", sem.mul(w, math.log(10.0))), "10**x.", "exp10")
sinpi = _unary_wide(lambda w: _m("sin", sem.mul(w, math.pi)), "sin(pi x).", "sinpi")
cospi = _unary_wide(lambda w: _m("cos", sem.mul(w, math.pi)), "cos(pi x).", "cospi")


def _binary_wide(fn, doc, name):
    def f(arg0, arg1):
        x, y = sem.binary_op_type_checking_impl(arg0, arg1)
        _, wx = _wide(x)
        _, wy = _wide(y)
        return _narrow(fn(wx, wy), x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return builtin(f)


def _hypot_wide(*ws):
    """sqrt(sum of squares) scaled by the largest magnitude (no overflow); inf wins over NaN."""
    mags = [st.abs(w) for w in ws]
    m = mags[0]
    for a in mags[1:]:
        m = sem.maximum(m, a)
    safe = st.where(sem.logical_or(sem.compare(m, 0.0, "eq"), sem.compare(m, float("inf"), "eq")), 1.0, m)
    s = None
    for a in mags:
        q = sem.truediv(a, safe)
        s = sem.mul(q, q) if s is None else sem.add(s, sem.mul(q, q))
    r = st.where(sem.compare(m, 0.0, "eq"), 0.0, sem.mul(m, _m("sqrt", s)))
    for a in mags:
        r = st.where(sem.compare(a, float("inf"), "eq"), float("inf"), r)
    return r


atan2 = _binary_wide(_atan2_wide, "Arc tangent of y / x in the quadrant of (x, y).", "atan2")
hypot = _binary_wide(_hypot_wide, "sqrt(x*x + y*y) without undue overflow.", "hypot")
rhypot = _binary_wide(lambda x, y: sem.truediv(1.0, _hypot_wide(x, y)), "1 / hypot(x, y).", "rhypot")
fdim = _binary_wide(lambda x, y: st.where(sem.compare(x, y, "gt"), sem.sub(x, y),
                                          st.where(sem.compare(x, x, "ne"), x, st.where(
                                              sem.compare(y, y, "ne"), y, 0.0))),
                    "x - y if x > y else +0 (NaN if either is NaN).", "fdim")


@builtin
def norm3d(arg0, arg1, arg2):
    """sqrt(a*a + b*b + c*c)."""
    x, w = _wide(arg0)
    return _narrow(_hypot_wide(w, _wide(arg1)[1], _wide(arg2)[1]), x)


@builtin
def norm4d(arg0, arg1, arg2, arg3):
    """sqrt(a*a + b*b + c*c + d*d)."""
    x, w = _wide(arg0)
    return _narrow(_hypot_wide(w, _wide(arg1)[1], _wide(arg2)[1], _wide(arg3)[1]), x)


@builtin
def rnorm3d(arg0, arg1, arg2):
    """1 / norm3d."""
    x, w = _wide(arg0)
    return _narrow(sem.truediv(1.0, _hypot_wide(w, _wide(arg1)[1], _wide(arg2)[1])), x)


@builtin
def rnorm4d(arg0, arg1, arg2, arg3):
    """1 / norm4d."""
    x, w = _wide(arg0)
    return _narrow(sem.truediv(1.0, _hypot_wide(w, _wide(arg1)[1], _wide(arg2)[1], _wide(arg3)[1])), x)


@builtin
def copysign(arg0, arg1):
    """|x| with the sign of y."""
    x, y = sem.binary_op_type_checking_impl(arg0, arg1)
    ity = {16: int16, 32: int32, 64: int64}[x.dtype.bits]
    mask = -(1 << (x.dtype.bits - 1))
    xb, yb = sem.bitcast(x, ity), sem.bitcast(y, ity)
    bits = sem.or_(sem.and_(xb, ~mask), sem.and_(yb, mask))
    return sem.bitcast(bits, x.dtype)


# --------------------------------------------------------------------- rounding
def _rint_wide(w):
    """Round half to even: |x| + 2**52 - 2**52 (exact in float64 for |x| < 2**52)."""
    a = st.abs(w)
    r = sem.sub(sem.add(a, 4503599627370496.0), 4503599627370496.0)
    r = st.where(sem.compare(a, 4503599627370496.0, "lt"), r, a)
    return st.where(_lt(_bits_signed(w), 0), sem.minus(r), r)


def _round_wide(w):
    """Round half away from zero, exactly: trunc, plus one where the fraction is >= 0.5."""
    a = st.abs(w)
    t = _m("floor", a)
    t = st.where(sem.compare(sem.sub(a, t), 0.5, "ge"), sem.add(t, 1.0), t)
    t = st.where(sem.compare(a, float("inf"), "lt"), t, a)
    return st.where(_lt(_bits_signed(w), 0), sem.minus(t), t)


rint = _unary_wide(_rint_wide, "Round to the nearest integer, ties to even.", "rint")
nearbyint = _unary_wide(_rint_wide, "Round to the nearest integer, ties to even.", "nearbyint")
round = _unary_wide(_round_wide, "Round to the nearest integer, ties away from zero.", "round")

_ROUNDERS = {"rn": _rint_wide, "rz": lambda w: st.where(_lt(w, 0.0), _m("ceil", w), _m("floor", w)),
             "rd": lambda w: _m("floor", w), "ru": lambda w: _m("ceil", w)}
_INTS = {"int": int32, "uint": uint32, "ll": int64, "ull": uint64}


def _to_int(src, dst, mode):
    def f(arg0):
        x, w = _wide(arg0)
        want = float64 if src == "double" else float32
        if x.dtype != want:
            raise TypeError(f"{src}2{dst}_{mode} needs a {want} argument, got {x.dtype}")
        return sem.cast(_ROUNDERS[mode](w), _INTS[dst])
    f.__name__ = f.__qualname__ = f"{src}2{dst}_{mode}"
    f.__doc__ = f"{src} -> {dst} rounded {'to nearest even' if mode == 'rn' else mode}."
    return builtin(f)


for _src in ("float", "double"):
    for _dst in _INTS:
        for _mode in _ROUNDERS:
            globals()[f"{_src}2{_dst}_{_mode}"] = _to_int(_src, _dst, _mode)


@builtin
def llrint(arg0):
    """Round ties-to-even to int64."""
    return sem.cast(_rint_wide(_wide(arg0)[1]), int64)


@builtin
def llround(arg0):
    """Round ties-away-from-zero to int64."""
    return sem.cast(_round_wide(_wide(arg0)[1]), int64)


def _from_int(src_types, dst, name):
    def f(arg0):
        x = sem.to_tensor(arg0)
        if x.dtype not in src_types:
            raise TypeError(f"{name} needs a {' or '.join(map(str, src_types))} argument, got {x.dtype}")
        return sem.cast(x, dst)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Integer -> {dst}, rounded to nearest even."
    return builtin(f)


int2float_rn = _from_int((int32,), float32, "int2float_rn")
uint2float_rn = _from_int((uint32,), float32, "uint2float_rn")
ll2float_rn = _from_int((int64,), float32, "ll2float_rn")
ull2float_rn = _from_int((uint64,), float32, "ull2float_rn")
int2double_rn = _from_int((int32,), float64, "int2double_rn")
uint2double_rn = _from_int((uint32,), float64, "uint2double_rn")
ll2double_rn = _from_int((int64,), float64, "ll2double_rn")
ull2double_rn = _from_int((uint64,), float64, "ull2double_rn")
double2float_rn = _from_int((float64,), float32, "double2float_rn")


# --------------------------------------------------------------------- bits and aliases
def _bitcast_fn(src, dst, name):
    def f(arg0):
        x = sem.to_tensor(arg0)
        if x.dtype != src:
            raise TypeError(f"{name} needs a {src} argument, got {x.dtype}")
        return sem.bitcast(x, dst)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The bits of a {src} read as {dst}."
    return builtin(f)


float_as_int = _bitcast_fn(float32, int32, "float_as_int")
float_as_uint = _bitcast_fn(float32, uint32, "float_as_uint")
int_as_float = _bitcast_fn(int32, float32, "int_as_float")
uint_as_float = _bitcast_fn(uint32, float32, "uint_as_float")
double_as_longlong = _bitcast_fn(float64, int64, "double_as_longlong")
longlong_as_double = _bitcast_fn(int64, float64, "longlong_as_double")


def _as_op(fn, name, doc):
    f = lambda *args: fn(*args)       # noqa: E731
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return builtin(f)


fast_expf = _as_op(lambda x: st.math_unary(x, "exp"), "fast_expf", "e**x (here: exp).")
fast_logf = _as_op(lambda x: st.math_unary(x, "log"), "fast_logf", "Natural logarithm (here: log).")
fast_log2f = _as_op(lambda x: st.math_unary(x, "log2"), "fast_log2f", "Base-2 logarithm (here: log2).")
fast_sinf = _as_op(lambda x: st.math_unary(x, "sin"), "fast_sinf", "Sine (here: sin).")
fast_cosf = _as_op(lambda x: st.math_unary(x, "cos"), "fast_cosf", "Cosine (here: cos).")
fast_tanhf = _as_op(lambda x: st.math_unary(x, "tanh"), "fast_tanhf", "Hyperbolic tangent (here: tanh).")
fast_tanf = _as_op(lambda x: sem.truediv(st.math_unary(x, "sin"), st.math_unary(x, "cos")), "fast_tanf",
                   "Tangent (sin / cos).")
fast_log10f = _as_op(lambda x: _narrow(sem.mul(_m("log", _wide(x)[1]), 1 / math.log(10.0)), _wide(x)[0]),
                     "fast_log10f", "Base-10 logarithm.")
fast_exp10f = _as_op(lambda x: _narrow(_m("exp", sem.mul(_wide(x)[1], math.log(10.0))), _wide(x)[0]),
                     "fast_exp10f", "10**x.")
# rounded on their own: never contracted into an fma (enable_fp_fusion; ops.AddOp's ``rn``)
add_rn = _as_op(lambda x, y: sem.add(x, y, rn=True), "add_rn", "x + y, rounded to nearest even.")
sub_rn = _as_op(lambda x, y: sem.sub(x, y, rn=True), "sub_rn", "x - y, rounded to nearest even.")
mul_rn = _as_op(lambda x, y: sem.mul(x, y, rn=True), "mul_rn", "x * y, rounded to nearest even.")
fma_rn = _as_op(sem.fma, "fma_rn", "x * y + z with one rounding to nearest even.")
rcp_rn = _as_op(lambda x: sem.fdiv(1.0, x, True), "rcp_rn", "1 / x, rounded to nearest even.")
finitef = _as_op(lambda x: sem.compare(st.abs(x), float("inf"), "lt"), "finitef", "int1: x is finite.")
saturatef = _as_op(lambda x: st.where(sem.compare(x, 0.0, "gt"), sem.minimum(x, 1.0), 0.0), "saturatef",
                   "x clamped to [0, 1] (NaN gives 0).")


def _ldexp(x, n):
    x = sem.to_tensor(x)
    _, w = _wide(x)
    n = sem.cast(sem.to_tensor(n), float64)
    half = sem.truediv(n, 2.0)
    h = _m("floor", half)                    # two steps: 2**n alone can overflow or underflow
    r = sem.mul(sem.mul(w, _m("exp2", h)), _m("exp2", sem.sub(n, h)))
    return _narrow(r, x)


ldexp = _as_op(_ldexp, "ldexp", "x * 2**n.")
scalbn = _as_op(_ldexp, "scalbn", "x * 2**n.")


# --------------------------------------------------------------------- integer bits
def _popc_bits(x, bits):
    """Population count by the SWAR reduction, in the unsigned type of ``bits``."""
    u = uint64 if bits == 64 else uint32
    v = sem.bitcast(x, u) if x.dtype != u else x
    m1, m2, m4 = (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F)
    mask = (1 << bits) - 1
    v = sem.sub(v, sem.and_(sem.shr(v, 1), m1 & mask))
    v = sem.add(sem.and_(v, m2 & mask), sem.and_(sem.shr(v, 2), m2 & mask))
    v = sem.and_(sem.add(v, sem.shr(v, 4)), m4 & mask)
    v = sem.shr(sem.mul(v, 0x0101010101010101 & mask), bits - 8)
    return sem.cast(v, int32)


def _int_arg(x, name):
    x = sem.to_tensor(x)
    if not x.dtype.is_int() or x.dtype.bits not in (32, 64):
        raise TypeError(f"{name} needs a 32- or 64-bit integer, got {x.dtype}")
    return x


@builtin
def popc(arg0):
    """Number of set bits (int32)."""
    x = _int_arg(arg0, "popc")
    return _popc_bits(x, x.dtype.bits)


@builtin
def clz(arg0):
    """Number of leading zero bits (int32; the width for 0)."""
    x = _int_arg(arg0, "clz")
    bits = x.dtype.bits
    u = sem.bitcast(x, uint64 if bits == 64 else uint32) if not x.dtype.is_int_unsigned() else x
    s = 1
    while s < bits:
        u = sem.or_(u, sem.shr(u, s))
        s *= 2
    return sem.sub(bits, _popc_bits(u, bits))


@builtin
def ffs(arg0):
    """1 + index of the lowest set bit (0 for 0), int32."""
    x = _int_arg(arg0, "ffs")
    bits = x.dtype.bits
    u = sem.bitcast(x, uint64 if bits == 64 else uint32) if not x.dtype.is_int_unsigned() else x
    low = sem.and_(u, sem.sub(0, u))
    n = sem.add(_popc_bits(sem.sub(low, 1), bits), 1)
    return st.where(sem.compare(u, 0, "eq"), 0, n)


@builtin
def brev(arg0):
    """The bits in reverse order."""
    x = _int_arg(arg0, "brev")
    bits = x.dtype.bits
    u_ty = uint64 if bits == 64 else uint32
    v = sem.bitcast(x, u_ty) if x.dtype != u_ty else x
    mask = (1 << bits) - 1
    for s, m in ((1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
                 (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)):
        if s >= bits:
            break
        v = sem.or_(sem.and_(sem.shr(v, s), m & mask), sem.shl(sem.and_(v, m & mask), s))
    return sem.bitcast(v, x.dtype) if x.dtype != u_ty else v


@builtin
def hadd(arg0, arg1):
    """(x + y) >> 1 without overflow (int32)."""
    a, b = sem.cast(sem.to_tensor(arg0), int64), sem.cast(sem.to_tensor(arg1), int64)
    return sem.cast(sem.shr(sem.add(a, b), 1), sem.to_tensor(arg0).dtype)


@builtin
def rhadd(arg0, arg1):
    """(x + y + 1) >> 1 without overflow (int32)."""
    a, b = sem.cast(sem.to_tensor(arg0), int64), sem.cast(sem.to_tensor(arg1), int64)
    return sem.cast(sem.shr(sem.add(sem.add(a, b), 1), 1), sem.to_tensor(arg0).dtype)


@builtin
def sad(arg0, arg1, arg2):
    """|x - y| + z."""
    a, b = sem.cast(sem.to_tensor(arg0), int64), sem.cast(sem.to_tensor(arg1), int64)
    d = sem.sub(a, b)
    return sem.cast(sem.add(st.where(_lt(d, 0), sem.minus(d), d), sem.cast(sem.to_tensor(arg2), int64)),
                    sem.to_tensor(arg2).dtype)


@builtin
def mul24(arg0, arg1):
    """Product of the low 24 bits of x and y (sign-extended), low 32 bits of the result."""
    a, b = sem.cast(sem.to_tensor(arg0), int32), sem.cast(sem.to_tensor(arg1), int32)
    a = sem.shr(sem.shl(a, 8), 8)
    b = sem.shr(sem.shl(b, 8), 8)
    return sem.mul(a, b)


# --------------------------------------------------------------------- gamma, exponents, neighbours
_LANCZOS_G = 7.0      # Lanczos approximation (g = 7, 9 terms): ~1e-12 relative in float64
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)


def _lanczos(w):
    """For x >= 0.5: (z = x - 1, t = z + g + 1/2, the Lanczos series A(z))."""
    z = sem.sub(w, 1.0)
    a = sem.add(sem.mul(z, 0.0), _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], 1):
        a = sem.add(a, sem.truediv(c, sem.add(z, float(i))))
    return z, sem.add(z, _LANCZOS_G + 0.5), a


def _reflect(w):
    """(x < 1/2, the argument the Lanczos series takes: x or 1 - x, |sin(pi x)|, pole)."""
    refl = _lt(w, 0.5)
    pole = sem.logical_and(sem.compare(_m("floor", w), w, "eq"), sem.compare(w, 0.0, "le"))
    return refl, st.where(refl, sem.sub(1.0, w), w), _m("sin", sem.mul(w, math.pi)), pole


def _lgamma_wide(w):
    refl, xs, sin_pi, pole = _reflect(w)
    z, t, a = _lanczos(xs)
    r = sem.add(sem.sub(sem.mul(sem.add(z, 0.5), _m("log", t)), t),
                sem.add(_m("log", a), 0.5 * math.log(2 * math.pi)))
    r = st.where(refl, sem.sub(_m("log", sem.truediv(math.pi, st.abs(sin_pi))), r), r)
    r = st.where(pole, float("inf"), r)
    return st.where(sem.compare(st.abs(w), float("inf"), "eq"), float("inf"), r)


def _tgamma_wide(w):
    refl, xs, sin_pi, pole = _reflect(w)
    z, t, a = _lanczos(xs)
    h = _m("exp", sem.mul(sem.mul(sem.add(z, 0.5), 0.5), _m("log", t)))     # t ** ((z + 1/2) / 2)
    g = sem.mul(sem.mul(sem.mul(h, sem.mul(h, _m("exp", sem.minus(t)))), a), math.sqrt(2 * math.pi))
    r = st.where(refl, sem.truediv(math.pi, sem.mul(sin_pi, g)), g)
    r = st.where(sem.compare(w, 171.7, "gt"), float("inf"), r)
    r = st.where(pole, _NAN, r)
    r = st.where(sem.compare(w, 0.0, "eq"), st.where(_lt(_bits_signed(w), 0), float("-inf"), float("inf")), r)
    return st.where(sem.compare(w, float("-inf"), "eq"), _NAN, r)


lgamma = _unary_wide(_lgamma_wide, "log |Gamma(x)| (inf at the poles).", "lgamma")
tgamma = _unary_wide(_tgamma_wide, "Gamma(x) (NaN at negative integers, +-inf at +-0).", "tgamma")


def _exponent(w):
    """floor(log2 |x|) of a finite non-zero float64, exactly (subnormals scaled first)."""
    a = st.abs(w)
    tiny = _lt(a, 2.2250738585072014e-308)
    a = st.where(tiny, sem.mul(a, 18446744073709551616.0), a)
    e = sem.sub(sem.and_(sem.shr(sem.bitcast(a, int64), 52), 0x7FF), 1023)
    return st.where(tiny, sem.sub(e, 64), e)


@builtin
def ilogb(arg0):
    """The unbiased exponent of x as int32 (INT_MIN for 0 and NaN, INT_MAX for inf)."""
    _, w = _wide(arg0)
    e = sem.cast(_exponent(w), int32)
    e = st.where(sem.compare(st.abs(w), float("inf"), "eq"), 2147483647, e)
    return st.where(sem.logical_or(sem.compare(w, 0.0, "eq"), sem.compare(w, w, "ne")), -2147483648, e)


@builtin
def logb(arg0):
    """The unbiased exponent of x as a float (-inf for 0, inf for inf)."""
    x, w = _wide(arg0)
    e = sem.cast(_exponent(w), float64)
    e = st.where(sem.compare(st.abs(w), float("inf"), "eq"), float("inf"), e)
    e = st.where(sem.compare(w, 0.0, "eq"), float("-inf"), st.where(sem.compare(w, w, "ne"), w, e))
    return _narrow(e, x)


@builtin
def nextafter(arg0, arg1):
    """The next representable value after x in the direction of y."""
    x, y = sem.binary_op_type_checking_impl(arg0, arg1)
    ity = {16: int16, 32: int32, 64: int64}[x.dtype.bits]
    bits = sem.bitcast(x, ity)
    up = sem.compare(_lt(x, y), sem.compare(x, 0.0, "gt"), "eq")
    step = sem.bitcast(st.where(up, sem.add(bits, 1), sem.sub(bits, 1)), x.dtype)
    tiny = sem.bitcast(st.where(_lt(y, 0.0), sem.or_(sem.scalar_constant(1, ity, x.shape),
                                                      -(1 << (x.dtype.bits - 1))), 1), x.dtype)
    r = st.where(sem.compare(x, 0.0, "eq"), tiny, step)
    r = st.where(sem.compare(x, y, "eq"), y, r)
    return st.where(sem.logical_or(sem.compare(x, x, "ne"), sem.compare(y, y, "ne")), sem.add(x, y), r)


__all__ = sorted(n for n, v in list(globals().items())
                 if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__)
