"""The exact ``fmod`` IR function (backends/llvm/fmod.py, what NVPTX's float ``%`` calls:
its ``frem`` is inexact for large quotients) JIT-compiled for this host and checked bit
for bit against ``np.fmod`` on random bit patterns (NaN, inf, subnormals, zeros alike),
huge and subnormal quotients, and edge pairs.  The only check of that code off a GPU."""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from tilejit.backends.llvm import binding as bd
from tilejit.backends.llvm.fmod import exact_fmod_function
from tilejit.backends.llvm.types import F32, F64

_C = {np.float32: (F32, ctypes.c_float, np.uint32), np.float64: (F64, ctypes.c_double, np.uint64)}


@pytest.fixture(scope="module")
def jitted():
    m = ir.Module("exact_fmod_test")
    m.triple = bd.host_triple()
    for dt, (fty, _, _) in _C.items():
        w = ir.Function(m, ir.FunctionType(fty, [fty, fty]), name=f"fmod_{dt.__name__}")
        b = ir.IRBuilder(w.append_basic_block())
        b.ret(b.call(exact_fmod_function(m, fty), list(w.args)))
    mod = llvm.parse_assembly(str(m))
    mod.verify()
    engine = bd.create_engine(mod)
    fns = {}
    for dt, (_, cty, _) in _C.items():
        addr = engine.get_function_address(f"fmod_{dt.__name__}")
        fns[dt] = ctypes.CFUNCTYPE(cty, cty, cty)(addr)
    yield fns
    del engine


def _inputs(dt, rng):
    _, _, ut = _C[dt]
    fi = np.finfo(dt)
    n = 3000
    bits = rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True)
    x = [bits.view(dt), rng.standard_normal(n).astype(dt) * dt(1e3)]
    y = [rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True).view(dt),
         rng.standard_normal(n).astype(dt)]
    # huge quotients, subnormal divisors and dividends, near-equal pairs
    big = (rng.uniform(0, 1, n) * 2.0 ** rng.integers(0, fi.maxexp, n)).astype(dt)
    x.append(big), y.append(rng.standard_normal(n).astype(dt))
    sub = (rng.integers(1, 1 << 20, n) * fi.smallest_subnormal).astype(dt)
    x.append(rng.standard_normal(n).astype(dt)), y.append(sub)
    x.append(sub), y.append((rng.integers(1, 1 << 10, n) * fi.smallest_subnormal).astype(dt))
    near = rng.standard_normal(n).astype(dt)
    x.append(near), y.append(np.nextafter(near, dt(0)) * dt(rng.choice([1, -1])))
    edge = np.array([0.0, -0.0, 1.0, -1.0, 3.0, 5.5, -5.5, 1e30, -1e30, 2.0 ** 100, np.inf, -np.inf, np.nan,
                     fi.max, -fi.max, fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
                     fi.tiny - fi.smallest_subnormal], dtype=dt)
    ex, ey = np.meshgrid(edge, edge)
    x.append(ex.ravel()), y.append(ey.ravel())
    return np.concatenate(x), np.concatenate(y)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_exact_fmod_bit_exact_against_numpy(jitted, dt, rng):
    x, y = _inputs(dt, rng)
    f = jitted[dt]
    got = np.array([f(a, b) for a, b in zip(x.tolist(), y.tolist())], dtype=dt)
    with np.errstate(invalid="ignore"):
        want = np.fmod(x, y)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    ut = _C[dt][2]
    bad = np.flatnonzero(got[~nan].view(ut) != want[~nan].view(ut))
    assert bad.size == 0, list(zip(x[~nan][bad][:5], y[~nan][bad][:5], got[~nan][bad][:5], want[~nan][bad][:5]))


@pytest.mark.parametrize("ty", ["fp32", "fp64", "fp16", "bf16"])
def test_nvptx_float_rem_is_the_exact_loop(ty):
    """Float ``%`` on sm_90: the integer long division (no ``div``-based ``x - trunc(x/y)*y``
    expansion), and ptxas (where installed) assembles it."""
    import tilejit
    from tilejit.backends.cuda import target as tgt
    from tests.e2e.test_float_rem import rem_kernel
    ptx = tilejit.compile(rem_kernel, signature={"x_ptr": f"*{ty}", "y_ptr": f"*{ty}", "out_ptr": f"*{ty}"},
                          constexprs={"N": 128}, target="cuda:90", num_warps=4).asm["ptx"]
    assert "div." not in ptx and "cvt.rzi" not in ptx
    assert "clz.b" in ptx                           # the significands' normalisation
    if tgt.find_ptxas():
        tgt.ptxas(ptx, "90")
