"""Block pointers (make_block_ptr / advance / boundary_check / padding_option) and
tensor descriptors, against numpy, including partial edge blocks."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def copy_block_kernel(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, PAD: tl.constexpr,
                      BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(sxm, sxn), offsets=(pm * BM, pn * BN),
                            block_shape=(BM, BN), order=(1, 0))
    dst = tl.make_block_ptr(y_ptr, (M + 1, N + 1), (sym, syn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    if PAD == "nan":
        v = tl.load(src, boundary_check=(0, 1), padding_option="nan")
    else:
        v = tl.load(src, boundary_check=(0, 1), padding_option="zero")
    tl.store(dst, v, boundary_check=(1, 0))


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_load_store_partial_blocks(backend, rng, pad):
    M, N, BM, BN = 37, 21, 16, 8
    x = rng.standard_normal((M, N)).astype(np.float32)
    gm, gn = -(-(M + 1) // BM), -(-(N + 1) // BN)
    y = np.full((M + 1, N + 1), 7.0, np.float32)
    copy_block_kernel[(gm, gn)](x, y, M, N, N, 1, N + 1, 1, PAD=pad, BM=BM, BN=BN)
    want = np.full((M + 1, N + 1), 0.0 if pad == "zero" else np.nan, np.float32)
    want[:M, :N] = x
    np.testing.assert_array_equal(y, want)


@tilejit.jit
def bp_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_bp = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(sam, sak), offsets=(pid_m * BM, 0),
                             block_shape=(BM, BK), order=(1, 0))
    b_bp = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(sbk, sbn), offsets=(0, pid_n * BN),
                             block_shape=(BK, BN), order=(1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_bp, boundary_check=(0, 1))
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc += tl.dot(a, b)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_bp, acc, boundary_check=(0, 1))


def test_block_pointer_matmul_with_advance(backend, rng):
    M, N, K = 45, 35, 50
    a = rng.integers(-3, 4, (M, K)).astype(np.float32)
    b = rng.integers(-3, 4, (K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    BM = BN = BK = 16
    bp_matmul_kernel[(-(-M // BM), -(-N // BN))](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=BM, BN=BN, BK=BK)
    np.testing.assert_array_equal(c, a @ b)


@tilejit.jit
def desc_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[N, M], strides=[M, 1], block_shape=[BN, BM])
    v = xd.load([pm * BM, pn * BN])
    yd.store([pn * BN, pm * BM], tl.trans(v) * 2)


def test_tensor_descriptor_transpose(backend, rng):
    M, N = 30, 19
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros((N, M), np.float32)
    desc_kernel[(2, 3)](x, y, M, N, BM=16, BN=8)
    np.testing.assert_array_equal(y, 2 * x.T)


@tilejit.jit
def strided_col_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    """1-d block pointer with a runtime stride and no boundary check on a full block;
    the loaded block carried through an if."""
    bp = tl.make_block_ptr(x_ptr, (n,), (stride,), (0,), (BLOCK,), (0,))
    if n > BLOCK:
        bp = tl.advance(bp, (n - BLOCK,))
    v = tl.load(bp)
    tl.store(out_ptr + tl.arange(0, BLOCK), v)


def test_block_ptr_through_if(backend, rng):
    x = rng.standard_normal((40, 3)).astype(np.float32)
    out = np.zeros(32, np.float32)
    strided_col_kernel[(1,)](x, out, 40, 3, BLOCK=32)
    np.testing.assert_array_equal(out, x[8:, 0])
