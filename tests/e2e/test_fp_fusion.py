"""Triton's floating-point compile options ``enable_fp_fusion`` and ``enable_reflect_ftz``
(runtime/options.py; docs/differences.md "Floating-point contraction and flushing").

On CUDA, by default (as Triton): ``a * b + c`` may be one fma (one rounding), and fp32
``exp2`` is ``ex2.approx.ftz.f32`` (results below 2**-126 flushed to 0).  A launch keyword
or the Options field turns either off.  The interpreter and the cpu backend never contract
nor flush: their results stay bit-identical to numpy's two roundings.  The PTX tests need
no GPU."""
import re

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import get_backend
from tilejit.backends.cuda import target as tgt
from tilejit.errors import LaunchOptionError
from tilejit.language.extra import libdevice
from tilejit.runtime.compiler import build
from tilejit.runtime.options import Options, get_options, use_options

N = 4096
_FMA = re.compile(r"(mad|fma)\.r[nzmp]\.(ftz\.)?f32")     # Triton's test_enable_fp_fusion


@tilejit.jit
def mul_add(x_ptr, y_ptr, z_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * tl.load(y_ptr + offs) + tl.load(z_ptr + offs))


@tilejit.jit
def mul_add_rn(x_ptr, y_ptr, z_ptr, out_ptr, N: tl.constexpr):
    """libdevice's explicitly rounded operations: never contracted."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    xy = libdevice.mul_rn(x, tl.load(y_ptr + offs))
    tl.store(out_ptr + offs, libdevice.sub_rn(libdevice.add_rn(xy, tl.load(z_ptr + offs)), xy * 0.5))


@tilejit.jit
def exps(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.math.exp2(x))
    tl.store(out_ptr + N + offs, tl.exp(x * 0.7))


def _ptx(kernel, options=None, **attrs):
    func, _ = build(kernel, {0: "*fp32", 1: "*fp32", 2: "*fp32", 3: "*fp32"}
                    if kernel is not exps else {0: "*fp32", 1: "*fp32"}, {"N": 128})
    func.attrs.update(target="cuda:90", **attrs)
    ptx = get_backend("cuda").compile(func, options or get_options()).asm["ptx"]
    if tgt.find_ptxas():
        tgt.ptxas(ptx, 90)
    return ptx


def test_fp_fusion_ptx():
    """Default: fma, as Triton's test_enable_fp_fusion asserts; off (launch keyword or
    Options field): mul.rn + add.rn, which ptxas may not contract; the keyword wins."""
    assert _FMA.search(_ptx(mul_add))
    off = _ptx(mul_add, enable_fp_fusion=False)
    assert not _FMA.search(off) and "mul.rn.f32" in off and "add.rn.f32" in off
    strict = Options(enable_fp_fusion=False)
    assert not _FMA.search(_ptx(mul_add, strict))
    assert _FMA.search(_ptx(mul_add, strict, enable_fp_fusion=True))
    rn = _ptx(mul_add_rn)               # add_rn(mul_rn(x, y), z): two roundings, always
    assert not _FMA.search(rn) and "mul.rn.f32" in rn and "add.rn.f32" in rn


def test_reflect_ftz_ptx():
    """fp32 exp2 is ex2.approx.ftz.f32 by default (Triton's libdevice exp2 under
    nvvm-reflect-ftz), ex2.approx.f32 with enable_reflect_ftz off; tl.exp never flushes
    (Triton's tl.exp is ex2.approx.f32 too)."""
    ptx = _ptx(exps)
    assert len(re.findall(r"ex2\.approx\.ftz\.f32", ptx)) == 1
    assert len(re.findall(r"ex2\.approx\.f32", ptx)) == 1
    for off in (_ptx(exps, enable_reflect_ftz=False), _ptx(exps, Options(enable_reflect_ftz=False))):
        assert "ftz" not in off and len(re.findall(r"ex2\.approx\.f32", off)) == 2


def test_fp_fusion_results(backend, rng):
    """Every backend: within the documented tolerance of the two-rounding result (an fma
    differs by at most half an ulp of the product plus the two results' roundings);
    bit-identical to it with enable_fp_fusion=False, and on the host backends always.
    On CUDA the default does contract (some lanes differ)."""
    x, y, z = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    two = x * y + z                                      # numpy: two roundings
    out = np.zeros(N, np.float32)
    mul_add[(1,)](x, y, z, out, N=N)
    prod = np.abs(x.astype(np.float64) * y)
    o64, t64 = out.astype(np.float64), two.astype(np.float64)
    bound = 2.0**-24 * (prod + np.abs(o64) + np.abs(t64))      # docs/differences.md
    assert (np.abs(o64 - t64) <= bound).all()
    if backend == "cuda":
        assert (out != two).any()
        exact = np.float32(x.astype(np.float64) * y + z)  # fma's value (float64: the product exact)
        assert np.mean(out == exact) > 0.999
    else:
        np.testing.assert_array_equal(out, two)
    strict = np.zeros(N, np.float32)
    mul_add[(1,)](x, y, z, strict, N=N, enable_fp_fusion=False)
    np.testing.assert_array_equal(strict, two)
    with use_options(enable_fp_fusion=False):
        again = np.zeros(N, np.float32)
        mul_add[(1,)](x, y, z, again, N=N)
        np.testing.assert_array_equal(again, two)


def test_rounded_ops_never_contract(backend, rng):
    x, y, z = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    out = np.zeros(N, np.float32)
    mul_add_rn[(1,)](x, y, z, out, N=N)
    np.testing.assert_array_equal(out, (x * y + z) - (x * y) * np.float32(0.5))


def test_reflect_ftz_results(backend):
    """exp2 of -150..-120: on CUDA by default results below 2**-126 are 0 (absolute error
    under 2**-126, the documented tolerance) and normal ones unchanged; with
    enable_reflect_ftz=False, and on the host backends always, subnormal results are kept."""
    x = np.linspace(-150, -120, N, dtype=np.float32)
    want = np.exp2(x.astype(np.float64))
    tiny, sub = 2.0**-149, want < 2.0**-126
    out = np.full(2 * N, -7.0, np.float32)
    exps[(1,)](x, out, N=N)
    got = out[:N].astype(np.float64)
    rtol = 2e-6 if backend == "cuda" else 2 * 2.0**-23
    np.testing.assert_allclose(got[~sub], want[~sub], rtol=rtol)
    if backend == "cuda":
        assert (got[sub] == 0).all()
    else:
        np.testing.assert_allclose(got[sub], want[sub], rtol=rtol, atol=1.01 * tiny)
    e = np.exp((x * np.float32(0.7)).astype(np.float64))      # tl.exp never flushes
    np.testing.assert_allclose(out[N:].astype(np.float64), e,
                               rtol=rtol + 1e-5 * (backend == "cuda"), atol=1.01 * tiny)
    assert (out[N:][e < 2.0**-127] > 0).any()
    kept = np.full(2 * N, -7.0, np.float32)
    exps[(1,)](x, kept, N=N, enable_reflect_ftz=False)
    np.testing.assert_allclose(kept[:N].astype(np.float64), want, rtol=rtol + 1e-5 * (backend == "cuda"),
                               atol=1.01 * tiny)
    assert (kept[:N][sub] > 0).any()


def test_launch_keywords_checked(rng):
    x = np.zeros(N, np.float32)
    for kw in ("enable_fp_fusion", "enable_reflect_ftz"):
        with pytest.raises(LaunchOptionError, match=f"mul_add: {kw}=1 must be True or False"):
            mul_add[(1,)](x, x, x, x, N=N, **{kw: 1})


@pytest.mark.parametrize("env,want", [({}, (True, True)),
                                      ({"TILEJIT_DEFAULT_FP_FUSION": "0"}, (False, True)),
                                      ({"TRITON_DEFAULT_FP_FUSION": "false"}, (False, True)),
                                      ({"TILEJIT_DEFAULT_FP_FUSION": "1", "TRITON_DEFAULT_FP_FUSION": "0"},
                                       (True, True)),
                                      ({"TILEJIT_DEFAULT_REFLECT_FTZ": "off"}, (True, False))])
def test_options_from_env(env, want):
    o = Options.from_env(env)
    assert (o.enable_fp_fusion, o.enable_reflect_ftz) == want
    with pytest.raises(ValueError, match="TILEJIT_DEFAULT_FP_FUSION='maybe': write 1 or 0"):
        Options.from_env({"TILEJIT_DEFAULT_FP_FUSION": "maybe"})


def test_triton_compile_options():
    """``triton.compile(ASTSource, options={"enable_fp_fusion": False, ...})`` under the
    alias reaches the Options fields; unset, the Options' defaults hold."""
    from tilejit.compat.triton_api.compiler import ASTSource, compile as triton_compile
    from tilejit.compat.triton_api.drivers import GPUTarget
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32", "out_ptr": "*fp32", "N": "constexpr"}

    def ptx(**options):
        src = ASTSource(fn=mul_add, signature=sig, constexprs={"N": 128})
        return triton_compile(src, target=GPUTarget("cuda", 90, 32), options=options).asm["ptx"]
    assert _FMA.search(ptx()) and not _FMA.search(ptx(enable_fp_fusion=False))
    with use_options(enable_fp_fusion=False):
        assert not _FMA.search(ptx()) and _FMA.search(ptx(enable_fp_fusion=True))
    src = ASTSource(fn=exps, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "constexpr"},
                    constexprs={"N": 128})
    off = triton_compile(src, target=GPUTarget("cuda", 90, 32), options={"enable_reflect_ftz": False})
    assert "ftz" not in off.asm["ptx"]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32", "fp64"])
@pytest.mark.parametrize("arch", [80, 90])
def test_fp_fusion_every_float_type_assembles(dtype, arch):
    """a * b + c contracted for each float type the cuda backend computes in natively
    (one fma instruction of that type); ptxas accepts it for sm_80 and sm_90."""
    func, _ = build(mul_add, dict.fromkeys(range(4), "*" + dtype), {"N": 128})
    func.attrs.update(target=f"cuda:{arch}")
    ptx = get_backend("cuda").compile(func, get_options()).asm["ptx"]
    assert re.search(r"\bfma\.rn\.", ptx), dtype
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)


def test_rn_attribute_round_trips():
    """libdevice's add_rn/sub_rn/mul_rn are ``{rn = true}`` in the tile IR text (printed,
    parsed back); the plain ``*`` beside them is not."""
    from tilejit.ir.parser import parse_function
    from tilejit.ir.printer import print_function
    func, _ = build(mul_add_rn, dict.fromkeys(range(4), "*fp32"), {"N": 128})
    text = print_function(func)
    assert len(re.findall(r"arith\.(add|sub|mul) [^\n]*\{rn = true\}", text)) == 3
    assert re.search(r"arith\.mul %xy, %\w+ :", text)
    assert print_function(parse_function(text)) == text
