"""CPU tier of the fused-attention forward on CUDA (tutorial 06's loop, block pointers,
BLOCK 128x64, 8 warps): both dots run on mma.sync fed by ldmatrix, the output
accumulator stays in the mma layout across the loop (its ``acc * alpha[:, None]`` is
applied in that layout), the softmax row reductions run in registers (butterfly
shuffles), K's and V's block-pointer loads are prefetched one iteration ahead in
vectors, nothing spills,
and ptxas assembles the PTX for sm_80 and sm_90a.  No GPU needed."""
from __future__ import annotations

import re

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tests.cuda_switches import cuda_tuning
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
    """The register path (rows_ring's cp.async ring switched off)."""
    with rows_switches():
        ptx = _ptx(arch)
    body = _loop(ptx)
    # 128x64 tile, 8 warps as 8x1 (mma_rows: a warp owns 16 whole rows): 1x8 fragments
    # per warp, 4 k-steps per dot, two dots
    assert body.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 64
    assert "ld.local" not in ptx and "st.local" not in ptx
    # A fragments come from registers (q's read before the loop, p's built from the first
    # dot's accumulator: the plan's a_regs, tests/golden/cuda_plan/attention_block_ptr.py
    # NORING); B by 4 ldmatrix.x4 per dot and k-step
    assert body.count("ldmatrix.sync.aligned.m8n8.x4") == 2 * 4 * 4
    assert "ld.shared" not in body
    # the row max / row sum finish in the quad: 2 shuffles x 2 rows per thread, twice
    assert body.count("shfl.sync.bfly") == 2 * 2 * 2
    # the loop's barriers only bracket the stagings of K and V
    assert body.count("bar.sync") == 4


def rows_switches(kmajor=True, ring=False, rotate=False, wgmma=False, occupancy=False, **more):
    """mma_rows' K-major B loads and rows_ring's cp.async ring set as given (CudaTuning
    fields; ``more``: other fields)."""
    return cuda_tuning(kmajor_b=kmajor, row_ring=ring, ring_rotate_first=rotate,
                       ring_wgmma=wgmma, ring_occupancy=occupancy, **more)


@pytest.mark.parametrize("arch", [80, 90])
def test_block_pointer_loads_are_prefetched_a_tile_ahead(arch):
    """As shipped: K's and V's tiles come through block pointers the body computes from
    carried offsets, and the next iteration's tiles are requested (predicated on there
    being a next iteration) before this iteration's first mma, all in 4-element vectors:
    V along its rows, K's transposed block (order (0, 1)) along its contiguous dim 0 (its
    pointer tile evaluated transposed), staged K-major and read by plain ldmatrix.  Each
    dot's B is staged under its own barrier pair (rows_ring's cp.async ring switched off)."""
    with rows_switches():
        ptx = _ptx(arch)
    body = _loop(ptx)
    first_mma = body.index("mma.sync")
    vec = [m.start() for m in re.finditer(r"@%p\d+ ld\.global\.v4\.b16", body)]
    assert len(vec) == 8 and max(vec) < first_mma
    assert len(re.findall(r"ld\.global", body)) == 8
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4 * 4
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 4 * 4
    assert body.count("bar.sync") == 4
    if tgt.find_ptxas():
        msg = tgt.ptxas(ptx, arch, verbose=True)
        assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", msg), msg


@pytest.mark.parametrize("arch", [80, 90])
def test_strided_k_loads_without_kmajor(arch):
    """K-major B switched off: K's transposed tile moves in 2-byte strided loads, rotated a
    tile ahead too since the row region (mma_rows) left registers to spare; V in
    4-element vectors (the plan's widths: tests/golden/cuda_plan/attention_block_ptr.py
    NOKMAJOR), all issued before the first mma; both B operands read by ldmatrix.trans."""
    with rows_switches(kmajor=False):
        body = _loop(_ptx(arch))
    first_mma = body.index("mma.sync")
    loads = list(re.finditer(r"(@%p\d+ )?ld\.global(\.[\w.]+)", body))
    assert {(m.group(1) is not None, m.group(2)) for m in loads} == {(True, ".b16"), (True, ".v4.b16")}
    assert max(m.start() for m in loads) < first_mma
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 2 * 4 * 4


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
def test_attention_assembles(arch):
    """As shipped, ptxas assembles it without spills: on sm_90a within the 128 registers
    of the planned cap, the first dot's wgmma waited for before the softmax's exp2s.
    Which path is taken (the ring on wgmma with the cap and the first dot in order on
    sm_90, on mma.sync with the first dot an iteration ahead and no cap on sm_80) is the
    planning stage's decision: tests/golden/cuda_plan/attention_block_ptr.py."""
    ptx = _ptx(arch)
    msg = tgt.ptxas(ptx, arch, verbose=True)
    regs = int(re.search(r"Used (\d+) registers", msg).group(1))
    spills = [int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", msg)]
    assert max(spills) == 0, msg
    if arch == 90:
        assert regs <= 128, msg
        body = _loop(ptx)
        assert body.index("wgmma.wait_group.sync.aligned 0;") < body.index("ex2.approx")
    else:
        assert regs <= 255, msg


def _ptx_with_attrs(**attrs):
    from tilejit.runtime.compiler import build
    func, _ = build(attn_fwd, SIG, dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64),
                    ("Q", "K", "V", "Out", "stride_qm", "stride_kn", "stride_vk", "stride_om", "N_CTX"), (), None)
    func.attrs.update(attrs)
    return tilejit.compile(func, target="cuda:90", num_warps=8, num_stages=3).asm["ptx"]


def test_launch_maxnreg_is_emitted():
    """The launch's own maxnreg is the kernel's .maxnreg.  When the planned cap applies
    (occupancy.py) and when it yields (the launch chose, ``ring_occupancy`` off) is the
    planning stage's decision: tests/golden/cuda_plan/attention_block_ptr.py."""
    assert re.findall(r"\.maxnreg (\d+)", _ptx_with_attrs(maxnreg=168)) == ["168"]


@pytest.mark.parametrize("arch,wide", [(80, True), (90, True), (90, False)])
def test_ring_of_b_tiles(arch, wide):
    """rows_ring on: K's and V's tiles are copied to shared memory by cp.async (the
    pointer tiles' chunks: with ``ring_wide_copies``, on by default, 8 elements, one
    16-byte ``cp.async.cg``, 2 per thread and tile, as Triton; off, the kernel's 4-element
    chunks, 8-byte ``cp.async.ca``, 4 per thread and tile), two iterations ahead (3
    stages: the prologue issues two groups), one wait and ONE barrier per iteration, no
    global load or shared store left in the loop; K (K-major) read by plain ldmatrix, V by
    ldmatrix.trans, from the swizzled stages; the A fragments as before (the first dot
    in its iteration: ``ring_rotate_first`` off)."""
    with rows_switches(ring=True, ring_wide_copies=wide):
        ptx = _ptx(arch)
    body = _loop(ptx)
    cache, nbytes, n, other = ("cg", 16, 4, "ca") if wide else ("ca", 8, 8, "cg")
    assert body.count(f"cp.async.{cache}.shared.global") == n
    assert len(re.findall(rf"@%p\d+ cp\.async\.{cache}\.shared\.global \[%r\d+\], \[%rd\d+\], {nbytes};",
                          body)) == n
    assert ptx.count(f"cp.async.{cache}.shared.global") == 3 * n and f"cp.async.{other}" not in ptx
    assert body.count("cp.async.commit_group") == 1 and ptx.count("cp.async.commit_group") == 3
    assert body.count("cp.async.wait_group 1;") == 1 and "cp.async.wait_group 0;" in ptx.split(body)[1]
    assert body.count("bar.sync") == 1
    assert "ld.global" not in body and "st.shared" not in body and "ld.shared" not in body
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4 * 4
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 4 * 4
    assert body.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 64
    assert body.count("shfl.sync.bfly") == 2 * 2 * 2
    # the wait and the barrier come before the next copies, the copies before the first mma
    assert body.index("cp.async.wait_group") < body.index("bar.sync") < body.index(f"cp.async.{cache}")
    assert body.rindex(f"cp.async.{cache}") < body.index("mma.sync")
    if tgt.find_ptxas():
        msg = tgt.ptxas(ptx, arch, verbose=True)
        assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", msg), msg


# The ring switched off leaves the loop a row region without a ring: the planning
# stage's decision, tests/golden/cuda_plan/attention_block_ptr.py (NORING).


@pytest.mark.parametrize("arch", [80, 90])
def test_first_dot_an_iteration_ahead(arch):
    """``ring_rotate_first`` (on by default; here on mma.sync): q @ k of the next iteration is computed at the top of the
    body, from the next stage (waited for with wait_group 0: three stages, two tiles
    ahead), before this iteration's softmax (its exp2s come after the first mma.sync);
    the first tile's q @ k runs before the loop (32 more mma.sync, 4 more ldmatrix)."""
    with rows_switches(ring=True, rotate=True):     # mma.sync (sm_90a takes wgmma by default)
        ptx = _ptx(arch)
    body = _loop(ptx)
    assert body.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 64
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 96
    assert body.count("cp.async.wait_group 0;") == 1 and "cp.async.wait_group 1;" not in body
    assert body.count("bar.sync") == 1 and body.count("cp.async.cg.shared.global") == 4
    assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4 * 4
    assert body.index("bar.sync") < body.index("mma.sync") < body.index("ex2.approx")
    if tgt.find_ptxas():
        msg = tgt.ptxas(ptx, arch, verbose=True)
        assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", msg), msg


@pytest.mark.parametrize("rotate", [True, False])
def test_ring_dots_on_wgmma(rotate):
    """``ring_wgmma`` (on by default) on sm_90a: each dot is 4 wgmma m64n64k16 (one per k-step) with A
    from registers (q's hoisted fragments, p's packed from the first dot) and B by a
    descriptor of its swizzled stage (K K-major: imm-trans-b 0; V N-major: 1), between a
    wgmma.fence and one commit group (one descriptor computed per dot, the k-steps' from it
    by constant adds: rules_wgmma.desc_at); the copies are fenced for the async proxy before
    the barrier.  With the first dot an iteration ahead, its group is left in flight
    over the softmax (one wait after the second dot's group)."""
    with rows_switches(ring=True, rotate=rotate, wgmma=True):
        ptx = _ptx(90)
    assert ".target sm_90a" in ptx
    body = _loop(ptx)
    wg = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16 \{[^}]*\}, "
                    r"\{%r\d+,%r\d+,%r\d+,%r\d+\}, %rd\d+, 1, 1, 1, ([01]);", body)
    assert wg == ["0"] * 4 + ["1"] * 4
    assert "mma.sync" not in body and "ldmatrix" not in body
    assert body.count("wgmma.fence.sync.aligned") == 2 and body.count("wgmma.commit_group") == 2
    assert body.index("fence.proxy.async.shared::cta") < body.index("bar.sync")
    # in order, the second dot's group stays in flight over the loop edge (wgmma_inflight) and
    # the next tile's copies follow a second barrier
    assert body.count("bar.sync") == (1 if rotate else 2) and body.count("cp.async.cg.shared.global") == 4
    # one descriptor computed per dot (its stage address >> 4), its k-steps' by constant adds
    assert len(re.findall(r"shr\.u32\s+%r\d+, %r\d+, 4;", body)) == 2
    first_wait = body.index("wgmma.wait_group.sync.aligned 0;")
    if rotate:      # q @ k of the next tile in flight over this softmax
        assert body.index("wgmma.commit_group") < body.index("ex2.approx") < first_wait
    else:
        assert first_wait < body.index("ex2.approx")
    if tgt.find_ptxas():
        msg = tgt.ptxas(ptx, 90, verbose=True)
        assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", msg), msg
        assert "serialized" not in msg, msg



@pytest.mark.parametrize("arch", [80, 90])
def test_causal_mask_as_index_tile(arch):
    """``index_tiles``: the causal mask ``offs_m[:, None] >= start_n + offs_n[None, :]``
    (its vectors made outside the loop) is computed at each accumulator slot's (row,
    column): no shared-memory broadcast in the loop, which then takes rows_ring's ring
    (one barrier -- two on sm_90a, the last dot's group in flight --, no ld.global /
    st.shared), on wgmma on sm_90a (every dot in a ring: the
    register cap too, and the first dot in order under it).  ON by default (H200: tutorial 06
    causal 1.352 -> 1.147 ms); off, the loop keeps the register path's conversions."""
    from tests.e2e.test_attention_rows import attn_rows
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "Out": "*fp16", "M": "*fp32",
           "N_CTX": "i32"}

    def ptx(on):
        with rows_switches(ring=True, rotate=True, wgmma=True, occupancy=True, index_tiles=on):
            return tilejit.compile(attn_rows, signature=sig, constexprs=dict(
                HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=True, BF16=False),
                divisible_by_16=("Q", "K", "V", "Out", "M", "N_CTX"), target=f"cuda:{arch}",
                num_warps=8, num_stages=3).asm["ptx"]
    on, off = ptx(True), ptx(False)
    body = _loop(on)
    # sm_90a: the second dot's wgmma group in flight over the loop edge, a second barrier
    # before the next tile's copies (wgmma_inflight)
    assert body.count("bar.sync") == (2 if arch == 90 else 1) and "st.shared" not in body
    assert "ld.global" not in body
    assert body.count("cp.async.cg.shared.global") == 4
    assert len(re.findall(r"setp\.(?:lt|le|gt|ge)\.s32", body)) >= 16      # the mask's compares ...
    assert body.count("selp.f32") >= 16                                        # ... and selects
    if arch == 90:
        assert body.count("wgmma.mma_async") == 8 and ".maxnreg 128" in on
        if tgt.find_ptxas():
            msg = tgt.ptxas(on, 90, verbose=True)
            assert "serialized" not in msg and "Used 128 registers" in msg, msg
    else:
        assert body.count("mma.sync.aligned.m16n8k16") == 64
    assert _loop(off).count("bar.sync") > 1 and "cp.async" not in _loop(off)
