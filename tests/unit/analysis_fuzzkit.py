"""Random index-expression kernels for the analysis fuzzer, built directly as IR.

``build_kernel(seed)`` returns a :class:`FuzzKernel`: an ``ir.Function`` whose
arguments are ``src`` (``*i32`` input), ``dst`` (``*i64`` output) and scalar ints ``n0..n2`` (plain, divisible by 16, or equal to 1),
plus the launch values and the grid.  Every expression is built from ``arange``,
``program_id``, the scalar arguments, loaded values and constants with ``+ - * //
% << >> & | ^`` (``//`` and ``%`` also by a specialised argument), ``where``,
``minimum``/``maximum``, negation, casts, broadcasts, reshapes, transposes, ``scf.for``
loops and ``tj.assume_range`` claims under the ``scf.if`` that tests them.  Shifts are
guarded so the kernels have defined behaviour (amounts masked); half the divisors are
forced nonzero, the rest may be 0 (``x // 0 == 0``, ``x % 0 == x`` on every backend).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import random

import numpy as np

from tilejit.ir import Builder, Function, Loc, PointerType, TileType, ops
from tilejit.ir.types import int8, int32, int64, uint32

I32 = TileType(int32)
BINOPS = (ops.RemOp, ops.IDivOp, ops.AddOp, ops.SubOp, ops.MulOp, ops.ShlOp, ops.ShrOp,
          ops.AndOp, ops.OrOp, ops.XorOp, ops.MinOp, ops.MaxOp)
# the ops whose rules depend on signs and alignment come up most often
WEIGHTED = BINOPS + (ops.RemOp, ops.IDivOp, ops.ShrOp, ops.AndOp, ops.RemOp, ops.IDivOp,
                     ops.SubOp, ops.MinOp, ops.MaxOp, ops.UmulhiOp)
CONSTS = (0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 100, 1000, -1, -2, -3, -4, -8, -16,
          -1000, 2**31 - 1, -2**31, 2**20, 255, 2**30, -2**30)
SRC_SIZE = 64


@dataclass
class FuzzKernel:
    func: Function
    values: list
    grid: tuple
    src: np.ndarray
    shape: tuple
    exprs: list = field(default_factory=list)


class _Gen:
    def __init__(self, r: random.Random, shape):
        self.r = r
        self.shape = shape
        self.f = Function("fuzz")
        self.b = Builder(self.f)
        self.line = 0
        self.src = self.f.add_argument("src", TileType(PointerType(int32)), divisibility=16)
        self.dst = self.f.add_argument("dst", TileType(PointerType(int64)), divisibility=16)
        self.scalars, self.values, self.nonzero = [], [], []
        for i in range(3):
            kind = r.choice(["plain", "div16", "one"])
            if kind == "div16":      # nonzero: a divisor as launched (Triton's specialisation)
                val = 16 * r.choice([-1, 1]) * r.randint(1, 2**20)
            elif kind == "one":
                val = 1
            else:
                val = r.choice([r.randint(-40, 40), r.randint(-2**31, 2**31 - 1)])
            v = self.f.add_argument(f"n{i}", I32, divisibility=16 if kind == "div16" else 1,
                                    equal_to_1=(kind == "one"))
            self.scalars.append(v)
            self.values.append(val)
            if kind != "plain":
                self.nonzero.append(v)

    # ------------------------------------------------------------ helpers
    def v(self, cls, **kw):
        self.line += 1
        return self.b.create(cls, loc=Loc("fuzz.py", self.line, 0), **kw).result

    def const(self, value, ty=None):
        return self.v(ops.ConstantOp, value=value, type=ty or TileType(int32, self.shape))

    def splat(self, x):
        return self.v(ops.SplatOp, src=x, shape=self.shape)

    def cast_to(self, x, ty):
        return x if x.type.element == ty else self.v(ops.CastOp, src=x, to=ty)

    # ------------------------------------------------------------ leaves
    def arange_tile(self):
        """A contiguous-ish index tile of the kernel's shape."""
        r, shape = self.r, self.shape
        start = r.choice([0, 0, 0, 1, 3, 16, 32])
        if len(shape) == 1:
            return self.v(ops.ArangeOp, start=start, end=start + shape[0])
        how = r.choice(["rows", "cols", "flat", "trans"])
        m, n = shape
        if how == "flat":
            r = self.v(ops.ArangeOp, start=start, end=start + m * n)
            return self.v(ops.ReshapeOp, src=r, shape=shape)
        if how == "trans":
            r = self.v(ops.ArangeOp, start=start, end=start + m * n)
            r = self.v(ops.ReshapeOp, src=r, shape=(n, m))
            return self.v(ops.TransOp, src=r, perm=(1, 0))
        axis, size = (0, m) if how == "rows" else (1, n)
        r = self.v(ops.ArangeOp, start=start, end=start + size)
        r = self.v(ops.ExpandDimsOp, src=r, axis=1 - axis)
        return self.v(ops.BroadcastOp, src=r, shape=shape)

    def affine(self):
        """scale * arange + offset: the shape of most index expressions."""
        r = self.r
        x = self.arange_tile()
        scale = r.choice([1, 1, 1, 2, 4, -1])
        if scale != 1:
            x = self.v(ops.MulOp, lhs=x, rhs=self.const(scale))
        kind = r.choice(["const", "arg", "pid", "none"])
        if kind == "const":
            off = self.const(r.choice(CONSTS + (-5, -7, -9, -12, -24, -32, -64, -8, -16, -4, 8)))
        elif kind == "arg":
            off = self.splat(r.choice(self.scalars))
        elif kind == "pid":
            pid = self.v(ops.ProgramIdOp, axis=r.randint(0, 1))
            blk = self.const(r.choice([4, 8, 16, 1024, -8]), I32)
            off = self.splat(self.v(ops.MulOp, lhs=pid, rhs=blk))
        else:
            return x
        return self.v(r.choice([ops.AddOp, ops.SubOp]), lhs=x, rhs=off)

    def leaf(self):
        r = self.r
        kind = r.choice(["affine", "affine", "arange", "pid", "arg", "const", "load"])
        if kind == "affine":
            return self.affine()
        if kind == "arange":
            return self.arange_tile()
        if kind == "pid":
            return self.splat(self.v(ops.ProgramIdOp, axis=r.randint(0, 1)))
        if kind == "arg":
            return self.splat(r.choice(self.scalars))
        if kind == "const":
            return self.const(r.choice(CONSTS))
        return self.load(self.arange_tile())

    def index_pattern(self):
        """affine index OP power-of-two (or small) constant: where alignment rules bite."""
        r = self.r
        x = self.affine()
        k = r.choice([2, 4, 8, 16, -4, 3, 1000, 32])
        cls = r.choice([ops.RemOp, ops.IDivOp, ops.ShrOp, ops.AndOp, ops.CmpOp, ops.MinOp,
                        ops.MaxOp, ops.RemOp, ops.IDivOp])
        if cls is ops.CmpOp:
            c = self.v(ops.CmpOp, lhs=x, rhs=self.const(k), pred=r.choice(["lt", "ge", "le", "gt"]))
            return self.v(ops.SelectOp, cond=c, true_value=x, false_value=self.const(-k))
        if cls is ops.ShrOp:
            k = abs(k) % 5
        if cls is ops.AndOp:
            k = abs(k) - 1 if abs(k) & (abs(k) - 1) == 0 else k
        if cls in (ops.RemOp, ops.IDivOp) and self.nonzero and r.random() < 0.4:
            return self.v(cls, lhs=x, rhs=self.splat(r.choice(self.nonzero)))   # x % n, n specialised
        return self.v(cls, lhs=x, rhs=self.const(k))

    def range_if(self, depth):
        """``if 0 <= s <= hi: (assume_range(s) * blk + arange) OP n else expr``: the claim
        range versioning makes (transforms/align_version), under the test it relies on."""
        r = self.r
        s = r.choice(self.scalars + [self.v(ops.ProgramIdOp, axis=0)])
        hi = r.choice([2**30 - 1, 15, 1000])
        ge = self.v(ops.CmpOp, lhs=s, rhs=self.const(0, I32), pred="ge")
        le = self.v(ops.CmpOp, lhs=s, rhs=self.const(hi, I32), pred="le")
        cond = self.v(ops.AndOp, lhs=ge, rhs=le)
        ty = TileType(int32, self.shape)
        self.line += 1
        op = ops.IfOp({"cond": cond}, {"result_types": [ty]}, [ty], Loc("fuzz.py", self.line, 0))
        self.b.block.append(op)
        with self.b.at_end(op.regions[0].block):
            h = self.v(ops.AssumeRangeOp, src=s, values=(0, hi))
            x = self.v(ops.MulOp, lhs=h, rhs=self.const(r.choice([1, 4, 16, 64]), I32))
            x = self.v(ops.AddOp, lhs=self.splat(x), rhs=self.arange_tile())
            cls = r.choice([ops.RemOp, ops.IDivOp])
            d = self.splat(r.choice(self.nonzero)) if self.nonzero else self.const(r.choice([16, 3, 8]))
            self.b.create(ops.YieldOp, values=[self.v(cls, lhs=x, rhs=d)])
        with self.b.at_end(op.regions[1].block):
            self.b.create(ops.YieldOp, values=[self.expr(depth)])
        return op.results[0]

    def load(self, offs):
        offs = self.v(ops.AndOp, lhs=offs, rhs=self.const(SRC_SIZE - 1))
        ptr = self.v(ops.AddPtrOp, ptr=self.splat(self.src), offset=offs)
        return self.v(ops.LoadOp, ptr=ptr)

    # ------------------------------------------------------------ expressions
    def expr(self, depth):
        r = self.r
        if depth <= 0:
            return self.leaf()
        kind = r.choice(["bin", "where", "bin", "neg", "bin", "cast", "bin", "load", "bin",
                         "leaf", "bin", "index", "index", "index", "reduce", "maskload", "if",
                         "unary", "wide"])
        if kind == "leaf":
            return self.leaf()
        if kind == "index":
            return self.index_pattern()
        if kind == "if":
            return self.if_expr(depth - 1) if r.random() < 0.6 else self.range_if(depth - 1)
        a = self.expr(depth - 1)
        if kind == "neg":
            return self.v(ops.NegOp, src=a)
        if kind == "unary":
            return self.v(r.choice([ops.InvertOp, ops.AbsOp]), src=a)
        if kind == "reduce":
            return self.reduce(a)
        if kind == "maskload":
            return self.masked_load(a, self.expr(depth - 1))
        if kind == "wide":        # int64 arithmetic, truncated back
            w = self.v(ops.CastOp, src=a, to=int64)
            k = self.const(r.choice([2**32, 2**31, -2**33, 3, 2**40 + 16]), TileType(int64, self.shape))
            w = self.v(r.choice([ops.AddOp, ops.MulOp, ops.SubOp, ops.IDivOp, ops.RemOp]), lhs=w, rhs=k)
            return self.v(ops.CastOp, src=w, to=int32)
        if kind == "load":
            return self.load(a)
        if kind == "cast":
            ty = r.choice([int64, int8, uint32])
            return self.cast_to(self.v(ops.CastOp, src=a, to=ty), int32)
        if r.randint(0, 4) < 2:      # index-like: expr op constant
            b = self.const(r.choice(CONSTS))
        else:
            b = self.expr(depth - 1)
        if kind == "where":
            pred = r.choice(["lt", "le", "gt", "ge", "eq", "ne"])
            cond = self.v(ops.CmpOp, lhs=a, rhs=b, pred=pred)
            return self.v(ops.SelectOp, cond=cond, true_value=a, false_value=b)
        return self.binary(r.choice(WEIGHTED), a, b)

    def reduce(self, a):
        """Reduce along one axis and broadcast back to the kernel's shape."""
        r = self.r
        kind = r.choice(["sum", "max", "min", "argmax", "argmin", "xor_sum"])
        axis = r.randint(0, len(self.shape) - 1)
        red = self.v(ops.ReduceOp, src=a, kind=kind, axis=axis)
        if not red.type.shape:
            return self.splat(red)
        red = self.v(ops.ExpandDimsOp, src=red, axis=axis)
        return self.v(ops.BroadcastOp, src=red, shape=self.shape)

    def masked_load(self, offs, key):
        r = self.r
        offs = self.v(ops.AndOp, lhs=offs, rhs=self.const(SRC_SIZE - 1))
        ptr = self.v(ops.AddPtrOp, ptr=self.splat(self.src), offset=offs)
        mask = self.v(ops.CmpOp, lhs=key, rhs=self.const(r.choice([0, 4, 8, 16, -3])),
                      pred=r.choice(["lt", "ge"]))
        other = self.const(r.choice([0, 7, -1])) if r.random() < 0.5 else self.leaf()
        return self.v(ops.LoadOp, ptr=ptr, mask=mask, other=other)

    def if_expr(self, depth):
        """scf.if on a scalar condition yielding one tile from each branch."""
        r = self.r
        x = r.choice(self.scalars + [self.v(ops.ProgramIdOp, axis=0)])
        cond = self.v(ops.CmpOp, lhs=x, rhs=self.const(r.choice([0, 1, 16]), I32),
                      pred=r.choice(["lt", "ge", "eq"]))
        ty = TileType(int32, self.shape)
        self.line += 1       # (Builder.create's own result_types keyword shadows the attr)
        op = ops.IfOp({"cond": cond}, {"result_types": [ty]}, [ty], Loc("fuzz.py", self.line, 0))
        self.b.block.append(op)
        for region in op.regions:
            with self.b.at_end(region.block):
                self.b.create(ops.YieldOp, values=[self.expr(depth)])
        return op.results[0]

    def binary(self, cls, a, b):
        if cls in (ops.IDivOp, ops.RemOp) and self.r.random() < 0.5:
            # half the divisions keep a zero divisor (x // 0 == 0, x % 0 == x), half not
            zero = self.v(ops.CmpOp, lhs=b, rhs=self.const(0), pred="eq")
            b = self.v(ops.SelectOp, cond=zero, true_value=self.const(1), false_value=b)
        if cls in (ops.ShlOp, ops.ShrOp):      # defined behaviour: amount in [0, 31]
            b = self.v(ops.AndOp, lhs=b, rhs=self.const(31))
        return self.v(cls, lhs=a, rhs=b)

    def loop(self, depth):
        """acc = e0; for i in range(lb, ub, step): acc = f(acc, i)."""
        r = self.r
        acc0 = self.expr(depth)
        lb, ub = r.randint(-3, 3), r.randint(-3, 6)
        step = r.choice([1, 2, 3, -1])
        op = self.b.create(ops.ForOp, loc=Loc("fuzz.py", self.line + 1, 0),
                           lb=self.const(lb, I32), ub=self.const(ub, I32), step=self.const(step, I32),
                           inits=[acc0])
        self.line += 1
        body = op.body
        iv = body.add_arg(I32, "i")
        acc = body.add_arg(acc0.type, "acc")
        with self.b.at_end(body):
            ivt = self.splat(iv)
            kind = r.choice(BINOPS)
            nxt = self.binary(kind, acc, self.binary(r.choice(BINOPS), ivt, self.expr(1)))
            self.b.create(ops.YieldOp, values=[nxt])
        return op.results[0]


SHAPES = ((1,), (4,), (8,), (16,), (2, 4), (4, 8), (1, 8), (8, 2))
NON_POW2_SHAPES = ((3,), (6,), (10,), (12,), (3, 5), (6, 12), (5, 3), (1, 7), (12, 1))


def build_kernel(seed: int, max_depth=3, shapes=SHAPES) -> FuzzKernel:
    r = random.Random(seed)
    shape = r.choice(list(shapes))
    g = _Gen(r, shape)
    exprs = []
    for _ in range(r.randint(1, 2)):
        if r.randint(0, 4) == 0:
            exprs.append(g.loop(r.randint(0, 2)))
        else:
            exprs.append(g.expr(r.randint(1, max_depth)))
    numel = int(np.prod(shape))
    grid = (r.randint(1, 3), r.randint(1, 2), 1)
    # each program stores to its own slice of dst: results do not depend on the order
    # in which programs run (so compiled code can be compared with the interpreter)
    p0 = g.v(ops.ProgramIdOp, axis=0)
    p1 = g.v(ops.ProgramIdOp, axis=1)
    prog = g.v(ops.AddOp, lhs=p0, rhs=g.v(ops.MulOp, lhs=p1, rhs=g.const(grid[0], I32)))
    base = g.v(ops.MulOp, lhs=prog, rhs=g.const(numel * len(exprs), I32))
    flat = g.v(ops.ArangeOp, start=0, end=numel)
    flat = g.v(ops.ReshapeOp, src=flat, shape=shape) if len(shape) > 1 else flat
    flat = g.v(ops.AddOp, lhs=flat, rhs=g.splat(base))
    for i, e in enumerate(exprs):
        off = g.v(ops.AddOp, lhs=flat, rhs=g.const(i * numel))
        ptr = g.v(ops.AddPtrOp, ptr=g.splat(g.dst), offset=off)
        g.b.create(ops.StoreOp, ptr=ptr, value=g.v(ops.CastOp, src=e, to=int64))
    g.b.create(ops.ReturnOp)
    if r.random() < 0.5:
        src = np.array([r.randint(-2**31, 2**31 - 1) for _ in range(SRC_SIZE)], dtype=np.int32)
    else:
        src = np.arange(SRC_SIZE, dtype=np.int32) * r.choice([1, 2, -1, 16])
    return FuzzKernel(g.f, g.values, grid, src, shape, exprs)


def dst_size(k: FuzzKernel) -> int:
    return int(np.prod(k.shape)) * len(k.exprs) * k.grid[0] * k.grid[1]
