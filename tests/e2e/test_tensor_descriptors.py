"""Tensor descriptors (Triton 3.4+): ``tl.make_tensor_descriptor`` in a kernel and host
``TensorDescriptor`` arguments, ``desc.load/store`` with in- and out-of-bounds blocks,
1-d/2-d/3-d, fp16/fp32, a descriptor matmul with tl.dot, autotune pre_hooks setting
``block_shape``; every backend against numpy."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import CompilationError
from tilejit.tools.tensor_descriptor import TensorDescriptor

DTYPES = {"fp32": np.float32, "fp16": np.float16}


def _blocks(n, b):
    return -(-n // b)


# ------------------------------------------------------------------ device side
@tilejit.jit
def dev_copy2d(x_ptr, y_ptr, M, N, MY, NY, BM: tl.constexpr, BN: tl.constexpr):
    """Read the (M, N) x in blocks (zero beyond it), write them into the (MY, NY) y."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, [MY, NY], [NY, 1], [BM, BN])
    v = xd.load([pm * BM, pn * BN])
    yd.store([pm * BM, pn * BN], v + 1)


@pytest.mark.parametrize("dt", list(DTYPES))
def test_device_2d_partial_blocks(backend, rng, dt):
    """x is (37, 21), y (41, 19): blocks past x read 0 (y gets 1 there), blocks past y
    are not written (the 7 sentinel beyond y's extent in the flat buffer survives)."""
    M, N, MY, NY, BM, BN = 37, 21, 41, 19, 16, 8
    x = rng.standard_normal((M, N)).astype(DTYPES[dt])
    flat = np.full(MY * NY + 64, 7, DTYPES[dt])
    y = flat[:MY * NY]
    dev_copy2d[(_blocks(MY, BM), _blocks(N, BN))](x, flat, M, N, MY, NY, BM=BM, BN=BN)
    want = np.ones((MY, NY), DTYPES[dt])
    want[:M, :NY] = x[:, :NY] + DTYPES[dt](1)
    np.testing.assert_array_equal(y.reshape(MY, NY), want)
    assert (flat[MY * NY:] == 7).all()


@tilejit.jit
def dev_negative_offsets(x_ptr, y_ptr, N, B: tl.constexpr):
    """Blocks starting before 0 read zero for the negative indices."""
    xd = tl.make_tensor_descriptor(x_ptr, [N], [1], [B])
    yd = tl.make_tensor_descriptor(y_ptr, [N + B], [1], [B])
    pid = tl.program_id(0)
    v = tl.load_tensor_descriptor(xd, [pid * B - B // 2])
    tl.store_tensor_descriptor(yd, [pid * B], v)


def test_device_1d_negative_offsets_and_functions(backend, rng):
    N, B = 40, 16
    x = rng.standard_normal(N).astype(np.float32)
    y = np.full(N + B, -5, np.float32)
    grid = _blocks(N + B, B)
    dev_negative_offsets[(grid,)](x, y, N, B=B)
    padded = np.concatenate([np.zeros(B // 2, np.float32), x, np.zeros(2 * B, np.float32)])
    np.testing.assert_array_equal(y, padded[:N + B])


@tilejit.jit
def dev_3d_sum(x_ptr, out_ptr, A, B, C, sa, sb, BA: tl.constexpr, BB: tl.constexpr,
               BC: tl.constexpr):
    """3-d descriptor over a strided view; attributes read in the kernel."""
    d = tl.make_tensor_descriptor(x_ptr, [A, B, C], [sa, sb, 1], [BA, BB, BC])
    tl.static_assert(d.block_shape[2] == BC)
    tl.static_assert(d.dtype == tl.float32)
    v = d.load([0, tl.program_id(0) * BB, 0])
    s = tl.sum(v, axis=0)
    od = tl.make_tensor_descriptor(out_ptr, [B, C], [C, 1], [BB, BC])
    od.store([tl.program_id(0) * BB, 0], s)


def test_device_3d_strided_view(backend, rng):
    big = rng.standard_normal((3, 13, 12)).astype(np.float32)
    A, B, C = 3, 13, 5         # x = big[:, :, :5]: strides (156, 12, 1)
    out = np.zeros((B, C), np.float32)
    dev_3d_sum[(_blocks(B, 4),)](big, out, A, B, C, 13 * 12, 12, BA=4, BB=4, BC=8)
    np.testing.assert_allclose(out, big[:, :, :C].sum(axis=0), rtol=1e-6, atol=1e-6)


@tilejit.jit
def dev_nan_pad(x_ptr, y_ptr, N, B: tl.constexpr):
    xd = tl.make_tensor_descriptor(x_ptr, [N], [1], [B], padding_option="nan")
    tl.store(y_ptr + tl.arange(0, B), xd.load([0]))


def test_device_nan_padding(backend):
    x = np.arange(5, dtype=np.float32)
    y = np.zeros(8, np.float32)
    dev_nan_pad[(1,)](x, y, 5, B=8)
    np.testing.assert_array_equal(y, np.concatenate([x, np.full(3, np.nan, np.float32)]))


@tilejit.jit
def dev_atomic_add(y_ptr, N, B: tl.constexpr):
    yd = tl.make_tensor_descriptor(y_ptr, [N], [1], [B])
    yd.atomic_add([tl.program_id(0) * 4], tl.full((B,), 1.0, tl.float32))


def test_device_atomic_add(backend):
    N, B = 21, 8
    y = np.zeros(N + 8, np.float32)       # the tail past N must stay 0
    dev_atomic_add[(6,)](y, N, B=B)
    want = np.zeros(N + 8, np.float32)
    for p in range(6):
        want[p * 4:min(p * 4 + B, N)] += 1
    np.testing.assert_array_equal(y, want)


# ------------------------------------------------------------------ matmul with tl.dot
@tilejit.jit
def _desc_or_make(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@tilejit.jit
def desc_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """a, b, c: host descriptors or pointers (tutorial 06's _maybe_make_tensor_desc)."""
    a_d = _desc_or_make(a, [M, K], [K, 1], [BM, BK])
    b_d = _desc_or_make(b, [K, N], [N, 1], [BK, BN])
    c_d = _desc_or_make(c, [M, N], [N, 1], [BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(a_d.load([om, k]), b_d.load([k, on]))
    c_d.store([om, on], acc.to(c_d.dtype))


@pytest.mark.parametrize("host", [False, True], ids=["device", "host"])
@pytest.mark.parametrize("dt", list(DTYPES))
def test_matmul_dot(backend, rng, dt, host):
    M, N, K, BM, BN, BK = 45, 35, 50, 32, 16, 16
    a = rng.integers(-3, 4, (M, K)).astype(DTYPES[dt])
    b = rng.integers(-3, 4, (K, N)).astype(DTYPES[dt])
    c = np.zeros((M, N), DTYPES[dt])
    args = (a, b, c)
    if host:
        args = (TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BK, BN]),
                TensorDescriptor(c, c.shape, [N, 1], [BM, BN]))
    desc_matmul[(_blocks(M, BM), _blocks(N, BN))](*args, M, N, K, BM=BM, BN=BN, BK=BK)
    np.testing.assert_array_equal(c, (a.astype(np.float64) @ b).astype(DTYPES[dt]))


# ------------------------------------------------------------------ host side
@tilejit.jit
def host_scale(xd, yd, alpha, BM: tl.constexpr, BN: tl.constexpr):
    tl.static_assert(xd.block_shape == (BM, BN))
    pm, pn = tl.program_id(0), tl.program_id(1)
    v = xd.load([pm * BM, pn * BN])
    yd.store([pm * BM, pn * BN], (v.to(tl.float32) * alpha).to(yd.dtype))
    tl.static_assert(len(xd.shape) == 2)


@pytest.mark.parametrize("dt", list(DTYPES))
def test_host_descriptors_partial(backend, rng, dt):
    """y describes a (20, 13) window of a (24, 16) array: writes stay inside it."""
    x = rng.standard_normal((30, 19)).astype(DTYPES[dt])
    ybuf = np.full((24, 16), 9, DTYPES[dt])
    xd = TensorDescriptor.from_tensor(x, [16, 8])
    yd = TensorDescriptor(ybuf, [20, 13], [16, 1], [16, 8])
    host_scale[(2, 3)](xd, yd, 2.0, BM=16, BN=8)
    want = np.full((24, 16), 9, DTYPES[dt])
    want[:20, :13] = (x[:20, :13].astype(np.float32) * 2).astype(DTYPES[dt])
    np.testing.assert_array_equal(ybuf, want)
    # a new shape of the same specialization reuses the kernel; a new block shape recompiles
    n = len(host_scale._launcher.cache)
    host_scale[(2, 3)](xd, TensorDescriptor(ybuf, [24, 15], [16, 1], [16, 8]), 1.0, BM=16, BN=8)
    assert len(host_scale._launcher.cache) == n
    np.testing.assert_array_equal(ybuf[:, :15], x[:24, :15])
    np.testing.assert_array_equal(ybuf[:, 15], want[:, 15])
    xd.block_shape = [8, 8]
    host_scale[(4, 3)](xd, TensorDescriptor(ybuf, [24, 16], [16, 1], [8, 8]), 1.0, BM=8, BN=8)
    assert len(host_scale._launcher.cache) == n + 1
    np.testing.assert_array_equal(ybuf, x[:24, :16])


@tilejit.jit
def host_rows_4d(qd, od, ROWS: tl.constexpr, D: tl.constexpr):
    """Tutorial 06's layout: a (Z, H, N_CTX, D) tensor described as (Z*H*N_CTX, D)."""
    off = tl.program_id(0) * ROWS
    od.store([off, 0], qd.load([off, 0]) * 3)


def test_host_descriptor_over_4d_tensor(backend, rng):
    q = rng.standard_normal((2, 3, 24, 16)).astype(np.float32)
    o = np.zeros_like(q)
    y_dim = 2 * 3 * 24
    qd = TensorDescriptor(q, [y_dim, 16], [16, 1], [32, 16])
    od = TensorDescriptor(o, [y_dim, 16], [16, 1], [32, 16])
    host_rows_4d[(_blocks(y_dim, 32),)](qd, od, ROWS=32, D=16)
    np.testing.assert_array_equal(o, q * 3)


def _pre_hook(nargs):
    nargs["xd"].block_shape = [nargs["BM"], nargs["BN"]]
    nargs["yd"].block_shape = [nargs["BM"], nargs["BN"]]


@tilejit.autotune(configs=[tilejit.Config({"BM": 16, "BN": 8}, pre_hook=_pre_hook),
                           tilejit.Config({"BM": 8, "BN": 32}, pre_hook=_pre_hook)],
                  key=["M", "N"])
@tilejit.jit
def tuned_copy(xd, yd, M, N, BM: tl.constexpr, BN: tl.constexpr):
    tl.static_assert(xd.block_shape == (BM, BN))
    pm, pn = tl.program_id(0), tl.program_id(1)
    yd.store([pm * BM, pn * BN], xd.load([pm * BM, pn * BN]) - 1)


def test_autotune_pre_hook_sets_block_shape(backend, rng):
    M, N = 33, 40
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = np.zeros_like(x)
    dummy = [1, 1]      # as tutorial 06: the pre_hook fills in the real block shape
    xd, yd = TensorDescriptor(x, [M, N], [N, 1], dummy), TensorDescriptor(y, [M, N], [N, 1], dummy)
    grid = lambda meta: (_blocks(M, meta["BM"]), _blocks(N, meta["BN"]))   # noqa: E731
    tuned_copy[grid](xd, yd, M, N)
    np.testing.assert_array_equal(y, x - 1)
    assert list(xd.block_shape) == [tuned_copy.best_config.kwargs["BM"], tuned_copy.best_config.kwargs["BN"]]


# ------------------------------------------------------------------ errors
@tilejit.jit
def bad_stride(x_ptr, N, B: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [N, N], [N, 2], [B, B])
    d.store([0, 0], tl.zeros((B, B), tl.float32))


@tilejit.jit
def bad_rank(x_ptr, N, B: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [N, N], [N, 1], [B, B])
    v = d.load([0])
    tl.store(x_ptr + tl.arange(0, B), tl.sum(v, axis=0))


@pytest.mark.parametrize("kernel,line,needle", [
    (bad_stride, 1, "last stride must be 1"),
    (bad_rank, 2, "expected 2 offsets, got 1"),
])
def test_misuse_is_a_compilation_error(kernel, line, needle):
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](x, 16, B=8)
    text = str(info.value)
    assert f"{kernel.file}:{kernel.first_line + line + 1}:" in text, text
    assert needle in text, text


def test_host_descriptor_misuse():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        TensorDescriptor(x, [8, 4], [1, 8], [4, 4])
    with pytest.raises(ValueError, match="rank mismatch"):
        TensorDescriptor(x, [4, 8], [8, 1], [4])
    d = TensorDescriptor.from_tensor(x, [4, 8])
    assert (list(d.shape), list(d.strides)) == ([4, 8], [8, 1])
    d.block_shape = [4]        # e.g. a wrong pre_hook: the launch names the argument
    y = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match="host_scale: argument 'xd'.*rank mismatch"):
        host_scale[(1, 1)](d, TensorDescriptor.from_tensor(y, [4, 8]), 1.0, BM=4, BN=8)


# ------------------------------------------------------------------ tutorial 06's shape
@tilejit.jit
def _attn_like_inner(acc, q, desc_k, desc_v, offset_y, N_CTX, BLOCK_N: tl.constexpr,
                     dtype: tl.constexpr, ws: tl.constexpr):
    for start_n in tl.range(0, N_CTX, BLOCK_N, warp_specialize=ws):
        k = desc_k.load([offset_y + start_n, 0]).T
        p = tl.dot(q, k).to(dtype)
        acc = tl.dot(p, desc_v.load([offset_y + start_n, 0]), acc)
    return acc


@tilejit.jit
def attn_like(desc_q, desc_k, desc_v, desc_o, Z, H, N_CTX, HEAD_DIM: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Descriptors (host ones or made here) passed through a @jit call, loads transposed
    with ``.T``, as tutorial 06 (Triton 3.4+) does; o = (q @ k^T).fp16 @ v per head."""
    y_dim = Z * H * N_CTX
    desc_q = _desc_or_make(desc_q, [y_dim, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    desc_k = _desc_or_make(desc_k, [y_dim, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    desc_v = _desc_or_make(desc_v, [y_dim, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    desc_o = _desc_or_make(desc_o, [y_dim, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    offset_y = tl.program_id(1) * N_CTX
    qo = offset_y + tl.program_id(0) * BLOCK_M
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    acc = _attn_like_inner(acc, desc_q.load([qo, 0]), desc_k, desc_v, offset_y, N_CTX, BLOCK_N,
                           tl.float16, False)
    desc_o.store([qo, 0], acc.to(tl.float16))


@pytest.mark.parametrize("host", [False, True], ids=["device", "host"])
def test_attention_shaped_kernel(backend, rng, host):
    Z, H, N, D, BM, BN = 1, 2, 32, 16, 16, 16
    q, k, v = (rng.integers(-2, 3, (Z, H, N, D)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    args = (q, k, v, o)
    if host:
        args = [TensorDescriptor(t, [Z * H * N, D], [D, 1], [1, 1]) for t in args]
        for d, bm in zip(args, (BM, BN, BN, BM)):
            d.block_shape = [bm, D]
    attn_like[(N // BM, Z * H)](*args, Z, H, N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN)
    s = (q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2)).astype(np.float16)
    np.testing.assert_array_equal(o, (s.astype(np.float64) @ v).astype(np.float16))


@tilejit.jit
def gather_scatter(x_ptr, y_ptr, idx_ptr, out_ptr, M, N, R: tl.constexpr, BN: tl.constexpr):
    """Rows idx (some out of range) of x, columns [c, c + BN): gathered, doubled and
    scattered into the same rows of y."""
    xd = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [1, BN])
    yd = tl.make_tensor_descriptor(y_ptr, [M, N], [N, 1], [1, BN])
    rows = tl.load(idx_ptr + tl.arange(0, R))
    c = tl.program_id(0) * BN
    v = xd.gather(rows, c)
    yd.scatter(v * 2 + 1, rows, c)
    od = tl.make_tensor_descriptor(out_ptr, [R, 2 * BN], [2 * BN, 1], [R, BN])
    od.store([0, c], v)


def test_gather_scatter(backend, rng):
    M, N, R, BN = 20, 13, 8, 8
    x = rng.standard_normal((M, N)).astype(np.float32)
    idx = np.array([3, 0, 19, 7, 20, -1, 11, 5], np.int32)     # 20 and -1: out of bounds
    y = np.zeros((M, N), np.float32)
    out = np.full((R, 2 * BN), 7, np.float32)
    gather_scatter[(2,)](x, y, idx, out, M, N, R=R, BN=BN)
    xpad = np.zeros((M + 2, 2 * BN), np.float32)      # rows 20 and -1 (the last) read 0
    xpad[:M, :N] = x
    np.testing.assert_array_equal(out, xpad[idx])
    want = np.zeros((M, N), np.float32)
    ok = idx[(idx >= 0) & (idx < M)]
    want[ok] = x[ok] * 2 + 1
    np.testing.assert_array_equal(y, want)


# ------------------------------------------------------------------ tutorial 09's shape
def _tma_hook(nargs):
    BM, BN, BK = nargs["BM"], nargs["BN"], nargs["BK"]
    nargs["a_desc"].block_shape = [BM, BK]
    nargs["b_desc"].block_shape = [BN, BK]
    nargs["c_desc"].block_shape = [BM, BN // 2] if nargs["SUBTILE"] else [BM, BN]


@tilejit.autotune(configs=[tilejit.Config({"BM": 16, "BN": 16, "BK": 16}, pre_hook=_tma_hook),
                           tilejit.Config({"BM": 32, "BN": 16, "BK": 32}, pre_hook=_tma_hook)],
                  key=["M", "N", "K"])
@tilejit.jit
def persistent_tma(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, SUBTILE: tl.constexpr, NUM_PROGS: tl.constexpr):
    """B given as (N, K) and loaded transposed; the epilogue split into two half tiles."""
    dtype = c_desc.dtype
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * tiles_n
    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_PROGS, flatten=True):
        om, on = (tile_id // tiles_n) * BM, (tile_id % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            a = a_desc.load([om, ki * BK])
            b = b_desc.load([on, ki * BK])
            acc = tl.dot(a, b.T, acc)
        if SUBTILE:
            acc = tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1))
            c0, c1 = tl.split(acc)
            c_desc.store([om, on], c0.to(dtype))
            c_desc.store([om, on + BN // 2], c1.to(dtype))
        else:
            c_desc.store([om, on], acc.to(dtype))


@pytest.mark.parametrize("subtile", [False, True])
def test_persistent_matmul_host_descriptors(backend, rng, subtile):
    M, N, K = 40, 48, 36
    a = rng.integers(-3, 4, (M, K)).astype(np.float16)
    b = rng.integers(-3, 4, (N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    dummy = [1, 1]
    descs = [TensorDescriptor.from_tensor(t, dummy) for t in (a, b, c)]
    persistent_tma[(3,)](*descs, M, N, K, SUBTILE=subtile, NUM_PROGS=3)
    np.testing.assert_array_equal(c, (a.astype(np.float64) @ b.T).astype(np.float16))
