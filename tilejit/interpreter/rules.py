"""Interpreter rules for constants, ids and elementwise ops.

A rule is ``rule(ctx, op, vals) -> list of results`` where ``vals`` are the op's
operand values (``op.operands`` order).  Rules never modify their inputs.
Integer ops use numpy with the exact dtype and wrap (overflow warnings are
suppressed by the driver); float ops on 16-bit floats compute in float32 and round
back to the element type.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import ops
from ..ir.core import RuleTable
from ..ir.types import PointerType, bfloat16
from . import numerics as nm

RULES = RuleTable("interpreter")


def elem_of(value) -> object:
    return value.type.element


# ---------------------------------------------------------------- constants / ids
@RULES.register(ops.ConstantOp)
def _constant(ctx, op, vals):
    cached = ctx.consts.get(op)
    if cached is None:
        t = op.type
        v = op.value
        if isinstance(v, np.ndarray):
            v = v.reshape(()) if v.size == 1 else v
        if isinstance(v, np.ndarray) and v.shape:
            base = np.asarray(v)
            cached = nm.encode(base.astype(nm.compute_dtype(t.element)), t.element) \
                if t.element.kind == "float" else base.astype(t.element.to_numpy())
            cached = np.broadcast_to(cached, t.shape)
        else:
            scalar = nm.to_scalar(v.item() if isinstance(v, np.generic) else v, t.element)
            cached = np.broadcast_to(np.asarray(scalar), t.shape) if t.shape else scalar
        ctx.consts[op] = cached
    return [cached]


@RULES.register(ops.ArangeOp)
def _arange(ctx, op, vals):
    cached = ctx.consts.get(op)
    if cached is None:
        cached = ctx.consts[op] = np.arange(op.start, op.end, dtype=np.int32)
    return [cached]


@RULES.register(ops.ProgramIdOp)
def _program_id(ctx, op, vals):
    return [np.int32(ctx.pid[op.attrs["axis"]])]


@RULES.register(ops.NumProgramsOp)
def _num_programs(ctx, op, vals):
    return [np.int32(ctx.grid[op.attrs["axis"]])]


# ---------------------------------------------------------------- binary ops
def _float_op(fn):
    """Lift a float32/64 numpy function to any float element type."""
    def rule(a, b, el):
        if el.bits == 16:
            cd = nm.F32
            return nm.encode(fn(nm.decode(a, el).astype(cd), nm.decode(b, el).astype(cd)), el)
        return fn(a, b)
    return rule


INT_BINARY = {
    ops.AddOp: lambda a, b, el: np.add(a, b),
    ops.SubOp: lambda a, b, el: np.subtract(a, b),
    ops.MulOp: lambda a, b, el: np.multiply(a, b),
    ops.IDivOp: nm.int_div,
    ops.RemOp: nm.int_rem,
    ops.AndOp: lambda a, b, el: np.bitwise_and(a, b),
    ops.OrOp: lambda a, b, el: np.bitwise_or(a, b),
    ops.XorOp: lambda a, b, el: np.bitwise_xor(a, b),
    ops.ShlOp: lambda a, b, el: np.left_shift(a, b),
    ops.ShrOp: lambda a, b, el: np.right_shift(a, b),
    ops.MinOp: lambda a, b, el: np.minimum(a, b),
    ops.MaxOp: lambda a, b, el: np.maximum(a, b),
    ops.UmulhiOp: nm.umulhi,
}

FLOAT_BINARY = {
    ops.AddOp: _float_op(np.add),
    ops.SubOp: _float_op(np.subtract),
    ops.MulOp: _float_op(np.multiply),
    ops.TrueDivOp: _float_op(np.true_divide),
    ops.RemOp: _float_op(np.fmod),
    ops.MinOp: _float_op(np.fmin),
    ops.MaxOp: _float_op(np.fmax),
}


@RULES.register(*ops.BINARY_OPS)
def _binary(ctx, op, vals):
    el = op.slots["lhs"].type.element
    table = FLOAT_BINARY if el.kind == "float" else INT_BINARY
    fn = table.get(type(op))
    if fn is None:
        raise NotImplementedError(f"{op.name} on {el}")
    out = fn(vals[0], vals[1], el)
    dt = nm.storage(el)
    if out.dtype != dt:
        out = out.astype(dt)
    return [out]


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}


@RULES.register(ops.CmpOp)
def _cmp(ctx, op, vals):
    el = op.slots["lhs"].type.element
    a, b = vals
    if el is bfloat16:
        a, b = nm.decode(a, el), nm.decode(b, el)
    return [CMP[op.attrs["pred"]](a, b)]


# ---------------------------------------------------------------- unary ops
def _neg(x, el):
    if el.kind == "float":
        return nm.encode(-nm.decode(x, el), el) if el.bits == 16 and el.name == "bf16" else -x
    return np.negative(x) if el.kind == "int" else (np.zeros_like(x) - x)


def _abs(x, el):
    if el.kind == "uint":
        return x
    if el.name == "bf16":
        return np.bitwise_and(x, np.uint16(0x7FFF))
    return np.abs(x)


UNARY = {
    ops.NegOp: _neg,
    ops.InvertOp: lambda x, el: np.invert(x),
    ops.AbsOp: _abs,
}

_erf = np.frompyfunc(math.erf, 1, 1)
MATH = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: np.reciprocal(np.sqrt(x)), "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil, "tanh": np.tanh,
    "erf": lambda x: _erf(np.asarray(x, dtype=np.float64)).astype(np.float64).astype(x.dtype),
}
for _fn, _cls in ops.MATH_OPS.items():
    UNARY[_cls] = (lambda f: lambda x, el: nm.encode(f(np.asarray(
        nm.decode(x, el), dtype=nm.compute_dtype(el))), el))(MATH[_fn])


@RULES.register(ops.UnaryOp)
def _unary(ctx, op, vals):
    el = op.slots["src"].type.element
    fn = UNARY.get(type(op))
    if fn is None:
        raise NotImplementedError(op.name)
    out = fn(vals[0], el)
    dt = nm.storage(el)
    if out.dtype != dt:
        out = out.astype(dt)
    return [out]


@RULES.register(ops.FmaOp)
def _fma(ctx, op, vals):
    """a*b+c computed in float64 for fp16/bf16/fp32 (the product is exact there; the
    sum is rounded twice, which may differ from a true fma by one ulp in rare cases);
    fp64 rounds the product and the sum separately."""
    el = op.a.type.element
    a, b, c = (np.asarray(nm.decode(v, el), dtype=np.float64) for v in vals)
    return [nm.encode(np.asarray(a * b + c).astype(nm.compute_dtype(el)), el)]


# ---------------------------------------------------------------- casts / select / ptr
@RULES.register(ops.CastOp)
def _cast(ctx, op, vals):
    return [nm.cast(vals[0], op.slots["src"].type.element, op.attrs["to"])]


@RULES.register(ops.BitcastOp)
def _bitcast(ctx, op, vals):
    return [nm.bitcast(vals[0], op.src.type.element, op.to)]


@RULES.register(ops.SelectOp)
def _select(ctx, op, vals):
    c, t, f = vals
    out = np.where(c, t, f)
    return [out if op.slots["true_value"].type.shape else out[()]]


@RULES.register(ops.AddPtrOp)
def _addptr(ctx, op, vals):
    ptr, off = vals
    pt = op.slots["ptr"].type
    pointee = pt.element.element
    size = 8 if isinstance(pointee, PointerType) else pointee.itemsize
    off = np.asarray(off).astype(np.int64)
    if size != 1:
        off = off * _SIZES[size]
    out = np.add(ptr, off.view(np.uint64))
    return [out if pt.shape else np.uint64(out)]


_SIZES = {n: np.int64(n) for n in (1, 2, 4, 8, 16)}
