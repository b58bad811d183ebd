"""Values recomputed after a reduction instead of held across it (CUDA:
tilejit/backends/cuda/remat.py), on every backend against numpy: tutorial 05's
layer-norm backward rows (fp16, 8192 columns, 8 warps: the plan the tutorial gets),
and small kernels with the plan forced (``CudaTuning.remat_min_saving = 0``) whose recomputed values
are read by a second reduction, inside an ``scf.if``, in a loop body and next to a
leaf read directly.  On CUDA the outputs must also be bit-identical with the plan off."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import cuda_tuning


@tilejit.jit
def ln_bwd_rows(DX, PDW, PDB, DY, X, W, Mean, Rstd, stride, N, BLOCK: tl.constexpr, TAG: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.)
    wdy = tl.where(mask, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + row * stride + cols, dx, mask=mask)
    tl.store(PDW + row * stride + cols, (dy * xhat).to(tl.float16), mask=mask)
    tl.store(PDB + row * stride + cols, dy.to(tl.float16), mask=mask)


def _ln_inputs(rng, M, N):
    x = rng.standard_normal((M, N)).astype(np.float16)
    dy = (0.1 * rng.standard_normal((M, N))).astype(np.float16)
    w = rng.random(N).astype(np.float16)
    xf = x.astype(np.float64)
    mean = xf.mean(1).astype(np.float32)
    rstd = (1 / np.sqrt(xf.var(1) + 1e-5)).astype(np.float32)
    return x, dy, w, mean, rstd


def _run_ln(x, dy, w, mean, rstd, block, warps, tag):
    M, N = x.shape
    dx = np.full((M, N), 9.0, np.float32)
    pdw = np.full((M, N), 5.0, np.float16)
    pdb = np.full((M, N), 5.0, np.float16)
    ln_bwd_rows[(M,)](dx, pdw, pdb, dy, x, w, mean, rstd, N, N, BLOCK=block, TAG=tag, num_warps=warps)
    return dx, pdw, pdb


@pytest.mark.parametrize("M,N,block,warps", [(6, 8192, 8192, 8), (5, 8000, 8192, 8), (4, 1000, 1024, 1)])
def test_layer_norm_backward_rows(backend, rng, M, N, block, warps):
    if backend == "interpreter" and N > 1000:
        pytest.skip("slow on the interpreter")
    x, dy, w, mean, rstd = _ln_inputs(rng, M, N)
    with cuda_tuning(remat_reductions=True):
        dx, pdw, pdb = _run_ln(x, dy, w, mean, rstd, block, warps, 0)
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]
    dyf = dy.astype(np.float64)
    wdy = w.astype(np.float64) * dyf
    c1 = (xhat * wdy).sum(1, keepdims=True) / N
    c2 = wdy.sum(1, keepdims=True) / N
    np.testing.assert_allclose(dx, (wdy - (xhat * c1 + c2)) * rstd[:, None], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pdw.astype(np.float64), dyf * xhat, rtol=2e-3, atol=1e-4)
    np.testing.assert_array_equal(pdb, dy)
    if backend == "cuda":       # the same bits without the plan
        with cuda_tuning(remat_reductions=False):
            off = _run_ln(x, dy, w, mean, rstd, block, warps, 1)
        for a, b in zip((dx, pdw, pdb), off):
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@tilejit.jit
def remat_mix(A, B, Z, Out, Out2, N, flag, BLOCK: tl.constexpr, TAG: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    a = tl.load(A + row * N + cols, mask=m, other=0)          # fp16
    b = tl.load(B + row * N + cols, mask=m, other=0)          # int8
    z = tl.load(Z + cols, mask=m, other=0)                    # fp32, also read directly below
    af = a.to(tl.float32)
    bf = b.to(tl.float32)
    u = tl.where(m, af * bf - z, 0.0)
    v = tl.maximum(af, bf) + 1.5
    s = tl.sum(u, axis=0)
    mx = tl.max(tl.where(m, v, -float("inf")), axis=0)
    out = u * s + v - mx + z
    if flag > 0:
        out = out + af * 0.5
    tl.store(Out + row * N + cols, out, mask=m)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, 3):
        t = tl.where(m, (tl.load(A + row * N + cols, mask=m, other=0).to(tl.float32) + i) * 0.5, 0.0)
        r = tl.sum(t, axis=0)
        acc += t - r
    tl.store(Out2 + row * N + cols, acc, mask=m)


def _mix_ref(a, b, z, flag):
    af, bf, zf = a.astype(np.float64), b.astype(np.float64), z.astype(np.float64)
    u = af * bf - zf
    v = np.maximum(af, bf) + 1.5
    out = u * u.sum(1, keepdims=True) + v - v.max(1, keepdims=True) + zf
    if flag > 0:
        out = out + af * 0.5
    acc = np.zeros_like(af)
    for i in range(3):
        t = (af + i) * 0.5
        acc += t - t.sum(1, keepdims=True)
    return out, acc


@pytest.mark.parametrize("M,N,block,warps,flag", [(3, 256, 256, 1, 1), (2, 500, 512, 2, 0), (4, 64, 64, 1, 1)])
def test_recomputed_values_in_regions_loops_and_second_reduction(backend, rng, M, N, block, warps, flag):
    a = rng.uniform(-2, 2, (M, N)).astype(np.float16)
    b = rng.integers(-4, 5, (M, N)).astype(np.int8)
    z = rng.uniform(-1, 1, N).astype(np.float32)

    def run(tag):
        out = np.full((M, N), 7.0, np.float32)
        out2 = np.full((M, N), 7.0, np.float32)
        remat_mix[(M,)](a, b, z, out, out2, N, flag, BLOCK=block, TAG=tag, num_warps=warps)
        return out, out2
    with cuda_tuning(remat_reductions=True, remat_min_saving=0):
        out, out2 = run(0)
    ref, ref2 = _mix_ref(a, b, z, flag)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(out2, ref2, rtol=1e-5, atol=1e-3)
    if backend == "cuda":
        with cuda_tuning(remat_reductions=False):
            off, off2 = run(1)
        np.testing.assert_array_equal(out.view(np.uint32), off.view(np.uint32))
        np.testing.assert_array_equal(out2.view(np.uint32), off2.view(np.uint32))


@tilejit.jit
def outer_leaf(A, Out, N, BLOCK: tl.constexpr, TAG: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    m = cols < N
    a = tl.load(A + cols, mask=m, other=0)                  # fp16, outside the loop
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, 3):
        t = tl.where(m, (a + i).to(tl.float32) * 0.5, 0.0)
        r = tl.sum(t, axis=0)
        acc += t - r
    tl.store(Out + cols, acc + a.to(tl.float32), mask=m)    # a read again after the loop


@pytest.mark.parametrize("N,block,warps", [(200, 256, 1), (1000, 1024, 4)])
def test_leaf_from_an_enclosing_block(backend, rng, N, block, warps):
    """The reduction is in a loop body, its chain starts from a tile loaded before the
    loop (which is read again after it): the copy made in the body serves the chain only."""
    a = rng.uniform(-2, 2, N).astype(np.float16)

    def run(tag):
        out = np.full(N, 7.0, np.float32)
        outer_leaf[(1,)](a, out, N, BLOCK=block, TAG=tag, num_warps=warps)
        return out
    with cuda_tuning(remat_reductions=True, remat_min_saving=0):
        out = run(0)
    acc = np.zeros(N)
    for i in range(3):
        t = (a + np.float16(i)).astype(np.float64) * 0.5
        acc += t - t.sum()
    np.testing.assert_allclose(out, acc + a.astype(np.float64), rtol=1e-5, atol=1e-3)
    if backend == "cuda":
        with cuda_tuning(remat_reductions=False):
            np.testing.assert_array_equal(out.view(np.uint32), run(1).view(np.uint32))
