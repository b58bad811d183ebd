"""Builds the LLVM module of one kernel.

ABI (all functions in the module):

* ``i32 @program(ptr args, i32 pid_x, pid_y, pid_z, nprog_x, nprog_y, nprog_z, ptr scratch)``
  (internal, always inlined): one program.  ``scratch``: the chunk's shared dot
  operand area (dot_share.py), null when the kernel has none.  ``args`` points to one 8-byte slot per
  IR argument: pointers and integers as 64-bit integers, floats as doubles.
  Returns 0, or k+1 when the k-th ``tt.assert`` failed.
* ``i32 @run_chunk(ptr args, i32 start, i32 end)``: runs programs ``start..end``
  of the linearised grid (x fastest).  Slots n, n+1, n+2 of ``args`` (n = number of
  kernel arguments) hold the grid; on a failed assert it stores
  ``{code, pid_x, pid_y, pid_z}`` as i32 at slot n+3 and returns the code (else 0).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..llvm.binding import rolled_cold_loops
from ..llvm.scalar import f32_to_bf16
from ..llvm.types import F16, F32, F64, I32, I64, PTR, VOID, value_type
from . import dot_share
from .lower import ProgramContext

PROGRAM, CHUNK = "program", "run_chunk"


def _load_arg(b, args_ptr, i, dt):
    slot = b.gep(args_ptr, [ir.Constant(I64, i)], source_etype=I64)
    if dt.is_ptr():
        return b.load(slot, typ=PTR)
    if dt.kind == "float":
        d = b.load(slot, typ=F64)
        if dt.name == "fp64":
            return d
        if dt.name == "bf16":
            return f32_to_bf16(b, b.fptrunc(d, F32))
        return b.fptrunc(d, value_type(dt))
    raw = b.load(slot, typ=I64)
    if dt.kind == "bool":
        return b.icmp_unsigned("!=", raw, ir.Constant(I64, 0))
    return raw if dt.bits == 64 else b.trunc(raw, value_type(dt))


def build_module(func, options, triple: str = "", data_layout: str = "", facts=None, stream=False):
    """LLVM module (llvmlite.ir) for ``func`` and the list of its tt.assert ops;
    ``facts`` (tilejit.analysis) enable vector loads/stores (vectorize.py), ``stream``
    makes the streamable ones non-temporal (streaming.py)."""
    module = ir.Module(name=func.name)
    if triple:
        module.triple = triple
    if data_layout:
        module.data_layout = data_layout
    fty = ir.FunctionType(I32, [PTR] + [I32] * 6 + [PTR])
    prog = ir.Function(module, fty, name=PROGRAM)
    prog.linkage = "internal"
    prog.attributes.add("alwaysinline")
    prog.attributes.add("nounwind")
    ctx = ProgramContext(module, prog, func, options)
    ctx.em.keep_cold_loops_rolled = rolled_cold_loops(options)
    ctx.facts = facts
    ctx.stream_stores = stream
    args_ptr = ctx.args_ptr = prog.args[0]
    ctx.pid = list(prog.args[1:4])
    ctx.nprog = list(prog.args[4:7])
    ctx.scratch = prog.args[7]
    for i, arg in enumerate(func.arguments):
        ctx.set(arg.value, _load_arg(ctx.b, args_ptr, i, arg.value.type.element))
    ctx.lower_block(func.block)
    if not ctx.b.block.is_terminated:
        ctx.b.ret(ir.Constant(I32, 0))
    ctx.em.finish_entry()
    _build_chunk(module, prog, len(func.arguments), dot_share.scratch_of(ctx))
    module.frame_bytes = ctx.em.frame_bytes
    module.accesses = ctx.accesses
    return module, ctx.asserts


def _build_chunk(module, prog, nargs, scratch=None):
    """``run_chunk``: the program ids of ``start`` are divided out of the linear index
    once; each later program steps x (carrying into y, then z), so a chunk of many
    small programs pays no division per program."""
    fty = ir.FunctionType(I32, [PTR, I32, I32])
    fn = ir.Function(module, fty, name=CHUNK)
    fn.attributes.add("nounwind")
    args, start32, end32 = fn.args
    entry, head, body, fail, done = (fn.append_basic_block(n) for n in
                                     ("entry", "head", "body", "fail", "done"))
    b = ir.IRBuilder(entry)
    start, end = b.sext(start32, I64), b.sext(end32, I64)
    grid = [b.trunc(b.load(b.gep(args, [ir.Constant(I64, nargs + i)], source_etype=I64), typ=I64), I32)
            for i in range(3)]
    nx, ny, nz = grid
    err = b.gep(args, [ir.Constant(I64, nargs + 3)], source_etype=I64)
    nx64, ny64 = b.zext(nx, I64), b.zext(ny, I64)
    t = b.udiv(start, nx64)        # start < nx*ny*nz: the ids fit in i32
    first = [b.trunc(v, I32) for v in (b.urem(start, nx64), b.urem(t, ny64), b.udiv(t, ny64))]
    shared, release = dot_share.chunk_scratch(b, module, scratch, start, end)
    entry = b.block
    b.branch(head)
    b.position_at_end(head)
    lin = b.phi(I64)
    lin.add_incoming(start, entry)
    pids = [b.phi(I32) for _ in range(3)]
    for p, v in zip(pids, first):
        p.add_incoming(v, entry)
    b.cbranch(b.icmp_signed("<", lin, end), body, done)
    b.position_at_end(body)
    status = b.call(prog, [args] + pids + [nx, ny, nz, shared])
    lin.add_incoming(b.add(lin, ir.Constant(I64, 1)), body)
    one, zero = ir.Constant(I32, 1), ir.Constant(I32, 0)
    carry = None
    for p, n in zip(pids, grid):   # x + 1, wrapping into y, then z
        bumped = b.add(p, one) if carry is None else b.add(p, b.zext(carry, I32))
        carry = b.icmp_unsigned("==", bumped, n)
        p.add_incoming(b.select(carry, zero, bumped) if n is not nz else bumped, body)
    b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(I32, 0)), fail, head)
    b.position_at_end(fail)
    for k, v in enumerate([status] + pids):
        b.store(v, b.gep(err, [ir.Constant(I64, k)], source_etype=I32))
    release(b)
    b.ret(status)
    b.position_at_end(done)
    release(b)
    b.ret(ir.Constant(I32, 0))
