"""CPU tier of ``CudaTuning.imm_offsets``: per-thread shared-memory addresses that differ
by constants are one register plus immediates written into the instructions; of
``uniform_wg`` (the wgmma warpgroup index read from lane 0 by ``shfl.sync.idx``)
and ``proxy_fence`` (the async-proxy fence before the stage's wgmma).

Tutorial 03's matmul and tutorial 08's grouped GEMM (the benchmark's specialisations,
cuda:90): the ring's 16-byte ``cp.async`` copies of a stage use one address register per
operand (A chunks 32 rows = 4096 bytes apart, B chunks 16 rows = 2048 bytes apart), the
prologue's stages are immediates too, ptxas needs fewer registers (the grouped GEMM, whose
dot loop sits in an outer loop, stops spilling in its ring loop's address math), and the
mma.sync register path reads its staged fragments with ``ldmatrix [%r+imm]``.  With the
switch off the PTX has no immediates (the form before).  No GPU needed."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tilejit.backends.cuda import target as tgt
from tilejit.runtime.options import get_options
from tests.cuda_switches import cuda_tuning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")


@pytest.fixture
def imm(request):
    with cuda_tuning(imm_offsets=request.param):
        yield request.param


def _ptx(name, tmp_path, arch=90):
    return _kernel(name, tmp_path, arch).asm["ptx"]


def _kernel(name, tmp_path, arch=90):
    pytest.importorskip("torch", reason="the benchmark's tutorial kernels import torch")
    import matmul_tutorial_probe as P
    from tilejit.backends import get_backend
    from tilejit.compat import install_triton_alias
    install_triton_alias()

    class NS:
        tmp = str(tmp_path)
    func, _ = P._func(NS, name)
    func.attrs["target"] = f"cuda:{arch}"
    return get_backend("cuda").compile(func, get_options())


def _ptxas(ptx, tmp_path):
    path = os.path.join(str(tmp_path), "k.ptx")
    with open(path, "w") as f:
        f.write(ptx)
    r = subprocess.run([tgt.find_ptxas(), "-v", "-arch=sm_90a", path, "-o", os.devnull],
                       capture_output=True, text=True, check=True)
    text = r.stdout + r.stderr
    regs = int(re.search(r"Used (\d+) registers", text).group(1))
    spills = int(re.search(r"(\d+) bytes spill stores", text).group(1))
    return regs, spills


def _loop(ptx):
    """The tensor-core loop's text (header label to its back branch)."""
    loops = [m.group(2) for m in re.finditer(r"^(\$L__BB\d+_\d+):$(.*?)bra(?:\.uni)?\s+\1;", ptx, re.M | re.S)]
    hits = [t for t in loops if "wgmma.mma_async" in t or "mma.sync" in t]
    assert len(hits) == 1
    return hits[0]


COPY = re.compile(r"cp\.async\.cg\.shared\.global \[(%r\d+)(?:\+(\d+))?\], \[%rd\d+\], 16")


def _copies(text):
    return [(reg, int(off or 0)) for reg, off in COPY.findall(text)]


@pytest.mark.parametrize("imm", [True], indirect=True)
def test_matmul_ring_copies_share_one_register_per_operand(imm, tmp_path):
    ptx = _ptx("mm", tmp_path)
    body = _copies(_loop(ptx))
    assert len(body) == 8
    regs = {}
    for reg, off in body:
        regs.setdefault(reg, []).append(off)
    assert sorted(sorted(v) for v in regs.values()) == [[0, 2048, 4096, 6144], [0, 4096, 8192, 12288]]
    # the prologue's two stages: the same two registers, stage 1 at +32768 (the stage size)
    pro = _copies(ptx[:ptx.index(_loop(ptx))])
    assert len(pro) == 16 and len({r for r, _ in pro}) == 2
    offs = sorted(o for _, o in pro)
    assert offs == sorted([0, 2048, 4096, 6144, 0, 4096, 8192, 12288]
                          + [o + 32768 for o in (0, 2048, 4096, 6144, 0, 4096, 8192, 12288)])


@pytest.mark.parametrize("imm", [False], indirect=True)
def test_switch_off_keeps_one_register_per_copy(imm, tmp_path):
    ptx = _ptx("mm", tmp_path)
    body = _copies(_loop(ptx))
    assert len(body) == 8 and all(off == 0 for _, off in body) and len({r for r, _ in body}) == 8
    assert not re.search(r"ldmatrix[^\n]*\[%r\d+\+\d+\]", ptx)


@pytest.fixture
def fresh(request):
    with cuda_tuning(fresh_tid=request.param):
        yield request.param


@needs_ptxas
@pytest.mark.parametrize("fresh", [False], indirect=True)
@pytest.mark.parametrize("imm", [True], indirect=True)
def test_fewer_registers_and_spills(imm, fresh, tmp_path):
    """Tutorial 03: 126 -> 116 registers; tutorial 08 with its loads hinted aligned (one
    ring loop, no fallback): 202 -> 128; the versioned grouped GEMM: 328 -> under 128
    bytes of spill stores (one thread index for the kernel: ``fresh_tid`` off)."""
    regs, spills = _ptxas(_ptx("mm", tmp_path), tmp_path)
    assert regs <= 120 and spills == 0
    regs, spills = _ptxas(_ptx("gg_hinted", tmp_path), tmp_path)
    assert regs <= 160 and spills == 0
    _, spills = _ptxas(_ptx("gg", tmp_path), tmp_path)
    assert spills < 128


@pytest.mark.parametrize("imm", [True], indirect=True)
def test_register_path_ldmatrix_immediates(imm, tmp_path):
    """The grouped GEMM's fallback loop (mma.sync on padded stagings): one ldmatrix
    address register for A and one for B, the k-steps and tiles as immediates."""
    ptx = _ptx("gg", tmp_path)
    lds = re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4(\.trans)?\.shared\.b16 \{[^}]*\}, \[(%r\d+)(?:\+(\d+))?\];", ptx)
    assert len(lds) >= 16
    assert len({(t, r) for t, r, _ in lds}) == 2
    assert any(off for _, _, off in lds)


@pytest.fixture
def uwg(request):
    with cuda_tuning(uniform_wg=request.param):
        yield request.param


@pytest.mark.parametrize("uwg", [True, False], indirect=True)
def test_uniform_warpgroup_index(uwg, tmp_path):
    """On: one ``shfl.sync.idx`` of the warpgroup index per iteration, ahead of the four
    wgmma (their A descriptors derive from it); off: none in the loop."""
    body = _loop(_ptx("mm", tmp_path))
    shfl = re.findall(r"shfl\.sync\.idx\.b32\s+%r\d+, %r\d+, 0, 31, -1;", body)
    assert len(shfl) == (1 if uwg else 0)
    if uwg:
        assert body.index("shfl.sync.idx") < body.index("wgmma.mma_async")
    assert body.count("wgmma.mma_async") == 4


@needs_ptxas
@pytest.mark.parametrize("uwg", [True], indirect=True)
@pytest.mark.parametrize("imm", [True], indirect=True)
def test_uniform_warpgroup_index_registers(uwg, imm, tmp_path):
    regs, spills = _ptxas(_ptx("mm", tmp_path), tmp_path)
    assert regs <= 112 and spills == 0


@pytest.fixture
def fence(request):
    with cuda_tuning(proxy_fence=request.param):
        yield request.param


@pytest.mark.parametrize("fence", [True, False], indirect=True)
def test_proxy_fence_switch(fence, tmp_path):
    body = _loop(_ptx("mm", tmp_path))
    assert body.count("fence.proxy.async.shared::cta") == (1 if fence else 0)
    assert body.index("cp.async.wait_group") < body.index("bar.sync") < body.index("wgmma.mma_async")


_TID = re.compile(r"mov\.u32\s+%r\d+, %tid\.x;")


@pytest.mark.parametrize("fresh", [True, False], indirect=True)
def test_fresh_thread_index_per_tile(fresh, tmp_path):
    """``fresh_tid``: the grouped GEMM reads %tid.x at the top of its group loop's and its tile
    loop's bodies (opaque inline asm), and nowhere else; off: one read, before the loops."""
    ptx = _ptx("gg", tmp_path)
    reads = [m.start() for m in _TID.finditer(ptx)]
    first_loop = re.search(r"^\$L__BB\d+_\d+:$", ptx, re.M).start()
    if fresh:
        assert len(reads) == 2 and all(r > first_loop for r in reads)
    else:
        assert len(reads) == 1 and reads[0] < first_loop


@pytest.mark.parametrize("fresh", [True], indirect=True)
def test_fresh_thread_index_only_around_dot_loops(fresh, tmp_path):
    """A kernel without a loop around its dot loop (tutorial 03) is unchanged."""
    ptx = _ptx("mm", tmp_path)
    reads = list(_TID.finditer(ptx))
    assert len(reads) == 1 and reads[0].start() < ptx.index("wgmma.mma_async")


@needs_ptxas
@pytest.mark.parametrize("fresh", [True], indirect=True)
@pytest.mark.parametrize("imm", [True], indirect=True)
def test_fresh_thread_index_registers(imm, fresh, tmp_path):
    """The hinted grouped GEMM (one ring loop per tile) keeps its register count (<= 128)
    and no spills; the versioned one still assembles (its fallback loop now holds the
    spills: the ring loop has none left, checked on SASS in the notes)."""
    regs, spills = _ptxas(_ptx("gg_hinted", tmp_path), tmp_path)
    assert regs <= 128 and spills == 0
    regs, _ = _ptxas(_ptx("gg", tmp_path), tmp_path)
    assert regs <= 255


@pytest.mark.parametrize("arch", [90, 80])
def test_masked_operand_copies(arch, tmp_path):
    """The hinted tutorial-03 matmul's K masks (``offs_k[None, :]`` / ``offs_k[:, None]``, broadcast to the
    operand tiles): the loop copies each 16-byte chunk with a src-size (zero fill when its
    mask is false), one compare per chunk against K - k*64; the broadcasts' leaves move
    through shared memory once in the prologue, so the ring sits 1 KB above them (computing
    them per chunk instead measured slower on the H200 and was deleted)."""
    k = _kernel("mm", tmp_path, arch)
    loop = _loop(k.asm["ptx"])
    assert k.shared == 3 * 32768 + 1024
    assert len(re.findall(r"cp\.async\.cg\.shared\.global[^;]*, 16, %r\d+;", loop)) == 8
