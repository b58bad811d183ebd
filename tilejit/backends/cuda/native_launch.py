"""A native launch function per kernel signature: one Python builtin that packs the
parameters and calls ``cuLaunchKernel``, with no ctypes or ``struct`` in between.

``native_launcher(types, block, shared, target)`` compiles (llvmlite, for the host)

    PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)

called as ``launch(function, gx, gy, gz, stream, *values)``: every argument is read
with the CPython API (``PyLong_AsUnsignedLongLongMask`` for pointers, ints and the
launch numbers, ``PyFloat_AsDouble`` for floats, ``PyObject_IsTrue`` for bools),
stored in a stack slot of the parameter's ABI type -- the same bytes
``types.pack_param`` gives -- and ``target`` (``cuLaunchKernel``'s address, or any
function with its C signature) is called with the slot pointers.  It returns the
driver's result code as an int; a value of the wrong type raises the CPython error
(TypeError) before anything is launched; a wrong number of arguments returns
``BAD_CALL``.  The function is wrapped as a ``METH_FASTCALL`` builtin, so a call
costs what calling ``len`` costs, and the GIL is held throughout (the stack slots
make it reentrant).

Kernels with fp16/bf16/fp8 scalar parameters get None (the caller packs them in
Python).  Functions are cached per (types, block, shared, target) for the process;
their method records and engines are kept alive with them.
"""
from __future__ import annotations

import ctypes
import sys
import threading

from llvmlite import ir

from . import types as T
from ..llvm import binding

BAD_CALL = -1000
METH_FASTCALL = 0x0080
_FIRST_VALUE = 5                     # function, gx, gy, gz, stream, then the values

_cache: dict = {}
_lock = threading.Lock()


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


def _api_address(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


def _slot_type(t):
    """The LLVM type of a parameter's ABI slot, or None when Python must pack it."""
    if isinstance(t, T.PointerType):
        return ir.IntType(64)
    if t.kind in ("int", "uint") and t.bits in (8, 16, 32, 64):
        return ir.IntType(t.bits)
    if t.kind == "bool":
        return ir.IntType(8)
    if t.kind == "float" and t.name not in ("bf16",) and t.bits in (32, 64):
        return ir.FloatType() if t.bits == 32 else ir.DoubleType()
    return None


def _is_bool(t) -> bool:
    return not isinstance(t, T.PointerType) and t.kind == "bool"


def supported(types) -> bool:
    return sys.implementation.name == "cpython" and all(_slot_type(t) is not None for t in types)


class _Api:
    """Typed calls to the CPython API functions the launch uses, by address."""

    def __init__(self, b):
        self.b = b
        obj, i64, i32 = ir.IntType(8).as_pointer(), ir.IntType(64), ir.IntType(32)
        sigs = {"PyLong_AsUnsignedLongLongMask": (i64, [obj]), "PyFloat_AsDouble": (ir.DoubleType(), [obj]),
                "PyObject_IsTrue": (i32, [obj]), "PyErr_Occurred": (obj, []),
                "PyLong_FromLong": (obj, [i64])}
        self.fns = {name: self._fn(ret, args, _api_address(name)) for name, (ret, args) in sigs.items()}

    def _fn(self, ret, args, addr):
        fty = ir.FunctionType(ret, args)
        return self.b.inttoptr(ir.Constant(ir.IntType(64), addr), fty.as_pointer())

    def __call__(self, name, *args):
        return self.b.call(self.fns[name], args)


def _convert(api, t, slot_ty, obj):
    """The parameter's ABI value from Python object ``obj``."""
    b = api.b
    if isinstance(slot_ty, (ir.FloatType, ir.DoubleType)):
        d = api("PyFloat_AsDouble", obj)
        return d if isinstance(slot_ty, ir.DoubleType) else b.fptrunc(d, slot_ty)
    if _is_bool(t):
        truth = api("PyObject_IsTrue", obj)                    # -1 on error: PyErr_Occurred says so
        return b.zext(b.icmp_signed(">", truth, ir.Constant(truth.type, 0)), slot_ty)
    v = api("PyLong_AsUnsignedLongLongMask", obj)
    return v if slot_ty.width == 64 else b.trunc(v, slot_ty)


def _module(types, block: int, shared: int, target: int) -> ir.Module:
    i8p, i64, i32 = ir.IntType(8).as_pointer(), ir.IntType(64), ir.IntType(32)
    mod = ir.Module(name="tilejit_native_launch")
    fn = ir.Function(mod, ir.FunctionType(i8p, [i8p, i8p.as_pointer(), i64]), name="launch")
    entry, bad, body = fn.append_basic_block("entry"), fn.append_basic_block("bad"), fn.append_basic_block("body")
    b = ir.IRBuilder(entry)
    slot_types = [_slot_type(t) for t in types]
    slots = [b.alloca(ty) for ty in slot_types]
    params = b.alloca(i8p, len(types) or 1)
    api = _Api(b)
    args = fn.args[1]
    b.cbranch(b.icmp_signed("==", fn.args[2], ir.Constant(i64, _FIRST_VALUE + len(types))), body, bad)
    b.position_at_end(bad)
    b.ret(api("PyLong_FromLong", ir.Constant(i64, BAD_CALL)))
    b.position_at_end(body)
    api.b = b

    failed = fn.append_basic_block("failed")

    def arg(i):
        return b.load(b.gep(args, [ir.Constant(i64, i)]))

    def stop_on_error():          # no further API call runs with an exception pending
        ok = fn.append_basic_block()
        b.cbranch(b.icmp_unsigned("!=", api("PyErr_Occurred"), ir.Constant(i8p, None)), failed, ok)
        b.position_at_end(ok)
    head = []
    for i in range(_FIRST_VALUE):
        head.append(api("PyLong_AsUnsignedLongLongMask", arg(i)))
        stop_on_error()
    for i, (t, ty, slot) in enumerate(zip(types, slot_types, slots)):
        b.store(_convert(api, t, ty, arg(_FIRST_VALUE + i)), slot)
        b.store(b.bitcast(slot, i8p), b.gep(params, [ir.Constant(i64, i)]))
        stop_on_error()
    launch_bb = b.block
    b.position_at_end(failed)
    b.ret(ir.Constant(i8p, None))                              # the conversion's exception
    b.position_at_end(launch_bb)
    launch_ty = ir.FunctionType(i32, [i8p] + [i32] * 7 + [i8p, i8p.as_pointer(), i8p])
    cu_launch = b.inttoptr(ir.Constant(i64, target), launch_ty.as_pointer())
    gx, gy, gz = (b.trunc(v, i32) for v in head[1:4])
    err = b.call(cu_launch, [b.inttoptr(head[0], i8p), gx, gy, gz, ir.Constant(i32, block),
                             ir.Constant(i32, 1), ir.Constant(i32, 1), ir.Constant(i32, shared),
                             b.inttoptr(head[4], i8p), params, ir.Constant(i8p, None)])
    b.ret(api("PyLong_FromLong", b.sext(err, i64)))
    return mod


def _builtin(addr: int, keep: list):
    """A Python builtin (``METH_FASTCALL``) calling the native function at ``addr``."""
    name = b"tilejit_launch"
    mdef = _MethodDef(name, addr, METH_FASTCALL, None)
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.argtypes = [ctypes.POINTER(_MethodDef), ctypes.c_void_p, ctypes.c_void_p]
    new.restype = ctypes.py_object
    keep += [mdef, name]
    return new(ctypes.byref(mdef), None, None)


def native_launcher(types, block: int, shared: int, target: int):
    """``launch(function, gx, gy, gz, stream, *values) -> int`` (see the module
    docstring), or None when a parameter type needs Python packing."""
    types = tuple(types)
    if not supported(types):
        return None
    key = (tuple((str(_slot_type(t)), _is_bool(t)) for t in types), block, shared, target)
    with _lock:
        hit = _cache.get(key)
        if hit is None:
            tm = binding.new_host_target_machine()
            mod = binding.parse_module(str(_module(types, block, shared, target)), tm)
            engine = binding.create_engine(mod, tm)
            keep = [engine]
            hit = _cache[key] = (_builtin(engine.get_function_address("launch"), keep), keep)
    return hit[0]
