"""Triton tutorial 02 (fused softmax), one program per row."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
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
    tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=col_offsets < n_cols)


def softmax(x):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    y = np.empty_like(x)
    softmax_kernel[(n_rows, )](y, x, x.strides[0] // x.itemsize, y.strides[0] // y.itemsize,
                               n_cols, num_warps=4, BLOCK_SIZE=BLOCK_SIZE)
    return y


x = np.random.default_rng(1).standard_normal((123, 781)).astype(np.float32)
y = softmax(x)
x64 = x.astype(np.float64)
ref = np.exp(x64 - x64.max(axis=1, keepdims=True))
ref /= ref.sum(axis=1, keepdims=True)
triton.testing.assert_close(y, ref, atol=1e-6, rtol=1e-5)
print("PASS fused_softmax")
