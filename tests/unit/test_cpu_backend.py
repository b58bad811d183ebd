"""CPU backend on hand-built IR, compared to numpy."""
import re

import numpy as np
import pytest

from tilejit.backends import LaunchArgs, get_backend
from tilejit.backends.cpu.irgen import KB, vector_add
from tilejit.ir import ops
from tilejit.ir.types import float32, int32
from tilejit.runtime.options import get_options


def compile_(f, **opts):
    return get_backend("cpu").compile(f, get_options().with_(**opts))


def addr(a):
    return a.ctypes.data


def test_vector_add_matches_numpy_and_vectorizes():
    k = compile_(vector_add(256))
    n = 1000
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n + 8, -1.0, np.float32)         # tail guard: nothing past n is written
    k.launch(((n + 255) // 256, 1, 1), LaunchArgs([addr(x), addr(y), addr(out), n]))
    np.testing.assert_array_equal(out[:n], x + y)
    assert (out[n:] == -1).all()
    asm = k.asm["asm"]
    assert re.search(r"\bv(add|maskmov)ps\b.*(ymm|xmm)", asm), "no packed SIMD in the vector add"
    assert set(k.asm) == {"llir", "llir-opt", "asm"}


def test_vector_add_threads_and_compile_cache():
    f = vector_add(64)
    k1, k2 = compile_(f), compile_(f)
    assert k1 is k2
    n = 64 * 37 + 5
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    k1.launch((38, 1, 1), LaunchArgs([addr(x), addr(x), addr(out), n]), num_threads=2)
    np.testing.assert_array_equal(out, 2 * x)
