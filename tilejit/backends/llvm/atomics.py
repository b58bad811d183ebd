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
    """Element types with atomics here: 16/32/64-bit ints and floats (the language
    allows only add on 16-bit floats and only compare-and-swap on 16-bit ints)."""
    if dt.is_ptr() or dt.kind not in ("int", "uint", "float"):
        return False
    return dt.bits in (16, 32, 64)


def emit_rmw(b: ir.IRBuilder, kind: str, dt, ptr, val, sem: str):
    """``atomicrmw`` at ``ptr``; returns the old value (LLVM value type of ``dt``).
    A bf16 held as its 16 bits (no LLVM bfloat type: the CPU backend) adds through a
    compare-and-swap loop on the 16-bit word, the sum rounded to nearest even."""
    if not supported(dt):
        raise NotImplementedError(f"atomics on {dt}")
    if dt.name == "bf16" and isinstance(val.type, ir.IntType):
        from .scalar import bf16_to_f32, f32_to_bf16
        return emit_cas_loop(b, ptr, val.type, sem,
                             lambda old: f32_to_bf16(b, b.fadd(bf16_to_f32(b, old), bf16_to_f32(b, val))))
    if dt.kind == "float" and kind in ("max", "min") and dt.bits in (32, 64):
        ity = ir.IntType(dt.bits)
        vi = b.bitcast(val, ity)
        nan = b.fcmp_unordered("uno", val, val)
        iptr = b.bitcast(ptr, ity.as_pointer(ptr.type.addrspace)) if not ptr.type.is_opaque else ptr
        old = emit_cas_loop(b, iptr, ity, sem, lambda o: float_minmax_bits(b, kind, o, vi, nan))
        return b.bitcast(old, val.type)
    return b.atomic_rmw(rmw_opcode(kind, dt), ptr, val, ORDERING[sem])


def float_minmax_bits(b: ir.IRBuilder, kind: str, old, vi, nan):
    """The new bits of a float atomic max/min of memory bits ``old`` with value bits ``vi``
    (``nan``: the value is NaN), Triton's integer formulation: a value with its sign bit
    clear does a signed max (min) of the bit patterns, one with it set an unsigned min
    (max); a NaN value changes nothing.  Agrees with fmax/fmin except that -0.0 < +0.0
    and that a NaN already in memory may stay (interpreter/rules_atomic.py, the same;
    CUDA emits the two integer ``atom`` instructions, backends/cuda/rules_atomic.py)."""
    neg = b.icmp_signed("<", vi, ir.Constant(vi.type, 0))
    if kind == "max":
        s = b.select(b.icmp_signed(">", old, vi), old, vi)
        u = b.select(b.icmp_unsigned("<", old, vi), old, vi)
    else:
        s = b.select(b.icmp_signed("<", old, vi), old, vi)
        u = b.select(b.icmp_unsigned(">", old, vi), old, vi)
    return b.select(nan, old, b.select(neg, u, s))


def emit_cas_loop(b: ir.IRBuilder, ptr, ity, sem: str, update):
    """``old = *ptr; do new = update(old) while !cmpxchg(ptr, old, new)``; returns the
    value found before the successful swap (an integer of type ``ity``)."""
    first = b.load_atomic(ptr, "monotonic", ity.width // 8, typ=ity)
    pre = b.block
    loop = b.append_basic_block("cas.loop")
    done = b.append_basic_block("cas.done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(ity)
    old.add_incoming(first, pre)
    pair = b.cmpxchg(ptr, old, update(old), ORDERING[sem], FAIL_ORDERING[sem])
    seen = b.extract_value(pair, 0)
    old.add_incoming(seen, b.block)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return seen


def emit_cas(b: ir.IRBuilder, dt, ptr, cmp, val, sem: str):
    """``cmpxchg`` at ``ptr`` comparing bit patterns; returns the old value."""
    if not supported(dt):
        raise NotImplementedError(f"atomics on {dt}")
    ity = ir.IntType(dt.bits)
    vty = val.type
    if vty != ity:
        cmp, val = b.bitcast(cmp, ity), b.bitcast(val, ity)
    pair = b.cmpxchg(ptr, cmp, val, ORDERING[sem], FAIL_ORDERING[sem])
    old = b.extract_value(pair, 0)
    return b.bitcast(old, vty) if vty != ity else old
