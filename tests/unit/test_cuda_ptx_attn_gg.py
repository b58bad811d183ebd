"""CPU tier of tutorial 08's grouped GEMM epilogue and of tutorial 06's wgmma row ring (cuda:90,
the benchmark's specialisations: 128x128x64 and 128x64 D64, 8 warps, 3 stages; bench/attn_gg_ptx.py).

* ``CudaTuning.coalesced_results``: the C tile (stored through loaded, unproven-aligned
  ``c_ptr`` / ``ldc``: scalar 2-byte stores, contiguous along rows) is laid out one element
  per thread, so a warp's store covers 32 consecutive elements; off, chunks of 4.
* the accumulator conversion reads its staging at one address plus immediates;
* ptxas serialises no wgmma (C7514/C7515: the initial accumulator is fenced before the ring
  loop) and the fast ring path keeps no spill code;
* ``CudaTuning.proxy_fence`` also governs the attention rows ring's ``fence.proxy.async``;
* ``CudaTuning.wgmma_inflight``: the row ring's last dot (P@V) is not waited for in its
  iteration; its copies of the next tile follow a second barrier;
* ``CudaTuning.ring_remat_leaves``: the ring copies' invariant index leaves are computed per
  slot, not exchanged through shared memory (fewer barriers before each loop).
No GPU needed."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tests.cuda_switches import cuda_tuning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")


def _compile(name):
    pytest.importorskip("torch", reason="the tutorial scripts import torch")
    import attn_gg_ptx as A
    from bench_tutorials_cuda import kernels
    from tilejit.compat import install_triton_alias
    install_triton_alias()
    _, stem, kname, sig, cex, div = next(c for c in A.cases() if c[0] == name)
    return tilejit.compile(getattr(kernels(stem), kname), signature=sig, constexprs=cex,
                           divisible_by_16=div, target="cuda:90", num_warps=8, num_stages=3)


def _stores(ptx):
    return re.findall(r"^\s*st\.global\.b16", ptx, re.M)


@pytest.mark.parametrize("on", [True, False])
def test_grouped_gemm_c_tile_layout(on):
    with cuda_tuning(coalesced_results=on):
        k = _compile("grouped_gemm")
    plan, ptx = k.asm["cuda-plan"], k.asm["ptx"]
    assert ("layout 128x128: 1-element chunks" in plan) == on
    assert len(_stores(ptx)) == 64          # 128*128 / 256 threads, scalar either way
    # the conversion's blocked reads: one address register + immediates (fp32 words of
    # padded 136-word rows; with one element per thread, rows 2 apart: 1088 bytes)
    reads = re.findall(r"ld\.shared(?:\.v4)?\.(?:b32|f32)\s+\S.*?\[(%rd\d+)(?:\+(\d+))?\]", ptx)
    bases = {r for r, _ in reads}
    if on:
        assert len(reads) >= 2 * 64 and any(int(o or 0) == 1088 for _, o in reads)
    assert len(bases) <= 4


@needs_ptxas
def test_grouped_gemm_wgmma_not_serialized_and_fast_path_unspilled(tmp_path):
    ptx = _compile("grouped_gemm").asm["ptx"]
    path = os.path.join(str(tmp_path), "gg.ptx")
    with open(path, "w") as f:
        f.write(ptx)
    cubin = os.path.join(str(tmp_path), "gg.cubin")
    r = subprocess.run([tgt.find_ptxas(), "-v", "-arch=sm_90a", path, "-o", cubin],
                       capture_output=True, text=True, check=True)
    assert "C7514" not in r.stderr and "C7515" not in r.stderr and "C7517" not in r.stderr, r.stderr
    spills = int(re.search(r"(\d+) bytes spill stores", r.stderr).group(1))
    assert spills <= 200, r.stderr          # was 384 (the versioned fallback loop keeps some)


@pytest.mark.parametrize("fence", [True, False])
def test_attention_rows_ring_proxy_fence_switch(fence):
    with cuda_tuning(proxy_fence=fence):
        ptx = _compile("attn_fwd").asm["ptx"]
    assert "wgmma.mma_async" in ptx
    loops = [body for _, body in re.findall(r"^(\$L__BB\d+_\d+):$(.*?)bra(?:\.uni)?\s+\1;", ptx, re.M | re.S)]
    fenced = [body for body in loops if "fence.proxy.async.shared::cta" in body]
    assert len(fenced) == (1 if fence else 0)


def _loops(ptx):
    return [body for _, body in re.findall(r"^(\$L__BB\d+_\d+):$(.*?)bra(?:\.uni)?\s+\1;", ptx, re.M | re.S)]


@pytest.mark.parametrize("inflight", [True, False])
def test_attention_last_dot_in_flight(inflight):
    with cuda_tuning(wgmma_inflight=inflight):
        k = _compile("attn_fwd")
    ptx = k.asm["ptx"]
    assert ("last dot in flight over the loop edge" in k.asm["cuda-plan"]) == inflight
    (body,) = [b for b in _loops(ptx) if "wgmma.mma_async" in b]
    tail = body[body.rindex("wgmma.commit_group"):]     # after the P@V group's commit
    assert ("wgmma.wait_group" in tail) != inflight
    assert body.count("bar.sync") == (2 if inflight else 1)
    if inflight:    # the next tile's copies after the second barrier, behind the P@V issue
        assert tail.index("bar.sync") < tail.index("cp.async.cg")
        after = ptx[ptx.index(body) + len(body):]      # the last group retired after the loop
        assert "wgmma.wait_group.sync.aligned 0;" in after


def test_attention_ring_leaves_without_shared_memory():
    counts = {}
    for on in (True, False):
        with cuda_tuning(ring_remat_leaves=on):
            counts[on] = _compile("attn_causal").asm["ptx"].count("bar.sync")
    assert counts[True] <= counts[False] - 16, counts      # 40 -> 20 when written


@pytest.mark.parametrize("split", [True, False])
def test_attention_copy_addresses_split(split):
    """Tutorial 06's block-pointer copies: ``base + d + (off_n + n) * stride`` as
    ``(base + d + n * stride)`` hoisted plus one uniform ``off_n * stride`` per ring load
    and iteration (``ring_split_offsets``); off, one 64-bit multiply per copy chunk."""
    with cuda_tuning(ring_split_offsets=split):
        ptx = _compile("attn_fwd").asm["ptx"]
    (body,) = [b for b in _loops(ptx) if "wgmma.mma_async" in b]
    muls = len(re.findall(r"^\s*mul\.lo\.s64", body, re.M))
    assert muls == (2 if split else 4)          # K's and V's uniform products; off: per chunk
