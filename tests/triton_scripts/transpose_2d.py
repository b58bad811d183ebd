"""2-D tiles, two program ids, strides and a grid given as a lambda over the meta-parameters."""
import numpy as np
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * stride_ym + rm[:, None], tile, mask=mask)


M, N = 77, 45
x = np.arange(M * N, dtype=np.int32).reshape(M, N)
y = np.full((N, M), -1, np.int32)
grid = lambda meta: (triton.cdiv(M, meta['BM']), triton.cdiv(N, meta['BN']))
transpose_kernel[grid](x, y, M, N, N, M, BM=16, BN=32)
np.testing.assert_array_equal(y, x.T)
print("PASS transpose_2d")
