"""GELU with erf from `triton.language.extra.libdevice`, as Triton kernels write it."""
import math

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=m)


n = 3000
x = np.linspace(-6, 6, n, dtype=np.float32)
y = np.empty_like(x)
gelu_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
ref = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
triton.testing.assert_close(y, ref, atol=1e-5, rtol=1e-5)
print("PASS libdevice_gelu")
