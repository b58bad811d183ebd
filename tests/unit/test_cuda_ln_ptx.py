"""PTX of the memory-bound tutorial kernels (04 dropout, 05 layer norm backward) on
sm_90, no GPU needed: Philox's multiplies are one mul.wide.u32 per product (not
mul.hi + mul.lo), the division by the scalar 1 - p makes its reciprocal once (div.rn
only on the out-of-range path), the layer-norm masks are compared once per chunk,
and the lock's atomics carry their ordering (no fences)."""
from __future__ import annotations

import re
import subprocess

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tests.cuda_switches import cuda_tuning
from tests.e2e import test_tutorials as T


@pytest.fixture(autouse=True)
def fast_paths():
    """The fast paths (on by default since an H200 run) pinned on: their PTX is tested here."""
    with cuda_tuning(ordered_atom_asm=True, wide_umulhi=True, uniform_divisor=True,
                     chunk_constant_cmp=True, remat_broadcasts=True):
        yield


seeded_dropout = T.seeded_dropout_kernel     # tutorial 04's kernel, shared with the e2e test


DROP_SIG = {"x_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32", "p": "fp32", "seed": "i32"}


def _ptx(fn, sig, div16, warps, **cex):
    return tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=div16,
                           target="cuda:90", num_warps=warps).asm["ptx"]


def _count(ptx, pat):
    return len(re.findall(pat, ptx))


def test_dropout_philox_uses_wide_multiplies():
    ptx = _ptx(seeded_dropout, DROP_SIG, ("x_ptr", "output_ptr", "n_elements"), 4, BLOCK_SIZE=1024)
    slots = 1024 // 128
    assert _count(ptx, r"mul\.hi\.") == 0
    # 10 rounds x 2 products, less the ones on constant-zero counters, per element
    assert 15 * slots <= _count(ptx, r"mul\.wide\.u32") <= 20 * slots
    assert _count(ptx, r"mul\.lo\.") <= slots            # the low halves come from the wide products


def test_dropout_division_reciprocal_made_once():
    ptx = _ptx(seeded_dropout, DROP_SIG, ("x_ptr", "output_ptr", "n_elements"), 4, BLOCK_SIZE=1024)
    slots = 1024 // 128
    assert _count(ptx, r"rcp\.approx\.ftz\.f32") == 1
    assert _count(ptx, r"fma\.rn\.f32") == 2 + 2 * slots   # refinement + 2 per element
    # div.rn only on the path taken when an operand is out of the fast path's range
    assert _count(ptx, r"div\.rn\.f32") == slots
    body = ptx[:ptx.index("div.rn.f32")]
    assert _count(body, r"fma\.rn\.f32") == 2 + 2 * slots


@tilejit.jit
def masked_scale(X, Out, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + cols, mask=mask, other=0.0)
    tl.store(Out + cols, tl.where(mask, x * 2.0, -1.0))


@pytest.mark.parametrize("div16,per_thread_compares", [(("X", "Out", "N"), 2), (("X", "Out"), 8)])
def test_mask_compared_once_per_chunk(div16, per_thread_compares):
    """N divisible by 16: cols < N is constant over 4-element chunks (fp32): one
    setp per chunk; N unknown: one per element."""
    ptx = _ptx(masked_scale, {"X": "*fp32", "Out": "*fp32", "N": "i32"}, div16, 4, BLOCK=1024)
    assert _count(ptx, r"setp\.lt\.s32") == per_thread_compares


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
def test_dropout_assembles():
    ptx = _ptx(seeded_dropout, DROP_SIG, ("x_ptr", "output_ptr", "n_elements"), 4, BLOCK_SIZE=1024)
    out = tgt.ptxas(ptx, 90, verbose=True)
    m = re.search(r"Used (\d+) registers", out)
    assert m and int(m.group(1)) <= 96
    assert "spill" not in out or "0 bytes spill stores" in out


@tilejit.jit
def dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def test_dwdb_broadcasts_of_index_expressions_are_recomputed():
    """rows[:, None] < M, rows[:, None] * N, cols[None, :] ... are recomputed in the 2-D
    layout (no shared memory in the loop); only the two column sums use it."""
    sig = {"DW": "*fp16", "DB": "*fp16", "FINAL_DW": "*fp16", "FINAL_DB": "*fp16", "M": "i32", "N": "i32"}
    ptx = _ptx(dwdb, sig, ("DW", "DB", "FINAL_DW", "FINAL_DB", "N"), 4, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    head, loop_and_rest = ptx.split("ld.global", 1)
    loop = loop_and_rest[:loop_and_rest.rindex("ld.global")]
    assert "bar.sync" not in loop and "st.shared" not in loop and "ld.shared" not in loop
    assert "bar.sync" not in head
    assert _count(ptx, r"bar\.sync") == 4          # two reductions across warps


def test_fast_paths_off_give_the_plain_lowering():
    with cuda_tuning(wide_umulhi=False, uniform_divisor=False, chunk_divide=False):
        ptx = _ptx(seeded_dropout, DROP_SIG, ("x_ptr", "output_ptr", "n_elements"), 4, BLOCK_SIZE=1024)
    assert _count(ptx, r"mul\.wide\.u32") == 0 and _count(ptx, r"mul\.hi\.u32") > 0
    assert _count(ptx, r"rcp\.approx") == 0 and _count(ptx, r"div\.rn\.f32") == 8
