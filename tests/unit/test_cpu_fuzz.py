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
