"""Sanitize mode and ``tl.device_assert`` reports on the CUDA backend.

A kernel compiled with ``options.sanitize`` (or holding a ``tt.assert``) takes two
extra parameters after its own: a device table of the launch's buffers
(``u64 [count, lo0, hi0, lo1, hi1, ...]``, ``[lo, hi)`` each) and a device error
record (``u64 [code, pid x, pid y, pid z, lane, address]``).  In sanitize mode
every masked-in load, store and atomic lane is checked against the table; a
failing lane skips its access, claims the record with a CAS on ``code`` (the first
failure wins) and fills it in; a failing ``tt.assert`` does the same.  After the op,
the CTA votes (``bar.red.or``) and, if any thread failed, the whole program returns
(no trap: the CUDA context survives).  The host synchronises, reads the record back
and raises ``OutOfBoundsError`` / ``DeviceAssertionError`` / ``OffsetOverflowError``
with the CPU backend's messages.  Codes: ``1 + i`` for the i-th assert,
``OOB_BASE + i`` for the i-th checked access.  With sanitize off and no assert the
kernel is unchanged (no parameters, no checks).

Outside sanitize mode a kernel's asserts report in one of two ways, chosen per launch
by the table parameter.  Launches on host arrays (staged, synchronised anyway) pass a
table and read the record as above.  Launches on device arrays pass a null table and
never synchronise: a failing thread calls CUDA's ``__assertfail`` (as Triton with
``debug=True``, and CUDA C's ``assert``), which prints ``file:line: kernel: block:
[x,y,z], thread: [..] Assertion `message` failed.`` and traps; the error surfaces at
the user's next synchronisation (torch: "device-side assert triggered"; tilejit's own
next launch: ``CUDA_ERROR_ASSERT`` with :func:`assert_hint`), and the context stays
unusable, so no result of the failing launch can be read as if it were good.
"""
from __future__ import annotations

import struct

from llvmlite import ir

from ...ir import ops
from ..cpu.sanitize import OOB_BASE
from . import types as T

REC_WORDS = 6
CHECK_FN, REPORT_FN = "tj_inbounds", "tj_report"


def always_holds(op) -> bool:
    """``tt.assert`` of a constant true condition (e.g. ``tl.device_assert(BLOCK > 0)``)."""
    d = getattr(op.cond, "op", None)
    if not isinstance(d, ops.ConstantOp):
        return False
    try:
        return bool(d.value)
    except Exception:
        return False


def wants_reports(func, sanitize: bool) -> bool:
    """Whether the kernel takes the table and record parameters: in sanitize mode,
    or when it holds a ``tt.assert`` that can fail."""
    return bool(sanitize) or any(isinstance(op, ops.DeviceAssertOp) and not always_holds(op)
                                 for op in func.walk())


def _i64(v):
    return ir.Constant(T.I64, int(v))


def _word(b, base, i):
    return b.gep(base, [i if isinstance(i, ir.Value) else _i64(i)], source_etype=T.I64)


def _check_function(lw) -> ir.Function:
    """``i1 tj_inbounds(table, addr, size)``: [addr, addr+size) inside some buffer."""
    fn = lw.module.globals.get(CHECK_FN)
    if fn is not None:
        return fn
    fn = ir.Function(lw.module, ir.FunctionType(T.I1, [T.GLOBAL_PTR, T.I64, T.I64]), name=CHECK_FN)
    fn.linkage = "internal"
    table, addr, size = fn.args
    entry, head, body, yes, no = (fn.append_basic_block(n) for n in ("e", "h", "b", "y", "n"))
    b = ir.IRBuilder(entry)
    count = b.load(_word(b, table, 0), typ=T.I64)
    end = b.add(addr, size)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(T.I64)
    i.add_incoming(_i64(0), entry)
    b.cbranch(b.icmp_unsigned("<", i, count), body, no)
    b.position_at_end(body)
    k = b.add(b.mul(i, _i64(2)), _i64(1))
    lo = b.load(_word(b, table, k), typ=T.I64)
    hi = b.load(_word(b, table, b.add(k, _i64(1))), typ=T.I64)
    inside = b.and_(b.icmp_unsigned(">=", addr, lo), b.icmp_unsigned("<=", end, hi))
    i.add_incoming(b.add(i, _i64(1)), body)
    b.cbranch(inside, yes, head)
    b.position_at_end(yes)
    b.ret(ir.Constant(T.I1, 1))
    b.position_at_end(no)
    b.ret(ir.Constant(T.I1, 0))
    return fn


def _report_function(lw) -> ir.Function:
    """``void tj_report(record, code, lane, addr)``: the first caller fills the record."""
    fn = lw.module.globals.get(REPORT_FN)
    if fn is not None:
        return fn
    fn = ir.Function(lw.module, ir.FunctionType(T.VOID, [T.GLOBAL_PTR, T.I64, T.I64, T.I64]),
                     name=REPORT_FN)
    fn.linkage = "internal"
    rec, code, lane, addr = fn.args
    entry, won, done = (fn.append_basic_block(n) for n in ("e", "w", "d"))
    b = ir.IRBuilder(entry)
    res = b.cmpxchg(rec, _i64(0), code, "monotonic", "monotonic")
    b.cbranch(b.extract_value(res, 1), won, done)
    b.position_at_end(won)
    for k, axis in enumerate("xyz"):
        sreg = lw.intrinsic(f"llvm.nvvm.read.ptx.sreg.ctaid.{axis}", T.I32, [])
        b.store(b.zext(b.call(sreg, []), T.I64), _word(b, rec, k + 1))
    b.store(lane, _word(b, rec, 4))
    b.store(addr, _word(b, rec, 5))
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return fn


def _params(lw):
    return lw.kernel.args[-2], lw.kernel.args[-1]


def _report(lw, cond, code, lane, addr):
    table, rec = _params(lw)
    fn = _report_function(lw)
    lw.guarded(cond, lambda: lw.b.call(fn, [rec, _i64(code), lane, addr]))


def _lane(lw, lay, slot):
    if lay is None:
        return _i64(0)
    return lw.b.zext(lw.elem_index(lay, slot), T.I64)


def check_slots(lw, op, ptrs, conds, size, lay):
    """In sanitize mode: the per-slot conditions with out-of-bounds lanes removed
    (each such lane reported); unchanged otherwise.  Call :func:`finish` after the op."""
    if not lw.sanitize:
        return conds
    if op not in lw.accesses:
        lw.accesses.append(op)
    code = OOB_BASE + lw.accesses.index(op)
    table, _ = _params(lw)
    fn = _check_function(lw)
    b = lw.b
    out = []
    for s, (p, c) in enumerate(zip(ptrs, conds)):
        addr = b.ptrtoint(p, T.I64)
        ok = b.call(fn, [table, addr, _i64(size)])
        bad = b.not_(ok) if c is None else b.and_(c, b.not_(ok))
        _report(lw, bad, code, _lane(lw, lay, s), addr)
        lw.failed = bad if lw.failed is None else b.or_(lw.failed, bad)
        out.append(ok if c is None else b.and_(c, ok))
    return out


def finish(lw):
    """After a checked op: the CTA votes; if any thread failed, the program returns."""
    failed, lw.failed = lw.failed, None
    if failed is None:
        return
    b = lw.b
    vote = lw.intrinsic("llvm.nvvm.barrier.cta.red.or.aligned.all", T.I1, [T.I32, T.I1])
    anyone = b.call(vote, [lw.i32(0), failed])
    stop = lw.kernel.append_basic_block("san.stop")
    cont = lw.kernel.append_basic_block("san.cont")
    b.cbranch(anyone, stop, cont)
    b.position_at_end(stop)
    b.ret_void()
    b.position_at_end(cont)


def report_assert(lw, op, bad):
    """A failing ``tt.assert`` (``bad``: i1 per thread).  Launched with a null table
    (a device-array launch outside sanitize mode, see the module docstring): CUDA's
    ``__assertfail`` (prints and traps).  Otherwise: record, vote, return."""
    lw.asserts.append(op)
    if not lw.sanitize:
        table, _ = _params(lw)
        deferred = lw.b.icmp_unsigned("==", lw.b.ptrtoint(table, T.I64), _i64(0))
        lw.guarded(lw.b.and_(bad, deferred), lambda: _assertfail(lw, op))
    _report(lw, bad, len(lw.asserts), _i64(0), _i64(0))
    lw.failed = bad
    finish(lw)


def _assertfail(lw, op):
    """``__assertfail(message, file, line, function, 1)``: the CUDA runtime's assert
    (as Triton's with ``debug=True``): prints ``file:line: kernel: block: [..], thread:
    [..] Assertion `message` failed.`` and traps (CUDA_ERROR_ASSERT); a ``trap`` follows,
    as in Triton's lowering."""
    from .rules_control import _cstring
    ptr = ir.PointerType()
    fn = lw.intrinsic("__assertfail", T.VOID, [ptr, ptr, T.I32, ptr, T.I64])
    loc = op.loc
    args = [_cstring(lw, op.msg or "device assertion failed"), _cstring(lw, loc.file or "<unknown>"),
            lw.i32(max(0, loc.line)), _cstring(lw, lw.kernel.name), _i64(1)]
    lw.b.call(fn, args)
    lw.call("llvm.trap", T.VOID, [])    # as Triton's: never past a failed assert


# ---- host side ---------------------------------------------------------------------

def table_bytes(buffers) -> bytes:
    words = [len(buffers)]
    for buf in buffers:
        words += [buf.address, buf.address + buf.nbytes]
    return struct.pack(f"<{len(words)}Q", *(w & (2**64 - 1) for w in words))


def assert_hint(code: int) -> str:
    """What a CUDA_ERROR_ASSERT (710) from the driver means for a tilejit user."""
    if code != 710:
        return ""
    return ("; a tl.device_assert failed in a kernel launched earlier on device arrays (such "
            "launches do not synchronise): the device printed the assert's file:line, kernel, "
            "block and thread on stdout, and this CUDA context cannot be used any more (restart "
            "the process).  TILEJIT_SANITIZE=1 raises it at the launch, with the program id.")


def raise_record(kernel, record, buffers):
    """Raise the error a non-zero record describes (the CPU backend's messages)."""
    code, x, y, z = record[:4]
    if code >= OOB_BASE:
        from ..cpu.sanitize import raise_oob
        raise_oob(kernel, tuple(record), buffers)
    op = kernel._asserts[code - 1]
    from ...transforms.sanitize import overflow_error
    from ...errors import DeviceAssertionError
    oe = overflow_error(op, kernel=kernel.name, loc=op.loc, program_id=(x, y, z))
    if oe is not None:
        raise oe
    msg = op.msg if op.msg else "device assertion failed"
    raise DeviceAssertionError(f"device assertion failed: {msg}", kernel=kernel.name, loc=op.loc,
                               program_id=(x, y, z))
