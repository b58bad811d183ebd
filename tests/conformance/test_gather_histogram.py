"""``tl.gather`` and ``tl.histogram`` as ops of their own (``tt.gather``, ``tt.histogram``):
Triton 3.6's test_gather[[128, 64], [256, 64], 0] and test_histogram[256-512] needed
8 MB and 512 KB of shared memory on the H200 (a comparison against every element,
materialized), and test_gather[[128, 64], [128, 128], 1] hung LLVM.  Values against
numpy on every backend (out-of-range indices and masked-off lanes included); the cuda
backend's PTX for Triton's shapes assembled with ptxas, within the tile's own size of
shared memory."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def gather_kernel(S, I, O, AX: tl.constexpr, S0: tl.constexpr, S1: tl.constexpr,
                  I0: tl.constexpr, I1: tl.constexpr):
    s = tl.load(S + tl.arange(0, S0)[:, None] * S1 + tl.arange(0, S1)[None, :])
    i = tl.load(I + tl.arange(0, I0)[:, None] * I1 + tl.arange(0, I1)[None, :])
    tl.store(O + tl.arange(0, I0)[:, None] * I1 + tl.arange(0, I1)[None, :], tl.gather(s, i, AX))


@tilejit.jit
def histogram_kernel(X, M, Z, N: tl.constexpr, B: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    m = tl.load(M + tl.arange(0, N)) != 0
    tl.store(Z + tl.arange(0, B), tl.histogram(x, B, mask=m))


GATHER_SHAPES = [((4, 4), (8, 4), 0), ((8, 16), (8, 4), 1), ((128, 64), (256, 64), 0),
                 ((128, 64), (128, 128), 1)]


@pytest.mark.parametrize("src_shape,idx_shape,axis", GATHER_SHAPES)
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64, np.uint8])
def test_gather_values(backend, src_shape, idx_shape, axis, idx_dtype):
    if backend == "interpreter" and src_shape[0] == 128 and idx_dtype != np.int32:
        pytest.skip("the large shapes once per backend")
    rng = np.random.default_rng(sum(idx_shape) + axis)
    n = src_shape[axis]
    src = rng.standard_normal(src_shape).astype(np.float32)
    lo = 0 if np.issubdtype(idx_dtype, np.unsignedinteger) else -3
    idx = rng.integers(lo, n + 3, idx_shape).astype(idx_dtype)     # some outside [0, n): 0
    out = np.full(idx_shape, 7.0, np.float32)
    gather_kernel[(1,)](src, idx, out, AX=axis, S0=src_shape[0], S1=src_shape[1],
                        I0=idx_shape[0], I1=idx_shape[1])
    k = idx.astype(np.int64)
    inside = (k >= 0) & (k < n)
    want = np.where(inside, np.take_along_axis(src, np.where(inside, k, 0), axis), 0)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("n,bins", [(8, 2), (2048, 2), (1024, 128), (256, 512), (32, 512)])
def test_histogram_values(backend, n, bins):
    rng = np.random.default_rng(n + bins)
    x = rng.integers(-2, bins + 2, n).astype(np.int32)               # some outside the bins
    m = rng.integers(0, 4, n).astype(np.int32)                       # a quarter masked off
    z = np.full(bins, -1, np.int32)
    histogram_kernel[(1,)](x, m, z, N=n, B=bins)
    keep = (m != 0) & (x >= 0) & (x < bins)
    np.testing.assert_array_equal(z, np.bincount(x[keep], minlength=bins))


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
def test_triton_shapes_fit_shared_memory_and_assemble():
    for src_shape, idx_shape, axis in GATHER_SHAPES[2:]:
        ker = tilejit.compile(gather_kernel, signature={0: "*fp32", 1: "*i32", 2: "*fp32"},
                              constexprs=dict(AX=axis, S0=src_shape[0], S1=src_shape[1],
                                              I0=idx_shape[0], I1=idx_shape[1]), target="cuda:90")
        assert ker.shared <= 128 * 64 * 4
        tgt.ptxas(ker.asm["ptx"], 90)
    ker = tilejit.compile(histogram_kernel, signature={0: "*i32", 1: "*i32", 2: "*i32"},
                          constexprs=dict(N=256, B=512), target="cuda:90")
    assert ker.shared <= 512 * 4
    tgt.ptxas(ker.asm["ptx"], 90)
