"""LLVM ``atomicrmw`` / ``cmpxchg`` for ``tt.atomic_rmw`` / ``tt.atomic_cas`` (shared by
the CPU and CUDA backends; the target expands what it has no instruction for)."""
from __future__ import annotations

import llvmlite.ir as ir

ORDERING = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
FAIL_ORDERING = {"relaxed": "monotonic", "acquire": "acquire", "release": "monotonic",
                 "acq_rel": "acquire"}


def rmw_opcode(kind: str, dt) -> str:
    """The LLVM atomicrmw operation for ``kind`` on element type ``dt``."""
    if kind == "xchg":
        return "xchg"
    if dt.kind == "float":
        return {"add": "fadd", "max": "fmax", "min": "fmin"}[kind]
    if kind in ("max", "min"):
        return ("u" if dt.kind == "uint" else "") + kind
    return kind


def supported(dt) -> bool:
    """Element types with atomics here: 32/64-bit ints and floats, and fp16."""
    if dt.is_ptr() or dt.kind not in ("int", "uint", "float"):
        return False
    return dt.bits in (32, 64) or dt.name == "fp16"


def emit_rmw(b: ir.IRBuilder, kind: str, dt, ptr, val, sem: str):
    """``atomicrmw`` at ``ptr``; returns the old value (LLVM value type of ``dt``)."""
    if not supported(dt):
        raise NotImplementedError(f"atomics on {dt}")
    return b.atomic_rmw(rmw_opcode(kind, dt), ptr, val, ORDERING[sem])


def emit_cas(b: ir.IRBuilder, dt, ptr, cmp, val, sem: str):
    """``cmpxchg`` at ``ptr`` comparing bit patterns; returns the old value."""
    if not supported(dt):
        raise NotImplementedError(f"atomics on {dt}")
    ity = ir.IntType(dt.bits)
    if dt.kind == "float":
        cmp, val = b.bitcast(cmp, ity), b.bitcast(val, ity)
    pair = b.cmpxchg(ptr, cmp, val, ORDERING[sem], FAIL_ORDERING[sem])
    old = b.extract_value(pair, 0)
    return b.bitcast(old, _float_type(dt)) if dt.kind == "float" else old


def _float_type(dt):
    return {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}[dt.bits]
