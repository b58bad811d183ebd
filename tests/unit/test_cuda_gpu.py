"""GPU tier of the cuda backend: the CPU tier's kernels run on the GPU and must match
the reference interpreter (bit-exact for integer and memory-movement kernels).
Skipped where no CUDA GPU and driver are present (CI)."""
from __future__ import annotations

import numpy as np
import pytest

from tilejit.backends import Buffer, LaunchArgs, get_backend

import test_cuda_ptx as K

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not get_backend("cuda").is_available(), reason="no CUDA GPU")]

RNG = np.random.default_rng(741)


def _args(func, arrays):
    values, bufs = [], []
    for a, x in zip(func.arguments, arrays):
        if isinstance(x, np.ndarray):
            values.append(x.ctypes.data)
            bufs.append(Buffer(a.name, x.ctypes.data, x.nbytes, x.itemsize))
        else:
            values.append(x)
    return LaunchArgs(values, bufs, list(arrays))


def run_both(func, grid, arrays):
    """Run on the interpreter and on the GPU (numpy arrays staged); return both copies."""
    from tilejit.interpreter import run
    grid = tuple(grid) + (1,) * (3 - len(grid))
    ref = [x.copy() if isinstance(x, np.ndarray) else x for x in arrays]
    run(func, grid, _args(func, ref), None)
    got = [x.copy() if isinstance(x, np.ndarray) else x for x in arrays]
    get_backend("cuda").compile(func, None).launch(grid, _args(func, got))
    return ref, got


def _f32(*shape, lo=-3, hi=3):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def _cases():
    n = 5000
    in0 = (np.arange(2000) % 196).astype(np.int64)
    yield "copy", (-(-n // 1024),), [_f32(n), np.zeros(n, np.float32), n], 0
    yield "copy_small", (3,), [_f32(150), np.zeros(150, np.float32), 150], 0
    yield "copy_fp16", (3,), [_f32(5000).astype(np.float16), np.zeros(5000, np.float16), 5000], 0
    yield "add", (5,), [_f32(n), _f32(n), np.zeros(n, np.float32), n], 0
    for name in ("k741", "k741_arg"):
        yield name, (2,), [in0, np.arange(1, 2001, dtype=np.float32),
                           np.zeros(2 * 196 * 1000, np.float32), 2000], 0
    yield "softmax", (37,), [_f32(37, 1024), np.zeros((37, 1024), np.float32), 1024, 1000], 1e-5
    yield "softmax_4096", (8,), [_f32(8, 4096), np.zeros((8, 4096), np.float32), 4096, 4096], 1e-5
    yield "reduce_rows", (1,), [_f32(16, 64), np.zeros(16, np.float32)], 1e-5
    yield "reduce_cols", (1,), [_f32(16, 64), np.zeros(64, np.float32)], 1e-5
    x = RNG.integers(-5, 5, (16, 64)).astype(np.float32)
    yield "argmin_rows", (1,), [x, np.zeros(16, np.int32)], 0
    yield "max_i32", (1,), [RNG.integers(-2**31, 2**31, (16, 64)).astype(np.int32), np.zeros(16, np.int32)], 0
    xn = _f32(16, 64)
    xn[3, 5] = xn[7, :] = np.nan
    yield "max_rows", (1,), [xn, np.zeros(16, np.float32)], 0      # NaN ignored unless all NaN
    xa = RNG.integers(0, 7, 256).astype(np.float32)
    xa[[0, 9, 100]] = np.nan
    yield "argmax1d_nan", (1,), [xa, np.zeros(1, np.int32)], 0
    yield "argmax1d", (1,), [RNG.integers(0, 7, 256).astype(np.float32), np.zeros(1, np.int32)], 0
    yield "outer_trans", (1,), [_f32(32), _f32(16), np.zeros(512, np.float32)], 1e-6
    for dt, tol in (("fp16", 1e-3), ("fp32", 1e-4), ("bf16", 1e-2)):
        a, b = _f32(64, 64, lo=-1, hi=1), _f32(64, 64, lo=-1, hi=1)
        if dt == "fp16":
            a, b = a.astype(np.float16), b.astype(np.float16)
        if dt == "bf16":
            a, b = ((v.view(np.uint32) >> 16).astype(np.uint16) for v in (a, b))
        yield f"matmul_{dt}", (2, 2), [a, b, np.zeros((64, 64), np.float32), 64, 64, 64], tol
    a, b = _f32(256, 128, lo=-1, hi=1).astype(np.float16), _f32(128, 256, lo=-1, hi=1).astype(np.float16)
    yield "matmul_fp16_mma", (2, 2), [a, b, np.zeros((256, 256), np.float32), 256, 256, 128], 1e-3
    yield "control", (1,), [np.zeros(2, np.int32), 27], 0
    for fn in K.MATH_FNS:
        tol = 2e-3 if fn == "tanh" else 2e-5
        yield f"math_{fn}", (1,), [_f32(256, lo=0.05, hi=4), np.zeros(256, np.float32)], tol
    yield "math_exp_fp16", (1,), [_f32(256, lo=-2, hi=2).astype(np.float16), np.zeros(256, np.float16)], 2e-3
    yield "math_sqrt_fp64", (1,), [RNG.uniform(0, 9, 256), np.zeros(256)], 0
    for fn in ("sin", "cos", "exp", "log", "tanh"):    # fp64: 1-3 ulp (f64math.py)
        lo, hi = {"log": (1e-300, 1e300), "tanh": (-5, 5)}.get(fn, (-700, 700))
        yield f"math_{fn}_fp64", (1,), [RNG.uniform(lo, hi, 256), np.zeros(256)], 1e-15
    for c in K.INT_BINOPS:
        a = RNG.integers(-2**31, 2**31, 128).astype(np.int32)
        b = RNG.integers(1, 2**31, 128).astype(np.int32) * RNG.choice([-1, 1], 128).astype(np.int32)
        if c.__name__ == "ShrOp":
            b = RNG.integers(0, 32, 128).astype(np.int32)
        yield f"i32_{c.__name__}", (1,), [a, b, np.zeros(128, np.int32)], 0
    yield "u8_shr", (1,), [RNG.integers(0, 256, 128).astype(np.uint8), RNG.integers(0, 8, 128).astype(np.uint8),
                           np.zeros(128, np.uint8)], 0
    yield "fp32_rem", (1,), [_f32(128, lo=-50, hi=50), _f32(128, lo=0.5, hi=7), np.zeros(128, np.float32)], 0
    yield "i64_div", (1,), [RNG.integers(-2**62, 2**62, 128), RNG.integers(1, 2**40, 128), np.zeros(128, np.int64)], 0


CASES = {c[0]: c for c in _cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_interpreter(name):
    _, grid, arrays, tol = CASES[name]
    func = K.KERNELS[name.replace("_nan", "")]()
    ref, got = run_both(func, grid, arrays)
    for r, g in zip(ref, got):
        if not isinstance(r, np.ndarray):
            continue
        if tol == 0:
            np.testing.assert_array_equal(g, r)
        else:
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=tol, atol=tol)


def test_741_matches_torch_scatter():
    torch = pytest.importorskip("torch")
    in0 = torch.arange(2000, device="cuda", dtype=torch.int64) % 196
    in1 = torch.arange(1, 2001, device="cuda", dtype=torch.float32)
    out = torch.zeros(2 * 196 * 1000, device="cuda")
    func = K.k741()
    kern = get_backend("cuda").compile(func, None)
    args = LaunchArgs([in0.data_ptr(), in1.data_ptr(), out.data_ptr(), 2000], [], [in0, in1, out])
    kern.launch((2, 1, 1), args)
    ref = torch.zeros(2, 196, 1000, device="cuda")
    ref.scatter_(1, in0.reshape(2, 1, 1000), in1.reshape(2, 1, 1000))
    torch.cuda.synchronize()
    assert torch.equal(out.reshape(2, 196, 1000), ref)


def test_torch_tensors_launch_on_current_stream():
    torch = pytest.importorskip("torch")
    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    o = torch.empty_like(x)
    kern = get_backend("cuda").compile(K.add_kernel(), None)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        kern.launch((n // 1024, 1, 1), LaunchArgs([x.data_ptr(), y.data_ptr(), o.data_ptr(), n], [], [x, y, o]))
    s.synchronize()
    assert torch.equal(o, x + y)


def test_device_print(capfd):
    func = K.print_kernel()
    x = np.array([1, 2, 3, 42], np.int32)
    get_backend("cuda").compile(func, None).launch((2, 1, 1), _args(func, [x]))
    out = capfd.readouterr().out
    assert out.count(" x: ") == 8, out
    assert "pid (1, 0, 0) idx (3) x: 42" in out, out      # Triton's format
