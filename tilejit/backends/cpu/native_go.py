"""The native express lane: ``kernel[grid](...)`` for the last few kernels the lane
chose, checked and run in one machine-code call.

The launcher's express lane (runtime/express.py) computes a key in Python and looks
it up; this is the same decision made ahead of time for one express entry.  When
the lane files an entry whose kernel runs on the calling thread (a CPU kernel that
is not sanitized, its frame on the caller's stack), :class:`NativeLane` writes a
*spec* for it (the lane holds the last ``SPECS``): per parameter what the entry's
key requires of the value (a numpy array with that very dtype object, its 16-byte
alignment bit as recorded, writable where the kernel writes through it, at most
2**31-1 bytes, contiguous and long enough for the accesses the analysis bounds for
the grid; a torch CPU tensor with that dtype, alignment and at most 2**31-1
elements; an exact ``int`` of the recorded width class and specialization; a
``float``; a ``bool``; a constexpr equal to the recorded one), the call shape (how
many positional arguments, the keyword names in order), the options object, the
grid limits, the argument block and the kernel's entry.  ``go`` is a builtin
(``METH_FASTCALL | METH_KEYWORDS``) so ``functools.partial(go, grid)`` calls it
without building a tuple or a dict.

``go(grid, *args, **kwargs)`` checks everything above against each spec in turn,
packs the values into the block, runs ``run_chunk(block, 0, gx*gy*gz)`` with the GIL
released and returns the kernel.  Anything it does not accept -- another type or
dtype, another call shape, other options, a grid it would not run on this thread,
the block in use by another thread -- goes unchanged to the Python lane
(``PyObject_Vectorcall``), which stays the single source of truth for binding rules
and errors.  A nonzero status calls the spec's ``report`` (the kernel's
device-assert report), which raises.

Object layouts read here (``PyArrayObject``'s data, nd, dimensions, descr and flags;
a tuple's size and items; a ctypes object's buffer pointer) are checked at import
on probe objects; when one does not check out, there is no native lane.
"""
from __future__ import annotations

import ctypes
import sys
import threading

import numpy as np
from llvmlite import ir

from ..llvm import binding
from ..llvm import native_call as NC

I8P, I64, I32 = NC.I8P, NC.I64, NC.I32
I128, F64 = ir.IntType(128), ir.DoubleType()
METH_KEYWORDS = 0x0002
_I32_MAX = 2 ** 31 - 1
CUDA_MAX_YZ = 65535        # the Python lane leaves larger y/z to the launcher's checks

# array layout (offsets from the object's address); checked by _probe()
A_DATA, A_ND, A_DIMS, A_DESCR, A_FLAGS = 16, 24, 32, 56, 64
C_CONTIGUOUS, WRITEABLE = 0x1, 0x400
# spec header slots
H_KERNEL, H_OPTS, H_ENTRY, H_BLOCK, H_BUSY, H_REPORT, H_GRID_AT, H_NMAX = range(8)
H_GMIN, H_GMAX = 8, 11            # 3 slots each
H_NPOS, H_NKW, H_NPARAMS = 14, 15, 16
HEADER = 17                       # then the keyword names, then the parameter records
REC = 12                          # slots per parameter record: kind, facts, block offset at 6
K_ARRAY, K_INT, K_FLOAT, K_BOOL, K_CINT, K_OBJ, K_TENSOR = 1, 2, 3, 4, 5, 6, 7
# slot (the builtin's self): [fallback, options module dict, "_current", SPECS spec addresses or 0]
S_FALLBACK, S_DICT, S_NAME, S_SPEC = range(4)
SPECS = 4                         # express entries the native lane holds at once
MISS = 1                          # a shape function's "not mine" (NULL: an exception is set)


def _probe() -> bool:
    """Whether the layouts read here are the ones this process has."""
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    q = ctypes.c_int64.from_address
    i = ctypes.c_int32.from_address
    base = np.arange(60, dtype=np.float64)
    ro = np.frombuffer(bytes(32), np.int8)
    for a in (base, base[3:], base.reshape(3, 4, 5).T, ro, np.zeros(0, np.float32), np.ones(()),
              np.empty((3, 5), np.float16, order="F")):
        addr = id(a)
        if (q(addr + A_DATA).value != a.__array_interface__["data"][0] or i(addr + A_ND).value != a.ndim
                or q(addr + A_DESCR).value != id(a.dtype) or i(addr + A_FLAGS).value != a.flags.num
                or list((ctypes.c_int64 * a.ndim).from_address(q(addr + A_DIMS).value)) != list(a.shape)):
            return False
    t = (7, 8)
    if q(id(t) + 16).value != 2 or q(id(t) + 24).value != id(t[0]) or q(id(t) + 8).value != id(tuple):
        return False
    c = (ctypes.c_int64 * 2)()
    return q(id(c) + 16).value == ctypes.addressof(c)


AVAILABLE = NC.available() and _probe()


class _Slot(ctypes.c_int64 * (S_SPEC + SPECS)):
    """The builtin's ``self``: its buffer holds the current spec's address; its
    attributes keep alive what the addresses in it refer to."""


# ---------------------------------------------------------------- code generation
class _Gen:
    """IR of ``go``'s check-and-run function, for every spec: it walks the spec's
    parameter records (one kind per parameter: KINDS) in a loop, so one function
    compiled per process serves every kernel and call shape."""

    def __init__(self):
        self.module = ir.Module(name="tilejit_native_go")
        fty = ir.FunctionType(I8P, [I8P, I8P.as_pointer(), I64, I8P, I64.as_pointer()])
        self.fn = ir.Function(self.module, fty, name="go")
        self.self_, self.args, self.nargsf, self.kwnames, self.spec_p = self.fn.args
        entry = self.fn.append_basic_block("entry")
        self.miss = self.fn.append_basic_block("miss")
        self.b = ir.IRBuilder(entry)
        self.ovf = self.b.alloca(I32)
        self.argv = self.b.alloca(I8P)          # one argument for PyObject_Vectorcall

    # small helpers
    def api(self, name, ret, argtys, *values):
        return NC.call_address(self.b, NC._address(name), ret, argtys, list(values))

    def word(self, obj, offset, ty=I64):
        p = self.b.gep(obj, [offset if isinstance(offset, ir.Value) else ir.Constant(I64, offset)])
        return self.b.load(self.b.bitcast(p, ty.as_pointer()))

    def at(self, base, i):
        """``base[i]`` of an i64 array (``i`` a constant or a value)."""
        return self.b.load(self.b.gep(base, [i if isinstance(i, ir.Value) else ir.Constant(I64, i)]))

    def spec(self, i):
        return self.at(self.spec_p, i)

    def const(self, v, ty=I64):
        return ir.Constant(ty, v)

    def require(self, cond):
        ok = self.fn.append_basic_block()
        self.b.cbranch(cond, ok, self.miss)
        self.b.position_at_end(ok)

    def is_type(self, obj, type_addr):
        return self.b.icmp_unsigned("==", self.word(obj, 8), self.const(type_addr))

    def exact_int(self, obj):
        """An exact ``int``'s value (miss when it is not one or exceeds int64)."""
        self.require(self.is_type(obj, id(int)))
        x = self.api("PyLong_AsLongLongAndOverflow", I64, [I8P, I32.as_pointer()], obj, self.ovf)
        self.require(self.b.icmp_signed("==", self.b.load(self.ovf), self.const(0, I32)))
        return x

    # the function
    def build(self):
        b = self.b
        busy_p = b.gep(self.spec_p, [self.const(H_BUSY)])
        taken, mine = self.fn.append_basic_block("taken"), self.fn.append_basic_block("mine")
        b.cbranch(b.icmp_unsigned("==", b.load(busy_p), self.const(0)), mine, taken)
        b.position_at_end(taken)
        b.ret(b.inttoptr(self.const(MISS), I8P))           # another thread runs this block
        b.position_at_end(mine)
        b.store(self.const(1), busy_p)                      # the GIL is held: no race
        nargs = b.and_(self.nargsf, self.const(2 ** 63 - 1))
        self.require(b.icmp_unsigned("==", nargs, b.add(self.spec(H_NPOS), self.const(1))))
        nkw = self.spec(H_NKW)
        self.check_kwnames(nkw)
        block = b.inttoptr(self.spec(H_BLOCK), I8P)
        self.params(b.add(nkw, self.const(HEADER)), block)
        gx, gy, gz, n = self.grid(self.at(self.args, 0))
        grid_at = b.gep(block, [self.spec(H_GRID_AT)])
        for k, g in enumerate((gx, gy, gz)):
            b.store(g, b.bitcast(b.gep(grid_at, [self.const(8 * k)]), I64.as_pointer()))
        entry_ty = ir.FunctionType(I32, [I8P, I32, I32])
        entry = b.inttoptr(self.spec(H_ENTRY), entry_ty.as_pointer())
        state = self.api("PyEval_SaveThread", I8P, [])
        clock = ir.Function(self.module, ir.FunctionType(I64, []), name="llvm.readcyclecounter")
        t0 = b.call(clock, [])
        status = b.call(entry, [block, self.const(0, I32), b.trunc(n, I32)])
        self.too_long(b.sub(b.call(clock, []), t0), n)
        self.api("PyEval_RestoreThread", ir.VoidType(), [I8P], state)
        failed, done = self.fn.append_basic_block("failed"), self.fn.append_basic_block("done")
        b.cbranch(b.icmp_signed("!=", status, self.const(0, I32)), failed, done)
        b.position_at_end(failed)
        res = self.api("PyObject_CallNoArgs", I8P, [I8P], b.inttoptr(self.spec(H_REPORT), I8P))
        b.store(self.const(0), busy_p)
        raised = self.fn.append_basic_block("raised")
        b.cbranch(b.icmp_unsigned("==", res, ir.Constant(I8P, None)), raised, done)
        b.position_at_end(raised)
        b.ret(ir.Constant(I8P, None))
        b.position_at_end(done)
        b.store(self.const(0), busy_p)
        kernel = b.inttoptr(self.spec(H_KERNEL), I8P)
        self.api("Py_IncRef", ir.VoidType(), [I8P], kernel)
        b.ret(kernel)
        b.position_at_end(self.miss)
        b.store(self.const(0), busy_p)
        b.ret(b.inttoptr(self.const(MISS), I8P))      # the trampoline calls the Python lane
        return self.module

    def loop(self, count, body):
        """``for i in range(count): body(i)`` (``body`` leaves the builder in its last block)."""
        b = self.b
        pre = b.block
        head, work, out = (self.fn.append_basic_block() for _ in range(3))
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64)
        i.add_incoming(self.const(0), pre)
        b.cbranch(b.icmp_signed("<", i, count), work, out)
        b.position_at_end(work)
        body(i)
        i.add_incoming(b.add(i, self.const(1)), b.block)
        b.branch(head)
        b.position_at_end(out)

    def too_long(self, cycles, n):
        """A run of more than one program that took longer than the kernel's limit
        (its second word) sends its launches back to the pool's sizing (the first word,
        the most programs run here, back to 1) to be measured again."""
        b = self.b
        words = b.inttoptr(self.spec(H_NMAX), I64.as_pointer())
        limit = self.at(words, 1)
        over = b.and_(b.icmp_signed(">", n, self.const(1)), b.icmp_signed(">", cycles, limit))
        with b.if_then(over):
            b.store(self.const(1), words)

    def check_kwnames(self, nkw):
        b = self.b
        null = b.icmp_unsigned("==", self.kwnames, ir.Constant(I8P, None))
        none, some, ok = (self.fn.append_basic_block() for _ in range(3))
        b.cbranch(null, none, some)
        b.position_at_end(none)
        b.cbranch(b.icmp_unsigned("==", nkw, self.const(0)), ok, self.miss)
        b.position_at_end(some)
        self.require(b.icmp_unsigned("==", self.word(self.kwnames, 16), nkw))
        names = b.bitcast(b.gep(self.kwnames, [self.const(24)]), I64.as_pointer())
        self.loop(nkw, lambda j: self.require(
            b.icmp_unsigned("==", self.at(names, j), self.spec(b.add(j, self.const(HEADER))))))
        b.branch(ok)
        b.position_at_end(ok)

    def params(self, first_rec, block):
        """Check every parameter against its record; store the launch values in ``block``."""
        b = self.b
        nparams = self.spec(H_NPARAMS)

        def one(i):
            rec = b.gep(self.spec_p, [b.add(first_rec, b.mul(i, self.const(REC)))])
            v = b.inttoptr(self.at(self.args, b.add(i, self.const(1))), I8P)
            kind = self.at(rec, 0)
            store, nxt = self.fn.append_basic_block("store"), self.fn.append_basic_block("next")
            sw = b.switch(kind, self.miss)
            b.position_at_end(store)
            value = b.phi(I64)
            at = b.gep(block, [self.at(rec, 6)])
            b.store(value, b.bitcast(at, I64.as_pointer()))
            b.branch(nxt)
            for code, kind_fn in ((K_ARRAY, self.value_A), (K_INT, self.value_I), (K_FLOAT, self.value_F),
                                  (K_BOOL, self.value_B), (K_CINT, self.value_C), (K_OBJ, self.value_O),
                                  (K_TENSOR, self.value_T)):
                case = self.fn.append_basic_block()
                sw.add_case(self.const(code), case)
                b.position_at_end(case)
                got = kind_fn(v, rec)
                if got is None:
                    b.branch(nxt)
                else:
                    value.add_incoming(got, b.block)
                    b.branch(store)
            b.position_at_end(nxt)
        self.loop(nparams, one)

    def value_A(self, v, rec):
        b = self.b
        self.require(self.is_type(v, id(np.ndarray)))
        data = self.word(v, A_DATA)
        flags = b.zext(self.word(v, A_FLAGS, I32), I64)
        ok = b.icmp_unsigned("==", self.word(v, A_DESCR), self.at(rec, 1))
        aligned = b.icmp_unsigned("==", b.and_(data, self.const(15)), self.const(0))
        mode = self.at(rec, 2)                   # 0: any, 1: aligned, 2: not aligned
        want = b.select(aligned, self.const(1), self.const(2))
        ok = b.and_(ok, b.or_(b.icmp_unsigned("==", mode, self.const(0)),
                              b.icmp_unsigned("==", mode, want)))
        writable = b.icmp_unsigned("!=", b.and_(flags, self.const(WRITEABLE)), self.const(0))
        ok = b.and_(ok, b.or_(b.icmp_unsigned("==", self.at(rec, 3), self.const(0)), writable))
        self.require(ok)
        limit = self.at(rec, 4)
        count = self.count(v, limit)
        self.require(b.icmp_unsigned("<=", count, limit))
        need = self.at(rec, 5)                   # bytes the bounded accesses reach (0: none)
        contiguous = b.icmp_unsigned("!=", b.and_(flags, self.const(C_CONTIGUOUS)), self.const(0))
        long_enough = b.icmp_unsigned(">=", b.mul(count, self.at(rec, 7)), need)
        self.require(b.or_(b.icmp_unsigned("==", need, self.const(0)), b.and_(contiguous, long_enough)))
        return data

    def count(self, v, limit):
        """The array's element count, or ``limit + 1`` when it is larger."""
        b = self.b
        nd = b.sext(self.word(v, A_ND, I32), I64)
        dims = b.inttoptr(self.word(v, A_DIMS), I64.as_pointer())
        cap = b.add(limit, self.const(1))
        acc = b.alloca(I64)
        b.store(self.const(1), acc)

        def one(j):
            wide = b.mul(b.zext(b.load(acc), I128), b.zext(self.at(dims, j), I128))
            b.store(b.select(b.icmp_unsigned(">", wide, b.zext(cap, I128)), cap, b.trunc(wide, I64)), acc)
        self.loop(nd, one)
        return b.load(acc)

    def value_T(self, v, rec):
        """A torch CPU tensor: its type, ``is_cpu``, ``dtype`` object, ``numel()`` and
        ``data_ptr()`` read through the C API as the Python lane reads them."""
        b = self.b
        self.require(b.icmp_unsigned("==", self.word(v, 8), self.at(rec, 3)))
        cpu = self.owned(self.api("PyObject_GetAttr", I8P, [I8P, I8P], v, b.inttoptr(self.at(rec, 8), I8P)))
        is_cpu = b.icmp_unsigned("==", b.ptrtoint(cpu, I64), self.const(id(True)))
        self.api("Py_DecRef", ir.VoidType(), [I8P], cpu)
        self.require(is_cpu)
        dt = self.owned(self.api("PyObject_GetAttr", I8P, [I8P, I8P], v, b.inttoptr(self.at(rec, 7), I8P)))
        same = b.icmp_unsigned("==", b.ptrtoint(dt, I64), self.at(rec, 1))
        self.api("Py_DecRef", ir.VoidType(), [I8P], dt)
        self.require(same)
        numel = self.method_int(v, self.at(rec, 5))
        self.require(b.icmp_signed("<=", numel, self.const(_I32_MAX)))
        need = self.at(rec, 9)                   # bytes the bounded accesses reach (0: none)
        with b.if_then(b.icmp_unsigned("!=", need, self.const(0))):
            b.store(v, self.argv)
            vc = [I8P, I8P.as_pointer(), I64, I8P]
            res = self.owned(self.api("PyObject_Vectorcall", I8P, vc, b.inttoptr(self.at(rec, 10), I8P),
                                      self.argv, self.const(1), ir.Constant(I8P, None)))
            contiguous = b.icmp_unsigned("==", b.ptrtoint(res, I64), self.const(id(True)))
            self.api("Py_DecRef", ir.VoidType(), [I8P], res)
            self.require(b.and_(contiguous, b.icmp_signed(">=", b.mul(numel, self.at(rec, 11)), need)))
        data = self.method_int(v, self.at(rec, 4))
        aligned = b.icmp_unsigned("==", b.and_(data, self.const(15)), self.const(0))
        mode = self.at(rec, 2)
        want = b.select(aligned, self.const(1), self.const(2))
        self.require(b.or_(b.icmp_unsigned("==", mode, self.const(0)), b.icmp_unsigned("==", mode, want)))
        return data

    def owned(self, obj):
        """``obj`` (a new reference), after missing when it is NULL (the error cleared:
        the Python lane meets it again and reports it)."""
        b = self.b
        ok, bad = self.fn.append_basic_block(), self.fn.append_basic_block()
        b.cbranch(b.icmp_unsigned("==", obj, ir.Constant(I8P, None)), bad, ok)
        b.position_at_end(bad)
        self.api("PyErr_Clear", ir.VoidType(), [])
        b.branch(self.miss)
        b.position_at_end(ok)
        return obj

    def method_int(self, v, method):
        """``method(v)`` (a method descriptor), an exact int within int64, as an i64."""
        b = self.b
        b.store(v, self.argv)
        vc = [I8P, I8P.as_pointer(), I64, I8P]
        res = self.owned(self.api("PyObject_Vectorcall", I8P, vc, b.inttoptr(method, I8P), self.argv,
                                  self.const(1), ir.Constant(I8P, None)))
        is_int = self.is_type(res, id(int))
        x = self.api("PyLong_AsLongLongAndOverflow", I64, [I8P, I32.as_pointer()], res, self.ovf)
        ovf = b.load(self.ovf)
        self.api("Py_DecRef", ir.VoidType(), [I8P], res)
        self.require(b.and_(is_int, b.icmp_signed("==", ovf, self.const(0, I32))))
        return x

    def value_I(self, v, rec):
        b = self.b
        x = self.exact_int(v)
        one = b.icmp_signed("==", x, self.const(1))
        by16 = b.icmp_signed("==", b.and_(x, self.const(15)), self.const(0))
        cls = b.select(one, self.const(1), b.select(by16, self.const(16), self.const(0)))
        cls = b.select(b.icmp_unsigned("!=", self.at(rec, 2), self.const(0)), cls, self.const(0))
        in32 = b.and_(b.icmp_signed(">=", x, self.const(-2 ** 31)), b.icmp_signed("<=", x, self.const(_I32_MAX)))
        cls = b.add(cls, b.select(in32, self.const(0), self.const(100)))
        self.require(b.icmp_signed("==", cls, self.at(rec, 1)))
        pinned = b.icmp_unsigned("!=", self.at(rec, 3), self.const(0))
        self.require(b.or_(b.not_(pinned), b.icmp_signed("==", x, self.at(rec, 4))))
        return x

    def value_F(self, v, rec):
        self.require(self.is_type(v, id(float)))
        return self.word(v, 16)                  # the double's bits

    def value_B(self, v, rec):
        b = self.b
        is_true = b.icmp_unsigned("==", b.ptrtoint(v, I64), self.const(id(True)))
        is_false = b.icmp_unsigned("==", b.ptrtoint(v, I64), self.const(id(False)))
        self.require(b.or_(is_true, is_false))
        return b.zext(is_true, I64)

    def value_C(self, v, rec):
        self.require(self.b.icmp_signed("==", self.exact_int(v), self.at(rec, 1)))
        return None

    def value_O(self, v, rec):
        self.require(self.b.icmp_unsigned("==", self.b.ptrtoint(v, I64), self.at(rec, 1)))
        return None

    def grid(self, g):
        """(gx, gy, gz, programs), each dimension within the spec's [min, max]."""
        b = self.b
        g = b.inttoptr(g, I8P)
        self.require(self.is_type(g, id(tuple)))
        size = self.word(g, 16)
        self.require(b.and_(b.icmp_signed(">=", size, self.const(1)), b.icmp_signed("<=", size, self.const(3))))
        dims = []
        for k in range(3):
            if k == 0:
                x = self.exact_int(self.word(g, 24, I8P))
            else:
                pre = b.block
                read, join = self.fn.append_basic_block(), self.fn.append_basic_block()
                b.cbranch(b.icmp_signed(">", size, self.const(k)), read, join)
                b.position_at_end(read)
                got = self.exact_int(self.word(g, 24 + 8 * k, I8P))
                got_block = b.block
                b.branch(join)
                b.position_at_end(join)
                x = b.phi(I64)
                x.add_incoming(self.const(1), pre)
                x.add_incoming(got, got_block)
            self.require(b.and_(b.icmp_signed(">=", x, self.spec(H_GMIN + k)),
                                b.icmp_signed("<=", x, self.spec(H_GMAX + k))))
            dims.append(x)
        words = b.inttoptr(self.spec(H_NMAX), I64.as_pointer())
        nmax = self.at(words, 0)                 # the kernel's, kept current by its sizing
        n = b.mul(dims[0], dims[1])              # each <= 2**31-1: no overflow
        self.require(b.icmp_signed("<=", n, nmax))
        n = b.mul(n, dims[2])
        self.require(b.icmp_signed("<=", n, nmax))
        return dims[0], dims[1], dims[2], n


def _module():
    """The module of ``call(self, args, nargsf, kwnames)``, the builtin's function: the
    check-and-run function ``go`` (:class:`_Gen`) for each spec in the slot made under
    the current options, in order, and the Python lane (the slot's fallback) when none
    takes the call."""
    gen = _Gen()
    module = gen.build()
    fty = ir.FunctionType(I8P, [I8P, I8P.as_pointer(), I64, I8P])
    fn = ir.Function(module, fty, name="call")
    self_, args, nargsf, kwnames = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c = lambda v: ir.Constant(I64, v)     # noqa: E731
    slot = b.bitcast(b.load(b.bitcast(b.gep(self_, [c(16)]), I8P.as_pointer())), I64.as_pointer())
    word = lambda base, i: b.load(b.gep(base, [c(i) if isinstance(i, int) else i]))  # noqa: E731
    sdict, sname = b.inttoptr(word(slot, S_DICT), I8P), b.inttoptr(word(slot, S_NAME), I8P)
    cur = b.ptrtoint(NC.call_address(b, NC._address("PyDict_GetItem"), I8P, [I8P, I8P], [sdict, sname]), I64)
    python = fn.append_basic_block("python")
    for k in range(SPECS):
        nxt, has, same = (fn.append_basic_block() for _ in range(3))
        spec_addr = word(slot, S_SPEC + k)
        b.cbranch(b.icmp_unsigned("==", spec_addr, c(0)), nxt, has)
        b.position_at_end(has)
        spec = b.inttoptr(spec_addr, I64.as_pointer())
        b.cbranch(b.icmp_unsigned("==", cur, word(spec, H_OPTS)), same, nxt)
        b.position_at_end(same)
        res = b.call(gen.fn, [self_, args, nargsf, kwnames, spec])
        done = fn.append_basic_block()
        b.cbranch(b.icmp_unsigned("==", b.ptrtoint(res, I64), c(MISS)), nxt, done)
        b.position_at_end(done)
        b.ret(res)                        # the kernel, or NULL with its error set
        b.position_at_end(nxt)
    b.branch(python)
    b.position_at_end(python)
    fallback = b.inttoptr(word(slot, S_FALLBACK), I8P)
    vc_ty = [I8P, I8P.as_pointer(), I64, I8P]
    b.ret(NC.call_address(b, NC._address("PyObject_Vectorcall"), I8P, vc_ty, [fallback, args, nargsf, kwnames]))
    return module


# ---------------------------------------------------------------- compiled code, per process
_compiled: dict = {}
_lock = threading.Lock()


def _call_address() -> int:
    """The address of ``call`` (compiled once per process)."""
    with _lock:
        got = _compiled.get("call")
        if got is None:
            tm = binding.new_host_target_machine()
            engine = binding.create_engine(binding.parse_module(str(_module()), tm), tm)
            got = _compiled["call"] = (engine.get_function_address("call"), engine)
    return got[0]


def _builtin(slot):
    """``go`` as a ``METH_FASTCALL | METH_KEYWORDS`` builtin whose self is ``slot``."""
    addr = _call_address()
    name = b"go"
    mdef = NC._MethodDef(name, addr, NC.METH_FASTCALL | METH_KEYWORDS, None)
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.argtypes = [ctypes.POINTER(NC._MethodDef), ctypes.py_object, ctypes.c_void_p]
    new.restype = ctypes.py_object
    slot.mdef = (mdef, name)                     # the method record lives with the slot
    return new(ctypes.byref(mdef), slot, None)


# ---------------------------------------------------------------- specs
class _Spec:
    """One express entry as the native lane checks it: the slots and what they refer to."""

    def __init__(self, nslots):
        self.words = (ctypes.c_int64 * nslots)()
        self.keep: list = []

    def set(self, i, value, keep=None):
        self.words[i] = value
        if keep is not None:
            self.keep.append(keep)

    @property
    def busy(self) -> bool:
        return bool(self.words[H_BUSY])


def _param_record(spec, r, v, is_cx, spec_flag, written, need_bytes, offset, pinned=False):
    """Fill parameter record ``r`` for value ``v`` (``offset``: its launch value's byte
    offset in the block; ``pinned``: an ``int`` the lane then requires equal to ``v``, one
    the access bounds were computed with); False when the native lane does not take such
    a value."""
    t = type(v)
    spec.set(r + 6, offset)
    if is_cx:
        if t is int and -2 ** 63 <= v < 2 ** 63:
            spec.set(r, K_CINT)
            spec.set(r + 1, v)
        else:
            spec.set(r, K_OBJ)
            spec.set(r + 1, id(v), v)
        return True
    if t is np.ndarray:
        addr = v.__array_interface__["data"][0]
        spec.set(r, K_ARRAY)
        spec.set(r + 1, id(v.dtype), v.dtype)
        spec.set(r + 2, (1 if addr % 16 == 0 else 2) if spec_flag else 0)
        spec.set(r + 3, int(written))
        spec.set(r + 4, _I32_MAX // v.itemsize)
        spec.set(r + 5, need_bytes)
        spec.set(r + 7, v.itemsize)
        return True
    if t is int:
        if not -2 ** 63 <= v < 2 ** 63:
            return False
        cls = (1 if v == 1 else (16 if v % 16 == 0 else 0)) if spec_flag else 0
        spec.set(r, K_INT)
        spec.set(r + 1, cls + (0 if -2 ** 31 <= v <= _I32_MAX else 100))
        spec.set(r + 2, int(spec_flag))
        spec.set(r + 3, int(pinned))
        spec.set(r + 4, v if pinned else 0)
        return True
    if pinned:
        return False
    torch = sys.modules.get("torch")
    if torch is not None and t is getattr(torch, "Tensor", None):
        if not v.is_cpu:
            return False
        base = torch._C.TensorBase
        spec.set(r, K_TENSOR)
        spec.set(r + 1, id(v.dtype), v.dtype)
        spec.set(r + 2, (1 if v.data_ptr() % 16 == 0 else 2) if spec_flag else 0)
        spec.set(r + 3, id(t), t)
        spec.set(r + 4, id(base.data_ptr), base.data_ptr)
        spec.set(r + 5, id(base.numel), base.numel)
        for i, name in ((7, "dtype"), (8, "is_cpu")):
            spec.set(r + i, id(name), name)
        spec.set(r + 9, need_bytes)
        spec.set(r + 10, id(base.is_contiguous), base.is_contiguous)
        spec.set(r + 11, v.element_size())
        return True
    if need_bytes:
        return False
    kind = {float: K_FLOAT, bool: K_BOOL}.get(t)
    if kind is None:
        return False
    spec.set(r, kind)
    return True


def _for_user(report):
    """``report`` raising user errors as the Python lane's entry point does."""
    from ...runtime.entry import USER_ERRORS, user_error

    def run():
        try:
            report()
        except USER_ERRORS as e:
            raise user_error(e)  # the error is in your kernel or setup: see below
    return run


class NativeLane:
    """The native express lane of one launcher: ``go`` (a builtin; calls ``fallback``,
    the Python lane, for whatever it does not take), :meth:`offer` to point it at an
    express entry, :meth:`clear` when the entries are forgotten."""

    def __init__(self, fallback):
        from ...runtime import options as options_mod
        self.slot = slot = _Slot()
        name = "_current"
        slot.keep = (fallback, vars(options_mod), name)
        slot[S_FALLBACK], slot[S_DICT], slot[S_NAME] = id(fallback), id(vars(options_mod)), id(name)
        slot.specs = []           # the specs held, and replaced ones until no thread runs in them
        self._next = 0
        self.go = _builtin(slot)

    def clear(self):
        for k in range(SPECS):
            self.slot[S_SPEC + k] = 0
        self._prune()

    def entries(self) -> int:
        """How many express entries the lane holds."""
        return sum(1 for k in range(SPECS) if self.slot[S_SPEC + k])

    def _prune(self):
        held = {self.slot[S_SPEC + k] for k in range(SPECS)}
        self.slot.specs = [s for s in self.slot.specs if s.busy or ctypes.addressof(s.words) in held]

    def _install(self, spec):
        """Put ``spec`` in a free place, else in place of the oldest."""
        free = [k for k in range(SPECS) if not self.slot[S_SPEC + k]]
        k = free[0] if free else self._next
        self._next = (k + 1) % SPECS
        self.slot.specs.append(spec)
        self.slot[S_SPEC + k] = ctypes.addressof(spec.words)
        self._prune()

    def offer(self, kernel, plan, args, kwargs, vals, options, grid, written, bounds,
              pinned=frozenset()) -> bool:
        """Make the lane run ``kernel`` for calls shaped like ``args``/``kwargs`` whose
        values match ``vals`` as the express key does (``plan``: the launcher's
        (name, is_constexpr, specialize) per parameter; ``written``: parameter names
        the kernel writes through; ``bounds``: index -> [lo, hi) bytes the kernel's
        bounded accesses reach for ``grid``, which the lane then requires exactly;
        ``pinned``: indices of the integer arguments those bounds were computed with,
        which the lane then requires equal to their values in ``vals``).
        False (and the lane unchanged) when it cannot take them."""
        inline = getattr(kernel, "inline_programs", None)
        if not AVAILABLE or inline is None or not options.native_call:
            return False
        nkw = len(kwargs)
        spec = _Spec(HEADER + nkw + REC * len(plan))
        for j, name in enumerate(kwargs):
            spec.set(HEADER + j, id(name), name)
        spec.set(H_NPOS, len(args))
        spec.set(H_NKW, nkw)
        spec.set(H_NPARAMS, len(plan))
        slot = 0
        for i, ((name, is_cx, spec_flag), v) in enumerate(zip(plan, vals)):
            lo, hi = bounds.get(i, (0, 0))
            if lo < 0:
                return False
            if not _param_record(spec, HEADER + nkw + REC * i, v, is_cx, spec_flag, name in written, hi,
                                 8 * slot, i in pinned):
                return False
            slot += not is_cx
        limits = inline()
        if limits is None:
            return False
        gmin, gmax, nmax_at = limits
        if bounds:                       # the accesses were bounded for this grid only
            gmin = gmax = grid
        block = kernel.native_block()
        spec.set(H_KERNEL, id(kernel), kernel)
        spec.set(H_OPTS, id(options), options)
        spec.set(H_ENTRY, kernel._fn_addr)
        spec.set(H_BLOCK, block.ptr.value, block)
        spec.set(H_GRID_AT, kernel._fmt.size - 24)
        spec.set(H_NMAX, nmax_at)
        report = _for_user(kernel.native_report(block))
        spec.set(H_REPORT, id(report), report)
        for k in range(3):
            spec.set(H_GMIN + k, gmin[k])
            spec.set(H_GMAX + k, gmax[k])
        self._install(spec)
        return True
