"""A native launch function per kernel signature: one Python builtin that packs the
parameters and calls ``cuLaunchKernel``, with no ctypes or ``struct`` in between.

``native_launcher(types, block, shared, target)`` builds (``llvm/native_call.py``)
a builtin called as ``launch(function, gx, gy, gz, stream, *values)``: each value is
read with the CPython API (pointers and ints: their low bits, floats: a double
rounded to the parameter's width, bools: truth) into a stack slot of the parameter's
ABI type -- the same bytes ``types.pack_param`` gives -- and ``target``
(``cuLaunchKernel``'s address, or any function with its C signature) is called with
the slot pointers.  It returns the driver's result code as an int (a grid dimension
outside 32 bits or negative: ``INVALID_VALUE``, nothing launched); a value of the
wrong type raises the CPython error (TypeError) before anything is launched; a wrong
number of arguments returns ``BAD_CALL``.  The GIL is held throughout.

Kernels with fp16/bf16/fp8 scalar parameters get None (the caller packs them in
Python).  Builtins are shared by kernels with the same slots, block and shared size.
"""
from __future__ import annotations

from llvmlite import ir

from . import types as T
from ..llvm import native_call as NC
from ..llvm.native_call import BAD_CALL  # noqa: F401  (re-exported for callers)

_FIRST_VALUE = 5                     # function, gx, gy, gz, stream, then the values
INVALID_VALUE = 1                    # CUDA_ERROR_INVALID_VALUE


def _slot_type(t):
    """The LLVM type of a parameter's ABI slot, or None when Python must pack it."""
    if isinstance(t, T.PointerType):
        return NC.I64
    if t.kind in ("int", "uint") and t.bits in (8, 16, 32, 64):
        return ir.IntType(t.bits)
    if t.kind == "bool":
        return ir.IntType(8)
    if t.kind == "float" and t.name != "bf16" and t.bits in (32, 64):
        return ir.FloatType() if t.bits == 32 else ir.DoubleType()
    return None


def _reader(t):
    """The FastcallBuilder method that converts a value for parameter type ``t``."""
    if not isinstance(t, T.PointerType) and t.kind == "bool":
        return "to_bool"
    return "to_float" if isinstance(_slot_type(t), (ir.FloatType, ir.DoubleType)) else "to_int"


def supported(types) -> bool:
    return NC.available() and all(_slot_type(t) is not None for t in types)


def _build(slots, block: int, shared: int, target: int):
    fb = NC.FastcallBuilder(_FIRST_VALUE + len(slots))
    b = fb.b
    head = [fb.to_int(fb.arg(i)) for i in range(_FIRST_VALUE)]
    # a grid dimension outside 32 bits (or negative) would wrap to a valid-looking one:
    # not launched, CUDA_ERROR_INVALID_VALUE (the caller's general path raises)
    wide = b.lshr(b.or_(b.or_(head[1], head[2]), head[3]), ir.Constant(NC.I64, 32))
    bad, ok = fb.fn.append_basic_block("bad_grid"), fb.fn.append_basic_block("grid_ok")
    b.cbranch(b.icmp_unsigned("!=", wide, ir.Constant(NC.I64, 0)), bad, ok)
    b.position_at_end(bad)
    fb.finish(ir.Constant(NC.I32, INVALID_VALUE))
    b.position_at_end(ok)
    params = fb.alloca(ir.ArrayType(NC.I8P, len(slots) or 1))
    for i, (ty, reader) in enumerate(slots):
        slot = fb.alloca(ty)
        b.store(getattr(fb, reader)(fb.arg(_FIRST_VALUE + i), ty), slot)
        b.store(b.bitcast(slot, NC.I8P), b.gep(params, [ir.Constant(NC.I32, 0), ir.Constant(NC.I32, i)]))
    i32 = NC.I32
    gx, gy, gz = (b.trunc(v, i32) for v in head[1:4])
    err = NC.call_address(
        b, target, i32, [NC.I8P] + [i32] * 7 + [NC.I8P, NC.I8P.as_pointer(), NC.I8P],
        [b.inttoptr(head[0], NC.I8P), gx, gy, gz, ir.Constant(i32, block), ir.Constant(i32, 1),
         ir.Constant(i32, 1), ir.Constant(i32, shared), b.inttoptr(head[4], NC.I8P),
         b.bitcast(params, NC.I8P.as_pointer()), ir.Constant(NC.I8P, None)])
    fb.finish(err)
    return fb


def native_launcher(types, block: int, shared: int, target: int):
    """``launch(function, gx, gy, gz, stream, *values) -> int`` (see the module
    docstring), or None when a parameter type needs Python packing."""
    if not supported(types):
        return None
    slots = tuple((_slot_type(t), _reader(t)) for t in types)
    key = ("cuda-launch", tuple((str(ty), r) for ty, r in slots), block, shared, target)
    return NC.compile_builtin(key, lambda: _build(slots, block, shared, target))
