"""Exact floating remainder (C ``fmod``, numpy ``np.fmod``) as an LLVM IR function, for
targets whose ``frem`` is not exact (:attr:`.capabilities.Capabilities.exact_frem`).

NVPTX expands ``frem`` as ``x - trunc(x / y) * y``, wrong once the quotient passes
2**24 (fp32) / 2**53 (fp64): ``1e30 % 3`` came out as -2.8e22.  ``fmod`` is always
exactly representable, so it is computed here on the integer significands: both are
normalised (subnormals by their leading zeros), then a shift-and-subtract long
division keeps the significand remainder, one bit of exponent difference per
iteration (the classic bit loop of musl's ``fmod``), and the remainder is rebuilt with
the dividend's sign (subnormal results shifted down, exactly).  NaN where ``y`` is 0,
``x`` infinite or either NaN; ``x`` where ``|x| < |y|`` (``y`` infinite included).
"""
from __future__ import annotations

import llvmlite.ir as ir

from . import intrinsics as intr
from .mathlib import call_per_lane
from .types import F32, F64, I32

# float type -> (integer width, stored significand bits)
_FORMAT = {F32: (32, 23), F64: (64, 52)}


def _k(ty, v):
    return ir.Constant(ty, v)


def _shift_up(b, it, mbits, m, e):
    """``m`` (nonzero, < 2**(mbits+1)) shifted up to its leading 1 at bit ``mbits``, and
    the i32 exponent ``e`` lowered to match."""
    lz = intr.call_overloaded(b, "ctlz", [m], extra_args=[ir.Constant(ir.IntType(1), 0)])
    s = b.sub(lz, _k(it, it.width - 1 - mbits))
    return b.shl(m, s), b.sub(e, b.trunc(s, I32))


def _significand(b, it, mbits, a):
    """(normalised significand, i32 biased exponent) of the nonzero finite magnitude bits
    ``a``: its value is ``m * 2**(e - bias - mbits)``, subnormals included."""
    e = b.trunc(b.lshr(a, _k(it, mbits)), I32)
    frac = b.and_(a, _k(it, (1 << mbits) - 1))
    sub = b.icmp_unsigned("==", e, _k(I32, 0))
    m = b.select(sub, frac, b.or_(frac, _k(it, 1 << mbits)))
    return _shift_up(b, it, mbits, m, b.select(sub, _k(I32, 1), e))


def _rebuild(b, it, mbits, m, e):
    """The magnitude bits of the value ``m * 2**(e - bias - mbits)`` (``m`` nonzero,
    < 2**(mbits+1), the value representable: a subnormal one loses only zero bits)."""
    m, e = _shift_up(b, it, mbits, m, e)
    bits_n = b.or_(b.sub(m, _k(it, 1 << mbits)), b.shl(b.zext(e, it), _k(it, mbits)))
    bits_s = b.lshr(m, b.zext(b.sub(_k(I32, 1), e), it))
    return b.select(b.icmp_signed(">", e, _k(I32, 0)), bits_n, bits_s)


def _define(module: ir.Module, fty) -> ir.Function:
    width, mbits = _FORMAT[fty]
    it = ir.IntType(width)
    fn = ir.Function(module, ir.FunctionType(fty, [fty, fty]), name=f"tilejit.fmod.f{width}")
    fn.linkage = "internal"
    x, y = fn.args
    blk = {n: fn.append_basic_block(n) for n in ("entry", "nan", "small", "norm", "loop", "step", "tail",
                                                 "nonzero", "zero", "done")}
    b = ir.IRBuilder(blk["entry"])
    sign = 1 << (width - 1)
    inf = ((1 << (width - mbits - 1)) - 1) << mbits
    ux, uy = b.bitcast(x, it), b.bitcast(y, it)
    sx = b.and_(ux, _k(it, sign))
    ax, ay = b.and_(ux, _k(it, sign - 1)), b.and_(uy, _k(it, sign - 1))
    bad = b.or_(b.icmp_unsigned("==", ay, _k(it, 0)),
                b.or_(b.icmp_unsigned(">=", ax, _k(it, inf)), b.icmp_unsigned(">", ay, _k(it, inf))))
    b.cbranch(bad, blk["nan"], blk["small"])
    b.position_at_end(blk["nan"])
    b.ret(ir.Constant(fty, float("nan")))
    b.position_at_end(blk["small"])                 # |x| < |y|: x
    b.cbranch(b.icmp_unsigned("<", ax, ay), blk["done"], blk["norm"])
    b.position_at_end(blk["norm"])
    mx0, ex0 = _significand(b, it, mbits, ax)
    my, ey = _significand(b, it, mbits, ay)
    b.branch(blk["loop"])
    b.position_at_end(blk["loop"])
    mx = b.phi(it)
    ex = b.phi(I32)
    mx.add_incoming(mx0, blk["norm"])
    ex.add_incoming(ex0, blk["norm"])
    go = b.and_(b.icmp_signed(">", ex, ey), b.icmp_unsigned("!=", mx, _k(it, 0)))
    b.cbranch(go, blk["step"], blk["tail"])
    b.position_at_end(blk["step"])                  # one bit of the long division
    ge = b.icmp_unsigned(">=", mx, my)
    nx = b.shl(b.select(ge, b.sub(mx, my), mx), _k(it, 1))
    mx.add_incoming(nx, blk["step"])
    ex.add_incoming(b.sub(ex, _k(I32, 1)), blk["step"])
    b.branch(blk["loop"])
    b.position_at_end(blk["tail"])
    ge = b.icmp_unsigned(">=", mx, my)
    r = b.select(ge, b.sub(mx, my), mx)
    b.cbranch(b.icmp_unsigned("==", r, _k(it, 0)), blk["zero"], blk["nonzero"])
    b.position_at_end(blk["nonzero"])
    b.ret(b.bitcast(b.or_(sx, _rebuild(b, it, mbits, r, ey)), fty))
    b.position_at_end(blk["zero"])                  # an exact multiple: a zero of x's sign
    b.ret(b.bitcast(sx, fty))
    b.position_at_end(blk["done"])
    b.ret(x)
    return fn


def exact_fmod_function(module: ir.Module, fty) -> ir.Function:
    """The module's exact ``fmod`` for float type ``fty`` (F32 or F64), defined once."""
    fn = module.globals.get(f"tilejit.fmod.f{_FORMAT[fty][0]}")
    return fn if fn is not None else _define(module, fty)


def exact_fmod(b: ir.IRBuilder, x, y):
    """``fmod(x, y)``, exact, on fp32/fp64 scalars or vectors (a call per lane)."""
    ty = x.type
    fn = exact_fmod_function(b.module, ty.element if isinstance(ty, ir.VectorType) else ty)
    return call_per_lane(b, fn, [x, y])
