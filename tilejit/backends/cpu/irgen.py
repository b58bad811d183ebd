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


def softmax_rows(block, dt=None):
    """Row softmax: one program per row of an (rows, n) array with row stride n."""
    from ...ir.types import float32
    dt = dt or float32
    k = KB("softmax")
    x, o, n = k.ptr_arg("x", dt), k.ptr_arg("out", dt), k.arg("n", int32)
    row = k.bin(ops.MulOp, k.pid(), n)
    cols = k.arange(block)
    mask = k.cmp("lt", cols, n)
    offs = k.bin(ops.AddOp, cols, row)
    v = k.load(k.addptr(x, offs), mask, k.c(float("-inf"), dt, (block,)))
    m = k.reduce(v, "max", 0)
    e = k.op(ops.MATH_OPS["exp"], src=k.bin(ops.SubOp, v, m))
    s = k.reduce(e, "sum", 0)
    k.store(k.addptr(o, offs), k.bin(ops.TrueDivOp, e, s), mask)
    return k.done()


def matmul(bm, bn, bk, in_dt=None, acc_dt=None):
    """C = A @ B for row-major (M,K) x (K,N) with M, N, K multiples of the blocks;
    grid (M/bm, N/bn); a scf.for over K with a loop-carried accumulator."""
    from ...ir.types import float32
    from ...ir import TileType
    in_dt, acc_dt = in_dt or float32, acc_dt or float32
    k = KB("matmul")
    a, b_, c = k.ptr_arg("a", in_dt), k.ptr_arg("b", in_dt), k.ptr_arg("c", acc_dt)
    M, N, K = k.arg("M", int32), k.arg("N", int32), k.arg("K", int32)
    rm = k.bin(ops.AddOp, k.bin(ops.MulOp, k.pid(0), k.c(bm, int32)), k.arange(bm))
    rn = k.bin(ops.AddOp, k.bin(ops.MulOp, k.pid(1), k.c(bn, int32)), k.arange(bn))
    rk = k.arange(bk)
    a_off = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(rm, 1), K), k.expand(rk, 0))    # (bm, bk)
    b_off = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(rk, 1), N), k.expand(rn, 0))    # (bk, bn)
    acc0 = k.c(0.0, acc_dt, (bm, bn))
    lb, ub, step = k.c(0, int32), K, k.c(bk, int32)
    loop = k.b.create(ops.ForOp, lb=lb, ub=ub, step=step, inits=[acc0])
    body = loop.body
    kv = body.add_arg(TileType(int32), "k")
    acc = body.add_arg(TileType(acc_dt, (bm, bn)), "acc")
    with k.b.at_end(body):
        ta = k.load(k.addptr(a, k.bin(ops.AddOp, a_off, kv)))
        tb = k.load(k.addptr(b_, k.bin(ops.AddOp, b_off, k.bin(ops.MulOp, kv, N))))
        d = k.op(ops.DotOp, a=ta, b=tb, acc=acc)
        k.b.create(ops.YieldOp, values=[d])
    res = loop.results[0]
    c_off = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(rm, 1), N), k.expand(rn, 0))
    if acc_dt != res.type.element:
        res = k.cast(res, acc_dt)
    k.store(k.addptr(c, c_off), res)
    return k.done()
