"""Elementwise op lowering on LLVM values (scalars or LLVM vectors), for every target.

``lower_elementwise(b, op, args, in_dtypes, out_dtype, caps=...)`` looks up the rule for
``type(op)`` in :data:`RULES` and returns the LLVM value; ``caps`` (:mod:`.capabilities`)
holds the target's differences (the cpu backend's are the default, the cuda backend
passes ``NVPTX``).  Semantics follow the
docstrings of :mod:`tilejit.ir.ops`: wrapping integers, C-truncating division
(guarded so that a zero or ``INT_MIN / -1`` divisor never traps), shifts by
signedness, fmin/fmax for min/max, ordered float compares except ``ne``.

``bf16`` values are i16 bit patterns on a target without ``native_bf16``: arithmetic
converts to float32, computes and rounds back to nearest even (the same result as one
bf16 operation for + - * /: float32 holds more than twice bf16's precision).  ``fp16`` math functions compute in float32.
Backends may replace math functions through :data:`MATH_OVERRIDES`-style dicts
passed as ``math``.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.core import RuleTable
from ...ir.types import DType, PointerType, float32
from . import intrinsics as intr
from .capabilities import CPU, Capabilities
from .fmod import exact_fmod
from .types import F32, I16, I32, I64, PTR, storage_type, value_type, vector_of

RULES = RuleTable("llvm elementwise lowering")


def _like(v, elem: ir.Type) -> ir.Type:
    """``elem`` as a scalar or a vector matching ``v``'s shape."""
    return ir.VectorType(elem, v.type.count) if isinstance(v.type, ir.VectorType) else elem


def _const(v, x):
    """A constant of v's (scalar or vector) type holding ``x``."""
    ty = v.type if not isinstance(v, ir.Type) else v
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, x)] * ty.count)
    return ir.Constant(ty, x)


def splat_const(ty, x):
    return _const(ty, x)


# --- bf16 <-> f32 ------------------------------------------------------------
def bf16_to_f32(b, v):
    wide = b.zext(v, _like(v, I32))
    return b.bitcast(b.shl(wide, _const(wide, 16)), _like(v, F32))


def f32_to_bf16(b, v):
    """Round-to-nearest-even truncation; NaNs stay quiet NaNs."""
    bits = b.bitcast(v, _like(v, I32))
    lsb = b.and_(b.lshr(bits, _const(bits, 16)), _const(bits, 1))
    rounded = b.lshr(b.add(b.add(bits, _const(bits, 0x7FFF)), lsb), _const(bits, 16))
    nan = b.lshr(b.or_(bits, _const(bits, 0x400000)), _const(bits, 16))
    is_nan = b.fcmp_unordered("uno", v, v)
    return b.trunc(b.select(is_nan, nan, rounded), _like(v, I16))


def _is_bf16(dt) -> bool:
    return isinstance(dt, DType) and dt.name == "bf16"


# float + - * that may be contracted with a neighbour into one fused multiply-add
_CONTRACTABLE = {ops.AddOp: "fadd", ops.SubOp: "fsub", ops.MulOp: "fmul"}


def lower_elementwise(b: ir.IRBuilder, op, args: list, in_dtypes: list, out_dtype, math=None,
                      caps: Capabilities = CPU, contract: bool = False):
    """Lower elementwise ``op`` applied to LLVM values ``args`` on a target with ``caps``.
    ``contract`` (the kernel's ``enable_fp_fusion``): a float ``+``, ``-`` or ``*`` (not
    libdevice's ``add_rn``...: the op's ``rn``) carries LLVM's ``contract`` flag, so that
    code generation may fuse ``a * b + c`` into one fma (one rounding instead of two;
    docs/differences.md)."""
    rule = RULES.lookup(type(op))
    if contract and type(op) in _CONTRACTABLE and getattr(in_dtypes[0], "kind", "") == "float" \
            and not op.attrs.get("rn") and not (_is_bf16(in_dtypes[0]) and not caps.native_bf16):
        return getattr(b, _CONTRACTABLE[type(op)])(*args, flags=("contract",))
    if not caps.native_bf16 and any(_is_bf16(d) for d in in_dtypes) \
            and not isinstance(op, (ops.CastOp, ops.BitcastOp, ops.SelectOp)):
        # compute in float32, round the result back
        f_args = [bf16_to_f32(b, a) if _is_bf16(d) else a for a, d in zip(args, in_dtypes)]
        f_in = [float32 if _is_bf16(d) else d for d in in_dtypes]
        f_out = float32 if _is_bf16(out_dtype) else out_dtype
        res = rule(b, op, f_args, f_in, f_out, math or {}, caps)
        return f32_to_bf16(b, res) if _is_bf16(out_dtype) else res
    return rule(b, op, args, in_dtypes, out_dtype, math or {}, caps)


# --- arithmetic ----------------------------------------------------------------
def _arith(int_fn, float_fn):
    def rule(b, op, args, ins, out, math, caps):
        x, y = args
        if ins[0].kind == "float":
            return getattr(b, float_fn)(x, y)
        return getattr(b, int_fn)(x, y)
    return rule


RULES.register(ops.AddOp)(_arith("add", "fadd"))
RULES.register(ops.SubOp)(_arith("sub", "fsub"))
RULES.register(ops.MulOp)(_arith("mul", "fmul"))
RULES.register(ops.TrueDivOp)(lambda b, op, args, ins, out, math, caps: b.fdiv(*args))  # floats only
RULES.register(ops.AndOp)(_arith("and_", "and_"))
RULES.register(ops.OrOp)(_arith("or_", "or_"))
RULES.register(ops.XorOp)(_arith("xor", "xor"))
RULES.register(ops.ShlOp)(_arith("shl", "shl"))


@RULES.register(ops.ShrOp)
def _shr(b, op, args, ins, out, math, caps):
    return b.ashr(*args) if ins[0].kind == "int" else b.lshr(*args)


def _safe_divisor(b, x, d, signed):
    """``d`` with 0 (and, signed, -1) replaced by 1, and the masks of those lanes."""
    zero = b.icmp_unsigned("==", d, _const(d, 0))
    if not signed:
        return b.select(zero, _const(d, 1), d), zero, None
    m1 = b.icmp_signed("==", d, _const(d, -1))
    return b.select(b.or_(zero, m1), _const(d, 1), d), zero, m1


@RULES.register(ops.IDivOp)
def _idiv(b, op, args, ins, out, math, caps):
    """Truncating division defined everywhere: ``x // 0 == 0``, ``INT_MIN // -1`` wraps."""
    x, d = args
    signed = ins[0].kind == "int"
    safe, zero, m1 = _safe_divisor(b, x, d, signed)
    q = b.sdiv(x, safe) if signed else b.udiv(x, safe)
    if signed:
        q = b.select(m1, b.sub(_const(x, 0), x), q)
    return b.select(zero, _const(x, 0), q)


@RULES.register(ops.RemOp)
def _rem(b, op, args, ins, out, math, caps):
    """Remainder with the dividend's sign: ``x % 0 == x``, ``x % -1 == 0``."""
    x, d = args
    if ins[0].kind == "float":
        frem = b.frem if caps.exact_frem else lambda u, v: exact_fmod(b, u, v)
        if ins[0].bits == 16 and not (caps.half_frem and caps.exact_frem):   # through float32:
            f = _like(x, F32)                                                 # the same result
            return b.fptrunc(frem(b.fpext(x, f), b.fpext(d, f)), x.type)
        return frem(x, d)
    signed = ins[0].kind == "int"
    safe, zero, m1 = _safe_divisor(b, x, d, signed)
    r = b.srem(x, safe) if signed else b.urem(x, safe)
    if signed:
        r = b.select(m1, _const(x, 0), r)
    return b.select(zero, x, r)


def _minmax(float_intr, spred, upred):
    def rule(b, op, args, ins, out, math, caps):
        x, y = args
        if ins[0].kind == "float":
            return intr.binary_math(b, float_intr, x, y)
        c = b.icmp_signed(spred, x, y) if ins[0].kind == "int" else b.icmp_unsigned(upred, x, y)
        return b.select(c, x, y)
    return rule


RULES.register(ops.MinOp)(_minmax("minnum", "<", "<"))
RULES.register(ops.MaxOp)(_minmax("maxnum", ">", ">"))


@RULES.register(ops.UmulhiOp)
def _umulhi(b, op, args, ins, out, math, caps):
    x, y = args
    bits = x.type.element.width if isinstance(x.type, ir.VectorType) else x.type.width
    wide = _like(x, ir.IntType(2 * bits))
    p = b.mul(b.zext(x, wide), b.zext(y, wide))
    return b.trunc(b.lshr(p, _const(p, bits)), x.type)


_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@RULES.register(ops.CmpOp)
def _cmp(b, op, args, ins, out, math, caps):
    x, y = args
    pred = _ICMP[op.pred]
    k = ins[0].kind
    if k == "float":
        return b.fcmp_unordered(pred, x, y) if op.pred == "ne" else b.fcmp_ordered(pred, x, y)
    if k == "int":
        return b.icmp_signed(pred, x, y)
    if isinstance(ins[0], PointerType):
        x, y = b.ptrtoint(x, _like(x, I64)), b.ptrtoint(y, _like(y, I64))
    return b.icmp_unsigned(pred, x, y)


@RULES.register(ops.NegOp)
def _neg(b, op, args, ins, out, math, caps):
    (x,) = args
    return b.fneg(x) if ins[0].kind == "float" else b.sub(_const(x, 0), x)


@RULES.register(ops.InvertOp)
def _invert(b, op, args, ins, out, math, caps):
    (x,) = args
    return b.xor(x, _const(x, -1))


@RULES.register(ops.AbsOp)
def _abs(b, op, args, ins, out, math, caps):
    (x,) = args
    if ins[0].kind == "float":
        return intr.unary_math(b, "fabs", x)
    if ins[0].kind == "uint":
        return x
    return intr.call_overloaded(b, "abs", [x], extra_args=[ir.Constant(ir.IntType(1), 0)])


@RULES.register(ops.FmaOp)
def _fma(b, op, args, ins, out, math, caps):
    if ins[0].kind != "float":
        return b.add(b.mul(args[0], args[1]), args[2])
    return intr.call_overloaded(b, "fma", list(args))


@RULES.register(ops.SelectOp)
def _select(b, op, args, ins, out, math, caps):
    return b.select(*args)


@RULES.register(ops.AddPtrOp)
def _addptr(b, op, args, ins, out, math, caps):
    p, off = args
    wide = _like(off, I64)
    if off.type != wide:
        off = b.sext(off, wide) if ins[1].kind == "int" else b.zext(off, wide)
    return b.gep(p, [off], source_etype=storage_type(ins[0].element, caps))


# --- math functions ---------------------------------------------------------------
from .mathlib import lower_math  # noqa: E402


def _math_rule(fn):
    def rule(b, op, args, ins, out, math, caps):
        (x,) = args
        if ins[0].name == "fp16":
            x32 = b.fpext(x, _like(x, F32))
            return b.fptrunc(lower_math(b, fn, x32, math), x.type)
        return lower_math(b, fn, x, math)
    return rule


for _fn, _cls in ops.MATH_OPS.items():
    RULES.register(_cls)(_math_rule(_fn))

from .casts import lower_cast, lower_bitcast  # noqa: E402

RULES.register(ops.CastOp)(lambda b, op, args, ins, out, math, caps: lower_cast(b, args[0], ins[0], out, caps))
RULES.register(ops.BitcastOp)(lambda b, op, args, ins, out, math, caps: lower_bitcast(b, args[0], ins[0], out, caps))


def apply_binary(b: ir.IRBuilder, op_cls, x, y, dtype, math=None, caps: Capabilities = CPU):
    """Apply binary elementwise op class ``op_cls`` (no op instance needed) to x, y."""
    class _Stub:
        pass
    stub = _Stub()
    stub.__class__ = type("_Stub" + op_cls.__name__, (_Stub,), {})
    rule = RULES.lookup(op_cls)
    if _is_bf16(dtype) and not caps.native_bf16:
        r = rule(b, stub, [bf16_to_f32(b, x), bf16_to_f32(b, y)], [float32, float32], float32, math or {}, caps)
        return f32_to_bf16(b, r)
    return rule(b, stub, [x, y], [dtype, dtype], dtype, math or {}, caps)
