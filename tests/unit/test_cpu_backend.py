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
    assert re.search(r"\bv(add|maskmov)ps\b.*(zmm|ymm|xmm)", asm), "no packed SIMD in the vector add"
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


def test_row_softmax():
    from tilejit.backends.cpu.irgen import softmax_rows
    k = compile_(softmax_rows(128))
    rows, n = 5, 100
    x = np.random.default_rng(1).standard_normal((rows, n)).astype(np.float32) * 10
    out = np.zeros_like(x)
    k.launch((rows, 1, 1), LaunchArgs([addr(x), addr(out), n]))
    x64 = x.astype(np.float64)
    ref = np.exp(x64 - x64.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-9)


@pytest.mark.parametrize("in_dt", ["fp32", "fp16"])
def test_matmul_dot(in_dt):
    from tilejit.backends.cpu.irgen import matmul
    from tilejit.ir.types import dtype_from_name
    dt = dtype_from_name(in_dt)
    M, N, K = 64, 96, 48
    k = compile_(matmul(32, 32, 16, dt, float32))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((M, K)).astype(dt.to_numpy())
    b = rng.standard_normal((K, N)).astype(dt.to_numpy())
    c = np.zeros((M, N), np.float32)
    k.launch((M // 32, N // 32, 1), LaunchArgs([addr(a), addr(b), addr(c), M, N, K]))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)
    assert "fma" in k.asm["asm"]


@pytest.mark.parametrize("shape", [(4, 24, 8), (3, 5, 7), (6, 40, 3)])
def test_dot_odd_shapes_with_loaded_acc(shape):
    """Row starts of A/B/C tiles not aligned to a vector: must not fault, must be exact-ish."""
    M, N, K = shape
    k = KB("dot_odd")
    pa, pb, pc = k.ptr_arg("a", float32), k.ptr_arg("b", float32), k.ptr_arg("c", float32)

    def grid2(rows, cols):
        return k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(k.arange(rows), 1), k.c(cols, int32)),
                     k.expand(k.arange(cols), 0))
    a = k.load(k.addptr(pa, grid2(M, K)))
    b = k.load(k.addptr(pb, grid2(K, N)))
    c_off = grid2(M, N)
    acc = k.load(k.addptr(pc, c_off))
    k.store(k.addptr(pc, c_off), k.op(ops.DotOp, a=a, b=b, acc=acc))
    kern = compile_(k.done())
    rng = np.random.default_rng(8)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = rng.standard_normal((M, N)).astype(np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64) + C
    kern.launch((1, 1, 1), LaunchArgs([addr(A), addr(B), addr(C)]))
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-5)


def test_avx512_hosts_vectorize_512_bit():
    """LLVM's prefer-256-bit tuning is turned off exactly on AVX-512 feature strings."""
    from tilejit.backends.llvm.binding import _vector_width_features
    assert _vector_width_features("+avx2,+fma,-avx512f") == "+avx2,+fma,-avx512f"
    assert _vector_width_features("+avx2,+avx512f") == "+avx2,+avx512f,-prefer-256-bit"
