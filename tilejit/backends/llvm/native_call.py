"""Python builtins compiled from LLVM IR for the host: the native end of a launch.

A launch's last Python steps (packing values with ``struct``, a ctypes call that
converts each argument) cost more than the work they do.  ``FastcallBuilder`` writes

    PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs)

that reads its arguments with the CPython API (``PyLong_AsUnsignedLongLongMask``,
``PyFloat_AsDouble``, ``PyObject_IsTrue``, called by address), and ``compile_builtin``
JIT-compiles it (MCJIT) and wraps it as a ``METH_FASTCALL`` builtin, so calling it
costs what calling ``len`` costs.  A value of the wrong type returns NULL with the
API's exception (TypeError) set, before the function does anything else; a wrong
number of arguments returns ``BAD_CALL``.  Builtins are cached for the process by a
key the caller gives; their method records and engines stay alive with them.

Used by the CUDA launcher (``cuda/native_launch.py``: pack and ``cuLaunchKernel``)
and the CPU backend's express runner (``cpu/native_run.py``: pack and run one program).
"""
from __future__ import annotations

import ctypes
import sys
import threading

from llvmlite import ir

from . import binding

BAD_CALL = -1000
METH_FASTCALL = 0x0080
I8P, I64, I32 = ir.IntType(8).as_pointer(), ir.IntType(64), ir.IntType(32)

_cache: dict = {}
_lock = threading.Lock()

_API = {"PyLong_AsUnsignedLongLongMask": (I64, [I8P]), "PyFloat_AsDouble": (ir.DoubleType(), [I8P]),
        "PyObject_IsTrue": (I32, [I8P]), "PyErr_Occurred": (I8P, []),
        "PyLong_FromLong": (I8P, [I64]), "PyEval_SaveThread": (I8P, []),
        "PyEval_RestoreThread": (ir.VoidType(), [I8P])}


def available() -> bool:
    """Builtins need CPython (its C API, its method records).  Whether launches use
    them is the runtime's choice (``Options.native_call``, TILEJIT_NATIVE_CALL)."""
    return sys.implementation.name == "cpython"


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


def _address(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


def call_address(b, addr: int, ret, args: list, values: list):
    """Call the C function at ``addr`` (type ``ret(args)``) with ``values``."""
    fty = ir.FunctionType(ret, args)
    return b.call(b.inttoptr(ir.Constant(I64, addr), fty.as_pointer()), values)


class FastcallBuilder:
    """The skeleton of a fastcall builtin taking exactly ``nargs`` arguments.

    ``arg(i)`` is the i-th argument (a ``PyObject*``); ``api(name, ...)`` calls the
    CPython API; ``checked(value)`` returns early (NULL, the exception set) when the
    API call that made ``value`` failed; ``finish(i64)`` returns it as a Python int."""

    def __init__(self, nargs: int):
        self.module = ir.Module(name="tilejit_native_call")
        self.fn = ir.Function(self.module, ir.FunctionType(I8P, [I8P, I8P.as_pointer(), I64]), name="call")
        entry = self.fn.append_basic_block("entry")
        self.entry_builder = ir.IRBuilder(entry)
        bad, body = self.fn.append_basic_block("bad"), self.fn.append_basic_block("body")
        self.failed = self.fn.append_basic_block("failed")
        b = self.b = ir.IRBuilder(bad)
        b.ret(self.api("PyLong_FromLong", ir.Constant(I64, BAD_CALL)))
        b.position_at_end(self.failed)
        b.ret(ir.Constant(I8P, None))                          # the API call's exception
        self.entry_builder.cbranch(
            self.entry_builder.icmp_signed("==", self.fn.args[2], ir.Constant(I64, nargs)), body, bad)
        b.position_at_end(body)

    def api(self, name: str, *values):
        ret, args = _API[name]
        return call_address(self.b, _address(name), ret, args, list(values))

    def alloca(self, ty):
        """A stack slot, allocated in the entry block (the function is reentrant)."""
        self.entry_builder.position_at_start(self.fn.entry_basic_block)
        return self.entry_builder.alloca(ty)

    def arg(self, i: int):
        return self.b.load(self.b.gep(self.fn.args[1], [ir.Constant(I64, i)]))

    def checked(self, value):
        """``value``, after branching out when an exception is pending (so no further
        API call runs with one set)."""
        ok = self.fn.append_basic_block()
        self.b.cbranch(self.b.icmp_unsigned("!=", self.api("PyErr_Occurred"), ir.Constant(I8P, None)),
                       self.failed, ok)
        self.b.position_at_end(ok)
        return value

    def to_int(self, obj, ty=I64):
        """An integer argument's low bits (any Python int; wraps as C does)."""
        v = self.checked(self.api("PyLong_AsUnsignedLongLongMask", obj))
        return v if ty.width == 64 else self.b.trunc(v, ty)

    def to_float(self, obj, ty=ir.DoubleType()):
        d = self.checked(self.api("PyFloat_AsDouble", obj))
        return d if isinstance(ty, ir.DoubleType) else self.b.fptrunc(d, ty)

    def to_bool(self, obj, ty=ir.IntType(8)):
        truth = self.checked(self.api("PyObject_IsTrue", obj))      # -1: the exception is set
        return self.b.zext(self.b.icmp_signed(">", truth, ir.Constant(I32, 0)), ty)

    def finish(self, value):
        """Return the integer ``value`` (sign-extended) as a Python int."""
        if value.type != I64:
            value = self.b.sext(value, I64)
        self.b.ret(self.api("PyLong_FromLong", value))


def _builtin(addr: int, keep: list):
    """A Python builtin (``METH_FASTCALL``) calling the native function at ``addr``."""
    name = b"tilejit_native"
    mdef = _MethodDef(name, addr, METH_FASTCALL, None)
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.argtypes = [ctypes.POINTER(_MethodDef), ctypes.c_void_p, ctypes.c_void_p]
    new.restype = ctypes.py_object
    keep += [mdef, name]
    return new(ctypes.byref(mdef), None, None)


def compile_builtin(key, build):
    """The builtin for ``key``, made once per process: ``build()`` returns a finished
    FastcallBuilder."""
    with _lock:
        hit = _cache.get(key)
        if hit is None:
            fb = build()
            tm = binding.new_host_target_machine()
            mod = binding.parse_module(str(fb.module), tm)
            engine = binding.create_engine(mod, tm)
            keep = [engine]
            hit = _cache[key] = (_builtin(engine.get_function_address("call"), keep), keep)
    return hit[0]
