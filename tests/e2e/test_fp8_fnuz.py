"""The fnuz fp8 formats (tl.float8e4b8 = e4m3fnuz, tl.float8e5b16 = e5m2fnuz): no
infinity, no negative zero, 0x80 the only NaN.  Conversions against torch's own
float8_e4m3fnuz / float8_e5m2fnuz (round to nearest even, overflow to NaN)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl

torch = pytest.importorskip("torch", reason="torch's fnuz dtypes are the reference")
FNUZ = {"e4b8": (tl.float8e4b8, torch.float8_e4m3fnuz), "e5b16": (tl.float8e5b16, torch.float8_e5m2fnuz)}


@tilejit.jit
def convert_kernel(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y_ptr + o, tl.load(x_ptr + o).to(y_ptr.dtype.element_ty))


def _same(a, b):
    a, b = a.float().numpy(), b.float().numpy()
    return np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(a[~np.isnan(a)], b[~np.isnan(b)])


@pytest.mark.parametrize("fmt", sorted(FNUZ))
@pytest.mark.parametrize("wide", [torch.float32, torch.float16, torch.bfloat16])
def test_decode_every_code(backend, fmt, wide):
    if backend == "cuda":
        pytest.skip("host tensors only")
    x = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(FNUZ[fmt][1])
    y = torch.zeros(256, dtype=wide)
    convert_kernel[(1,)](x, y, N=256)
    want = x.to(torch.float32).to(wide)
    assert _same(y, want)


@pytest.mark.parametrize("fmt", sorted(FNUZ))
@pytest.mark.parametrize("wide", [torch.float32, torch.float16, torch.bfloat16])
def test_encode_matches_torch(backend, fmt, wide):
    if backend == "cuda":
        pytest.skip("host tensors only")
    td = FNUZ[fmt][1]
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(td).float()
    fin = codes[torch.isfinite(codes)].unique()
    mids = (fin[:-1] + fin[1:]) / 2                                  # exact ties
    g = torch.Generator().manual_seed(1)
    rand = torch.randn(1536, generator=g) * float(fin.max()) / 2
    edge = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e30, -1e30, 1e-30, -1e-30])
    x = torch.cat([fin, mids, -mids, rand, edge])
    x = torch.cat([x, torch.zeros(4096 - x.numel())]).to(wide)
    y = torch.zeros(4096, dtype=td)
    convert_kernel[(1,)](x, y, N=4096)
    want = x.to(td)
    assert torch.equal(y.view(torch.uint8), want.view(torch.uint8))


def test_dtype_layout_queries():
    """Triton's dtype.fp_mantissa_width and dtype.exponent_bias."""
    got = {d: (d.fp_mantissa_width, d.exponent_bias) for d in
           (tl.float8e4b15, tl.float8e4nv, tl.float8e4b8, tl.float8e5, tl.float8e5b16, tl.float16,
            tl.bfloat16, tl.float32, tl.float64)}
    assert list(got.values()) == [(3, 15), (3, 7), (3, 8), (2, 15), (2, 16), (10, 15), (7, 127), (23, 127),
                                  (52, 1023)]


@tilejit.jit
def abs_kernel(x_ptr, y_ptr, DT: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(x_ptr.to(tl.pointer_type(DT)) + o)
    tl.store(y_ptr.to(tl.pointer_type(DT)) + o, tl.abs(x))


@pytest.mark.parametrize("dt", ["float8e5", "float8e4nv", "float8e4b15", "float8e4b8", "float8e5b16"])
def test_abs_fp8_clears_the_sign(backend, dt):
    """Triton's test_abs_fp8: |x| of every code is the code without its sign bit (the
    fnuz NaN 0x80 stays NaN)."""
    x = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.uint8)
    abs_kernel[(1,)](x, y, DT=getattr(tl, dt), N=256)
    want = x & 0x7F
    if dt in ("float8e4b8", "float8e5b16"):
        want[0x80] = 0x80
    np.testing.assert_array_equal(y, want)
