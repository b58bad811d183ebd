"""Vector add on torch CPU tensors (prints SKIP when torch is not installed)."""
import sys

import triton
import triton.language as tl

try:
    import torch
except ImportError:
    print("SKIP torch_vector_add: torch not installed")
    sys.exit(0)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


torch.manual_seed(0)
x = torch.rand(5000)
y = torch.rand(5000)
out = torch.empty_like(x)
add_kernel[(triton.cdiv(5000, 512),)](x, y, out, 5000, BLOCK=512)
triton.testing.assert_close(out, x + y, atol=0, rtol=0)
print("PASS torch_vector_add")
