"""CPU tier of the fused-attention forward on CUDA (tutorial 06's loop, block pointers,
BLOCK 128x64, 8 warps): both dots run on mma.sync fed by ldmatrix, the output
accumulator stays in the mma layout across the loop (its ``acc * alpha[:, None]`` is
applied in that layout), the softmax row reductions run in registers (butterfly
shuffles), V's block-pointer load is prefetched one iteration ahead, nothing spills,
and ptxas assembles the PTX for sm_80 and sm_90a.  No GPU needed."""
from __future__ import annotations

import re

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tests.e2e import test_ring_computed_pointers as R

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")


attn_fwd = R.attn_fwd  # tutorial 06's loop, shared with the end-to-end test

SIG = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "Out": "*fp16",
       "stride_qm": "i32", "stride_kn": "i32", "stride_vk": "i32", "stride_om": "i32", "N_CTX": "i32"}


def _ptx(arch):
    k = tilejit.compile(attn_fwd, signature=SIG, constexprs=dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64),
                        divisible_by_16=("Q", "K", "V", "Out", "stride_qm", "stride_kn", "stride_vk",
                                         "stride_om", "N_CTX"),
                        target=f"cuda:{arch}", num_warps=8, num_stages=3)
    return k.asm["ptx"]


def _loop(ptx):
    """The text of the kernel's (single) loop: from its header label to its back branch."""
    m = re.search(r"^(\$L__BB\d+_\d+):$(.*?)bra(?:\.uni)?\s+\1;", ptx, re.M | re.S)
    assert m, "no loop in the PTX"
    return m.group(2)


@pytest.mark.parametrize("arch", [80, 90])
def test_attention_loop_on_mma_with_the_accumulator_kept(arch):
    ptx = _ptx(arch)
    body = _loop(ptx)
    # 128x64 tile, 8 warps as 4x2: 2x4 fragments per warp, 4 k-steps per dot, two dots
    assert body.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 64
    assert "ld.local" not in ptx and "st.local" not in ptx
    # fragments come by ldmatrix: per dot and k-step, 2 x4 for A and 2 x4.trans for B
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 2 * 4 * 2
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 2 * 4 * 2
    assert "ld.shared.b16" not in body
    # the row max / row sum finish in registers: 16 lanes per 64-wide row, 4 rounds x 8 rows
    assert body.count("shfl.sync.bfly") == 2 * 4 * 8
    # no per-iteration conversion of the 128x64 fp32 accumulator into the mma layout:
    # the loop's shared-memory barriers stay well under the 26 of the unfused lowering
    assert body.count("bar.sync") <= 22


@pytest.mark.parametrize("arch", [80, 90])
def test_block_pointer_loads_are_prefetched_a_tile_ahead(arch):
    """V's tile comes through a block pointer the body computes from carried offsets:
    the next iteration's tile is requested (4-element chunks, predicated on there being a
    next iteration) before this iteration's first mma.  K's transposed tile (2-byte
    strided loads) is not rotated: holding it would spill."""
    body = _loop(_ptx(arch))
    first_mma = body.index("mma.sync")
    pred = [m.start() for m in re.finditer(r"@%p\d+ ld\.global\.v\d\.b\d+", body)]
    assert len(pred) == 4 and max(pred) < first_mma
    assert len(re.findall(r"ld\.global", body)) == 16 + 4
    assert len(re.findall(r"\tld\.global\.b16", body)) == 16


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
def test_attention_assembles_without_spills(arch):
    msg = tgt.ptxas(_ptx(arch), arch, verbose=True)
    assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", msg), msg
    regs = int(re.search(r"Used (\d+) registers", msg).group(1))
    assert regs <= 255
