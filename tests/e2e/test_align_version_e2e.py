"""Triton's grouped GEMM (tutorial 08: matrix pointers and leading dimensions read from
device arrays) through ``kernel[grid](...)`` with aligned and misaligned matrices and
strides, against numpy.  On cuda the dot loop is versioned at run time
(tilejit/transforms/align_version.py): aligned groups take the cp.async/tensor-core
ring, misaligned ones the register path, in one launch.  The interpreter is skipped:
its bounds check accepts only the launch's own arrays, and these matrices are reached
through pointers read from memory (tests/unit/test_align_version.py interprets the
versioned IR with every buffer listed, under the analysis claim checker)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def grouped_matmul_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds, group_size,
                          NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                          BLOCK_SIZE_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_SIZE_K)):
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)
            c_ptrs = c_ptr + ldc * offs_am[:, None] + offs_bn[None, :]
            tl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


GROUPS = [(128, 64, 128), (64, 128, 64), (64, 64, 192)]
CASES = {
    "aligned": {},
    "a_ptr_off_by_one_element": dict(a_off=1),
    "b_ptr_off_by_4_elements": dict(b_off=4),
    "lda_odd": dict(a_pad=1),
    "ldb_plus_8": dict(b_pad=8),
    "mixed_groups": dict(a_off=[0, 1, 0], b_pad=[0, 0, 3]),
}


class Arrays:
    """numpy arrays (cpu) or torch CUDA tensors (cuda); ``addr`` of element ``off``."""

    def __init__(self, backend):
        self.torch = None
        if backend == "cuda":
            self.torch = pytest.importorskip("torch")

    def alloc(self, host: np.ndarray):
        if self.torch is None:
            return host.copy()
        return self.torch.from_numpy(host.copy()).to("cuda")

    def addr(self, arr, off_elems):
        if self.torch is None:
            return arr.ctypes.data + off_elems * arr.itemsize
        return arr.data_ptr() + off_elems * arr.element_size()

    def host(self, arr):
        return arr if self.torch is None else arr.cpu().numpy()


def _per(x, n):
    return list(x) if isinstance(x, (list, tuple)) else [x] * n


@pytest.mark.parametrize("case", list(CASES))
def test_grouped_gemm_aligned_and_misaligned(backend, case):
    if backend == "interpreter":
        pytest.skip("matrices reached through pointers read from memory are outside the launch's arrays")
    kw, n = CASES[case], len(GROUPS)
    rng = np.random.default_rng(7)
    ar = Arrays(backend)
    a_off, b_off = _per(kw.get("a_off", 0), n), _per(kw.get("b_off", 0), n)
    a_pad, b_pad = _per(kw.get("a_pad", 0), n), _per(kw.get("b_pad", 0), n)
    owners, mats, ptrs, lds = [], [], [[], [], []], []
    for (M, N, K), ao, bo, ap, bp in zip(GROUPS, a_off, b_off, a_pad, b_pad):
        A = rng.integers(-3, 4, (M, K)).astype(np.float16)
        B = rng.integers(-3, 4, (K, N)).astype(np.float16)
        for i, (m, off, pad) in enumerate(((A, ao, ap), (B, bo, bp), (np.zeros((M, N), np.float16), 0, 0))):
            rows, cols = m.shape
            host = np.zeros(off + rows * (cols + pad) + 8, np.float16)
            host[off: off + rows * (cols + pad)].reshape(rows, cols + pad)[:, :cols] = m
            dev = ar.alloc(host)
            owners.append(dev)
            ptrs[i].append(ar.addr(dev, off))
        mats.append((A, B, owners[-1], M, N))
        lds += [K + ap, N + bp, N]
    tabs = [ar.alloc(np.array(p, np.int64)) for p in ptrs]
    sizes = ar.alloc(np.array([x for g in GROUPS for x in g], np.int32))
    ldt = ar.alloc(np.array(lds, np.int32))
    grouped_matmul_kernel[(4,)](*tabs, sizes, ldt, n, NUM_SM=4, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                                BLOCK_SIZE_K=64, num_warps=4, num_stages=3)
    for A, B, C, M, N in mats:
        got = ar.host(C)[: M * N].reshape(M, N)
        want = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)
        np.testing.assert_array_equal(got, want)
