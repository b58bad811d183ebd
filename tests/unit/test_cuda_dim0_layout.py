"""The planner's dim-0-first layouts (backends/cuda/dim_order.py), no GPU needed: tiles
whose loads move along dim 0 -- Inductor's reduction over a middle axis, addressed through
``xindex % C`` (contiguity 1 where a block may wrap, two pieces of unit stride) and a
column-major tile -- get neighbouring threads along dim 0 (the ``cuda-plan`` stage says
so); a transposing copy (load along dim 0, store along dim 1 in one shape) takes the
layout of its load and restages its store; a row-major tile and ``CudaTuning.dim0_layouts``
off keep the blocked layout."""
from __future__ import annotations

import tilejit
import tilejit.language as tl
from tests.cuda_switches import cuda_tuning
from tests.e2e.test_dim0_layouts import amax_mid, col_tile_ops
from tests.unit.test_cuda_ptx_row_reduce import _loops

DIM0 = "neighbouring threads along dim 0"


def _plan(fn, sig, cex, warps=4):
    k = tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=tuple(n for n in sig if sig[n][0] == "*"),
                        target="cuda:90", num_warps=warps)
    return k.asm["cuda-plan"]


AMAX = ({"in_ptr": "*fp32", "max_ptr": "*fp32", "sum_ptr": "*fp32"},
        {"xnumel": 16416, "C": 513, "N": 2048, "XBLOCK": 64, "R0_BLOCK": 64})


def test_middle_axis_reduction_is_dim0_first():
    plan = _plan(amax_mid, *AMAX, warps=16)
    assert f"layout 64x64: 1-element chunks along dim 0, {DIM0}" in plan
    # after the loop: each thread's repetitions, then 8 partials per row in shared memory
    assert "tt.reduce max <64x64xfp32> axis 1 at" in plan and "axis 1 at" in plan
    assert plan.count(": dim-0 rows") == 2


@tilejit.jit
def _col_mean(in_ptr, out_ptr, xnumel: tl.constexpr, rnumel: tl.constexpr, XBLOCK: tl.constexpr,
              R0_BLOCK: tl.constexpr):      # x.mean(0) of a [rnumel, xnumel] tensor, as Inductor writes it
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    acc = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, rnumel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < rnumel
        t = tl.load(in_ptr + (xindex + xnumel * r0_index), r0_mask & xmask, other=0.0)
        acc = tl.where(r0_mask & xmask, acc + t, acc)
    tl.store(out_ptr + xindex, (tl.sum(acc, 1) / rnumel)[:, None], xmask)


def test_column_mean_loads_vectors_along_dim0():
    """Contiguous and 16-byte aligned along dim 0: 4-element chunks, ``ld.global.v4`` (as
    Triton's ``sizePerThread = [4, 1]``), the row sums without a loop over staged rows."""
    k = tilejit.compile(_col_mean, signature={"in_ptr": "*fp32", "out_ptr": "*fp32"},
                        constexprs={"xnumel": 256, "rnumel": 4096, "XBLOCK": 64, "R0_BLOCK": 64},
                        divisible_by_16=("in_ptr", "out_ptr"), target="cuda:90", num_warps=16)
    plan = k.asm["cuda-plan"]
    assert f"layout 64x64: 4-element chunks along dim 0, {DIM0}" in plan
    assert "width 4 (masked)" in plan and ": dim-0 rows" in plan
    assert k.asm["ptx"].count("ld.global.v4.b32") == 2      # 64x64 over 512 threads: two chunks of 4 each


def test_switch_off_keeps_blocked_layout():
    with cuda_tuning(dim0_layouts=False):
        plan = _plan(amax_mid, *AMAX, warps=16)
    assert DIM0 not in plan


def test_column_major_tile_is_dim0_first():
    sig = {"X": "*fp32", "bias_ptr": "*fp32", "out_ptr": "*fp32", "col_ptr": "*fp32", "all_ptr": "*fp32",
           "arg_ptr": "*i32", "rows_ptr": "*fp32", "M": "i32", "N": "i32"}
    plan = _plan(col_tile_ops, sig, {"BM": 64, "BN": 16})
    assert f"layout 64x16: 1-element chunks along dim 0, {DIM0}" in plan


@tilejit.jit
def _copy(X, sxm, Y, sym, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    tl.store(Y + m[:, None] * sym + n[None, :], tl.load(X + m[:, None] * sxm + n[None, :]))


@tilejit.jit
def _transpose(X, sxn, Y, sym, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    tl.store(Y + m[:, None] * sym + n[None, :], tl.load(X + m[:, None] + n[None, :] * sxn))


def test_row_major_tile_keeps_blocked_layout():
    assert DIM0 not in _plan(_copy, {"X": "*fp32", "sxm": "i32", "Y": "*fp32", "sym": "i32"}, {"BM": 64, "BN": 64})


def _transpose_kernel(dt, aligned=True):
    sig = {"X": f"*{dt}", "sxn": "i32", "Y": f"*{dt}", "sym": "i32"}
    return tilejit.compile(_transpose, signature=sig, constexprs={"BM": 64, "BN": 64},
                           divisible_by_16=("X", "Y", "sxn", "sym") if aligned else ("X", "Y"),
                           target="cuda:90", num_warps=4)


def test_transpose_loads_along_dim0_and_restages_its_store():
    """Loaded in 16-byte vectors along dim 0, moved through shared memory (rows padded by
    one element), stored in 16-byte vectors along dim 1 -- Triton's instruction counts."""
    for dt, vec in (("fp32", 4), ("fp16", 8)):
        k = _transpose_kernel(dt)
        plan, ptx = k.asm["cuda-plan"], k.asm["ptx"]
        assert f"layout 64x64: {vec}-element chunks along dim 0, {DIM0}" in plan
        assert f"restaged: moved to the row-major layout through shared memory first, width {vec}" in plan
        n = 64 * 64 // 128 // vec         # 16-byte accesses per thread
        assert ptx.count("ld.global.v4.b32") == n and ptx.count("st.global.v4.b32") == n
    with cuda_tuning(dim0_row_stores=False):
        assert DIM0 not in _transpose_kernel("fp32").asm["cuda-plan"]


def test_transpose_with_unaligned_rows_keeps_blocked_layout():
    """The store cannot move vectors (row stride not known 16-byte aligned): restaging
    would not pay, so the tile keeps the blocked layout."""
    assert DIM0 not in _transpose_kernel("fp32", aligned=False).asm["cuda-plan"]


def test_invariant_mask_loop_takes_tritons_llvm_pipeline():
    """Loads masked by ``r0_mask & xmask`` (xmask computed before the loop): LLVM O3 runs
    without the NVPTX target machine (llvm_pipeline.py), which splits the loop on xmask --
    two loops in the PTX, one whose loads ptxas can unroll; the NVPTX pipeline keeps one."""
    sig, cex = {"in_ptr": "*fp32", "max_ptr": "*fp32", "sum_ptr": "*fp32"}, dict(AMAX[1], XBLOCK=64, R0_BLOCK=4)
    k = tilejit.compile(amax_mid, signature=sig, constexprs=cex, divisible_by_16=tuple(sig), target="cuda:90",
                        num_warps=8)
    assert "llvm: a masked load in a loop" in k.asm["cuda-plan"]
    assert _loops(k.asm["ptx"]) == 2
    with cuda_tuning(triton_llvm_pipeline=False):
        k = tilejit.compile(amax_mid, signature=sig, constexprs=cex, divisible_by_16=tuple(sig), target="cuda:90",
                            num_warps=8)
    assert "llvm:" not in k.asm["cuda-plan"] and _loops(k.asm["ptx"]) == 1


def test_loop_variant_mask_keeps_nvptx_pipeline():
    """A row loop masked by ``cols < n`` only (Liger's, the tutorials'): nothing to split on."""
    plan = _plan(_col_mean_rows, {"X": "*fp32", "Y": "*fp32", "n": "i32"}, {"B": 256})
    assert "llvm:" not in plan


@tilejit.jit
def _col_mean_rows(X, Y, n, B: tl.constexpr):
    acc = tl.zeros([B], tl.float32)
    for start in range(0, n, B):
        cols = start + tl.arange(0, B)
        acc += tl.load(X + tl.program_id(0) * n + cols, cols < n, other=0.0)
    tl.store(Y + tl.program_id(0), tl.sum(acc, 0))
