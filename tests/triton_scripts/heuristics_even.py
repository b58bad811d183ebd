"""@triton.heuristics choosing a constexpr that removes the mask when it is not needed."""
import numpy as np
import triton
import triton.language as tl


@triton.heuristics({'EVEN_N': lambda args: args['n'] % args['BLOCK'] == 0})
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * alpha)
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


for n in (256, 300):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n + 64, np.float32)        # guard zone past n must stay untouched
    scale_kernel[(triton.cdiv(n, 64),)](x, out, n, 0.5, BLOCK=64)
    np.testing.assert_array_equal(out[:n], x * 0.5)
    np.testing.assert_array_equal(out[n:], 0)
print("PASS heuristics_even")
