"""fp32 erf, tanh, exp, exp2, log, log2 (inlined polynomials on the CPU backend,
backends/llvm/mathlib.py; the same erf/tanh/log code on CUDA) against float64 references: a dense sweep of fp32 values, the branch
thresholds of the polynomials, signed zeros, infinities and NaN."""
import math

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.language.extra import libdevice

BLOCK = 1024


@tilejit.jit
def math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + 0 * n + offs, libdevice.erf(x), mask=m)
    tl.store(out_ptr + 1 * n + offs, libdevice.tanh(x), mask=m)
    tl.store(out_ptr + 2 * n + offs, tl.exp(x), mask=m)
    tl.store(out_ptr + 3 * n + offs, tl.exp2(x), mask=m)
    tl.store(out_ptr + 4 * n + offs, tl.log(x), mask=m)
    tl.store(out_ptr + 5 * n + offs, tl.log2(x), mask=m)
    tl.store(out_ptr + 6 * n + offs, libdevice.fast_tanhf(x), mask=m)   # Inductor's fast tanh


def _inputs(rng):
    # every 4099th fp32 bit pattern (all binades, both signs), finite ones
    x = (np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32)).view(np.float32)
    x = x[np.isfinite(x)]
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-38, 1e-45,
               0.875, -0.875, np.nextafter(np.float32(0.875), np.float32(0)), 0.625, -0.625,
               np.nextafter(np.float32(0.625), np.float32(1)), 3.92, 4.0, -4.0, 9.0, 44.0, 89.0,
               88.72283935546875, -104.0, 127.99, -150.0, -1e-7,
               1.0, 0.99999994, 1.0000001, 1.0001, 0.9999, 1.4142135, 1.4142137, 0.70710677]
    return np.concatenate([x, np.float32(special), rng.uniform(-5, 5, 4000).astype(np.float32)])


# (function, float64 reference, max relative error on cpu / interpreter, on cuda);
# cuda's erf/tanh are the CPU's polynomials (backends/llvm/mathlib.py), its exp/exp2 the
# hardware ex2.approx.f32 (about 2 ulp, as Triton's tl.exp; docs/differences.md "CUDA math").
_FNS = [("erf", np.vectorize(math.erf, otypes=[np.float64]), 3 * 2.0**-23, 3 * 2.0**-23),
        ("tanh", np.tanh, 3 * 2.0**-23, 3 * 2.0**-23),
        ("exp", np.exp, 2 * 2.0**-23, 1e-5),    # cuda: ex2.approx(x * log2(e)), x * log2(e)
                                                 # rounded to fp32 first: relative error up to
                                                 # about |x| * 2**-24 (3.7e-6 at x = 87), as Triton's tl.exp
        ("exp2", np.exp2, 2 * 2.0**-23, 2e-6),
        ("log", np.log, 2 * 2.0**-23, 2 * 2.0**-23),      # the polynomial on cpu and cuda (libm's
        ("log2", np.log2, 2 * 2.0**-23, 2 * 2.0**-23)]    # log2f on cpu, log * log2(e) on cuda)


def test_fp32_math_against_float64(backend, rng):
    x = _inputs(rng)
    if backend == "interpreter":
        x = np.concatenate([x[::40], x[-4025:]])   # the interpreter is slow: a sample
    n = len(x)
    out = np.full((len(_FNS) + 1) * n, -7.0, np.float32)
    math_kernel[(tilejit.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    xd = x.astype(np.float64)
    for i, (name, ref_fn, tol, tol_cuda) in enumerate(_FNS):
        got = out[i * n:(i + 1) * n]
        with np.errstate(all="ignore"):
            ref = ref_fn(xd)
            r32 = ref.astype(np.float32)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=name)
        ok = ~np.isnan(ref)
        g, r, r32 = got[ok].astype(np.float64), ref[ok], r32[ok]
        np.testing.assert_array_equal(np.isinf(g), np.isinf(r32), err_msg=name)
        fin = np.isfinite(r32) & (np.abs(r32) >= np.finfo(np.float32).tiny)   # normal results
        rel = np.abs(g[fin] - r[fin]) / np.abs(r[fin])
        worst = int(np.argmax(rel))
        assert rel[worst] <= (tol_cuda if backend == "cuda" else tol), \
            f"{name}({x[ok][fin][worst]!r}) = {g[fin][worst]!r}, want {r[fin][worst]!r}"
        sub = ~fin & np.isfinite(r32)                                           # subnormal / zero
        np.testing.assert_allclose(g[sub], r[sub], rtol=0, atol=2.0**-126, err_msg=name)
        if name in ("erf", "tanh"):   # odd functions keep the sign, -0.0 included
            np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(xd[ok]), err_msg=name)
    np.testing.assert_array_equal(out[6 * n:], out[n:2 * n])      # fast_tanhf is tanh


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_formulas_match_torch(backend, approximate):
    """Inductor's two GELU kernels' arithmetic (erf, tanh) against torch's gelu."""
    torch = pytest.importorskip("torch", reason="torch not installed")
    x = torch.linspace(-9, 9, 4096, dtype=torch.float32)
    out = torch.empty_like(x)
    gelu_kernel[(4,)](x, out, APPROX=approximate == "tanh", BLOCK=BLOCK)
    want = torch.nn.functional.gelu(x.double(), approximate=approximate).float()
    torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6)   # every backend (tanh within 3 ulp)


@tilejit.jit
def gelu_kernel(x_ptr, out_ptr, APPROX: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if APPROX:
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1.0 + libdevice.tanh(inner))
    else:
        y = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y)


def test_exp_underflow_range(backend, rng):
    """exp/exp2 where the result is subnormal (computed; within 1 subnormal step of the
    rounded float64 value) and below it down to -inf (0: those lanes are not scaled at
    all, see mathlib._clamp), as a masked softmax row has them."""
    x = np.concatenate([np.linspace(-106, -86, 2003, dtype=np.float32),
                        np.linspace(-152, -124, 2003, dtype=np.float32),
                        np.float32([-np.inf, -1e30, -3.4e38, -104.0, -104.00001, -150.0, -150.00002,
                                    -103.97, -149.9])])
    n = len(x)
    out = np.full((len(_FNS) + 1) * n, -7.0, np.float32)
    math_kernel[(tilejit.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
    tiny = 2.0 ** -149
    for i, ref_fn in ((2, np.exp), (3, np.exp2)):
        got = out[i * n:(i + 1) * n].astype(np.float64)
        want = ref_fn(x.astype(np.float64))
        step = 1e-5 if backend == "cuda" else 0.0      # cuda: ex2.approx (docs/differences.md)
        # cuda's fp32 exp2 flushes results below 2**-126 to 0 (enable_reflect_ftz, as Triton)
        atol = 2.0**-126 if backend == "cuda" and ref_fn is np.exp2 else 1.01 * tiny
        np.testing.assert_allclose(got, want, rtol=step + 2 * 2.0**-23, atol=atol)
        assert (got[x < -160] == 0).all() and (got >= 0).all()
