"""The fp64 exp/exp2/log/log2/sin/cos/tanh the CUDA backend emits (no libdevice), JIT-compiled on the
CPU and compared with numpy over normal, subnormal, huge and special arguments."""
import ctypes
import math

import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

from tilejit.backends.llvm import f64math


def _compile(name):
    mod = ir.Module(name=name)
    fn = ir.Function(mod, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), name="f")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(f64math.FUNCTIONS[name](b, fn.args[0]))
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), tm)
    engine.finalize_object()
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(engine.get_function_address("f"))
    return engine, f


def _args(rng):
    return np.concatenate([rng.uniform(-5, 5, 2000), rng.uniform(-745, 710, 2000),
                           10.0 ** rng.uniform(-320, 308, 2000), 1 + rng.uniform(-1e-3, 1e-3, 1000),
                           [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, 2.0 ** -1022,
                            709.78, 709.79, -745.2, 1023.9, 1024.0, -1074.0, -1076.0]])


@pytest.mark.parametrize("name,ref", [("exp", np.exp), ("exp2", np.exp2), ("log", np.log), ("log2", np.log2)])
def test_f64_math_matches_numpy(name, ref):
    engine, f = _compile(name)
    x = _args(np.random.default_rng(0))
    got = np.array([f(float(v)) for v in x])
    with np.errstate(all="ignore"):
        want = ref(x)
    normal = np.isfinite(want) & (np.abs(want) > 1e-300)
    rel = np.abs(got[normal] - want[normal]) / np.abs(want[normal])
    assert rel.max() < 4e-16, (name, x[normal][np.argmax(rel)], rel.max())
    special = ~normal
    np.testing.assert_allclose(got[special], want[special], rtol=1e-12, atol=1e-320, equal_nan=True)


@pytest.mark.parametrize("name,ref", [("sin", np.sin), ("cos", np.cos)])
def test_f64_trig_matches_numpy_within_two_ulp(name, ref):
    engine, f = _compile(name)
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-4, 4, 1500), rng.uniform(-1e4, 1e4, 1500),
                        rng.choice([-1, 1], 1500) * 2.0 ** rng.uniform(-30, 51.9, 1500),
                        np.arange(1, 400) * (np.pi / 2), np.arange(-200, 200) * np.pi,   # near the zeros
                        [5e-324, -1e-300, 1e-8, 0.7853981633974483, 2.0 ** 51, -(2.0 ** 52 - 1)]])
    got, want = np.array([f(float(v)) for v in x]), ref(x)
    ulp = np.abs(got - want) / np.spacing(np.abs(want))
    assert ulp.max() <= 2, (name, x[np.argmax(ulp)], ulp.max())
    assert [f(v) for v in (0.0, -0.0)] == ([0.0, -0.0] if name == "sin" else [1.0, 1.0])
    assert math.copysign(1, f(-0.0)) == (-1 if name == "sin" else 1)
    # infinities and NaN give NaN; past the reduction's range NaN, never an inaccurate value
    assert all(math.isnan(f(v)) for v in (math.inf, -math.inf, math.nan, 2.0 ** 52, -1e300))


def test_f64_tanh_matches_numpy_within_three_ulp():
    engine, f = _compile("tanh")
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-1e-9, 1e-9, 500), rng.uniform(-0.6, 0.6, 2000),
                        rng.uniform(-30, 30, 2000), [5e-324, 1e-300, 22.0, -21.99]])
    got, want = np.array([f(float(v)) for v in x]), np.tanh(x)
    ulp = np.abs(got - want) / np.spacing(np.abs(want))
    assert ulp.max() <= 3, (x[np.argmax(ulp)], ulp.max())
    assert [f(v) for v in (math.inf, -math.inf, 710.0, -800.0)] == [1.0, -1.0, 1.0, -1.0]
    assert math.copysign(1, f(-0.0)) == -1 and math.isnan(f(math.nan))
