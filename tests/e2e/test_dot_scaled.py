"""tl.dot_scaled against a torch/numpy model of the microscaling formats written here:
e2m1 codes from the OCP MX table, fp8 through torch's float8 dtypes, e8m0 scales as
2 ** (s - 127), operands rounded to the compute type (bf16, fp16 if either is fp16),
products summed in float64."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl

torch = pytest.importorskip("torch", reason="bf16 and fp8 references are torch dtypes")
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


@tilejit.jit
def scaled_kernel(A, SA, B, SB, OUT, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                  FA: tl.constexpr, FB: tl.constexpr, KPA: tl.constexpr, KPB: tl.constexpr):
    AR: tl.constexpr = M // 2 if FA == "e2m1" and not KPA else M
    AC: tl.constexpr = K // 2 if FA == "e2m1" and KPA else K
    BR: tl.constexpr = K // 2 if FB == "e2m1" and KPB else K
    BC: tl.constexpr = N // 2 if FB == "e2m1" and not KPB else N
    a = tl.load(A + tl.arange(0, AR)[:, None] * AC + tl.arange(0, AC)[None, :])
    b = tl.load(B + tl.arange(0, BR)[:, None] * BC + tl.arange(0, BC)[None, :])
    sa = SA
    sb = SB
    if SA is not None:
        sa = tl.load(SA + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    if SB is not None:
        sb = tl.load(SB + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, lhs_k_pack=KPA, rhs_k_pack=KPB)
    tl.store(OUT + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def _decode(x, fmt):
    """Element values (float64) of an operand's storage."""
    if fmt == "e2m1":
        c = x.numpy().astype(np.int64)
        return c, np.where(c & 8, -1.0, 1.0) * np.array(E2M1)[c & 7]
    td = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "bf16": torch.bfloat16,
          "fp16": torch.float16}[fmt]
    return None, x.view(td).double().numpy()


def _unpack(x, fmt, along_last):
    codes, v = _decode(x, fmt)
    if fmt != "e2m1":
        return v
    lo = np.where(codes & 8, -1.0, 1.0) * np.array(E2M1)[codes & 7]
    hi_c = codes >> 4
    hi = np.where(hi_c & 8, -1.0, 1.0) * np.array(E2M1)[hi_c & 7]
    if along_last:
        return np.stack([lo, hi], -1).reshape(lo.shape[0], -1)
    return np.stack([lo, hi], 1).reshape(-1, lo.shape[1])


def _round(v, comp):
    return torch.from_numpy(v).to(comp).double().numpy()


def reference(a, sa, fa, b, sb, fb, kpa, kpb):
    comp = torch.float16 if "fp16" in (fa, fb) else torch.bfloat16
    av = _round(_unpack(a, fa, kpa), comp)
    bv = _round(_unpack(b, fb, not kpb), comp)
    if sa is not None:
        av = _round(av * np.repeat(_scale(sa, comp), 32, axis=1), comp)
    if sb is not None:
        bv = _round(bv * np.repeat(_scale(sb, comp), 32, axis=1).T, comp)
    return av @ bv


def _scale(s, comp):
    s = s.numpy().astype(np.int64)
    f = np.where(s == 0, 0.0, 2.0 ** (s - 127.0)) if comp == torch.bfloat16 else 2.0 ** (s - 127.0)
    return np.where(s == 255, np.nan, f)


def _operand(shape, fmt, g, fp16=False):
    if fmt in ("bf16", "fp16"):
        t = torch.randn(shape, generator=g).to(torch.bfloat16 if fmt == "bf16" else torch.float16)
        return t.view(torch.uint16) if fmt == "bf16" else t.view(torch.int16).view(torch.uint16)
    x = torch.randint(0, 256, shape, generator=g, dtype=torch.int32).to(torch.uint8)
    if fmt in ("e4m3", "e5m2"):              # finite codes only
        mask = 0x7C if fmt == "e5m2" else 0x7F
        x = torch.where(x & mask == mask, x & 0x83, x)
    if fmt == "e5m2" and fp16:               # keep scaled values inside fp16's range (as Triton's test)
        x = x & 0xB
    return x


CASES = [("e2m1", "bf16", "a"), ("e4m3", "bf16", "a"), ("e5m2", "fp16", "a"), ("e2m1", "e4m3", "b"),
         ("e5m2", "e5m2", "b"), ("e4m3", "fp16", "b"), ("e2m1", "e2m1", "ab"), ("e4m3", "e5m2", "ab")]


@pytest.mark.parametrize("fa,fb,scaled", CASES)
def test_dot_scaled_formats(backend, fa, fb, scaled):
    m, n, k = 32, 16, 64
    g = torch.Generator().manual_seed(hash((fa, fb, scaled)) % 1000)
    fp16 = "fp16" in (fa, fb)
    a = _operand((m, k // 2 if fa == "e2m1" else k), fa, g, fp16)
    b = _operand((k // 2 if fb == "e2m1" else k, n), fb, g, fp16)
    lo, hi = (124, 131) if fp16 else (100, 142)
    sa = torch.randint(lo, hi + 1, (m, k // 32), generator=g, dtype=torch.int32).to(torch.uint8) \
        if "a" in scaled else None
    sb = torch.randint(lo, hi + 1, (n, k // 32), generator=g, dtype=torch.int32).to(torch.uint8) \
        if "b" in scaled else None
    out = torch.zeros((m, n), dtype=torch.float32)
    scaled_kernel[(1,)](a, sa, b, sb, out, M=m, N=n, K=k, FA=fa, FB=fb, KPA=True, KPB=True)
    want = reference(a, sa, fa, b, sb, fb, True, True)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("kpa,kpb", [(False, True), (True, False), (False, False)])
def test_dot_scaled_e2m1_packed_along_m_or_n(backend, kpa, kpb):
    m, n, k = 16, 32, 64
    g = torch.Generator().manual_seed(7)
    a = _operand((m // 2 if not kpa else m, k // 2 if kpa else k), "e2m1", g)
    b = _operand((k // 2 if kpb else k, n // 2 if not kpb else n), "e2m1", g)
    sa = torch.randint(120, 135, (m, k // 32), generator=g, dtype=torch.int32).to(torch.uint8)
    sb = torch.randint(120, 135, (n, k // 32), generator=g, dtype=torch.int32).to(torch.uint8)
    out = torch.zeros((m, n), dtype=torch.float32)
    scaled_kernel[(1,)](a, sa.view(torch.int8), b, sb, out, M=m, N=n, K=k, FA="e2m1", FB="e2m1", KPA=kpa,
                        KPB=kpb)                 # e8m0 bits as int8 too
    want = reference(a, sa, "e2m1", b, sb, "e2m1", kpa, kpb)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@tilejit.jit
def nvfp4_kernel(A, SA, B, SB, OUT, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * (K // 2) + tl.arange(0, K // 2)[None, :])
    b = tl.load(B + tl.arange(0, K // 2)[:, None] * N + tl.arange(0, N)[None, :])
    sa = tl.load(SA.to(tl.pointer_type(tl.float8e4nv)) + tl.arange(0, M)[:, None] * (K // 16)
                 + tl.arange(0, K // 16)[None, :])
    sb = tl.load(SB.to(tl.pointer_type(tl.float8e4nv)) + tl.arange(0, N)[:, None] * (K // 16)
                 + tl.arange(0, K // 16)[None, :])
    c = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1")
    tl.store(OUT + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def test_dot_scaled_nvfp4_scales(backend):
    """fp8e4nv scales: one per 16 elements along K, multiplied by their values."""
    m, n, k = 16, 16, 64
    g = torch.Generator().manual_seed(3)
    a = _operand((m, k // 2), "e2m1", g)
    b = _operand((k // 2, n), "e2m1", g)
    sa = (torch.rand((m, k // 16), generator=g) * 4 + 0.25).to(torch.float8_e4m3fn)
    sb = (torch.rand((n, k // 16), generator=g) * 4 + 0.25).to(torch.float8_e4m3fn)
    out = torch.zeros((m, n), dtype=torch.float32)
    nvfp4_kernel[(1,)](a, sa.view(torch.uint8), b, sb.view(torch.uint8), out, M=m, N=n, K=k)
    av = _round(_unpack(a, "e2m1", True) * np.repeat(sa.double().numpy(), 16, axis=1), torch.bfloat16)
    bv = _round(_unpack(b, "e2m1", False) * np.repeat(sb.double().numpy(), 16, axis=1).T, torch.bfloat16)
    want = av @ bv
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@tilejit.jit
def batched_kernel(A, SA, B, OUT, NB: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    ob = tl.arange(0, NB)[:, None, None]
    a = tl.load(A + ob * (M * K // 2) + tl.arange(0, M)[None, :, None] * (K // 2)
                + tl.arange(0, K // 2)[None, None, :])
    sa = tl.load(SA + ob * (M * K // 32) + tl.arange(0, M)[None, :, None] * (K // 32)
                 + tl.arange(0, K // 32)[None, None, :])
    b = tl.load(B + ob * (K * N) + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c = tl.dot_scaled(a, sa, "e2m1", b, None, "bf16")
    tl.store(OUT + ob * (M * N) + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], c)


def test_dot_scaled_batched(backend):
    nb, m, n, k = 2, 16, 16, 64
    g = torch.Generator().manual_seed(5)
    a = _operand((nb, m, k // 2), "e2m1", g)
    sa = torch.randint(120, 135, (nb, m, k // 32), generator=g, dtype=torch.int32).to(torch.uint8)
    b = _operand((nb, k, n), "bf16", g)
    out = torch.zeros((nb, m, n), dtype=torch.float32)
    batched_kernel[(1,)](a, sa, b, out, NB=nb, M=m, N=n, K=k)
    for i in range(nb):
        want = reference(a[i], sa[i], "e2m1", b[i], None, "bf16", True, True)
        np.testing.assert_allclose(out[i].numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
