"""Random integer expression kernels (hand-built IR): the CPU backend must agree
bit-exactly with the interpreter.  TILEJIT_FUZZ_EXAMPLES raises the example count."""
import os

import numpy as np
from hypothesis import given, settings, strategies as st, HealthCheck

from tilejit.backends.cpu.irgen import KB
from tilejit.ir import ops
from tilejit.ir.types import dtype_from_numpy
from test_cpu_vs_interpreter import both

OPS = [ops.AddOp, ops.SubOp, ops.MulOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp, ops.XorOp,
       ops.MinOp, ops.MaxOp, ops.UmulhiOp, ops.ShrOp, ops.ShlOp]
DTYPES = [np.int32, np.uint32, np.int8, np.int64, np.uint8]
N = 32


def build(dt, program):
    k = KB("fuzz")
    x, y, o = k.ptr_arg("x", dt), k.ptr_arg("y", dt), k.ptr_arg("o", dt)
    offs = k.arange(N)
    vals = [k.load(k.addptr(x, offs)), k.load(k.addptr(y, offs))]
    bits = dt.bits
    for opi, a, bb in program:
        cls = OPS[opi]
        lhs, rhs = vals[a % len(vals)], vals[bb % len(vals)]
        if cls in (ops.IDivOp, ops.RemOp):
            rhs = k.bin(ops.OrOp, rhs, k.c(1, dt, (N,)))          # never zero
        if cls in (ops.ShlOp, ops.ShrOp):
            rhs = k.bin(ops.AndOp, rhs, k.c(bits - 1, dt, (N,)))  # shift < bits
        vals.append(k.bin(cls, lhs, rhs))
    k.store(k.addptr(o, offs), vals[-1])
    return k.done()


@settings(max_examples=int(os.environ.get("TILEJIT_FUZZ_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(DTYPES),
       st.lists(st.tuples(st.integers(0, len(OPS) - 1), st.integers(0, 20), st.integers(0, 20)),
                min_size=1, max_size=6),
       st.integers(0, 2**32 - 1))
def test_random_int_expressions(npdt, program, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(npdt)
    x = rng.integers(info.min, info.max, N, dtype=npdt, endpoint=True)
    y = rng.integers(info.min, info.max, N, dtype=npdt, endpoint=True)
    both(build(dtype_from_numpy(npdt), program), (1,), [x, y, np.zeros(N, npdt)])


SHAPE_STEPS = ["trans", "reshape", "bcast_sum", "reduce_max_expand", "add_row"]


def build_shapes(steps, R, C):
    from tilejit.ir.types import int32
    k = KB("shapes")
    x, o = k.ptr_arg("x", int32), k.ptr_arg("o", int32)
    offs = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(k.arange(R), 1), k.c(C, int32)),
                 k.expand(k.arange(C), 0))
    v = k.load(k.addptr(x, offs))
    for s in steps:
        r, c = v.type.shape
        if s == "trans":
            v = k.op(ops.TransOp, src=v, perm=(1, 0))
        elif s == "reshape":
            v = k.op(ops.ReshapeOp, src=k.op(ops.ReshapeOp, src=v, shape=(r * c,)), shape=(c, r))
        elif s == "bcast_sum":
            e = k.op(ops.BroadcastOp, src=k.expand(v, 0), shape=(3, r, c))
            v = k.reduce(e, "sum", 0)
        elif s == "reduce_max_expand":
            m = k.expand(k.reduce(v, "max", 1), 1)                         # (r, 1)
            v = k.bin(ops.SubOp, v, k.op(ops.BroadcastOp, src=m, shape=(r, c)))
        else:
            row = k.expand(k.reduce(v, "xor_sum", 0), 0)                   # (1, c)
            v = k.bin(ops.AddOp, v, k.op(ops.BroadcastOp, src=row, shape=(r, c)))
    flat = k.op(ops.ReshapeOp, src=v, shape=(R * C,))
    k.store(k.addptr(o, k.arange(R * C)), flat)
    return k.done()


@settings(max_examples=int(os.environ.get("TILEJIT_FUZZ_EXAMPLES", "20")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SHAPE_STEPS), min_size=1, max_size=5),
       st.sampled_from([(4, 8), (8, 4), (2, 16), (16, 16)]), st.integers(0, 2**32 - 1))
def test_random_shape_chains(steps, shape, seed):
    R, C = shape
    x = np.random.default_rng(seed).integers(-1000, 1000, (R, C)).astype(np.int32)
    both(build_shapes(steps, R, C), (1,), [x, np.zeros(R * C, np.int32)])
