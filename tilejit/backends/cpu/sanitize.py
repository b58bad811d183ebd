"""``TILEJIT_SANITIZE=1`` for compiled CPU code: every masked-in access is checked
against the launch's buffers; the first bad one stops the program and is reported
as ``tilejit.OutOfBoundsError`` naming the op's line, the program id, the lane and
the address.

Argument-block layout (i64 slots after the n kernel arguments and the 3 grid
slots): n+3..n+4 the i32 error record {code, pid x, y, z}, n+5 the failing lane,
n+6 the failing address, n+7 a pointer to the buffer table (``[lo, hi)`` u64
pairs), n+8 its length.  Error codes >= OOB_BASE are access failures.
"""
from __future__ import annotations

import ctypes

import llvmlite.ir as ir

from ..llvm.types import I1, I32, I64, PTR

OOB_BASE = 1 << 24
EXTRA_SLOTS = 4          # lane, address, table pointer, table length
CHECK_FN = "tj_inbounds"


def _check_function(module) -> ir.Function:
    fn = module.globals.get(CHECK_FN)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(I1, [PTR, I64, PTR, I64]), name=CHECK_FN)
    fn.linkage = "internal"
    table, count, p, size = fn.args
    entry, head, body, yes, no = (fn.append_basic_block(n) for n in ("e", "h", "b", "y", "n"))
    b = ir.IRBuilder(entry)
    addr = b.ptrtoint(p, I64)
    end = b.add(addr, size)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    b.cbranch(b.icmp_signed("<", i, count), body, no)
    b.position_at_end(body)
    lo = b.load(b.gep(table, [b.mul(i, ir.Constant(I64, 2))], source_etype=I64), typ=I64)
    hi = b.load(b.gep(table, [b.add(b.mul(i, ir.Constant(I64, 2)), ir.Constant(I64, 1))],
                      source_etype=I64), typ=I64)
    inside = b.and_(b.icmp_unsigned(">=", addr, lo), b.icmp_unsigned("<=", end, hi))
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), body)
    b.cbranch(inside, yes, head)
    b.position_at_end(yes)
    b.ret(ir.Constant(I1, 1))
    b.position_at_end(no)
    b.ret(ir.Constant(I1, 0))
    return fn


def emit_check(ctx, op, p, size: int, lane):
    """In sanitize mode: return from the program with an access error unless
    ``[p, p+size)`` lies inside a buffer of the launch."""
    if not getattr(ctx.options, "sanitize", False):
        return
    b = ctx.b
    ctx.accesses.append(op)
    code = OOB_BASE + len(ctx.accesses) - 1
    nargs, args = len(ctx.func.arguments), ctx.args_ptr
    slot = lambda k: b.gep(args, [ir.Constant(I64, nargs + k)], source_etype=I64)  # noqa: E731
    table, count = b.load(slot(7), typ=PTR), b.load(slot(8), typ=I64)
    ok = b.call(_check_function(ctx.module), [table, count, p, ir.Constant(I64, size)])
    with b.if_then(b.not_(ok), likely=False):
        b.store(lane if lane is not None else ir.Constant(I64, 0), slot(5))
        b.store(b.ptrtoint(p, I64), slot(6))
        b.ret(ir.Constant(I32, code))


def buffer_table(buffers):
    """(ctypes array of [lo, hi) pairs, length) for a launch's buffers."""
    arr = (ctypes.c_uint64 * max(2, 2 * len(buffers)))()
    for i, buf in enumerate(buffers):
        arr[2 * i], arr[2 * i + 1] = buf.address, buf.address + buf.nbytes
    return arr, len(buffers)


def describe(addr, buffers) -> str:
    """Where ``addr`` lies relative to the nearest buffer (the interpreter's words)."""
    from ...interpreter.memory import Memory
    return Memory(buffers).nearest(addr)


def raise_oob(kernel, record, buffers):
    from ...errors import OutOfBoundsError
    from ...interpreter.provenance import hint as pointer_hint
    code, x, y, z, lane, addr = record
    op = kernel._accesses[code - OOB_BASE]
    what = {"tt.load": "load", "tt.store": "store"}.get(op.name, op.name)
    elem = (op.value if op.name == "tt.store" else op.result).type.element
    msg = (f"out-of-bounds {what} of {elem} at address {addr:#x} (lane {lane}): "
           f"{describe(addr, buffers)}{pointer_hint(op)}")
    raise OutOfBoundsError(msg, kernel=kernel.name, loc=op.loc, program_id=(x, y, z),
                           lane=lane, address=addr)
