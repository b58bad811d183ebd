"""PTX of fp32 division with a divisor per element (``x / y``, ``tl.sigmoid``'s ``1 / d``)
on sm_90, no GPU needed: a thread's slots take div.rn.f32's fast path (rcp.approx and one
Newton step; for x / y also the remainder correction) behind one range check, so the
correctly rounded ``div.rn.f32`` / ``rcp.rn.f32`` appear only on the out-of-range path,
and the per-slot branches and slow-path calls of div.rn are gone.  The results are checked
bit for bit on every backend by tests/e2e/test_divide_chunks.py."""
from __future__ import annotations

import re

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tests.cuda_switches import cuda_tuning


@tilejit.jit
def glu(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs, mask=m, other=1.0)
    tl.store(c_ptr + offs, a * tl.sigmoid(a) / b, mask=m)


def _ptx(**tuning):
    with cuda_tuning(**tuning):
        return tilejit.compile(glu, signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32"},
                               constexprs={"BLOCK": 1024}, divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "n"),
                               target="cuda:90", num_warps=4).asm["ptx"]


def _n(ptx, pat):
    return len(re.findall(pat, ptx))


def test_chunk_divide_fast_path():
    ptx = _ptx(chunk_divide=True)
    slots = 1024 // 128
    # two divisions a slot: the sigmoid's reciprocal and the quotient, each its own Newton step
    assert _n(ptx, r"rcp\.approx\.ftz\.f32") == 2 * slots
    # the exact instructions only on the out-of-range paths (one path per division)
    assert _n(ptx, r"rcp\.rn\.f32") == slots and _n(ptx, r"div\.rn\.f32") == slots
    assert _n(ptx, r"\bbra") <= 4                 # one branch per division, not one per slot
    if tgt.find_ptxas():
        tgt.ptxas(ptx, 90)


def test_chunk_divide_off_is_the_plain_lowering():
    ptx = _ptx(chunk_divide=False)
    assert _n(ptx, r"rcp\.approx") == 0
    assert _n(ptx, r"rcp\.rn\.f32") == 1024 // 128 and _n(ptx, r"div\.rn\.f32") == 1024 // 128
