"""Row loops over 2-byte rows that keep fp32 partial sums and store them once after the
loop (Liger-Kernel's RMSNorm / LayerNorm backward): on CUDA the loop's rows move in
16-byte accesses and the fp32 store takes two per 8-element chunk (layout.kernel_max_vec;
PTX in tests/unit/test_cuda_ptx_vec16.py).  Results on every backend against numpy in
float64, with masked columns, uneven row splits and fp32 rows in the loop too; and
Liger's LayerNorm forward, whose rematerialisation asks ptxas for no occupancy
(tests/unit/test_cuda_ptx_remat.py)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def rms_backward_rows(DY, DX, X, W, RSTD, DW, stride, n_rows, n_cols, rows_per_program,
                      BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    row_start = pid * rows_per_program
    row_end = min((pid + 1) * rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    for row in range(row_start, row_end):
        dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(RSTD + row)
        m = dy * w
        dx = rstd * m - rstd * rstd * rstd * (tl.sum(m * x, axis=0) / n_cols) * x
        dw += dy * (x * rstd)
        tl.store(DX + row * stride + cols, dx.to(DX.dtype.element_ty), mask=mask)
    tl.store(DW + pid * n_cols + cols, dw, mask=mask)


def _reference(dy, x, w, rstd, programs, rpp):
    dy, x, w, rstd = (a.astype(np.float64) for a in (dy, x, w, rstd))
    m = dy * w
    dx = rstd[:, None] * m - rstd[:, None] ** 3 * (m * x).mean(1, keepdims=True) * x
    contrib = dy * x * rstd[:, None]
    dw = np.stack([contrib[p * rpp:(p + 1) * rpp].sum(0) for p in range(programs)])
    return dx, dw


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n_rows,n_cols,programs", [(37, 200, 5), (64, 256, 8), (10, 1000, 4)])
def test_row_loop_with_fp32_partial_sums(backend, rng, dtype, n_rows, n_cols, programs):
    block = 1 << (n_cols - 1).bit_length()
    rpp = -(-n_rows // programs)
    x = rng.standard_normal((n_rows, n_cols)).astype(dtype)
    dy = rng.standard_normal((n_rows, n_cols)).astype(dtype)
    w = rng.standard_normal(n_cols).astype(dtype)
    rstd = rng.uniform(0.5, 2.0, n_rows).astype(np.float32)
    dx = np.full((n_rows, n_cols), 7, dtype)
    dw = np.full((programs, n_cols), 7, np.float32)
    rms_backward_rows[(programs,)](dy, dx, x, w, rstd, dw, n_cols, n_rows, n_cols, rpp,
                                   BLOCK=block, num_warps=4)
    ref_dx, ref_dw = _reference(dy, x, w, rstd, programs, rpp)
    tol = 2e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(dx.astype(np.float64), ref_dx, rtol=tol, atol=tol * np.abs(ref_dx).max())
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-4, atol=1e-4 * np.abs(ref_dw).max())


@tilejit.jit
def ln_forward_rows(Y, X, W, B, Mean, Rstd, stride, n_cols, eps, BLOCK: tl.constexpr):
    """Liger-Kernel's LayerNorm forward (weights converted before the row sums; on CUDA
    rematerialised after them, without an occupancy request: cuda/remat.py)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = x - mean
    xm = tl.where(mask, xc, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xm * xm, axis=0) / n_cols + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    tl.store(Y + row * stride + cols, (xc * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("n_rows,n_cols", [(9, 1000), (4, 4096)])
def test_layer_norm_forward_rows(backend, rng, n_rows, n_cols):
    block = 1 << (n_cols - 1).bit_length()
    x = (rng.standard_normal((n_rows, n_cols)) * 3 + 1).astype(np.float16)
    w, b = (rng.standard_normal(n_cols).astype(np.float16) for _ in range(2))
    y = np.full_like(x, 7)
    mean, rstd = np.zeros(n_rows, np.float32), np.zeros(n_rows, np.float32)
    ln_forward_rows[(n_rows,)](y, x, w, b, mean, rstd, n_cols, n_cols, 1e-5, BLOCK=block,
                               num_warps=8)
    x64 = x.astype(np.float64)
    ref_mean = x64.mean(1)
    ref_rstd = 1 / np.sqrt(x64.var(1) + 1e-5)
    ref = (x64 - ref_mean[:, None]) * ref_rstd[:, None] * w + b
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-5)
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


@tilejit.jit
def rms_forward_rows(Y, X, W, Rstd, stride, n_cols, eps, BLOCK: tl.constexpr):
    """Liger-Kernel's RMSNorm forward, Llama casting (on CUDA x is converted again after
    its row sum: cuda/remat.py's small-saving rule)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0)
    w = tl.load(W + cols, mask=mask, other=0)
    xf = x.to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(xf * xf, axis=0) / n_cols + eps)
    tl.store(Rstd + row, rstd)
    tl.store(Y + row * stride + cols, (xf * rstd).to(X.dtype.element_ty) * w, mask=mask)


@pytest.mark.parametrize("n_rows,n_cols", [(7, 1000), (3, 4096)])
def test_rms_norm_forward_rows(backend, rng, n_rows, n_cols):
    block = 1 << (n_cols - 1).bit_length()
    x = (rng.standard_normal((n_rows, n_cols)) * 2).astype(np.float16)
    w = rng.standard_normal(n_cols).astype(np.float16)
    y = np.full_like(x, 7)
    rstd = np.zeros(n_rows, np.float32)
    rms_forward_rows[(n_rows,)](y, x, w, rstd, n_cols, n_cols, 1e-6, BLOCK=block, num_warps=8)
    x64 = x.astype(np.float64)
    ref_rstd = 1 / np.sqrt((x64 * x64).mean(1) + 1e-6)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-5)
    # the fp16 rounding of x * rstd before the weight, as the kernel does (ulp-level slack)
    ref = (x64 * ref_rstd[:, None]).astype(np.float16).astype(np.float64) * w
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=4e-3, atol=4e-3 * np.abs(ref).max())
