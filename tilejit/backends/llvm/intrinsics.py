"""Declaring and calling LLVM intrinsics from llvmlite.ir (target independent)."""
from __future__ import annotations

import llvmlite.ir as ir

from .types import BFloatType


def type_suffix(ty: ir.Type) -> str:
    """LLVM's overloaded-intrinsic mangling of ``ty`` (f32, bf16, v8f32, i64, ...)."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{type_suffix(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    if isinstance(ty, ir.HalfType):
        return "f16"
    if isinstance(ty, BFloatType):
        return "bf16"
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.PointerType):
        return "p0"
    raise TypeError(f"cannot mangle {ty}")


def declare(module: ir.Module, name: str, ret: ir.Type, args: list) -> ir.Function:
    """Get or declare function ``name`` with the given signature in ``module``."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name=name)
    return fn


def call_overloaded(b: ir.IRBuilder, base: str, args: list, ret: ir.Type | None = None,
                    overload_types: list | None = None, extra_args=()):
    """Call ``llvm.<base>.<suffix>`` overloaded on the first argument's type
    (or ``overload_types``); ``extra_args`` are appended (e.g. an i1 flag)."""
    tys = overload_types or [args[0].type]
    name = "llvm." + base + "." + ".".join(type_suffix(t) for t in tys)
    all_args = list(args) + list(extra_args)
    fn = declare(b.module, name, ret or args[0].type, [a.type for a in all_args])
    return b.call(fn, all_args)


def unary_math(b: ir.IRBuilder, name: str, x):
    """``llvm.<name>`` on a float scalar or vector (exp, log, sqrt, sin, fabs, ...)."""
    return call_overloaded(b, name, [x])


def binary_math(b: ir.IRBuilder, name: str, x, y):
    """``llvm.<name>`` with two operands of one type (minnum, maxnum, pow, ...)."""
    return call_overloaded(b, name, [x, y])
