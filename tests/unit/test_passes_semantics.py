"""The pipeline preserves meaning: random integer kernels give bit-identical results on
the reference interpreter before and after ``run_pipeline`` (constants 0, 1 and -1 are
drawn often so the identities, folds, CSE and DCE all fire).  ``TILEJIT_LONG_FUZZ=1``
raises the example count."""
import os
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from tilejit.backends import Buffer, LaunchArgs
from tilejit.interpreter import run
from tilejit.ir import (Builder, Function, PointerType, TileType, int_range, ops,
                        int1, int8, int16, int32, int64, uint8, uint32)
from tilejit.ir.parser import parse_function
from tilejit.ir.printer import print_function
from tilejit.runtime.options import Options
from tilejit.transforms import run_pipeline

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import irsamples  # noqa: E402

N = 16
OUTS = 3
EXAMPLES = 1000 if os.environ.get("TILEJIT_LONG_FUZZ") == "1" else 60
TYPES = [int8, int16, int32, int64, uint8, uint32]
SAFE_BINARY = [ops.AddOp, ops.SubOp, ops.MulOp, ops.AndOp, ops.OrOp, ops.XorOp, ops.MinOp,
               ops.MaxOp, ops.UmulhiOp]


class Gen:
    """Builds a random kernel ``out[k, :] = int64(value_k)`` from draws."""

    def __init__(self, draw):
        self.draw = draw
        self.f = Function("fuzz")
        self.b = Builder(self.f)
        x = self.f.add_argument("x_ptr", TileType(PointerType(int32)), 16)
        self.out = self.f.add_argument("out_ptr", TileType(PointerType(int64)), 16)
        n = self.f.add_argument("n", TileType(int32))
        b = self.b
        r = b.value(ops.ArangeOp, start=0, end=N)
        xv = b.value(ops.LoadOp, ptr=b.value(ops.AddPtrOp, ptr=self.splat(x), offset=r))
        pid_s = b.value(ops.ProgramIdOp, axis=0)
        pid = self.splat(pid_s)
        self.pool = {t: [] for t in TYPES + [int1]}
        self.pool[int32] += [r, xv, pid, self.splat(n)]
        self.scalars = [pid_s, n]
        self.depth = 0
        self.last = None

    def splat(self, s):
        return self.b.value(ops.SplatOp, src=s, shape=(N,))

    def const(self, dt):
        lo, hi = int_range(dt)
        v = self.draw(st.one_of(st.sampled_from([0, 1, 1, -1 if lo < 0 else hi, 2]),
                                st.integers(lo, hi)))
        if self.draw(st.booleans()):
            return self.b.constant(v, TileType(dt, (N,)))
        return self.splat(self.b.constant(v, TileType(dt)))

    def pick(self, dt):
        pool = self.pool[dt]
        if not pool or self.draw(st.integers(0, 4)) == 0:
            return self.const(dt)
        return pool[self.draw(st.integers(0, len(pool) - 1))]

    def scoped(self, block, fill):
        """Run ``fill()`` with the insertion point in ``block``; values made there stay
        out of the enclosing pools."""
        saved = ({t: list(v) for t, v in self.pool.items()}, list(self.scalars), self.last)
        self.depth += 1
        with self.b.at_end(block):
            fill()
        self.depth -= 1
        self.pool, self.scalars, self.last = saved

    def body_steps(self):
        for _ in range(self.draw(st.integers(0, 3))):
            self.step()

    def scalar_cond(self):
        b = self.b
        if self.draw(st.integers(0, 3)) == 0:
            return b.constant(self.draw(st.booleans()), TileType(int1))
        s = self.scalars[self.draw(st.integers(0, len(self.scalars) - 1))]
        k = b.constant(self.draw(st.integers(-3, 3)), TileType(int32))
        return b.value(ops.CmpOp, lhs=s, rhs=k, pred=self.draw(st.sampled_from(["lt", "eq", "ge"])))

    def loop(self):
        b = self.b
        dt = self.draw(st.sampled_from([t for t in TYPES if self.pool[t]]))
        inits = [self.pick(dt) for _ in range(self.draw(st.integers(1, 2)))]
        lb = b.constant(self.draw(st.integers(-2, 3)), TileType(int32))
        if self.draw(st.booleans()):
            ub = b.constant(self.draw(st.integers(-2, 4)), TileType(int32))
        else:   # a runtime trip count in 0..3
            ub = b.value(ops.AndOp, lhs=self.scalars[1], rhs=b.constant(3, TileType(int32)))
        step = b.constant(self.draw(st.sampled_from([1, 1, 2, -1])), TileType(int32))
        loop = ops.ForOp({"lb": lb, "ub": ub, "step": step, "inits": inits}, {},
                         [v.type for v in inits])
        b.block.append(loop)
        body = loop.regions[0].block
        iv = body.add_arg(TileType(int32), "i")
        args = [body.add_arg(v.type) for v in inits]

        def fill():
            self.pool[dt] += args
            self.scalars.append(iv)
            self.body_steps()
            b.create(ops.YieldOp, values=[self.pick(dt) for _ in inits])
        self.scoped(body, fill)
        return loop.results

    def branch(self):
        b = self.b
        dt = self.draw(st.sampled_from([t for t in TYPES if self.pool[t]]))
        types = [TileType(dt, (N,))] * self.draw(st.integers(0, 2))
        op = ops.IfOp({"cond": self.scalar_cond()}, {"result_types": types}, types)
        b.block.append(op)
        for region in op.regions:
            def fill():
                self.body_steps()
                if types and self.draw(st.integers(0, 3)) == 0:
                    v = self.pick(dt)       # the same outer value on a path
                    b.create(ops.YieldOp, values=[v] * len(types))
                else:
                    b.create(ops.YieldOp, values=[self.pick(dt) for _ in types])
            self.scoped(region.block, fill)
        return op.results

    def step(self):
        b = self.b
        if self.depth < 2 and self.draw(st.integers(0, 5)) == 0:
            made = self.loop() if self.draw(st.booleans()) else self.branch()
            for v in made:
                self.pool[v.type.element].append(v)
                self.last = v
            if made:
                return
        dt = self.draw(st.sampled_from([t for t in TYPES if self.pool[t]] or [int32]))
        kind = self.draw(st.sampled_from(["bin", "bin", "bin", "div", "shift", "cast", "cmp",
                                          "unary", "shape", "same", "same"]))
        a = self.pick(dt)
        if kind == "bin":
            v = b.value(self.draw(st.sampled_from(SAFE_BINARY)), lhs=a, rhs=self.pick(dt))
        elif kind == "same":
            v = b.value(self.draw(st.sampled_from(SAFE_BINARY + [ops.SubOp])), lhs=a, rhs=a)
        elif kind == "div":
            lo, hi = int_range(dt)
            d = self.draw(st.integers(lo, hi).filter(lambda k: k not in (0, -1)))
            cls = self.draw(st.sampled_from([ops.IDivOp, ops.RemOp]))
            v = b.value(cls, lhs=a, rhs=self.splat(b.constant(d, TileType(dt))))
        elif kind == "shift":
            k = self.draw(st.integers(0, dt.bits - 1))
            cls = self.draw(st.sampled_from([ops.ShlOp, ops.ShrOp]))
            v = b.value(cls, lhs=a, rhs=self.splat(b.constant(k, TileType(dt))))
        elif kind == "cast":
            v = b.value(ops.CastOp, src=a, to=self.draw(st.sampled_from(TYPES)))
        elif kind == "cmp":
            c = b.value(ops.CmpOp, lhs=a, rhs=self.pick(dt),
                        pred=self.draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"])))
            self.pool[int1].append(c)
            cond = self.draw(st.sampled_from([c, self.const(int1)]))
            v = b.value(ops.SelectOp, cond=cond, true_value=a, false_value=self.pick(dt))
        elif kind == "unary":
            v = b.value(self.draw(st.sampled_from([ops.NegOp, ops.InvertOp, ops.AbsOp])), src=a)
        else:
            e = b.value(ops.ExpandDimsOp, src=a, axis=1)
            e = b.value(ops.BroadcastOp, src=e, shape=(N, 1))
            t = b.value(ops.TransOp, src=e, perm=(1, 0))
            t = b.value(ops.TransOp, src=t, perm=(1, 0))
            v = b.value(ops.ReshapeOp, src=b.value(ops.ReshapeOp, src=t, shape=(N,)), shape=(N,))
        self.pool[v.type.element].append(v)
        self.last = v

    def finish(self):
        b = self.b
        r = b.value(ops.ArangeOp, start=0, end=N)
        values = [v for t in TYPES for v in self.pool[t]]
        for k in range(OUTS):
            v = self.last if k == 0 and self.last is not None else values[self.draw(st.integers(0, len(values) - 1))]
            if v.type.element != int64:
                v = b.value(ops.CastOp, src=v, to=int64)
            row = b.value(ops.AddOp, lhs=r, rhs=self.splat(b.constant(k * N, TileType(int32))))
            b.create(ops.StoreOp, ptr=b.value(ops.AddPtrOp, ptr=self.splat(self.out), offset=row),
                     value=v)
        b.create(ops.ReturnOp)
        return self.f


def execute(func, x, n, programs=2):
    out = np.zeros((programs, OUTS * N), dtype=np.int64)
    for pid in range(programs):
        bufs = [Buffer("x_ptr", x.ctypes.data, x.nbytes, 4),
                Buffer("out_ptr", out[pid].ctypes.data, out[pid].nbytes, 8)]
        run(func, (1, 1, 1), LaunchArgs([x.ctypes.data, out[pid].ctypes.data, n], bufs, [x, out]))
    return out


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_pipeline_preserves_integer_semantics(data):
    g = Gen(data.draw)
    for _ in range(data.draw(st.integers(1, 12))):
        g.step()
    func = g.finish()
    reference = parse_function(print_function(func))          # an untouched copy
    optimized = run_pipeline(func, Options(debug=True))
    x = np.array(data.draw(st.lists(st.integers(-2 ** 31, 2 ** 31 - 1), min_size=N, max_size=N)),
                 dtype=np.int32)
    n = data.draw(st.integers(-2 ** 31, 2 ** 31 - 1))
    want = execute(reference, x, n)
    got = execute(optimized, x, n)
    assert np.array_equal(want, got), print_function(reference, locs=False)


def test_samples_keep_their_results_through_the_pipeline():
    f = irsamples.build_loop_sum()
    ref = parse_function(print_function(f))
    opt = run_pipeline(f, Options(debug=True))
    x = np.arange(64, dtype=np.float32) * 0.5
    results = []
    for func in (ref, opt):
        out = np.zeros(2, dtype=np.float32)
        bufs = [Buffer("x", x.ctypes.data, x.nbytes, 4), Buffer("o", out.ctypes.data, out.nbytes, 4)]
        run(func, (2, 1, 1), LaunchArgs([x.ctypes.data, out.ctypes.data, 4], bufs, [x, out]))
        results.append(out)
    assert np.array_equal(results[0], results[1])
    assert results[0][0] == np.float32(x.sum())
