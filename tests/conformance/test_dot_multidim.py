"""Triton 3.6's test_dot_multidim: ``tl.trans(x)`` of an N-d tensor swaps its last two
axes (a batched transpose; it was rejected beyond 2-d), and ``tl.dot`` of operands of 4
or more dimensions flattens the batch dimensions into one, as Triton does (it was
rejected).  Values against numpy (float64) on every backend; the cuda backend's PTX of
a 4-d case assembled with ptxas (the 6-d one takes 40 s to compile here)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def multidim_dot_kernel(X, Y, Z, RANK: tl.constexpr, TRANS_A: tl.constexpr, TRANS_B: tl.constexpr,
                        M: tl.constexpr):
    x = tl.load(X + tl.arange(0, (M * M) << (RANK - 2))).reshape([2] * (RANK - 2) + [M, M])
    y = tl.load(Y + tl.arange(0, (M * M) << (RANK - 2))).reshape([2] * (RANK - 2) + [M, M])
    if TRANS_A:
        x = tl.trans(x)
    if TRANS_B:
        y = tl.trans(y)
    z = tl.dot(x, y)
    tl.store(Z + tl.arange(0, (M * M) << (RANK - 2)), z.reshape([(M * M) << (RANK - 2)]))


@pytest.mark.parametrize("rank,trans_a,trans_b", [(3, True, False), (4, False, True), (5, True, True)])
def test_multidim_dot_values(backend, rank, trans_a, trans_b):
    m = 16
    shape = (2,) * (rank - 2) + (m, m)
    rng = np.random.default_rng(rank)
    a = rng.integers(-4, 5, shape).astype(np.float32)
    b = rng.integers(-4, 5, shape).astype(np.float32)
    z = np.zeros(shape, np.float32)
    multidim_dot_kernel[(1,)](a, b, z, RANK=rank, TRANS_A=trans_a, TRANS_B=trans_b, M=m)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if trans_a:
        a64 = np.swapaxes(a64, -1, -2)
    if trans_b:
        b64 = np.swapaxes(b64, -1, -2)
    np.testing.assert_array_equal(z, a64 @ b64)      # small integers: exact in fp32


def test_trans_without_dims_needs_two_dimensions():
    @tilejit.jit
    def k(X):
        tl.store(X + tl.arange(0, 4), tl.trans(tl.load(X + tl.arange(0, 4))))
    with pytest.raises(tilejit.CompilationError, match="2 or more dimensions"):
        tilejit.compile(k, signature={0: "*fp32"}, target="cpu")


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
def test_multidim_dot_ptx_assembles():
    ker = tilejit.compile(multidim_dot_kernel, signature={0: "*bf16", 1: "*bf16", 2: "*fp32"},
                          constexprs=dict(RANK=4, TRANS_A=True, TRANS_B=True, M=32), target="cuda:90")
    tgt.ptxas(ker.asm["ptx"], 90)
