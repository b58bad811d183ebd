"""Reversing a vector: a descending index sequence must not be treated as contiguous."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
def reverse_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + (n - 1 - offs), mask=m)
    tl.store(out_ptr + offs, v, mask=m)


for n in (64, 1000, 1024):
    x = np.arange(n, dtype=np.float32) * 3
    out = np.zeros(n, np.float32)
    reverse_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    np.testing.assert_array_equal(out, x[::-1])
print("PASS descending_index")
