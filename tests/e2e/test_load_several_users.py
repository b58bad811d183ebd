"""A load read by several elementwise users that end in one store (GELU's
``0.5 * x * (1 + erf(x * c))``): the cpu backend reads it in the store's loop instead
of copying it into a buffer first (``fusion.FusionPlan._single_end``).  In place (the
store through the load's own pointers) every element must still be read before it is
written, and a transposed use (``x + x.T`` in place) must see the values before the
store."""
import math

import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def gelu_rows(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, m)
    tl.store(out_ptr + i, 0.5 * x * (1 + tl.math.erf(x * 0.7071067811865476)), m)


@tilejit.jit
def add_transpose_in_place(p, N: tl.constexpr):
    r = tl.arange(0, N)
    offs = r[:, None] * N + r[None, :]
    x = tl.load(p + offs)
    tl.store(p + offs, x * 2 + tl.trans(x))


@tilejit.jit
def square_plus_in_place(p, N: tl.constexpr):
    r = tl.arange(0, N)
    offs = r[:, None] * N + r[None, :]
    x = tl.load(p + offs)
    tl.store(p + offs, x * x + x)


def _gelu(x):
    return np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])


@pytest.mark.parametrize("in_place", [False, True])
def test_gelu_load_two_users(backend, rng, in_place):
    n = 3000
    x = rng.standard_normal(n).astype(np.float32) * 3
    want = _gelu(x)
    out = x if in_place else np.zeros_like(x)
    gelu_rows[(tilejit.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_in_place_reads_before_writes(backend, rng):
    x = rng.standard_normal((16, 16)).astype(np.float32)
    a, b = x.copy(), x.copy()
    add_transpose_in_place[(1,)](a, N=16)
    np.testing.assert_array_equal(a, x * 2 + x.T)
    square_plus_in_place[(1,)](b, N=16, enable_fp_fusion=False)     # two roundings, as numpy
    np.testing.assert_array_equal(b, x * x + x)
