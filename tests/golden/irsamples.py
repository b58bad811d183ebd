"""Sample kernels built directly with ``tilejit.ir.Builder`` (no frontend needed).

Each ``build_*`` returns a fresh verified ``ir.Function``; ``SAMPLES`` maps a name to
its builder.  Used by the printer/parser/verifier/pass unit tests and the golden tests.
"""
from __future__ import annotations

from tilejit.ir import (Builder, Function, Loc, PointerType, TileType, float16, float32, int1,
                        int32, int64, ops, uint32)

FILE = "samples.py"


class KB:
    """Tiny kernel-building helper: every op gets the next source line."""

    def __init__(self, name, **args):
        self.f = Function(name, Loc(FILE, 1, 0))
        self.b = Builder(self.f)
        self.line = 1
        self.args = {}
        for n, spec in args.items():
            ty, div, eq1 = spec if isinstance(spec, tuple) else (spec, 1, False)
            self.args[n] = self.f.add_argument(n, TileType(ty), div, eq1)

    def __getitem__(self, name):
        return self.args[name]

    def loc(self):
        self.line += 1
        return Loc(FILE, self.line, 4)

    def op(self, cls, name="", **kw):
        op = self.b.create(cls, loc=self.loc(), **kw)
        if name and op.results:
            op.results[0].name_hint = name
        return op

    def v(self, cls, name="", **kw):
        return self.op(cls, name, **kw).result

    def const(self, value, el, shape=(), name=""):
        return self.v(ops.ConstantOp, name, value=value, type=TileType(el, tuple(shape)))

    def splat(self, x, shape):
        return self.v(ops.SplatOp, src=x, shape=tuple(shape))

    def region_op(self, cls, slots, attrs, result_types):
        op = cls(slots, attrs, result_types, self.loc())
        self.b.block.append(op)
        return op

    def done(self):
        self.op(ops.ReturnOp)
        from tilejit.ir.verifier import verify_function
        return verify_function(self.f)


P32 = PointerType(float32)


def build_vector_add():
    k = KB("add_kernel", x_ptr=(P32, 16, False), y_ptr=(P32, 16, False),
           out_ptr=(P32, 16, False), n_elements=int32)
    k.f.constexprs = {"BLOCK_SIZE": 128}
    pid = k.v(ops.ProgramIdOp, "pid", axis=0)
    block = k.const(128, int32)
    start = k.v(ops.MulOp, "block_start", lhs=pid, rhs=block)
    offs = k.v(ops.AddOp, "offsets", lhs=k.splat(start, (128,)), rhs=k.v(ops.ArangeOp, start=0, end=128))
    mask = k.v(ops.CmpOp, "mask", lhs=offs, rhs=k.splat(k["n_elements"], (128,)), pred="lt")
    x = k.v(ops.LoadOp, "x", ptr=k.v(ops.AddPtrOp, ptr=k.splat(k["x_ptr"], (128,)), offset=offs), mask=mask)
    y = k.v(ops.LoadOp, "y", ptr=k.v(ops.AddPtrOp, ptr=k.splat(k["y_ptr"], (128,)), offset=offs), mask=mask)
    out = k.v(ops.AddOp, "output", lhs=x, rhs=y)
    k.op(ops.StoreOp, ptr=k.v(ops.AddPtrOp, ptr=k.splat(k["out_ptr"], (128,)), offset=offs),
         value=out, mask=mask)
    return k.done()


def build_loop_sum():
    """out[pid] = sum over i < n of x[i*16 + arange(16)], with redundant index math."""
    k = KB("loop_sum", x_ptr=(P32, 16, False), out_ptr=P32, n=int32)
    zero, one = k.const(0, int32), k.const(1, int32)
    acc0 = k.const(0.0, float32, (16,))
    cnt0 = k.const(0, int32)
    loop = k.region_op(ops.ForOp, {"lb": zero, "ub": k["n"], "step": one, "inits": [acc0, cnt0]},
                       {}, [acc0.type, cnt0.type])
    body = loop.regions[0].block
    i = body.add_arg(TileType(int32), "i")
    acc = body.add_arg(acc0.type, "acc")
    cnt = body.add_arg(cnt0.type, "cnt")
    with k.b.at_end(body):
        sixteen = k.const(16, int32)
        base = k.v(ops.MulOp, lhs=i, rhs=sixteen)
        base2 = k.v(ops.AddOp, lhs=base, rhs=k.const(0, int32))
        offs = k.v(ops.AddOp, "offs", lhs=k.splat(base2, (16,)), rhs=k.v(ops.ArangeOp, start=0, end=16))
        x = k.v(ops.LoadOp, "x", ptr=k.v(ops.AddPtrOp, ptr=k.splat(k["x_ptr"], (16,)), offset=offs))
        acc2 = k.v(ops.AddOp, "acc", lhs=acc, rhs=x)
        cnt2 = k.v(ops.AddOp, "cnt", lhs=cnt, rhs=one)
        k.op(ops.YieldOp, values=[acc2, cnt2])
    loop.results[0].name_hint = "acc"
    total = k.v(ops.ReduceOp, "total", src=loop.results[0], kind="sum", axis=0)
    pid = k.v(ops.ProgramIdOp, "pid", axis=0)
    k.op(ops.StoreOp, ptr=k.v(ops.AddPtrOp, ptr=k["out_ptr"], offset=pid), value=total)
    return k.done()


def build_branches():
    """scf.if with results, scf.if without else, scf.while, prints and asserts."""
    k = KB("branches", out_ptr=PointerType(int32), n=(int32, 16, False), one=(int32, 1, True))
    pid = k.v(ops.ProgramIdOp, "pid", axis=0)
    c = k.v(ops.CmpOp, "is_first", lhs=pid, rhs=k.const(0, int32), pred="eq")
    ifop = k.region_op(ops.IfOp, {"cond": c}, {"result_types": [TileType(int32)]}, [TileType(int32)])
    with k.b.at_end(ifop.regions[0].block):
        k.op(ops.YieldOp, values=[k.v(ops.AddOp, lhs=k["n"], rhs=k["one"])])
    with k.b.at_end(ifop.regions[1].block):
        k.op(ops.YieldOp, values=[k["n"]])
    x = ifop.results[0]
    x.name_hint = "x"
    only_then = k.region_op(ops.IfOp, {"cond": c}, {"result_types": []}, [])
    with k.b.at_end(only_then.regions[0].block):
        k.op(ops.DevicePrintOp, args=[x, pid], prefix="x, pid: ", hex=False)
        k.op(ops.YieldOp, values=[])
    w = k.region_op(ops.WhileOp, {"inits": [x]}, {"result_types": [TileType(int32)]},
                    [TileType(int32)])
    before = w.regions[0].block
    v = before.add_arg(TileType(int32), "v")
    with k.b.at_end(before):
        k.op(ops.ConditionOp, cond=k.v(ops.CmpOp, lhs=v, rhs=k.const(100, int32), pred="lt"),
             values=[v])
    after = w.regions[1].add_block(__import__("tilejit.ir", fromlist=["Block"]).Block())
    u = after.add_arg(TileType(int32), "u")
    with k.b.at_end(after):
        k.op(ops.YieldOp, values=[k.v(ops.MulOp, lhs=u, rhs=k.const(2, int32))])
    r = w.results[0]
    r.name_hint = "x"
    k.op(ops.DeviceAssertOp, cond=k.v(ops.CmpOp, lhs=r, rhs=k.const(0, int32), pred="ge"),
         msg="x must be \"non-negative\"\n")
    k.op(ops.StoreOp, ptr=k.v(ops.AddPtrOp, ptr=k["out_ptr"], offset=pid), value=r)
    return k.done()


def build_tiles_2d():
    """2-D index math: expand_dims, broadcast, trans, reshape, dot, reductions, casts."""
    k = KB("tiles_2d", a_ptr=(PointerType(float16), 16, False), c_ptr=P32, stride=int64)
    rm = k.v(ops.ExpandDimsOp, "rm", src=k.v(ops.ArangeOp, start=0, end=16), axis=1)
    rn = k.v(ops.ExpandDimsOp, "rn", src=k.v(ops.ArangeOp, start=0, end=16), axis=0)
    stride = k.v(ops.CastOp, src=k["stride"], to=int32)
    idx = k.v(ops.AddOp, "idx", lhs=k.v(ops.BroadcastOp, src=k.v(ops.MulOp, lhs=rm, rhs=k.splat(stride, (16, 1))), shape=(16, 16)),
              rhs=k.v(ops.BroadcastOp, src=rn, shape=(16, 16)))
    a = k.v(ops.LoadOp, "a", ptr=k.v(ops.AddPtrOp, ptr=k.splat(k["a_ptr"], (16, 16)), offset=idx),
            other=k.const(0.0, float16, (16, 16)), cache=".ca", eviction="evict_last", volatile=False)
    at = k.v(ops.TransOp, "at", src=a, perm=(1, 0))
    acc = k.v(ops.DotOp, "acc", a=a, b=at, acc=k.const(0.0, float32, (16, 16)), input_precision="ieee")
    flat = k.v(ops.ReshapeOp, src=acc, shape=(256,))
    back = k.v(ops.ReshapeOp, src=flat, shape=(16, 16))
    m = k.v(ops.ReduceOp, "m", src=back, kind="argmax", axis=1)
    big = k.v(ops.MultipleOfOp, src=k.v(ops.CastOp, src=m, to=uint32), values=(16,))
    bits = k.v(ops.BitcastOp, src=big, to=int32)
    k.op(ops.StoreOp, ptr=k.v(ops.AddPtrOp, ptr=k.splat(k["c_ptr"], (16,)), offset=bits),
         value=k.v(ops.MathExpOp, src=k.v(ops.ReduceOp, src=back, kind="max", axis=1)),
         mask=k.const(True, int1, (16,)), eviction="evict_first")
    return k.done()


SAMPLES = {"vector_add": build_vector_add, "loop_sum": build_loop_sum,
           "branches": build_branches, "tiles_2d": build_tiles_2d}
