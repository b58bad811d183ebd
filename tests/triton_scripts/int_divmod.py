"""Integer // and % truncate toward zero (C semantics, as Triton), on negative values too."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
def divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.store(q_ptr + offs, a // b, mask=m)
    tl.store(r_ptr + offs, a % b, mask=m)


rng = np.random.default_rng(3)
n = 1000
a = rng.integers(-1000, 1000, n).astype(np.int32)
b = rng.integers(1, 50, n).astype(np.int32) * rng.choice([-1, 1], n).astype(np.int32)
q = np.empty_like(a)
r = np.empty_like(a)
divmod_kernel[(triton.cdiv(n, 128),)](a, b, q, r, n, BLOCK=128)
ref_q = (np.trunc(a.astype(np.float64) / b)).astype(np.int32)
np.testing.assert_array_equal(q, ref_q)
np.testing.assert_array_equal(r, a - ref_q * b)
assert (q[(a < 0) & (b > 0) & (a % b != 0)] > (a // b)[(a < 0) & (b > 0) & (a % b != 0)]).all()
print("PASS int_divmod")
