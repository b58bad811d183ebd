"""Triton 3.4+ tensor descriptors: host `TensorDescriptor` arguments whose block shape an
autotune pre_hook sets (as tutorial 06 does), device-side `tl.make_tensor_descriptor`
after `triton.set_allocator`, a matmul with tl.dot, partial edge blocks."""
import numpy as np
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


def alloc_fn(size: int, alignment: int, stream):
    return np.empty(size, np.int8)


triton.set_allocator(alloc_fn)


def _pre_hook(nargs):
    BM, BN, BK = nargs["BM"], nargs["BN"], nargs["BK"]
    if not isinstance(nargs["a_desc"], TensorDescriptor):
        return
    nargs["a_desc"].block_shape = [BM, BK]
    nargs["b_desc"].block_shape = [BK, BN]


@triton.jit
def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@triton.autotune(configs=[triton.Config({"BM": 32, "BN": 32, "BK": 16}, pre_hook=_pre_hook),
                          triton.Config({"BM": 16, "BN": 64, "BK": 32}, pre_hook=_pre_hook)],
                 key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    a_desc = _maybe_make_tensor_desc(a_desc, [M, K], [K, 1], [BM, BK])
    b_desc = _maybe_make_tensor_desc(b_desc, [K, N], [N, 1], [BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


M, N, K = 70, 50, 40
rng = np.random.default_rng(0)
a = rng.integers(-4, 5, (M, K)).astype(np.float16)
b = rng.integers(-4, 5, (K, N)).astype(np.float16)
grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
dummy = [1, 1]
for host in (True, False):
    c = np.zeros((M, N), np.float16)
    if host:
        args = (TensorDescriptor(a, a.shape, [K, 1], dummy), TensorDescriptor.from_tensor(b, dummy))
    else:
        args = (a, b)
    matmul_kernel[grid](*args, c, M, N, K)
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
print("PASS tensor_descriptors")
