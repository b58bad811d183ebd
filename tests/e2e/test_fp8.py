"""fp8 dtypes (tl.float8e5 = e5m2, tl.float8e4nv = e4m3fn, tl.float8e4b15 = e4m3 with
bias 15): conversions only (the fnuz formats: tests/e2e/test_fp8_fnuz.py).

* every one of the 256 bit patterns survives fp8 -> fp32/fp16/bf16 -> fp8 (NaN as NaN;
  e5m2's +-inf come back as +-57344, Triton's satfinite)
  and decodes to the value of an independent decoder written here;
* fp32/fp16/bf16 -> fp8 matches an independent nearest-value search over the 256 codes
  (ties to the even code; overflow and inf saturate to +-57344 / +-448 (Triton's satfinite)), on random
  values and on edges: ties, subnormals, max, overflow, -0.0, NaN, inf;
* fp8 tiles load/store through fp8 pointers; arithmetic on fp8 is a TypeError.
"""
import math

import numpy as np
import pytest

import tilejit
import tilejit.language as tl

BLOCK = 1024
# name -> (dtype, exponent bits, mantissa bits, bias, ieee inf/NaN)
FORMATS = {"e5m2": (tl.float8e5, 5, 2, 15, True), "e4m3fn": (tl.float8e4nv, 4, 3, 7, False),
           "e4b15": (tl.float8e4b15, 4, 3, 15, False)}     # e4m3fn's codes with bias 15


# ------------------------------------------------------------------ reference
def ref_decode(fmt):
    """float64 value of each of the 256 codes, written from the format definition."""
    _, eb, mb, bias, ieee = FORMATS[fmt]
    out = []
    for code in range(256):
        s = -1.0 if code & 0x80 else 1.0
        e, m = (code >> mb) & ((1 << eb) - 1), code & ((1 << mb) - 1)
        if ieee and e == (1 << eb) - 1:
            out.append(s * math.inf if m == 0 else math.nan)
        elif not ieee and e == (1 << eb) - 1 and m == (1 << mb) - 1:
            out.append(math.nan)
        elif e == 0:
            out.append(s * math.ldexp(m, 1 - bias - mb))
        else:
            out.append(s * math.ldexp((1 << mb) + m, e - bias - mb))
    return np.array(out)


def ref_encode(x, fmt):
    """Nearest code by exhaustive search, ties to the even code; see module doc."""
    vals = ref_decode(fmt)[:128]
    codes = np.arange(128)
    ieee = FORMATS[fmt][4]
    cand = np.isfinite(vals)
    if ieee:    # inf takes the place of the next binade's first value (even mantissa)
        vals = np.where(codes == 0x7C, 2.0 * vals[0x78], vals)
        cand = codes <= 0x7C
    vals, codes = vals[cand], codes[cand]
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    a_c = np.where(np.isnan(a), 0.0, np.minimum(a, 1e300))
    d = np.abs(a_c[:, None] - vals[None, :])
    best = d == d.min(axis=1, keepdims=True)
    pick = codes[np.argmin(np.where(best, codes[None, :] & 1, 2), axis=1)]
    if ieee:
        pick = np.where((a > vals[-1]) | (pick == 0x7C), 0x7B, pick)   # satfinite
    else:
        pick = np.where(a > vals[-1], 0x7E, pick)
    sign = np.where(np.signbit(x), 0x80, 0)
    return np.where(np.isnan(x), 0x7F, pick | sign).astype(np.uint8)


def edge_inputs(fmt, rng):
    v = ref_decode(fmt)
    fin = np.unique(np.abs(v[np.isfinite(v)]))
    mids = (fin[:-1] + fin[1:]) / 2                                     # exact ties
    top = fin[-1] + (fin[-1] - fin[-2]) / 2
    f32 = np.float32
    base = np.concatenate([fin, mids, [top, top * 1.5, 2 * top, 1e30, fin[1] / 2, fin[1] / 4,
                                       1e-40, 1e-45, 3e38]]).astype(f32)
    near = np.concatenate([np.nextafter(base, f32(np.inf)), np.nextafter(base, f32(0))])
    rand = (2.0 ** rng.uniform(math.log2(fin[1]) - 3, math.log2(fin[-1]) + 2, 2000)).astype(f32)
    allv = np.concatenate([base, near, rand, [0.0, np.inf, np.nan]]).astype(f32)
    signs = np.where(rng.random(allv.size) < 0.5, -1, 1).astype(f32)
    return np.concatenate([allv, -allv, allv * signs]).astype(f32)


def same_codes(got, want, fmt):
    nan = np.isnan(ref_decode(fmt))
    return (got == want) | (nan[got] & nan[want])


# ------------------------------------------------------------------ kernels
@tilejit.jit
def to_fp8_kernel(x_ptr, y_ptr, n, DT: tl.constexpr, SRC: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    if SRC == "bf16":
        x = x.to(tl.bfloat16, bitcast=True)
    f = x.to(DT)
    tl.store(y_ptr + o, f.to(tl.uint8, bitcast=True), mask=m)


@tilejit.jit
def roundtrip_kernel(b_ptr, f_ptr, r32_ptr, r16_ptr, rbf_ptr, DT: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    f = tl.load(b_ptr + o).to(DT, bitcast=True)
    w = f.to(tl.float32)
    tl.store(f_ptr + o, w)
    tl.store(r32_ptr + o, w.to(DT).to(tl.int8, bitcast=True))
    tl.store(r16_ptr + o, f.to(tl.float16).to(DT).to(tl.uint8, bitcast=True))
    tl.store(rbf_ptr + o, f.to(tl.bfloat16).to(DT).to(tl.uint8, bitcast=True))


@tilejit.jit
def copy_kernel(src_ptr, dst_ptr, n, DT: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    s = src_ptr.to(tl.pointer_type(DT))
    d = dst_ptr.to(tl.pointer_type(DT))
    v = tl.load(s + o, mask=o < n)
    tl.store(d + (n - 1 - o), v, mask=o < n)


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_all_codes_roundtrip(backend, fmt):
    dt = FORMATS[fmt][0]
    bits = np.arange(256, dtype=np.uint8)
    f = np.zeros(256, np.float32)
    r32 = np.zeros(256, np.int8)
    r16, rbf = np.zeros(256, np.uint8), np.zeros(256, np.uint8)
    roundtrip_kernel[(1,)](bits, f, r32, r16, rbf, DT=dt, N=256)
    want = ref_decode(fmt)
    np.testing.assert_array_equal(np.isnan(f), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(f[ok], want[ok].astype(np.float32))
    np.testing.assert_array_equal(np.signbit(f[ok]), np.signbit(want[ok]))
    back = ref_encode(want, fmt)      # e5m2's +-inf come back as +-max (satfinite)
    assert same_codes(back[(bits & 0x7F) != 0x7C], bits[(bits & 0x7F) != 0x7C], fmt).all()
    for r in (r32.view(np.uint8), r16, rbf):
        assert same_codes(r, back, fmt).all(), np.nonzero(~same_codes(r, back, fmt))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("src", ["fp32", "fp16", "bf16"])
def test_encode_matches_reference(backend, fmt, src, rng):
    x = edge_inputs(fmt, rng)
    if src == "fp16":
        with np.errstate(over="ignore"):
            arg = x.astype(np.float16)
        vals = arg.astype(np.float32)
    elif src == "bf16":
        arg = (x.view(np.uint32) >> 16).astype(np.uint16)          # truncated to bf16
        vals = (arg.astype(np.uint32) << 16).view(np.float32)
        arg = arg.view(np.int16)
    else:
        arg, vals = x, x
    y = np.zeros(x.size, np.uint8)
    grid = (-(-x.size // BLOCK),)
    to_fp8_kernel[grid](arg, y, x.size, DT=FORMATS[fmt][0], SRC=src, BLOCK=BLOCK)
    want = ref_encode(vals, fmt)
    bad = ~same_codes(y, want, fmt)
    assert not bad.any(), list(zip(vals[bad][:8], y[bad][:8], want[bad][:8]))


def test_specific_values(backend):
    x = np.array([448.0, 464.0, 480.0, 1e6, np.inf, -np.inf, -0.0, 2.0 ** -10, 2.0 ** -10 * 1.5],
                 np.float32)
    y = np.zeros(x.size, np.uint8)
    to_fp8_kernel[(1,)](x, y, x.size, DT=tl.float8e4nv, SRC="fp32", BLOCK=16)
    # saturation to +-448 (Triton's satfinite), 2**-10 is a tie between 0 and 2**-9
    assert y.tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x80, 0x00, 0x01]
    x = np.array([57344.0, 61440.0, 61439.0, 1e6, -np.inf, np.nan, 2.0 ** -17], np.float32)
    y = np.zeros(x.size, np.uint8)
    to_fp8_kernel[(1,)](x, y, x.size, DT=tl.float8e5, SRC="fp32", BLOCK=8)
    # satfinite, as Triton on sm_90 (test_typeconvert_downcast_clamping): no inf
    assert y[:5].tolist() == [0x7B, 0x7B, 0x7B, 0x7B, 0xFB] and y[6] == 0
    assert y[5] & 0x7F > 0x7C


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_fp8_tiles_load_store(backend, fmt):
    src = np.arange(200, dtype=np.uint8)
    dst = np.zeros(200, np.uint8)
    copy_kernel[(1,)](src, dst, 200, DT=FORMATS[fmt][0], BLOCK=256)
    np.testing.assert_array_equal(dst, src[::-1])


@tilejit.jit
def fp8_add_kernel(x_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    f = tl.load(x_ptr + o).to(tl.float8e5, bitcast=True)
    tl.store(x_ptr + o, (f + f).to(tl.uint8, bitcast=True))


def test_fp8_arithmetic_is_a_type_error():
    with pytest.raises(TypeError, match="fp8"):
        fp8_add_kernel[(1,)](np.zeros(8, np.uint8), N=8)


@tilejit.jit
def upcast_kernel(x_ptr, y_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.static_assert(x_ptr.dtype.element_ty.primitive_bitwidth == 8)
    tl.store(y_ptr + o, tl.load(x_ptr + o).to(tl.float32))


@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2"])      # the formats torch has
def test_torch_fp8_tensors(backend, fmt):
    torch = pytest.importorskip("torch")
    if backend == "cuda":
        pytest.skip("host tensors only")
    td = {"e5m2": torch.float8_e5m2, "e4m3fn": torch.float8_e4m3fn}[fmt]
    bits = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    x = bits.view(td)
    y = torch.zeros(256, dtype=torch.float32)
    upcast_kernel[(1,)](x, y, N=256)
    want = x.to(torch.float32).numpy()
    np.testing.assert_array_equal(y.numpy(), want)


@tilejit.jit
def select_kernel(x_ptr, y_ptr, n, DT: tl.constexpr, N: tl.constexpr, CASE: tl.constexpr):
    o = tl.arange(0, N)
    p = x_ptr.to(tl.pointer_type(DT))
    if CASE == "other":
        v = tl.load(p + o, mask=o < n, other=0.0)
    elif CASE == "where":
        v = tl.where(o < n, tl.load(p + o, mask=o < n), tl.full((N,), -1.5, DT))
    else:
        v = tl.full((N,), 1.75, DT)
    tl.store(y_ptr + o, v.to(tl.float32))


@pytest.mark.parametrize("case", ["other", "where", "full"])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_fp8_select_and_constants(backend, fmt, case):
    x = np.array([0x38, 0xBA, 0x01, 0x7F], np.uint8)
    y = np.zeros(8, np.float32)
    select_kernel[(1,)](x, y, 4, DT=FORMATS[fmt][0], N=8, CASE=case)
    dec = ref_decode(fmt)[x].astype(np.float32)
    fill = {"other": 0.0, "where": -1.5}.get(case)
    want = np.full(8, 1.75, np.float32) if fill is None else np.concatenate([dec, np.full(4, fill, np.float32)])
    np.testing.assert_array_equal(y, want)
