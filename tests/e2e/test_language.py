"""Control flow, reductions, broadcasting and masks, end to end against numpy."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def row_sums_loop(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """for with carried tile and scalar values: sum and count of positives per row."""
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = 0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        acc += v
        count += tl.sum((v > 0).to(tl.int32), axis=0)
    tl.store(out_ptr + 2 * row, tl.sum(acc, axis=0))
    tl.store(out_ptr + 2 * row + 1, count.to(tl.float32))


def test_for_with_carried_values(backend, rng):
    x = rng.standard_normal((6, 300)).astype(np.float32)
    out = np.zeros(12, np.float32)
    row_sums_loop[(6,)](x, out, 300, 300, BLOCK=64)
    np.testing.assert_allclose(out[0::2], x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(out[1::2], (x > 0).sum(1))


@tilejit.jit
def countdown(out_ptr, n):
    """A while loop on scalars and a descending range."""
    pid = tl.program_id(0)
    i = n + pid
    steps = 0
    while i > 1:
        if i % 2 == 0:
            i = i // 2
        else:
            i = 3 * i + 1
        steps += 1
    total = 0
    for j in range(pid, 0, -1):
        total += j
    tl.store(out_ptr + 2 * pid, steps)
    tl.store(out_ptr + 2 * pid + 1, total)


def _collatz(n):
    s = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        s += 1
    return s


def test_while_if_and_descending_for(backend):
    out = np.zeros(2 * 8, np.int32)
    countdown[(8,)](out, 20)
    assert out[0::2].tolist() == [_collatz(20 + p) for p in range(8)]
    assert out[1::2].tolist() == [p * (p + 1) // 2 for p in range(8)]


@tilejit.jit
def branchy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if pid % 2 == 0:
        y = x * 2.0
    else:
        y = x - 1.0
    tl.store(out_ptr + offs, y)


def test_if_on_program_id(backend, rng):
    x = rng.standard_normal(4 * 32).astype(np.float32)
    out = np.zeros_like(x)
    branchy[(4,)](x, out, BLOCK=32)
    want = x.reshape(4, 32).copy()
    want[0::2] *= 2
    want[1::2] -= 1
    np.testing.assert_array_equal(out, want.reshape(-1))


@tilejit.jit
def reduce2d(x_ptr, s0, s1, mx0, mn1, am1, an0, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(s0 + c, tl.sum(x, axis=0))
    tl.store(s1 + r, tl.sum(x, axis=1))
    tl.store(mx0 + c, tl.max(x, axis=0))
    tl.store(mn1 + r, tl.min(x, axis=1))
    tl.store(am1 + r, tl.argmax(x, axis=1))
    tl.store(an0 + c, tl.argmin(x, axis=0))


@pytest.mark.parametrize("R,C", [(8, 16), (32, 4), (1, 64)])
def test_reductions_and_argmax(backend, R, C, rng):
    x = rng.integers(-5, 6, size=(R, C)).astype(np.float32)   # small ints: ties, exact sums
    s0, mx0 = np.zeros(C, np.float32), np.zeros(C, np.float32)
    s1, mn1 = np.zeros(R, np.float32), np.zeros(R, np.float32)
    am1, an0 = np.zeros(R, np.int32), np.zeros(C, np.int32)
    reduce2d[(1,)](x, s0, s1, mx0, mn1, am1, an0, R=R, C=C)
    np.testing.assert_array_equal(s0, x.sum(0))
    np.testing.assert_array_equal(s1, x.sum(1))
    np.testing.assert_array_equal(mx0, x.max(0))
    np.testing.assert_array_equal(mn1, x.min(1))
    np.testing.assert_array_equal(am1, x.argmax(1))   # first index of the maximum
    np.testing.assert_array_equal(an0, x.argmin(0))


@tilejit.jit
def int_reduce(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.sum(x, axis=0))
    tl.store(out_ptr + 1, tl.max(x, axis=0))
    tl.store(out_ptr + 2, tl.xor_sum(x, axis=0))


def test_integer_reductions_wrap(backend, rng):
    x = rng.integers(-2**31, 2**31, size=256).astype(np.int32)
    out = np.zeros(3, np.int32)
    int_reduce[(1,)](x, out, BLOCK=256)
    assert out[0] == ((int(x.astype(np.int64).sum()) + 2**31) % 2**32) - 2**31   # wraps
    assert out[1] == x.max()
    assert out[2] == np.bitwise_xor.reduce(x)


@tilejit.jit
def outer(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M)
    j = tl.arange(0, N)
    a = tl.load(a_ptr + i)
    b = tl.load(b_ptr + j)
    o = a[:, None] * 10 + b[None, :] - 1.5
    tl.store(out_ptr + i[:, None] * N + j[None, :], o)


def test_broadcasting(backend, rng):
    a = rng.standard_normal(8).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    out = np.zeros((8, 16), np.float32)
    outer[(1,)](a, b, out, M=8, N=16)
    np.testing.assert_array_equal(out, (a[:, None] * np.float32(10) + b[None, :]) - np.float32(1.5))


@tilejit.jit
def masked_copy(x_ptr, out_ptr, n, other_val, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = (offs < n) & (offs % 3 != 0)
    v = tl.load(x_ptr + offs, mask=m, other=other_val)
    tl.store(out_ptr + offs, v)


def test_masks_with_other(backend):
    x = np.arange(50, dtype=np.float32)         # lanes >= 50 are masked off: never read
    out = np.zeros(64, np.float32)
    masked_copy[(2,)](x, out, 50, -1.0, BLOCK=32)
    want = np.where((np.arange(64) < 50) & (np.arange(64) % 3 != 0), np.arange(64), -1.0)
    np.testing.assert_array_equal(out, want)


@tilejit.jit
def mixed_types(x_ptr, h_ptr, i_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)                 # fp32
    h = tl.load(h_ptr + offs)                 # fp16
    i = tl.load(i_ptr + offs)                 # int64
    tl.store(out_ptr + offs, (x + h) * i + tl.exp(h.to(tl.float32)))


def test_float_promotion(backend, rng):
    x = rng.standard_normal(32).astype(np.float32)
    h = rng.standard_normal(32).astype(np.float16)
    i = rng.integers(-5, 5, 32).astype(np.int64)
    out = np.zeros(32, np.float32)
    mixed_types[(1,)](x, h, i, out, BLOCK=32)
    want = (x + h.astype(np.float32)) * i.astype(np.float32) + np.exp(h.astype(np.float32))
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=1e-6)


@tilejit.jit
def bf16_roundtrip(bits_ptr, f_ptr, out_f_ptr, out_bits_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    b = tl.load(bits_ptr + offs).to(tl.bfloat16, bitcast=True)
    tl.store(out_f_ptr + offs, b.to(tl.float32) * 2.0)
    f = tl.load(f_ptr + offs).to(tl.bfloat16)
    tl.store(out_bits_ptr + offs, f.to(tl.uint16, bitcast=True))


def _f32_to_bf16_bits(x):
    u = x.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_bfloat16_bits_and_rounding(backend, rng):
    bits = rng.integers(0, 2**16, 64).astype(np.uint16)
    bits[(bits & 0x7F80) == 0x7F80] = 0x3F80          # no inf/NaN patterns
    f = rng.standard_normal(64).astype(np.float32)
    f[:4] = [1.0 + 2**-8, 1.0 + 3 * 2**-8, -(1.0 + 2**-8), 0.0]   # ties round to even
    out_f = np.zeros(64, np.float32)
    out_bits = np.zeros(64, np.uint16)
    bf16_roundtrip[(1,)](bits, f, out_f, out_bits, BLOCK=64)
    np.testing.assert_array_equal(out_f, (bits.astype(np.uint32) << 16).view(np.float32) * 2)
    np.testing.assert_array_equal(out_bits, _f32_to_bf16_bits(f))


@tilejit.jit
def printer(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("x=", x)
    tl.device_assert(x < 100, "x must stay below 100")


def test_device_print_and_assert(backend, capsys):
    if backend != "interpreter":
        pytest.skip("native code prints outside pytest's capture")
    printer[(1,)](np.arange(4, dtype=np.int32), BLOCK=4)
    assert "x=" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="x must stay below 100") as ei:
        printer[(2,)](np.array([1, 2, 300, 4], np.int32), BLOCK=4)
    assert ei.value.program_id == (0, 0, 0)
    assert f"test_language.py:{printer.first_line + 4}" in str(ei.value)


@tilejit.jit
def grid3d(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    nz = tl.num_programs(2)
    lin = (z * ny + y) * nx + x
    tl.store(out_ptr + lin, x * 10000 + y * 100 + z + nx * nz * 1000000 * (ny == 3))


def test_3d_grid_and_num_programs(backend):
    out = np.zeros(2 * 3 * 4, np.int32)
    grid3d[(2, 3, 4)](out)
    want = [x * 10000 + y * 100 + z + 8 * 1000000
            for z in range(4) for y in range(3) for x in range(2)]
    assert out.tolist() == want
