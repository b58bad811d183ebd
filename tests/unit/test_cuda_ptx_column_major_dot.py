"""PTX of loop-free dots with column-major fp16/bf16 operands (rules_mma.plan_kmajor_loads):
each such operand is loaded in 16-byte vectors along its contiguous dim 0 (as Triton's
``ld.global.v4.b32``), staged transposed and read by ``ldmatrix`` (A with ``.trans``,
B without); ``kmajor_operands`` off loads it per element.  ptxas assembles every case
(sm_80, sm_90).  No GPU needed; the values are tests/e2e/test_dot_column_major.py."""
import re

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tests.cuda_switches import cuda_tuning
from tests.e2e.test_dot_column_major import dot_tiles


def _ptx(M, N, K, col_a, col_b, arch, warps=4, dtype="fp16"):
    sig = {"X": f"*{dtype}", "Y": f"*{dtype}", "Z": "*fp32", "sxk": "i32", "syn": "i32"}
    cx = dict(M=M, N=N, K=K, STORE_Y=False, sxm=1 if col_a else K, syk=1 if col_b else N)
    if not col_a:
        sig.pop("sxk")
        cx["sxk"] = 1
    if not col_b:
        sig.pop("syn")
        cx["syn"] = 1
    ker = tilejit.compile(dot_tiles, signature=sig, constexprs=cx, divisible_by_16=tuple(sig),
                          target=f"cuda:{arch}", num_warps=warps)
    ptx = ker.asm["ptx"]
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)
    return ptx


def _count(pattern, ptx):
    return len(re.findall(pattern, ptx))


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("M,N,K,col_a,col_b,dtype", [
    (64, 64, 64, True, True, "fp16"), (128, 64, 32, True, False, "fp16"),
    (64, 128, 64, False, True, "bf16"), (64, 32, 64, True, True, "fp16")])
def test_column_major_operands_load_in_vectors(arch, M, N, K, col_a, col_b, dtype):
    ptx = _ptx(M, N, K, col_a, col_b, arch, dtype=dtype)
    threads = 128
    want = (M * K + K * N) * 2 // 16 // threads        # 16-byte loads per thread, both operands
    assert _count(r"ld\.global(\.\w+)*\.v4\.b32", ptx) == want
    assert _count(r"ld\.global(\.\w+)*\.(b16|u16)", ptx) == 0
    trans, total = _count(r"ldmatrix\S*\.trans", ptx), _count(r"ldmatrix", ptx)
    # A: .trans when column-major (else plain); B: plain when column-major (else .trans)
    a_trans, b_trans = col_a, not col_b
    assert total > 0
    if a_trans and b_trans:
        assert trans == total
    elif not a_trans and not b_trans:
        assert trans == 0
    else:
        assert 0 < trans < total

@pytest.mark.parametrize("arch", [80, 90])
def test_column_major_operands_switched_off(arch):
    with cuda_tuning(kmajor_operands=False):
        ptx = _ptx(64, 64, 64, True, True, arch)
    assert _count(r"ld\.global(\.\w+)*\.(b16|u16)", ptx) == 2 * 64 * 64 // 128
    assert _count(r"ld\.global(\.\w+)*\.v4\.b32", ptx) == 0
