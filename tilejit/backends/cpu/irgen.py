"""Small conveniences for building tile IR by hand (tests and benchmarks of the
CPU backend that must not depend on the frontend)."""
from __future__ import annotations

from ...ir import Builder, Function, PointerType, TileType, ops
from ...ir.types import int1, int32


class KB:
    """A kernel builder: ``k = KB("name"); x = k.ptr_arg("x", float32); ...``."""

    def __init__(self, name):
        self.f = Function(name)
        self.b = Builder(self.f)

    def ptr_arg(self, name, dt):
        return self.f.add_argument(name, TileType(PointerType(dt)))

    def arg(self, name, dt):
        return self.f.add_argument(name, TileType(dt))

    def c(self, value, dt, shape=()):
        return self.b.constant(value, TileType(dt, tuple(shape)))

    def op(self, cls, **kw):
        return self.b.value(cls, **kw)

    def pid(self, axis=0):
        return self.op(ops.ProgramIdOp, axis=axis)

    def arange(self, n, start=0):
        return self.op(ops.ArangeOp, start=start, end=start + n)

    def splat(self, v, shape):
        return self.op(ops.SplatOp, src=v, shape=tuple(shape))

    def bin(self, cls, x, y):
        x, y = self._match(x, y)
        return self.op(cls, lhs=x, rhs=y)

    def cmp(self, pred, x, y):
        x, y = self._match(x, y)
        return self.op(ops.CmpOp, lhs=x, rhs=y, pred=pred)

    def _match(self, x, y):
        if x.type.shape != y.type.shape:
            if x.type.is_scalar:
                x = self.splat(x, y.type.shape)
            elif y.type.is_scalar:
                y = self.splat(y, x.type.shape)
            else:
                shape = tuple(max(a, b) for a, b in zip(x.type.shape, y.type.shape))
                if x.type.shape != shape:
                    x = self.op(ops.BroadcastOp, src=x, shape=shape)
                if y.type.shape != shape:
                    y = self.op(ops.BroadcastOp, src=y, shape=shape)
        return x, y

    def addptr(self, p, off):
        if p.type.shape != off.type.shape:
            p = self.splat(p, off.type.shape)
        return self.op(ops.AddPtrOp, ptr=p, offset=off)

    def load(self, p, mask=None, other=None):
        return self.op(ops.LoadOp, ptr=p, mask=mask, other=other)

    def store(self, p, v, mask=None):
        self.b.create(ops.StoreOp, ptr=p, value=v, mask=mask)

    def expand(self, v, axis):
        return self.op(ops.ExpandDimsOp, src=v, axis=axis)

    def reduce(self, v, kind, axis):
        return self.op(ops.ReduceOp, src=v, kind=kind, axis=axis)

    def cast(self, v, to):
        return self.op(ops.CastOp, src=v, to=to)

    def done(self):
        self.b.create(ops.ReturnOp)
        return self.f


def vector_add(block=1024, dt=None):
    """``out[i] = x[i] + y[i]`` for i < n, BLOCK elements per program."""
    from ...ir.types import float32
    dt = dt or float32
    k = KB("add")
    x, y, o, n = k.ptr_arg("x", dt), k.ptr_arg("y", dt), k.ptr_arg("out", dt), k.arg("n", int32)
    offs = k.bin(ops.AddOp, k.bin(ops.MulOp, k.pid(), k.c(block, int32)), k.arange(block))
    mask = k.cmp("lt", offs, n)
    s = k.bin(ops.AddOp, k.load(k.addptr(x, offs), mask), k.load(k.addptr(y, offs), mask))
    k.store(k.addptr(o, offs), s, mask)
    return k.done()


__all__ = ["KB", "vector_add", "int1", "int32"]
