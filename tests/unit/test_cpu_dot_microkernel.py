"""The CPU backend's tl.dot micro-kernel (dot_microkernel.py, lower_dot.py) against
float64 numpy references and the interpreter: row/column tails of the register
block, packed B panels (from the load's copy or read in place), fp16/bf16 operands
with fp32 accumulation, transposed operands, an accumulator passed in, masked
edges, and forced block shapes (AVX-512's, fp64's, others) compiled for this host."""
import numpy as np
import pytest

import tilejit as triton
import tilejit.language as tl
from tilejit.ir.types import float32, float64
from tilejit.runtime.options import use_options
from tilejit.backends.cpu import lower  # noqa: F401  (registers the lowering rules first)
from tilejit.backends.cpu import lower_dot
from tilejit.backends.cpu.dot_microkernel import Shape, choose_shape

BACKENDS = ("interpreter", "cpu")
AVX2 = {"avx": True, "avx2": True, "fma": True}
AVX512 = {**AVX2, "avx512f": True}


def run(backend, kernel, grid, *args, **meta):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with use_options(backend=backend, interpret=(backend == "interpreter")):
        kernel[grid](*args, **meta)
    return args


def ints(rng, shape, dtype=np.float32):
    """Small integers: every product and partial sum is exact in fp32."""
    return rng.integers(-4, 5, shape).astype(dtype)


@triton.jit
def dot_acc_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                   TRANS_A: tl.constexpr, TRANS_B: tl.constexpr, V: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    if TRANS_A:      # A stored K x M: the loaded tile is a strided (column) view
        a = tl.load(a_ptr + rk[None, :] * M + rm[:, None])
    else:
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    if TRANS_B:      # B stored N x K, transposed in the kernel
        b = tl.trans(tl.load(b_ptr + rn[:, None] * K + rk[None, :]))
    else:
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c_ptrs = c_ptr + rm[:, None] * N + rn[None, :]
    acc = tl.load(c_ptrs)
    tl.store(c_ptrs, tl.dot(a, b, acc))


SHAPES = [(1, 1, 1), (5, 3, 7), (6, 16, 8), (7, 17, 3), (13, 40, 24), (16, 16, 16), (48, 40, 24),
          (32, 64, 16), (64, 32, 64), (128, 8, 32), (8, 128, 32)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mnk", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_dot_shapes_exact(backend, mnk):
    M, N, K = mnk
    rng = np.random.default_rng(M * 10000 + N * 100 + K)
    a, b, c = ints(rng, (M, K)), ints(rng, (K, N)), ints(rng, (M, N))
    out = run(backend, dot_acc_kernel, (1,), a, b, c, M=M, N=N, K=K, TRANS_A=False, TRANS_B=False, V=0)[2]
    np.testing.assert_array_equal(out, a.astype(np.float64) @ b + c)


@pytest.mark.parametrize("trans", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("mnk", [(13, 40, 24), (64, 64, 32)], ids=lambda s: "x".join(map(str, s)))
def test_dot_transposed_operands(trans, mnk):
    M, N, K = mnk
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    c = rng.standard_normal((M, N)).astype(np.float32)
    a_in = np.ascontiguousarray(a.T) if trans[0] else a
    b_in = np.ascontiguousarray(b.T) if trans[1] else b
    ref = a.astype(np.float64) @ b.astype(np.float64) + c
    outs = [run(be, dot_acc_kernel, (1,), a_in, b_in, c, M=M, N=N, K=K, TRANS_A=trans[0],
                TRANS_B=trans[1], V=0)[2] for be in BACKENDS]
    for out in outs:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-4)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  ACC_IN: tl.constexpr, V: tl.constexpr, BF16_BITS: tl.constexpr = False):
    """The tutorial matmul with masked edges; ACC_IN adds the old C; BF16_BITS: A and
    B hold bf16 bit patterns (uint16) reinterpreted in the kernel."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    if ACC_IN:
        acc = tl.load(c_ptrs, mask=c_mask, other=0.0).to(tl.float32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        if BF16_BITS:
            a = a.to(tl.bfloat16, bitcast=True)
            b = b.to(tl.bfloat16, bitcast=True)
        acc += tl.dot(a, b)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def _matmul(backend, a, b, c, blocks, acc_in, v=0, bf16_bits=False):
    (M, K), N = a.shape, b.shape[1]
    BM, BN, BK = blocks
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    return run(backend, matmul_kernel, grid, a, b, c, M, N, K, a.strides[0] // a.itemsize,
               a.strides[1] // a.itemsize, b.strides[0] // b.itemsize, b.strides[1] // b.itemsize,
               N, 1, BM=BM, BN=BN, BK=BK, ACC_IN=acc_in, V=v, BF16_BITS=bf16_bits)[2]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mnk,blocks", [
    ((100, 70, 90), (32, 32, 16)),        # masked edges on every axis, 6 K iterations
    ((64, 64, 128), (64, 64, 32)),        # no edges (masks all true), 4 K iterations
    ((37, 129, 45), (16, 64, 32)),        # N tail panel inside a block, K edge
    ((130, 48, 64), (128, 16, 64)),       # 128 rows: 21 blocks of 6 + a 2-row tail
], ids=str)
@pytest.mark.parametrize("acc_in", [False, True])
def test_matmul_masked_edges(backend, mnk, blocks, acc_in):
    M, N, K = mnk
    rng = np.random.default_rng(M + N + K)
    a, b, c = ints(rng, (M, K)), ints(rng, (K, N)), ints(rng, (M, N))
    out = _matmul(backend, a, b, c, blocks, acc_in)
    np.testing.assert_array_equal(out, a.astype(np.float64) @ b + (c if acc_in else 0))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matmul_low_precision_inputs_fp32_acc(dtype):
    """fp16/bf16 operands, fp32 accumulation (a sum that fp16 accumulation would lose)."""
    M, N, K = 40, 48, 96
    rng = np.random.default_rng(11)
    a32, b32 = ints(rng, (M, K)), ints(rng, (K, N))
    c = np.zeros((M, N), np.float32)
    a32 = a32 * 64                   # partial sums reach ~1e5: exact in fp32, not in fp16
    ref = a32.astype(np.float64) @ b32
    bf16 = dtype == "bfloat16"
    if bf16:                         # small integers are exact bf16: keep the high 16 bits
        a, b = ((x.view(np.uint32) >> 16).astype(np.uint16) for x in (a32, b32))
    else:
        a, b = a32.astype(np.float16), b32.astype(np.float16)
    for be in BACKENDS:
        out = _matmul(be, a, b, c, (32, 16, 32), False, bf16_bits=bf16)
        np.testing.assert_array_equal(out, ref)


def test_matmul_fp16_output():
    """fp32 accumulator stored to an fp16 C: one rounding at the end."""
    M, N, K = 24, 40, 64
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float16)
    ref = (a.astype(np.float64) @ b).astype(np.float16)
    outs = [_matmul(be, a, b, c, (16, 32, 16), False) for be in BACKENDS]
    for out in outs:
        np.testing.assert_allclose(out.astype(np.float64), ref.astype(np.float64), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_random_fp32(backend):
    M, N, K = 96, 80, 200
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    out = _matmul(backend, a, b, c, (64, 32, 32), False)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@triton.jit
def fp64_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.zeros((M, N), dtype=tl.float64)
    acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("mnk", [(16, 16, 16), (13, 20, 9), (32, 8, 64)], ids=str)
def test_dot_fp64(mnk):
    M, N, K = mnk
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    for be in BACKENDS:
        try:
            out = run(be, fp64_dot_kernel, (1,), a, b, np.zeros((M, N)), M=M, N=N, K=K)[2]
        except triton.CompilationError:
            pytest.skip("fp64 dot rejected by the language")
        np.testing.assert_allclose(out, a @ b, rtol=1e-12, atol=1e-12)


@triton.jit
def chained_kernel(x_ptr, w_ptr, out_ptr, N: tl.constexpr, STEPS: tl.constexpr):
    """x <- x @ w repeatedly: the dot's A operand is the loop-carried tile itself."""
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + r[None, :])
    w = tl.load(w_ptr + r[:, None] * N + r[None, :])
    for _ in range(STEPS):
        x = tl.dot(x, w)
    tl.store(out_ptr + r[:, None] * N + r[None, :], x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dot_operand_is_carried_result(backend):
    N = 16
    rng = np.random.default_rng(2)
    x, w = rng.integers(-1, 2, (N, N)).astype(np.float32), np.eye(N, dtype=np.float32)[::-1].copy()
    w[0, 3] = 1.0
    out = run(backend, chained_kernel, (1,), x, w, np.zeros((N, N), np.float32), N=N, STEPS=3)[2]
    ref = x.astype(np.float64)
    for _ in range(3):
        ref = ref @ w
    np.testing.assert_array_equal(out, ref)


@triton.jit
def dot_then_column_loop_kernel(a_ptr, b_ptr, x_ptr, out_ptr, N: tl.constexpr, R: tl.constexpr):
    """A dot result carried by a loop whose loads run down columns: lower_cf lays the
    carried buffer out column-major (carried_order)."""
    r = tl.arange(0, N)
    acc = tl.dot(tl.load(a_ptr + r[:, None] * N + r[None, :]), tl.load(b_ptr + r[:, None] * N + r[None, :]))
    for i in range(R):
        acc += tl.load(x_ptr + i * N * N + r[:, None] + r[None, :] * N)
    tl.store(out_ptr + r[:, None] * N + r[None, :], acc)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dot_result_carried_column_major(backend):
    N, R = 16, 3
    rng = np.random.default_rng(4)
    a, b, x = ints(rng, (N, N)), ints(rng, (N, N)), ints(rng, (R, N, N))
    out = run(backend, dot_then_column_loop_kernel, (1,), a, b, x, np.zeros((N, N), np.float32), N=N, R=R)[3]
    ref = a.astype(np.float64) @ b + sum(x[i].T for i in range(R))
    np.testing.assert_array_equal(out, ref)


def test_dot_into_reordered_carried_slot(monkeypatch, tmp_path):
    """A dot yielded into a carried slot laid out column-major (lower_cf.carried_order
    forced here: it keeps loops with dots row-major) goes through a row-major scratch."""
    from tilejit.backends.cpu import lower_cf
    monkeypatch.setattr(lower_cf, "carried_order", lambda ctx, op, t: None if len(t.shape) < 2 else (1, 0))
    hits, real = [], lower_dot._reordered
    monkeypatch.setattr(lower_dot, "_reordered", lambda *a: hits.append(a[3]) or real(*a))
    N, steps = 16, 4
    rng = np.random.default_rng(3)
    x, w = rng.integers(-1, 2, (N, N)).astype(np.float32), np.eye(N, dtype=np.float32)[::-1].copy()
    w[2, 5] = 1.0
    out = np.zeros((N, N), np.float32)
    with use_options(backend="cpu", cache_dir=str(tmp_path)):
        chained_kernel[(1,)](x, w, out, N=N, STEPS=steps)
    assert hits == [(1, 0)]
    np.testing.assert_array_equal(out, x.astype(np.float64) @ np.linalg.matrix_power(w.astype(np.float64), steps))


# ---------------------------------------------------------------- block shapes
def test_choose_shape_per_target():
    assert choose_shape(128, 128, 64, float32, AVX2) == Shape(8, 2, 6, True)
    assert choose_shape(128, 128, 64, float32, AVX512) == Shape(16, 2, 14, True)
    assert choose_shape(128, 128, 64, float64, AVX2) == Shape(4, 2, 6, True)
    s = choose_shape(5, 3, 7, float32, AVX2)           # narrow N: narrower vectors, all rows
    assert s.nr <= 3 and s.mr == 5 and not s.pack_b
    for feats in (AVX2, AVX512, {}):                    # accumulators fit the register file
        s = choose_shape(256, 256, 32, float32, feats)
        assert s.mr * s.nvec + s.nvec + 1 <= (32 if feats.get("avx512f") else 16)


@pytest.mark.parametrize("shape", [Shape(16, 2, 8, True), Shape(16, 2, 14, True), Shape(4, 2, 6, True), Shape(8, 1, 13, False),
                                   Shape(8, 3, 4, True), Shape(2, 1, 1, True)], ids=str)
def test_forced_shapes_compile_and_agree(shape, tmp_path):
    """Other targets' register blocks (wider/narrower vectors, more rows) compiled for
    this host: the same exact results on tails of every kind."""
    rng = np.random.default_rng(1)
    saved = list(lower_dot._SHAPE_OVERRIDE)
    lower_dot._SHAPE_OVERRIDE[:] = [shape]
    try:
        with use_options(cache_dir=str(tmp_path)):
            for i, (M, N, K) in enumerate([(37, 53, 19), (64, 48, 32)]):
                a, b, c = ints(rng, (M, K)), ints(rng, (K, N)), ints(rng, (M, N))
                v = hash(shape) % 1000 * 10 + i                # a fresh specialization per shape
                out = run("cpu", dot_acc_kernel, (1,), a, b, c, M=M, N=N, K=K,
                          TRANS_A=False, TRANS_B=False, V=v)[2]
                np.testing.assert_array_equal(out, a.astype(np.float64) @ b + c)
    finally:
        lower_dot._SHAPE_OVERRIDE[:] = saved


# ---------------------------------------------------------------- B read in place
@triton.jit
def plain_matmul_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, CLOBBER: tl.constexpr,
                        V: tl.constexpr):
    """Unmasked tutorial loop (B may be packed straight from memory).  CLOBBER 1: B's
    tile is overwritten between its load and the dot; 2: after the dot, before the
    yield the dot is deferred to.  Either way the dot must use the loaded values."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        if CLOBBER == 1:
            tl.store(b_ptrs, b * 2.0)
        acc += tl.dot(a, b)
        if CLOBBER == 2:
            tl.store(b_ptrs, b * 0.0)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc)


def _plain(backend, a, b, blocks, clobber, v=0):
    (M, K), N = a.shape, b.shape[1]
    BM, BN, BK = blocks
    c = np.zeros((M, N), np.float32)
    return run(backend, plain_matmul_kernel, (M // BM, N // BN), a, b, c, K, K, N, N,
               BM=BM, BN=BN, BK=BK, CLOBBER=clobber, V=v)[1:3]


@pytest.mark.parametrize("mnk,blocks", [((128, 96, 192), (64, 48, 64)), ((64, 80, 96), (32, 40, 32)),
                                        ((26, 36, 12), (13, 36, 4))], ids=str)
def test_plain_matmul_reads_b_in_place(mnk, blocks, tmp_path, monkeypatch):
    M, N, K = mnk
    rng = np.random.default_rng(21)
    a, b = ints(rng, (M, K)), ints(rng, (K, N))
    used = []
    orig = lower_dot._direct_source
    monkeypatch.setattr(lower_dot, "_direct_source", lambda *x: used.append(orig(*x)) or used[-1])
    with use_options(cache_dir=str(tmp_path), vectorize=True, sanitize=False):   # the path needs vector plans
        out = _plain("cpu", a, b, blocks, 0, v=1)[1]
    np.testing.assert_array_equal(out, a.astype(np.float64) @ b)
    assert any(u is not None for u in used)          # the in-place path was taken
    np.testing.assert_array_equal(_plain("interpreter", a, b, blocks, 0)[1], out)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("clobber", [1, 2])
def test_plain_matmul_b_overwritten_after_load(backend, clobber, tmp_path, monkeypatch):
    """A store after B's load keeps B's per-program copy (the dot sees the loaded values)."""
    M, N, K = 64, 48, 64
    rng = np.random.default_rng(22)
    a, b = ints(rng, (M, K)), ints(rng, (K, N))
    used = []
    orig = lower_dot._direct_source
    monkeypatch.setattr(lower_dot, "_direct_source", lambda *x: used.append(orig(*x)) or used[-1])
    with use_options(cache_dir=str(tmp_path)):
        b_after, out = _plain(backend, a, b, (64, 48, 16), clobber, v=2)   # one program owns B
    np.testing.assert_array_equal(out, a.astype(np.float64) @ b)
    np.testing.assert_array_equal(b_after, b * (2.0 if clobber == 1 else 0.0))
    assert all(u is None for u in used)


# ---------------------------------------------------------------- next-tile prefetch
def _llir_texts(dump_dir):
    return [p.read_text() for p in dump_dir.glob("*/*-llir.txt")]


@pytest.mark.parametrize("mnk,blocks", [
    ((128, 96, 192), (64, 48, 64)),       # 3 K steps; 48 = 3 panels of 16 (AVX2)
    ((20, 80, 96), (4, 40, 32)),          # 4 rows < the 6-row block: the prefetching block is a tail
    ((26, 36, 12), (13, 36, 4)),          # 13 = 6 + 7 rows, 36 = 2 panels + a narrow one, K steps of 4
], ids=str)
@pytest.mark.parametrize("sanitize", [False, True])
def test_plain_matmul_prefetches_next_b_tile(mnk, blocks, sanitize, tmp_path):
    """B read in place: the first block of each full panel prefetches the rows after
    the tile (the next K step's; past B's end on the last step: a prefetch never
    faults).  Results exact, equal to the interpreter's, with and without the
    sanitizer (which may keep B's copy: then no prefetch is emitted)."""
    M, N, K = mnk
    rng = np.random.default_rng(31)
    a, b = ints(rng, (M, K)), ints(rng, (K, N))
    dump = tmp_path / "dump"
    with use_options(cache_dir=str(tmp_path), dump_dir=str(dump), vectorize=True, sanitize=sanitize):
        out = _plain("cpu", a, b, blocks, 0, v=3 + sanitize)[1]
    np.testing.assert_array_equal(out, a.astype(np.float64) @ b)
    np.testing.assert_array_equal(_plain("interpreter", a, b, blocks, 0)[1], out)
    texts = _llir_texts(dump)
    assert texts
    if not sanitize:
        assert any("llvm.prefetch" in t for t in texts)


def test_masked_matmul_has_no_prefetch(tmp_path):
    """A masked B load keeps its per-program copy: nothing to prefetch from."""
    M, N, K = 37, 129, 45
    rng = np.random.default_rng(32)
    a, b, c = ints(rng, (M, K)), ints(rng, (K, N)), ints(rng, (M, N))
    dump = tmp_path / "dump"
    with use_options(cache_dir=str(tmp_path), dump_dir=str(dump)):
        out = _matmul("cpu", a, b, c, (16, 64, 32), False, v=5)
    np.testing.assert_array_equal(out, a.astype(np.float64) @ b)
    texts = _llir_texts(dump)
    assert texts and not any("llvm.prefetch" in t for t in texts)
