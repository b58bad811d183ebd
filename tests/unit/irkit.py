"""Helpers for building small kernels directly in tile IR (interpreter unit tests)."""
from __future__ import annotations

import numpy as np

from tilejit.backends import Buffer, LaunchArgs
from tilejit.interpreter import run
from tilejit.ir import Builder, Function, Loc, PointerType, TileType, dtype_from_numpy, ops


class K:
    """A kernel under construction: ``k = K("name", x="*fp32", n="i32")``."""

    def __init__(self, name, **params):
        from tilejit.ir import dtype_from_name
        self._f = Function(name)
        self._b = Builder(self._f)
        self._args = {}
        for pname, tname in params.items():
            self._args[pname] = self._f.add_argument(pname, TileType(dtype_from_name(tname)))
        self._line = 10

    def __getattr__(self, item):
        args = self.__dict__.get("_args", {})
        if item in args:
            return args[item]
        raise AttributeError(item)

    def v(self, cls, **kw):
        self._line += 1
        return self._b.create(cls, loc=Loc("kern.py", self._line, 4), **kw).result

    def op(self, cls, **kw):
        self._line += 1
        loc = Loc("kern.py", self._line, 4)
        if "result_types" in kw:   # Builder.create's own result_types keyword shadows the attr
            rt = list(kw.pop("result_types"))
            slots = {n: kw.get(n, [] if var else None) for n, _o, var in cls.slot_names()}
            op = cls(slots, {"result_types": rt}, rt, loc)
            op.verify()
            return self._b.block.append(op)
        return self._b.create(cls, loc=loc, **kw)

    def const(self, value, dtype, shape=()):
        return self.v(ops.ConstantOp, value=value, type=TileType(dtype, tuple(shape)))

    def splat(self, x, shape):
        return self.v(ops.SplatOp, src=x, shape=tuple(shape))

    def ptrs(self, p, offs):
        return self.v(ops.AddPtrOp, ptr=self.splat(p, offs.type.shape), offset=offs)

    def arange(self, n):
        return self.v(ops.ArangeOp, start=0, end=n)

    def done(self):
        self.op(ops.ReturnOp)
        return self._f


def launch(func, grid, *args, observer=None):
    """Run ``func`` with numpy arrays (as pointers) and Python scalars."""
    values, bufs = [], []
    for a, arg in zip(func.arguments, args):
        if isinstance(arg, np.ndarray):
            values.append(arg.ctypes.data)
            bufs.append(Buffer(a.name, arg.ctypes.data, arg.nbytes, arg.itemsize))
        else:
            values.append(arg)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    run(func, grid, LaunchArgs(values, bufs, list(args)), None, observer)


def elementwise(opcls, dtype, n, unary=False, **attrs):
    """out[i] = op(a[i], b[i]) over ``n`` lanes, one program."""
    t = dtype_from_numpy(dtype)
    pname = "*" + t.name
    k = K("ew", a=pname, b=pname, o=pname)
    offs = k.arange(n)
    a = k.v(ops.LoadOp, ptr=k.ptrs(k.a, offs))
    if unary:
        r = k.v(opcls, src=a, **attrs)
    else:
        b = k.v(ops.LoadOp, ptr=k.ptrs(k.b, offs))
        r = k.v(opcls, lhs=a, rhs=b, **attrs)
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, offs), value=r)
    return k.done()


