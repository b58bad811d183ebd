"""The CPU express runner's native end: one Python builtin per argument signature
that packs the values into a kernel's argument block and runs its one program.

``native_runner(arg_dtypes, chunk_address)`` builds (``llvm/native_call.py``, once per
argument signature) a builtin ``native(chunk_address, block_address, *values)`` and
returns it with the entry bound, called as ``run(block_address, *values) -> status``: each value goes into its
8-byte slot of the block (pointers and integers: their low 64 bits, floats: a
double -- the bytes ``runner.arg_format`` packs), the GIL is released, the native
entry ``run_chunk(block, 0, 1)`` runs program (0, 0, 0) (the block's grid slots must
hold 1, 1, 1), the GIL is taken back and the entry's status is returned.  A value of
the wrong type raises TypeError before the kernel runs.
"""
from __future__ import annotations

import functools

from llvmlite import ir

from ..llvm import native_call as NC


def _reader(dt) -> str:
    return "to_float" if not dt.is_ptr() and dt.kind == "float" else "to_int"


def _build(readers):
    fb = NC.FastcallBuilder(2 + len(readers))
    b = fb.b
    entry_ty = ir.FunctionType(NC.I32, [NC.I8P, NC.I32, NC.I32])
    entry = b.inttoptr(fb.to_int(fb.arg(0)), entry_ty.as_pointer())
    block = b.inttoptr(fb.to_int(fb.arg(1)), NC.I8P)
    for i, reader in enumerate(readers):
        value = getattr(fb, reader)(fb.arg(2 + i))
        at = b.gep(block, [ir.Constant(NC.I64, 8 * i)])
        b.store(value, b.bitcast(at, value.type.as_pointer()))
    state = fb.api("PyEval_SaveThread")
    status = b.call(entry, [block, ir.Constant(NC.I32, 0), ir.Constant(NC.I32, 1)])
    fb.api("PyEval_RestoreThread", state)
    fb.finish(status)
    return fb


def native_runner(arg_dtypes, chunk_address: int):
    """``run(block_address, *values) -> status`` (see the module docstring), or None
    where builtins cannot be made.  One builtin per argument signature serves every
    kernel (the entry's address is its first argument, bound here), so compiling
    kernels leaves no machine code behind once they are dropped."""
    if not NC.available():
        return None
    readers = tuple(_reader(dt) for dt in arg_dtypes)
    builtin = NC.compile_builtin(("cpu-run", readers), lambda: _build(readers))
    return functools.partial(builtin, chunk_address)
