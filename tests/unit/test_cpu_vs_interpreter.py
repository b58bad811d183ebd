"""CPU backend vs the reference interpreter on hand-built IR: bit-exact for integer
and memory-movement kernels."""
import numpy as np
import pytest

from tilejit.backends import Buffer, LaunchArgs, get_backend
from tilejit.backends.cpu.irgen import KB
from tilejit.ir import ops
from tilejit.ir.types import (float32, float16, int8, int32, int64, uint8, uint32, int1,
                              dtype_from_numpy)
from tilejit.runtime.options import get_options


def run(backend, f, grid, arrays, scalars):
    arrays = [a.copy() for a in arrays]
    bufs = [Buffer(f"a{i}", a.ctypes.data, a.nbytes, a.itemsize) for i, a in enumerate(arrays)]
    values = [a.ctypes.data for a in arrays] + list(scalars)
    k = get_backend(backend).compile(f, get_options())
    k.launch(tuple(grid) + (1,) * (3 - len(grid)), LaunchArgs(values, bufs, arrays))
    return arrays


def both(f, grid, arrays, scalars=()):
    ref = run("interpreter", f, grid, arrays, scalars)
    got = run("cpu", f, grid, arrays, scalars)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g, r)
    return got


def _binary_kernel(cls, dt, block=64):
    k = KB(f"bin_{cls.__name__}_{dt}")
    x, y, o = k.ptr_arg("x", dt), k.ptr_arg("y", dt), k.ptr_arg("o", dt)
    offs = k.arange(block)
    k.store(k.addptr(o, offs), k.bin(cls, k.load(k.addptr(x, offs)), k.load(k.addptr(y, offs))))
    return k.done()


INT_OPS = [ops.AddOp, ops.SubOp, ops.MulOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp,
           ops.XorOp, ops.MinOp, ops.MaxOp, ops.UmulhiOp]


@pytest.mark.parametrize("cls", INT_OPS, ids=lambda c: c.name)
@pytest.mark.parametrize("npdt", [np.int32, np.uint32, np.int8, np.int64])
def test_int_binary_bit_exact(cls, npdt):
    rng = np.random.default_rng(3)
    info = np.iinfo(npdt)
    x = rng.integers(info.min, info.max, 64, dtype=npdt, endpoint=True)
    y = rng.integers(info.min, info.max, 64, dtype=npdt, endpoint=True)
    x[:4] = [info.min, -7 if info.min else 7, 7, info.max]
    y[:4] = [-1 if info.min else 3, 2, -2 if info.min else 5, 1]
    y[y == 0] = 1
    o = np.zeros(64, npdt)
    both(_binary_kernel(cls, dtype_from_numpy(npdt)), (1,), [x, y, o])


@pytest.mark.parametrize("npdt", [np.int32, np.uint32])
def test_shifts(npdt):
    dt = dtype_from_numpy(npdt)
    x = np.array([-(2**31) if npdt == np.int32 else 2**31, -5 % 2**32 if npdt == np.uint32 else -5] * 32, npdt)
    y = np.tile(np.arange(32, dtype=npdt), 2)
    for cls in (ops.ShlOp, ops.ShrOp):
        both(_binary_kernel(cls, dt), (1,), [x, y, np.zeros(64, npdt)])


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float32, np.uint8), (np.int32, np.int8),
                                     (np.int8, np.int64), (np.uint8, np.int32), (np.int32, np.float32),
                                     (np.float32, np.float16), (np.float32, np.bool_), (np.uint32, np.float32),
                                     (np.int32, np.bool_), (np.bool_, np.float32)])
def test_casts(src, dst):
    sdt, ddt = dtype_from_numpy(src), dtype_from_numpy(dst)
    k = KB("cast")
    x, o = k.ptr_arg("x", sdt), k.ptr_arg("o", ddt)
    offs = k.arange(64)
    k.store(k.addptr(o, offs), k.cast(k.load(k.addptr(x, offs)), ddt))
    rng = np.random.default_rng(4)
    if src == np.float32:
        xs = (rng.standard_normal(64) * 100).astype(np.float32)
        if dst == np.uint8:
            xs = np.abs(xs) % 250
        xs[:3] = [0.0, -0.0, 0.5]
    elif src == np.bool_:
        xs = rng.integers(0, 2, 64).astype(bool)
    else:
        xs = rng.integers(np.iinfo(src).min, np.iinfo(src).max, 64, dtype=src)
    both(k.done(), (1,), [xs.astype(src), np.zeros(64, dst)])


@pytest.mark.parametrize("kind", ["sum", "max", "min", "argmax", "argmin", "xor_sum"])
@pytest.mark.parametrize("axis", [0, 1])
def test_reductions_2d_int(kind, axis):
    R, C = 8, 32
    k = KB("red")
    x, o = k.ptr_arg("x", int32), k.ptr_arg("o", int32)
    offs = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(k.arange(R), 1), k.c(C, int32)), k.expand(k.arange(C), 0))
    r = k.reduce(k.load(k.addptr(x, offs)), kind, axis)
    k.store(k.addptr(o, k.arange(C if axis == 0 else R)), r)
    x = np.random.default_rng(5).integers(-1000, 1000, (R, C)).astype(np.int32)
    both(k.done(), (1,), [x, np.zeros(C if axis == 0 else R, np.int32)])


@pytest.mark.parametrize("kind", ["sum", "max", "min", "argmax"])
def test_reduce_float_to_scalar(kind):
    k = KB("redf")
    x, o = k.ptr_arg("x", float32), k.ptr_arg("o", float32 if kind != "argmax" else int32)
    n = k.arg("n", int32)
    offs = k.arange(256)
    mask = k.cmp("lt", offs, n)
    other = k.c(0.0 if kind == "sum" else float("nan"), float32, (256,))
    r = k.reduce(k.load(k.addptr(x, offs), mask, other), kind, 0)
    k.store(o, r)
    x = np.random.default_rng(6).standard_normal(200).astype(np.float32)
    res = run("cpu", k.done(), (1,), [x, np.zeros(1, np.float32 if kind != "argmax" else np.int32)], [200])[1]
    ref = {"sum": x.astype(np.float64).sum(), "max": x.max(), "min": x.min(), "argmax": x.argmax()}[kind]
    np.testing.assert_allclose(res[0], ref, rtol=1e-5)


def test_trans_and_broadcast():
    R, C = 16, 8
    k = KB("trans")
    x, o = k.ptr_arg("x", float32), k.ptr_arg("o", float32)
    offs = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(k.arange(R), 1), k.c(C, int32)), k.expand(k.arange(C), 0))
    t = k.op(ops.TransOp, src=k.load(k.addptr(x, offs)), perm=(1, 0))          # (C, R)
    ooffs = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(k.arange(C), 1), k.c(R, int32)), k.expand(k.arange(R), 0))
    row = k.load(k.addptr(x, k.expand(k.arange(R), 0)))                        # (1, R) broadcast
    k.store(k.addptr(o, ooffs), k.bin(ops.AddOp, t, row))
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    both(k.done(), (1,), [x, np.zeros((C, R), np.float32)])


def test_masked_off_lanes_touch_no_memory():
    k = KB("oob")
    x, o, n = k.ptr_arg("x", int32), k.ptr_arg("o", int32), k.arg("n", int32)
    offs = k.bin(ops.MulOp, k.arange(64), k.c(1 << 20, int32))      # far out of bounds
    mask = k.cmp("lt", k.arange(64), n)
    v = k.load(k.addptr(x, offs), mask, k.c(-1, int32, (64,)))
    k.store(k.addptr(o, offs), v, mask)
    k.store(k.addptr(o, k.bin(ops.AddOp, k.arange(64), k.c(1, int32))), v,
            k.cmp("lt", k.arange(64), k.c(3, int32)))
    x = np.arange(8, dtype=np.int32)
    out = both(k.done(), (1,), [x, np.zeros(8, np.int32)], [1])[1]
    assert out.tolist() == [0, 0, -1, -1, 0, 0, 0, 0]


def test_scatter_741():
    """The Triton #741 kernel: a scattered store must not be vectorised as contiguous."""
    B = 1024
    k = KB("k741")
    i0, i1, out, xnumel = k.ptr_arg("in0", int64), k.ptr_arg("in1", float32), k.ptr_arg("out", float32), k.arg("xnumel", int32)
    xnumel = k.c(2000, int32)            # reassigned inside the kernel
    xindex = k.bin(ops.AddOp, k.bin(ops.MulOp, k.pid(), k.c(B, int32)), k.arange(B))
    xmask = k.cmp("lt", xindex, xnumel)
    x0 = k.bin(ops.RemOp, xindex, k.c(1000, int32))
    x1 = k.bin(ops.IDivOp, xindex, k.c(1000, int32))
    t0 = k.load(k.addptr(i0, xindex), xmask)
    t1 = k.load(k.addptr(i1, xindex), xmask)
    off = k.bin(ops.AddOp, k.bin(ops.AddOp, k.cast(x0, int64), k.bin(ops.MulOp, k.c(1000, int64), t0)),
                k.cast(k.bin(ops.MulOp, k.c(196000, int32), x1), int64))
    k.store(k.addptr(out, off), t1, xmask)
    rng = np.random.default_rng(7)
    a = rng.integers(0, 196, 2000).astype(np.int64)
    b = rng.standard_normal(2000).astype(np.float32)
    res = both(k.done(), (2,), [a, b, np.zeros(2 * 196 * 1000, np.float32)], [2000])[2]
    ref = np.zeros((2, 196, 1000), np.float32)
    idx = np.arange(2000)
    ref[idx // 1000, a, idx % 1000] = b
    np.testing.assert_array_equal(res.reshape(2, 196, 1000), ref)


@pytest.mark.parametrize("cls", [ops.AddOp, ops.MulOp, ops.TrueDivOp, ops.MaxOp])
def test_bf16_arith_stored_as_16_bits(cls):
    from tilejit.ir.types import bfloat16
    k = KB("bf16")
    x, y, o, o32 = k.ptr_arg("x", bfloat16), k.ptr_arg("y", bfloat16), k.ptr_arg("o", bfloat16), k.ptr_arg("o32", float32)
    offs = k.arange(64)
    r = k.bin(cls, k.load(k.addptr(x, offs)), k.load(k.addptr(y, offs)))
    k.store(k.addptr(o, offs), r)
    k.store(k.addptr(o32, offs), k.cast(r, float32))
    rng = np.random.default_rng(9)
    f = rng.standard_normal(128).astype(np.float32)
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)          # exact bf16 values
    xs, ys = bits[:64].copy(), bits[64:].copy()
    out = both(k.done(), (1,), [xs, ys, np.zeros(64, np.uint16), np.zeros(64, np.float32)])
    xf = (xs.astype(np.uint32) << 16).view(np.float32)
    yf = (ys.astype(np.uint32) << 16).view(np.float32)
    ref = {ops.AddOp: xf + yf, ops.MulOp: xf * yf, ops.TrueDivOp: xf / yf, ops.MaxOp: np.fmax(xf, yf)}[cls]
    np.testing.assert_allclose(out[3], ref, rtol=2 ** -8)


def test_int8_dot_accumulates_in_int32():
    M, N, K = 8, 16, 32
    k = KB("idot")
    pa, pb, pc = k.ptr_arg("a", int8), k.ptr_arg("b", int8), k.ptr_arg("c", int32)

    def grid2(rows, cols):
        return k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(k.arange(rows), 1), k.c(cols, int32)),
                     k.expand(k.arange(cols), 0))
    d = k.op(ops.DotOp, a=k.load(k.addptr(pa, grid2(M, K))), b=k.load(k.addptr(pb, grid2(K, N))),
             acc=k.c(0, int32, (M, N)))
    k.store(k.addptr(pc, grid2(M, N)), d)
    rng = np.random.default_rng(10)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = both(k.done(), (1,), [a, b, np.zeros((M, N), np.int32)])[2]
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("R,C", [(1, 256), (3, 64), (5, 48), (2, 24), (4, 8), (6, 12)])
def test_float_extremum_last_axis_partials(kind, R, C):
    """max/min along the last axis (lowered with per-lane partial extrema when C
    allows): NaN anywhere is skipped, an all-NaN row stays NaN, +-inf and a masked
    tail whose ``other`` is NaN; the same bits as the interpreter."""
    k = KB(f"ext_{kind}_{R}_{C}")
    x, o, n = k.ptr_arg("x", float32), k.ptr_arg("o", float32), k.arg("n", int32)
    cols = k.expand(k.arange(C), 0)
    offs = k.bin(ops.AddOp, k.bin(ops.MulOp, k.expand(k.arange(R), 1), k.c(C, int32)), cols)
    mask = k.cmp("lt", cols, n)
    v = k.load(k.addptr(x, offs), mask, k.c(float("nan"), float32, (R, C)))
    k.store(k.addptr(o, k.arange(R)), k.reduce(v, kind, 1))
    rng = np.random.default_rng(R * 100 + C)
    xs = rng.standard_normal((R, C)).astype(np.float32)
    xs[0, rng.integers(0, C, 3)] = np.nan
    xs[-1, :] = np.nan                      # all NaN (when R > 1: the last row)
    if R > 2:
        xs[1, C - 1] = np.inf if kind == "max" else -np.inf
        xs[1, 0] = -np.inf if kind == "max" else np.inf
    f = k.done()
    for n_valid in sorted({C, max(1, C - 3)}):
        both(f, (1,), [xs, np.zeros(R, np.float32)], [n_valid])
