"""tl.dot's result type is Triton's (semantic.dot): float16 and fp8 operands give
``out_dtype`` (float16 or float32), float32/bfloat16 operands float32 whatever
``out_dtype`` says, ``out_dtype=bfloat16`` is a ValueError.  Triton's
test_simple_matmul[*-float16-float8e5] (fp8e5 operands, an fp16 accumulator carried
through a loop) failed on this; values checked against numpy on every backend, and the
cuda backend's PTX for it assembled with ptxas (sm_80 and sm_90)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tilejit.ir.fp8 import E5M2, fp8_to_f32


@tilejit.jit
def fp8_loop_kernel(A, B, C, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, K: tl.constexpr):
    a_ptr = A.to(tl.pointer_type(tl.float8e5))
    b_ptr = B.to(tl.pointer_type(tl.float8e5))
    om, on, ok = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=C.dtype.element_ty)
    for k in tl.range(0, K // BK, num_stages=3):
        a = tl.load(a_ptr + om[:, None] * K + (k * BK + ok)[None, :])
        b = tl.load(b_ptr + (k * BK + ok)[:, None] * BN + on[None, :])
        acc = tl.dot(a, b, acc=acc, out_dtype=C.dtype.element_ty)
    tl.store(C + om[:, None] * BN + on[None, :], acc)


@pytest.mark.parametrize("out", [np.float16, np.float32])
def test_fp8_operands_out_dtype(backend, out):
    bm, bn, bk, K = 16, 32, 32, 64
    rng = np.random.default_rng(7)
    a = rng.integers(20, 40, (bm, K)).astype(np.uint8)      # as Triton's test: small e5m2 values
    b = rng.integers(20, 40, (K, bn)).astype(np.uint8)
    c = np.zeros((bm, bn), out)
    fp8_loop_kernel[(1,)](a, b, c, BM=bm, BN=bn, BK=bk, K=K)
    fa, fb = fp8_to_f32(a, E5M2), fp8_to_f32(b, E5M2)
    want = np.zeros((bm, bn), out)
    for k in range(0, K, bk):      # products summed in fp32, rounded once per dot to out
        part = fa[:, k:k + bk].astype(np.float64) @ fb[k:k + bk].astype(np.float64)
        want = (part.astype(np.float32) + want.astype(np.float32)).astype(out)
    np.testing.assert_allclose(c.astype(np.float64), want.astype(np.float64), rtol=2e-3 if out == np.float16 else 1e-6)


@tilejit.jit
def result_type_kernel(X, Y, IN: tl.constexpr, OUT: tl.constexpr):
    x = tl.load(X.to(tl.pointer_type(IN)) + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    r = tl.dot(x, x, out_dtype=OUT)
    tl.static_assert(r.dtype == tl.float32)
    tl.store(Y + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], r)


def test_bf16_operands_ignore_out_dtype(backend):
    x = (np.arange(256, dtype=np.float32).reshape(16, 16) % 5 - 2)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)             # exact in bf16
    y = np.zeros((16, 16), np.float32)
    result_type_kernel[(1,)](bits, y, IN=tl.bfloat16, OUT=tl.float16)
    np.testing.assert_array_equal(y, x @ x)


def test_bf16_out_dtype_is_an_error():
    with pytest.raises(tilejit.CompilationError) as e:
        tilejit.compile(result_type_kernel, signature={0: "*i16", 1: "*fp32"},
                        constexprs={"IN": tl.float16, "OUT": tl.bfloat16}, target="cpu")
    assert "out_dtype=bfloat16 is unsupported" in str(e.value)


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("out", ["*fp16", "*fp32"])
def test_fp8_loop_ptx_assembles(arch, out):
    ker = tilejit.compile(fp8_loop_kernel, signature={0: "*u8", 1: "*u8", 2: out},
                          constexprs=dict(BM=64, BN=128, BK=32, K=256), target=f"cuda:{arch}")
    tgt.ptxas(ker.asm["ptx"], arch)
