"""Triton's tutorial kernels, rewritten for tilejit, against numpy."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.shared_kernels import script_kernels


# --------------------------------------------------------------------- vector add
@tilejit.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@pytest.mark.parametrize("n,block", [(1, 16), (98432, 1024), (1000, 128), (4096, 4096)])
def test_vector_add(backend, n, block, rng):
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.full(n + 8, -7.0, np.float32)
    add_kernel[lambda meta: (tilejit.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=block)
    np.testing.assert_array_equal(out[:n], x + y)       # one rounding: bit-exact
    assert (out[n:] == -7.0).all()                       # nothing written past n


# --------------------------------------------------------------------- softmax
@tilejit.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float('inf'))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, softmax_output, mask=col_offsets < n_cols)


@pytest.mark.parametrize("rows,cols", [(1, 1), (37, 781), (64, 1024), (5, 3000)])
def test_fused_softmax(backend, rows, cols, rng):
    x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    x_padded = np.zeros((rows, cols + 3), np.float32)   # row stride != n_cols
    x_padded[:, :cols] = x
    out = np.zeros((rows, cols + 5), np.float32)
    block = tilejit.next_power_of_2(cols)
    softmax_kernel[(rows,)](out, x_padded, x_padded.shape[1], out.shape[1], cols, BLOCK_SIZE=block)
    x64 = x.astype(np.float64)
    ref = np.exp(x64 - x64.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(out[:, :cols], ref, rtol=2e-6 * np.log2(block + 1), atol=1e-7)
    assert not out[:, cols:].any()


@tilejit.jit
def persistent_softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride,
                              n_rows, n_cols, BLOCK_SIZE: tl.constexpr, NUM_STAGES: tl.constexpr):
    """The tutorial's persistent form: each program strides over rows with tl.range."""
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=NUM_STAGES):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float('inf'))
        numerator = tl.exp(row - tl.max(row, axis=0))
        softmax_output = numerator / tl.sum(numerator, axis=0)
        tl.store(output_ptr + row_idx * output_row_stride + col_offsets, softmax_output, mask=mask)


def test_persistent_softmax(backend, rng):
    x = rng.standard_normal((37, 100)).astype(np.float32)
    y = np.empty_like(x)
    persistent_softmax_kernel[(8,)](y, x, x.shape[1], y.shape[1], x.shape[0], x.shape[1],
                                    BLOCK_SIZE=128, NUM_STAGES=2)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------- matmul
@tilejit.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@tilejit.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  ACTIVATION: tl.constexpr = ""):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def _matmul(a, b, bm=32, bn=32, bk=32, group=4, activation="", out_dtype=np.float32):
    M, K = a.shape
    _, N = b.shape
    c = np.zeros((M, N), out_dtype)
    grid = lambda meta: (tilejit.cdiv(M, meta["BLOCK_SIZE_M"]) * tilejit.cdiv(N, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    isz_a, isz_b, isz_c = a.itemsize, b.itemsize, c.itemsize
    matmul_kernel[grid](a, b, c, M, N, K, a.strides[0] // isz_a, a.strides[1] // isz_a,
                        b.strides[0] // isz_b, b.strides[1] // isz_b,
                        c.strides[0] // isz_c, c.strides[1] // isz_c,
                        BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=group,
                        ACTIVATION=activation)
    return c


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("M,N,K", [(64, 64, 64), (100, 70, 45), (16, 128, 200)])
def test_matmul(backend, dtype, M, N, K, rng):
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = _matmul(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 accumulation over K products: error ~ K * eps32 * |a||b|
    tol = 4 * K * 2.0 ** -24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert (np.abs(c - ref) <= tol + 1e-6).all()


def test_matmul_leaky_relu_fp16_output(backend, rng):
    """The tutorial's fused activation (an inlined @jit helper) and fp16 output."""
    a = rng.standard_normal((40, 50)).astype(np.float16)
    b = rng.standard_normal((50, 24)).astype(np.float16)
    c = _matmul(a, b, bm=16, bn=16, bk=16, group=2, activation="leaky_relu", out_dtype=np.float16)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


def test_matmul_transposed_view(backend, rng):
    """A transposed (non-contiguous) operand: the base pointer plus the strides."""
    a = rng.standard_normal((48, 40)).astype(np.float32)
    bt = rng.standard_normal((24, 48)).astype(np.float32)
    c = _matmul(a.T, bt.T, bm=16, bn=16, bk=16)
    np.testing.assert_allclose(c, a.T.astype(np.float64) @ bt.T.astype(np.float64), rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------- dropout
@tilejit.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


@tilejit.jit
def rand_kernel(out_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs), mask=offs < n)


def _umulhi32(a, b):
    return ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)


def philox_rand_reference(seed: int, offsets: np.ndarray) -> np.ndarray:
    """numpy model of Triton's tl.rand: Philox 4x32-10 on (offset, 0, 0, 0) keyed by the
    seed, then the first word mapped to [0, 1)."""
    c0 = offsets.astype(np.int64).astype(np.uint32)
    c1 = c2 = c3 = np.zeros_like(c0)
    k0 = np.uint32(seed & 0xFFFFFFFF)
    k1 = np.uint32((seed >> 32) & 0xFFFFFFFF)
    A, B = np.uint32(0xD2511F53), np.uint32(0xCD9E8D57)
    with np.errstate(over="ignore"):
        for _ in range(10):
            _c0, _c2 = c0, c2
            c0 = _umulhi32(B, _c2) ^ c1 ^ k0
            c2 = _umulhi32(A, _c0) ^ c3 ^ k1
            c1 = (B * _c2).astype(np.uint32)
            c3 = (A * _c0).astype(np.uint32)
            k0 = np.uint32((int(k0) + 0x9E3779B9) & 0xFFFFFFFF)
            k1 = np.uint32((int(k1) + 0xBB67AE85) & 0xFFFFFFFF)
        x = c0.view(np.int32)
        x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


@pytest.mark.parametrize("seed", [0, 123, 2**31 + 5])
def test_rand_matches_philox_reference(backend, seed):
    n = 3000
    out = np.zeros(n, np.float32)
    rand_kernel[(tilejit.cdiv(n, 512),)](out, n, seed, BLOCK=512)
    ref = philox_rand_reference(seed, np.arange(n))
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=0)
    assert ((out >= 0) & (out < 1)).all()


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_low_memory_dropout(backend, p, rng):
    n = 20000
    x = rng.random(n, dtype=np.float32) + 1.0     # never 0, so zeros mark dropped lanes
    out1 = np.zeros_like(x)
    out2 = np.zeros_like(x)
    out3 = np.zeros_like(x)
    grid = (tilejit.cdiv(n, 1024),)
    seeded_dropout_kernel[grid](x, out1, n, p, 42, BLOCK_SIZE=1024)
    seeded_dropout_kernel[grid](x, out2, n, p, 42, BLOCK_SIZE=1024)
    seeded_dropout_kernel[grid](x, out3, n, p, 43, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(out1, out2)           # deterministic in the seed
    out4 = np.zeros_like(x)
    seeded_dropout_kernel[(tilejit.cdiv(n, 256),)](x, out4, n, p, 42, BLOCK_SIZE=256)
    np.testing.assert_array_equal(out1, out4)           # depends on offsets, not the blocking
    assert (out1 != out3).any()                          # and depends on it
    kept = out1 != 0
    # kept fraction ~ 1 - p (binomial: 5 standard deviations)
    assert abs(kept.mean() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
    keep_ref = philox_rand_reference(42, np.arange(n)) > np.float32(p)
    np.testing.assert_array_equal(kept, keep_ref)
    np.testing.assert_allclose(out1[kept], x[kept] / np.float32(1 - p), rtol=1e-6)


# --------------------------------------------------------------------- layer norm
# tutorial 05's forward kernel, as published: tests/triton_scripts/layer_norm.py


@pytest.mark.parametrize("M,N,block", [(8, 1000, 256), (3, 64, 64), (16, 513, 128)])
def test_layer_norm_forward(backend, M, N, block, rng):
    x = (rng.standard_normal((M, N)) * 3 + 1).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    y = np.zeros_like(x)
    mean = np.zeros(M, np.float32)
    rstd = np.zeros(M, np.float32)
    eps = 1e-5
    layer_norm_fwd_fused = script_kernels("layer_norm.py")["_layer_norm_fwd_fused"]
    layer_norm_fwd_fused[(M,)](x, y, w, b, mean, rstd, x.strides[0] // 4, N, eps, BLOCK_SIZE=block)
    x64 = x.astype(np.float64)
    mu = x64.mean(1)
    var = ((x64 - mu[:, None]) ** 2).mean(1)
    rs = 1 / np.sqrt(var + eps)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, rs, rtol=1e-5)
    np.testing.assert_allclose(y, (x64 - mu[:, None]) * rs[:, None] * w + b, rtol=1e-4, atol=1e-4)
