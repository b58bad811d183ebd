"""A loop over column blocks accumulating a row sum (scf.for with a loop-carried tile)."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


x = np.random.default_rng(4).random((37, 1000)).astype(np.float32)
out = np.zeros(37, np.float32)
row_sum_kernel[(37,)](x, out, 1000, 1000, BLOCK=128)
triton.testing.assert_close(out, x.astype(np.float64).sum(axis=1), atol=1e-3, rtol=1e-5)
print("PASS row_sum_loop")
