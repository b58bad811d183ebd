"""Blocked layouts of kernels whose accesses cannot be vectorised (layout.kernel_max_vec):
one element per chunk, so neighbouring threads hold neighbouring elements and a warp's
scalar load reads one contiguous span, as Triton's coalescing lays them out -- where the
tiles are 1-D or their rows cover every thread's chunk of 4 (the reductions unchanged).
No GPU needed: the PTX's per-thread offsets are checked, and ptxas assembles it."""
from __future__ import annotations

import re

import pytest

import tilejit
import tilejit.language as tl
from tilejit.analysis import analyze
from tilejit.backends.cuda import target as tgt
from tilejit.backends.cuda.layout import MAX_VEC, kernel_max_vec


@tilejit.jit
def wrapped_mean(in_ptr, out_ptr, R: tl.constexpr, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    """Inductor's mean over dims (0, 2) of a (32, 2048, 513) tensor: ``r % 513`` addressing."""
    x = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    base = tl.arange(0, RBLOCK)[None, :]
    acc = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    for off in range(0, R, RBLOCK):
        r = off + base
        m = r < R
        v = tl.load(in_ptr + (r % 513 + 513 * x + 1050624 * (r // 513)), m, other=0.0)
        acc = tl.where(m, acc + v, acc)
    tl.store(out_ptr + x, tl.sum(acc, 1)[:, None] / R)


@tilejit.jit
def plain_mean(in_ptr, out_ptr, R: tl.constexpr, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    x = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    base = tl.arange(0, RBLOCK)[None, :]
    acc = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    for off in range(0, R, RBLOCK):
        r = off + base
        m = r < R
        acc += tl.load(in_ptr + (r + R * x), m, other=0.0)
    tl.store(out_ptr + x, tl.sum(acc, 1)[:, None] / R)


def _compile(fn, xblock, rblock, warps):
    k = tilejit.compile(fn, signature={"in_ptr": "*fp32", "out_ptr": "*fp32"},
                        constexprs={"R": 16416, "XBLOCK": xblock, "RBLOCK": rblock},
                        divisible_by_16=("in_ptr", "out_ptr"), target="cuda:90", num_warps=warps)
    if tgt.find_ptxas():
        tgt.ptxas(k.asm["ptx"], 90)
    return k


def _vec(k, warps):
    return kernel_max_vec(k.func, analyze(k.func), warps * 32)


def test_scalar_rows_get_one_element_chunks():
    k = _compile(wrapped_mean, 1, 2048, 16)
    assert _vec(k, 16) == 1
    ptx = k.asm["ptx"]
    assert "shl.b32" not in ptx.split("$L__BB0_1:")[0]     # no tid * 4 before the loop
    assert not re.search(r"ld\.global[.\w:]*\.v\d", ptx)   # the loads stay scalar


def test_vector_loads_keep_four_element_chunks():
    k = _compile(plain_mean, 1, 2048, 16)
    assert _vec(k, 16) == MAX_VEC
    assert re.search(r"ld\.global[.\w:]*\.v4\.b32", k.asm["ptx"])


@pytest.mark.parametrize("xblock,rblock,warps", [(64, 64, 16), (8, 512, 16), (16, 32, 4)])
def test_rows_narrower_than_the_threads_chunks_keep_four(xblock, rblock, warps):
    assert _vec(_compile(wrapped_mean, xblock, rblock, warps), warps) == MAX_VEC


def test_without_facts_nothing_changes():
    k = _compile(wrapped_mean, 1, 2048, 16)
    assert kernel_max_vec(k.func) == MAX_VEC and kernel_max_vec(k.func, None, 512) == MAX_VEC


@tilejit.jit
def persistent_row_sum(in_ptr, out_ptr, RBLOCK: tl.constexpr):
    """Inductor's persistent reduction of rows of 4097 (odd: scalar loads), one row per
    program: the [1, 1] result's store does not decide the chunk width."""
    row = tl.program_id(0)
    r = tl.arange(0, RBLOCK)[None, :]
    v = tl.load(in_ptr + (r + 4097 * row), r < 4097, other=0.0)
    tl.store(out_ptr + row + tl.zeros([1, 1], tl.int32), tl.sum(v, 1)[:, None])


def test_small_result_tiles_do_not_decide():
    k = tilejit.compile(persistent_row_sum, signature={"in_ptr": "*fp32", "out_ptr": "*fp32"},
                        constexprs={"RBLOCK": 8192}, divisible_by_16=("in_ptr", "out_ptr"),
                        target="cuda:90", num_warps=16)
    if tgt.find_ptxas():
        tgt.ptxas(k.asm["ptx"], 90)
    assert _vec(k, 16) == 1
