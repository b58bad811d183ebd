"""Semantics of the language, run end to end on the reference interpreter and
checked against numpy models of Triton's rules."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tilejit
import tilejit.language as tl
from tilejit.runtime.options import use_options


def run(kernel, grid, *args, **meta):
    with use_options(backend="interpreter", interpret=True):
        kernel[grid](*args, **meta)


def c_div(a, b):
    """C (truncating) integer division on numpy ints, computed in Python ints."""
    q = [abs(int(x)) // abs(int(y)) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a, b)]
    return np.array(q, dtype=np.int64)


# ---------------------------------------------------------------- integer // and %
@tilejit.jit
def divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.store(q_ptr + offs, a // b, mask=m)
    tl.store(r_ptr + offs, a % b, mask=m)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1)
                          .filter(lambda v: v != 0)), min_size=1, max_size=40))
def test_int_divmod_truncates_toward_zero(pairs):
    pairs = [(a, b) for a, b in pairs if not (a == -2**31 and b == -1)] or [(7, -2)]
    a = np.array([p[0] for p in pairs], dtype=np.int32)
    b = np.array([p[1] for p in pairs], dtype=np.int32)
    q, r = np.empty_like(a), np.empty_like(a)
    run(divmod_kernel, (tilejit.cdiv(a.size, 16),), a, b, q, r, a.size, BLOCK=16)
    expect_q = c_div(a, b)
    np.testing.assert_array_equal(q, expect_q.astype(np.int32))
    np.testing.assert_array_equal(r, (a.astype(np.int64) - b * expect_q).astype(np.int32))


def test_divmod_negative_examples():
    a = np.array([-7, 7, -7, 7, -1, 0], dtype=np.int32)
    b = np.array([2, -2, -2, 2, 3, -5], dtype=np.int32)
    q, r = np.empty_like(a), np.empty_like(a)
    run(divmod_kernel, (1,), a, b, q, r, a.size, BLOCK=8)
    assert q.tolist() == [-3, -3, 3, 3, 0, 0]
    assert r.tolist() == [-1, 1, -1, 1, -1, 0]


# ---------------------------------------------------------------- mixed widths
@tilejit.jit
def mixed_kernel(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)          # int64
    b = tl.load(b_ptr + offs)          # int32
    c = a * 3 + b * 1000000            # b * 1000000 wraps in int32, then adds as int64
    tl.store(out_ptr + offs, c)


def test_int64_int32_promotion_is_int64():
    a = np.arange(8, dtype=np.int64) * (2**40)
    b = np.arange(8, dtype=np.int32) * 5000
    out = np.empty(8, dtype=np.int64)
    run(mixed_kernel, (1,), a, b, out, BLOCK=8)
    wrapped = ((b.astype(np.int64) * 1000000 + 2**31) % 2**32 - 2**31)
    assert (wrapped != b.astype(np.int64) * 1000000).any()
    np.testing.assert_array_equal(out, a * 3 + wrapped)


@tilejit.jit
def wrap_kernel(a_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    tl.store(out_ptr + offs, a * 65536 + 2147483647)


def test_int32_wraps_around():
    a = np.array([1, 2, 40000, -40000, 0, 3, 32768, 65535], dtype=np.int32)
    out = np.empty_like(a)
    run(wrap_kernel, (1,), a, out, BLOCK=8)
    expect = ((a.astype(np.int64) * 65536 + 2147483647 + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(out, expect)


@tilejit.jit
def shift_cmp_kernel(a_ptr, u_ptr, s_ptr, lt_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)          # int32
    u = tl.load(u_ptr + offs)          # uint32
    tl.store(s_ptr + offs, (a >> 3) + (a << 2))
    tl.store(lt_ptr + offs, a < u)     # int32 vs uint32 compares as uint32


def test_shifts_and_mixed_signedness_compare():
    a = np.array([-64, -1, 5, 1 << 20, -(1 << 20), 7, 0, -9], dtype=np.int32)
    u = np.array([1, 3, 10, 2, 4294967295, 7, 0, 100], dtype=np.uint32)
    s = np.empty_like(a)
    lt = np.empty(8, dtype=np.bool_)
    run(shift_cmp_kernel, (1,), a, u, s, lt, BLOCK=8)
    expect = ((a.astype(np.int64) >> 3) + ((a.astype(np.int64) << 2) % 2**32)).astype(np.int64)
    expect = ((expect + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(s, expect)
    np.testing.assert_array_equal(lt, a.view(np.uint32) < u)


# ---------------------------------------------------------------- floats
@tilejit.jit
def float_kernel(x_ptr, i_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)          # fp16
    i = tl.load(i_ptr + offs)          # int32
    y = x * 2 + 1                      # stays fp16
    z = i / 4                          # int / int -> fp32
    w = x / 2                          # fp16 / scalar -> fp32
    tl.store(o_ptr + offs, y.to(tl.float32) + z + w + tl.sigmoid(x) + (x % 0.75).to(tl.float32))


def test_float_promotion_values():
    x = np.linspace(-2, 2, 8).astype(np.float16)
    i = np.arange(-4, 4, dtype=np.int32)
    o = np.empty(8, dtype=np.float32)
    run(float_kernel, (1,), x, i, o, BLOCK=8)
    y = (x * np.float16(2) + np.float16(1)).astype(np.float32)
    z = i.astype(np.float32) / np.float32(4)
    w = x.astype(np.float32) / np.float32(2)
    sig = 1 / (1 + np.exp(-x.astype(np.float32)))
    rem = np.fmod(x, np.float16(0.75)).astype(np.float32)
    np.testing.assert_allclose(o, y + z + w + sig + rem, rtol=2e-3, atol=2e-3)


# ---------------------------------------------------------------- shapes, reductions
@tilejit.jit
def reduce_kernel(x_ptr, s0_ptr, s1_ptr, mx_ptr, am_ptr, tot_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(s0_ptr + tl.arange(0, N), tl.sum(x, axis=0))
    tl.store(s1_ptr + tl.arange(0, M), x.sum(1))
    tl.store(mx_ptr + tl.arange(0, M), tl.max(x, axis=1))
    tl.store(am_ptr + tl.arange(0, M), tl.argmax(x, axis=1))
    total = tl.sum(x)
    kept = tl.min(x, axis=1, keep_dims=True)
    tl.store(tot_ptr + rows + tl.arange(0, 1)[None, :], kept + total)


def test_reductions():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    s0, s1 = np.empty(8, np.float32), np.empty(4, np.float32)
    mx, am = np.empty(4, np.float32), np.empty(4, np.int32)
    tot = np.empty((4, 1), np.float32)
    run(reduce_kernel, (1,), x, s0, s1, mx, am, tot, M=4, N=8)
    np.testing.assert_allclose(s0, x.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s1, x.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mx, x.max(1))
    np.testing.assert_array_equal(am, x.argmax(1))
    np.testing.assert_allclose(tot, x.min(1, keepdims=True) + x.sum(), rtol=1e-5, atol=1e-5)


@tilejit.jit
def int8_sum_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr, tl.sum(x, axis=0))


def test_int8_sum_accumulates_in_int32():
    x = np.full(64, 100, dtype=np.int8)
    out = np.zeros(1, dtype=np.int32)
    run(int8_sum_kernel, (1,), x, out, N=64)
    assert out[0] == 6400


@tilejit.jit
def shape_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    c = tl.arange(0, N)
    x = tl.load(x_ptr + tl.expand_dims(r, 1) * N + c[None, :])       # (M, N)
    t = tl.trans(x)                                                   # (N, M)
    flat = tl.reshape(t, [N * M])
    b = tl.broadcast_to(tl.reshape(flat, (N, M)).T, (M, N))
    tl.store(o_ptr + r[:, None] * N + c[None, :], tl.where(b > 0, b, -b) + x.T.T * 0)


def test_shape_ops_roundtrip():
    x = np.arange(-16, 16, dtype=np.float32).reshape(4, 8)
    o = np.empty_like(x)
    run(shape_kernel, (1,), x, o, M=4, N=8)
    np.testing.assert_array_equal(o, np.abs(x))


@tilejit.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.zeros((M, N), dtype=tl.float32)
    acc += tl.dot(a, b)
    acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_dot(dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 32)).astype(dtype)
    b = rng.standard_normal((32, 16)).astype(dtype)
    c = np.empty((16, 16), np.float32)
    run(dot_kernel, (1,), a, b, c, M=16, N=16, K=32)
    np.testing.assert_allclose(c, 2 * (a.astype(np.float64) @ b.astype(np.float64)), rtol=2e-2, atol=2e-2)


# ---------------------------------------------------------------- control flow
@tilejit.jit
def clamp_helper(x, lo):
    if x < lo:
        return lo
    return x


@tilejit.jit
def control_kernel(out_ptr, n, k):
    acc = 0
    total = 0.0
    for i in range(0, n):
        acc += i * 2
        if i % 3 == 0:
            total = total + 1.5
    j = 1
    while j < k:
        j = j * 2
    m = clamp_helper(n - 10, 0)
    s = 0
    for t in tl.static_range(1, 4):
        s += t
    if n > 100:
        z = 1
    else:
        z = 2
    tl.store(out_ptr + 0, acc)
    tl.store(out_ptr + 1, total.to(tl.int32))
    tl.store(out_ptr + 2, j)
    tl.store(out_ptr + 3, m)
    tl.store(out_ptr + 4, s + z)


@pytest.mark.parametrize("n,k", [(0, 1), (7, 5), (12, 100), (200, 3)])
def test_control_flow(n, k):
    out = np.zeros(5, np.int32)
    run(control_kernel, (1,), out, n, k)
    j = 1
    while j < k:
        j *= 2
    expect = [sum(2 * i for i in range(n)), int(sum(1.5 for i in range(n) if i % 3 == 0)), j,
              max(n - 10, 0), 6 + (1 if n > 100 else 2)]
    assert out.tolist() == expect


@tilejit.jit
def early_exit_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs, mask=offs < n)


def test_early_return_in_kernel():
    out = np.full(40, -1, np.int32)
    run(early_exit_kernel, (8,), out, 20, BLOCK=8)
    assert out[:20].tolist() == list(range(20)) and (out[20:] == -1).all()


# ---------------------------------------------------------------- #741
@tilejit.jit
def k741_reassigned(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 2000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000 * tmp0) + (196000 * x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


@tilejit.jit
def k741_plain(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000 * tmp0) + (196000 * x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


@pytest.mark.parametrize("kernel", [k741_reassigned, k741_plain])
@pytest.mark.parametrize("block", [64, 1024])
def test_issue_741_bit_exact(kernel, block):
    rng = np.random.default_rng(block)
    idx = rng.integers(0, 196, 2000).astype(np.int64)
    idx[::7] = np.arange(2000)[::7] % 196
    vals = rng.standard_normal(2000).astype(np.float32)
    out = np.zeros(2 * 196 * 1000, np.float32)
    run(kernel, (tilejit.cdiv(2000, block),), idx, vals, out, 2000, XBLOCK=block)
    expect = np.zeros_like(out)
    i = np.arange(2000)
    expect[i % 1000 + 1000 * idx + 196000 * (i // 1000)] = vals
    np.testing.assert_array_equal(out, expect)


# ---------------------------------------------------------------- random
def philox_reference(seed, offsets, rounds=10):
    """Philox-4x32 in numpy (counters: offset, 0, 0, 0; key: seed lo/hi)."""
    mask = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.int64).astype(np.uint64) & mask
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    seed = np.uint64(seed & 0xFFFFFFFFFFFFFFFF)
    k0 = np.full_like(c0, seed & mask)
    k1 = np.full_like(c0, seed >> np.uint64(32))
    A, B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(rounds):
        p0, p2 = A * c0, B * c2              # exact: < 2**64
        c0, c2, c1, c3 = ((p2 >> np.uint64(32)) ^ c1 ^ k0, (p0 >> np.uint64(32)) ^ c3 ^ k1,
                          p2 & mask, p0 & mask)
        k0 = (k0 + np.uint64(0x9E3779B9)) & mask
        k1 = (k1 + np.uint64(0xBB67AE85)) & mask
    return c0.astype(np.uint32)


@tilejit.jit
def rand_kernel(ri_ptr, rf_ptr, rn_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ri_ptr + offs, tl.randint(seed, offs))
    tl.store(rf_ptr + offs, tl.rand(seed, offs))
    tl.store(rn_ptr + offs, tl.randn(seed, offs))


@pytest.mark.parametrize("seed", [0, 42, 123456789])
def test_random_matches_philox_reference(seed):
    ri = np.empty(128, np.uint32)
    rf = np.empty(128, np.float32)
    rn = np.empty(128, np.float32)
    run(rand_kernel, (1,), ri, rf, rn, seed, BLOCK=128)
    ref = philox_reference(seed, np.arange(128))
    np.testing.assert_array_equal(ri, ref)
    x = ref.view(np.int32)
    x = np.where(x < 0, -x - 1, x)
    np.testing.assert_array_equal(rf, x.astype(np.float32) * np.float32(4.6566127342e-10))
    assert (rf >= 0).all() and (rf < 1).all()
    assert abs(rn.mean()) < 0.35 and 0.6 < rn.std() < 1.4
    ri2 = np.empty(128, np.uint32)
    run(rand_kernel, (1,), ri2, rf, rn, seed, BLOCK=128)
    np.testing.assert_array_equal(ri, ri2)


# ---------------------------------------------------------------- libdevice, NaN handling, swizzle
from tilejit.language.extra import libdevice  # noqa: E402


@tilejit.jit
def libdevice_kernel(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = libdevice.trunc(x) + tl.extra.cuda.libdevice.tanh(x) + libdevice.isnan(x).to(tl.float32) * 100
    lo = tl.minimum(x, 0.5)
    hi = tl.maximum(x, -0.5, propagate_nan=tl.PropagateNan.ALL)
    tl.store(o_ptr + offs, y)
    tl.store(o_ptr + BLOCK + offs, lo)
    tl.store(o_ptr + 2 * BLOCK + offs, hi)
    tl.store(o_ptr + 3 * BLOCK + offs, tl.clamp(x, -1.0, 1.0))


def test_libdevice_and_nan_propagation():
    x = np.array([-2.5, -0.25, 0.0, 0.75, 3.5, np.nan, -7.0, 1.5], dtype=np.float32)
    o = np.empty(32, np.float32)
    run(libdevice_kernel, (1,), x, o, BLOCK=8)
    with np.errstate(invalid="ignore"):
        want = np.trunc(x) + np.tanh(x) + np.isnan(x) * 100
    np.testing.assert_allclose(o[:8][~np.isnan(x)], want[~np.isnan(x)], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o[8:16], np.fmin(x, np.float32(0.5)))       # NaN -> other operand
    np.testing.assert_array_equal(o[16:24], np.maximum(x, np.float32(-0.5)))  # NaN propagates
    np.testing.assert_array_equal(o[24:32], np.fmin(np.fmax(x, -1), 1))


@tilejit.jit
def swizzle_kernel(o_ptr, N: tl.constexpr, G: tl.constexpr):
    i = tl.arange(0, N)[:, None] + tl.zeros([N, N], tl.int32)
    j = tl.arange(0, N)[None, :] + tl.zeros([N, N], tl.int32)
    ni, nj = tl.swizzle2d(i, j, N, N, G)
    tl.store(o_ptr + ni * N + nj, i * N + j)


def test_swizzle2d():
    o = np.empty((4, 4), np.int32)
    run(swizzle_kernel, (1,), o, N=4, G=2)
    assert o.tolist() == [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]


@tilejit.jit
def _add_combine(a, b):
    return a + b


@tilejit.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@tilejit.jit
def custom_reduce_kernel(x_ptr, o_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(o_ptr, tl.reduce(x, 0, _add_combine))
    tl.store(o_ptr + 1, x.reduce(0, _max_combine))


def test_reduce_with_combine_function():
    x = np.arange(16, dtype=np.float32) - 3
    o = np.empty(2, np.float32)
    run(custom_reduce_kernel, (1,), x, o, N=16)
    assert o.tolist() == [x.sum(), x.max()]


@tilejit.jit
def join_split_kernel(a_ptr, b_ptr, j_ptr, s_ptr, i_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r)
    b = tl.load(b_ptr + r)
    j = tl.join(a, b)                                          # (N, 2)
    tl.store(j_ptr + r[:, None] * 2 + tl.arange(0, 2)[None, :], j)
    x, y = j.split()
    tl.store(s_ptr + r, x)
    tl.store(s_ptr + N + r, y)
    tl.store(i_ptr + tl.arange(0, 2 * N), tl.interleave(a, b))
    tl.store(c_ptr + tl.arange(0, 2 * N), tl.cat(a, b, can_reorder=True))


def test_join_split_interleave_cat_are_exact():
    a = np.array([-0.0, np.nan, np.inf, -1.5, 2.0, 3.0, -np.inf, 1e-40], np.float32)
    b = np.arange(8, dtype=np.float32) + 0.5
    j, s, i, c = np.empty((8, 2), np.float32), np.empty(16, np.float32), np.empty(16, np.float32), \
        np.empty(16, np.float32)
    run(join_split_kernel, (1,), a, b, j, s, i, c, N=8)
    stacked = np.stack([a, b], axis=-1)
    np.testing.assert_array_equal(j.view(np.int32), stacked.view(np.int32))
    np.testing.assert_array_equal(s.view(np.int32), np.concatenate([a, b]).view(np.int32))
    np.testing.assert_array_equal(i.view(np.int32), stacked.reshape(-1).view(np.int32))
    np.testing.assert_array_equal(c.view(np.int32), np.concatenate([a, b]).view(np.int32))


@tilejit.jit
def flip_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r * N + c)
    tl.store(o_ptr + r * N + c, tl.flip(x))
    tl.store(o_ptr + M * N + r * N + c, tl.flip(x, 0))


def test_flip_is_exact():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    x[0, 0], x[1, 2], x[3, 7] = np.nan, -0.0, -np.inf
    o = np.empty((2, 4, 8), np.float32)
    run(flip_kernel, (1,), x, o, M=4, N=8)
    np.testing.assert_array_equal(o[0].view(np.int32), x[:, ::-1].view(np.int32))
    np.testing.assert_array_equal(o[1].view(np.int32), x[::-1, :].view(np.int32))


@tilejit.jit
def sort_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, DESC: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r * N + c)
    tl.store(o_ptr + r * N + c, tl.sort(x, descending=DESC))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("desc", [False, True])
def test_sort(dtype, desc):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 16)) * 100).astype(dtype)
    o = np.empty_like(x)
    run(sort_kernel, (1,), x, o, M=4, N=16, DESC=desc)
    want = np.sort(x, axis=1)
    np.testing.assert_array_equal(o, want[:, ::-1] if desc else want)


@tilejit.jit
def cumsum_kernel(x_ptr, i_ptr, o_ptr, oi_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r * N + c)
    i = tl.load(i_ptr + r * N + c)
    tl.store(o_ptr + r * N + c, tl.cumsum(x, axis=1))
    tl.store(oi_ptr + r * N + c, i.cumsum(0, reverse=True))


def test_cumsum():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    i = rng.integers(-100, 100, (4, 16)).astype(np.int8)
    o, oi = np.empty_like(x), np.empty((4, 16), np.int32)
    run(cumsum_kernel, (1,), x, i, o, oi, M=4, N=16)
    np.testing.assert_allclose(o, np.cumsum(x, axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(oi, np.cumsum(i[::-1].astype(np.int32), axis=0)[::-1])
