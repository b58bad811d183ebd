"""CPU tier of the cp.async ring for dot loops whose operand pointers the body computes
from the induction variable (tutorial 09's persistent matmul and a one-tile kernel,
and a block-pointer matmul; kernels in tests/e2e/test_ring_computed_pointers.py): cuda:90 takes cp.async + wgmma,
cuda:80 cp.async + ldmatrix + mma.sync; the pointer slice and the K mask are evaluated
for iteration k + D in registers (the broadcasts sunk below the elementwise ops: no
shared-memory exchange left in the loop), the persistent kernel's outer loop restarts
the ring per tile, ptxas assembles without spills.  No GPU needed."""
from __future__ import annotations

import importlib.util
import os
import re

import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tilejit.runtime.options import Options

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")

_PATH = os.path.join(os.path.dirname(__file__), "..", "e2e", "test_ring_computed_pointers.py")
_spec = importlib.util.spec_from_file_location("ring_computed_kernels", _PATH)
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)

PSIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
        "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
        "stride_cm": "i32", "stride_cn": "i32"}
MSIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
        "sam": "i32", "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32"}


def _persistent(arch, stages=3):
    """As the launcher specialises the benchmark's call (fp16 4096^3, unit inner strides)."""
    return tilejit.compile(K.matmul_kernel_persistent, signature=PSIG,
                           constexprs=dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64,
                                           GROUP_SIZE_M=8, NUM_SMS=132),
                           divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am",
                                            "stride_bk", "stride_cm"),
                           equal_to_1=("stride_ak", "stride_bn", "stride_cn"),
                           target=f"cuda:{arch}", num_warps=8, num_stages=stages).asm["ptx"]


def _one_tile(arch, mask):
    from tilejit.runtime.compiler import build
    div = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "sam", "sbk", "scm", "K")
    func, _ = build(K.mm_computed, MSIG, dict(BM=128, BN=128, BK=64, MASK=mask), div, ("sak", "sbn"), None)
    return tilejit.compile(func, target=f"cuda:{arch}", num_warps=8, num_stages=3,     # one version of the
                           options=Options(align_version=False)).asm["ptx"]        # loop: the facts' one


BSIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
        "sam": "i32", "sbk": "i32", "scm": "i32"}


def _block_ptr(arch, check):
    return tilejit.compile(K.mm_block_ptr, signature=BSIG, constexprs=dict(BM=128, BN=128, BK=64, CHECK=check),
                           divisible_by_16=tuple(BSIG), target=f"cuda:{arch}", num_warps=8,
                           num_stages=3).asm["ptx"]


def _loops(ptx):
    """{header label: text} of every loop (header label to its back branch)."""
    return {m.group(1): m.group(2)
            for m in re.finditer(r"^(\$L__BB\d+_\d+):$(.*?)bra(?:\.uni)?\s+\1;", ptx, re.M | re.S)}


def _ring_loop(ptx):
    """The dot loop: the one loop holding the tensor-core instructions."""
    hits = [t for t in _loops(ptx).values() if "wgmma.mma_async" in t or "mma.sync" in t]
    assert len(hits) == 1, "expected one tensor-core loop"
    return hits[0]


def _check_ring(ptx, arch, masked):
    body = _ring_loop(ptx)
    copy = r"@%p\d+ cp\.async\.cg\.shared\.global \[%r\d+(?:\+\d+)?\], \[%rd\d+\], 16" + (r", %r\d+;" if masked else ";")
    # 128x64 + 64x128 fp16 per iteration over 256 threads: 8 16-byte copies per thread
    assert len(re.findall(copy, body)) == 8
    assert body.count("cp.async.commit_group") == 1
    assert "ld.global" not in body and "st.shared" not in body and "ld.shared.u8" not in body
    if arch == 90:
        assert re.search(r"^\.target sm_90a\b", ptx, re.M)
        assert body.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4
        assert "cp.async.wait_group 1;" in body and "mma.sync" not in ptx
    else:
        assert "wgmma" not in ptx and "cp.async.wait_group 1;" in body
        assert body.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0
        assert body.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") > 0
        assert body.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 128 * 128 * 64 // (16 * 8 * 16) // 8
    return body


@pytest.mark.parametrize("arch", [90, 80])
def test_persistent_matmul_takes_the_ring_inside_its_tile_loop(arch):
    ptx = _persistent(arch)
    _check_ring(ptx, arch, masked=True)
    loops = _loops(ptx)
    assert len(loops) == 2                       # the tile loop around the k loop
    # the prologue (D = 2 tiles ahead) runs once per tile: 3 copy groups in all
    assert ptx.count("cp.async.commit_group") == 3
    assert ptx.count("cp.async.wait_group 0;") == 1   # the ring drained before the tile's epilogue


@pytest.mark.parametrize("arch", [90, 80])
@pytest.mark.parametrize("mask", [0, 1, 2])
def test_one_tile_body_computed_pointers_take_the_ring(arch, mask):
    _check_ring(_one_tile(arch, mask), arch, masked=mask != 0)


@pytest.mark.parametrize("arch", [90, 80])
@pytest.mark.parametrize("check", [False, True])
def test_block_pointer_matmul_takes_the_ring(arch, check):
    """The pointer tile comes from carried scalar offsets (tl.advance): stepped D
    iterations ahead by the offsets' own update (boundary checks: masked copies)."""
    _check_ring(_block_ptr(arch, check), arch, masked=check)


# K not known to be a multiple of 16 (the mask may change inside a 16-byte chunk) keeps the
# register path: the planning stage's decision, tests/golden/cuda_plan/ring_computed.py.


@needs_ptxas
@pytest.mark.parametrize("arch", [90, 80])
@pytest.mark.parametrize("which", ["persistent", "masked", "block_ptr"])
def test_assembles_without_spills(arch, which):
    ptx = {"persistent": _persistent, "masked": lambda a: _one_tile(a, 1),
           "block_ptr": lambda a: _block_ptr(a, True)}[which](arch)
    msg = tgt.ptxas(ptx, arch, verbose=True)
    assert ("sm_90a" in msg) == (arch == 90)
    assert "serializ" not in msg.lower(), msg
    assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", msg), msg


@pytest.mark.parametrize("arch", [80, 90])
def test_attention_block_pointer_arithmetic_has_no_shared_memory_broadcasts(arch):
    """Tutorial 06's loop (register path): K's and V's block-pointer tiles are computed
    through IterSlices (broadcasts sunk, invariant leaves before the loop), so the loop's
    barriers are the softmax's and the dots' alone: 22 -> 14 bar.sync per iteration."""
    import test_cuda_ptx_attention as A
    with A.rows_switches(kmajor=False):     # the register path: no cp.async ring, strided K
        body = A._loop(A._ptx(arch))
    assert body.count("bar.sync") <= 14
    assert body.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 64
    assert len(re.findall(r"ld\.global\.b16", body)) == 16 and len(re.findall(r"ld\.global", body)) == 20


def test_rejections_say_why_a_dot_loop_keeps_the_register_path():
    from tilejit.backends.cuda.async_pipeline import rejections
    from tilejit.runtime.compiler import build
    import test_cuda_ptx_attention as A

    def why(fn, sig, consts, div, eq1=()):
        func, _ = build(fn, sig, consts, div, eq1, None)
        func.attrs["num_stages"] = 3
        return [r for _, r in rejections(func, 90, 8)]
    pdiv = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
    assert why(K.matmul_kernel_persistent, PSIG, dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64,
                                                      GROUP_SIZE_M=8, NUM_SMS=132),
               pdiv, ("stride_ak", "stride_bn", "stride_cn")) == []
    mdiv = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "sam", "sbk", "scm")
    assert why(K.mm_computed, MSIG, dict(BM=128, BN=128, BK=64, MASK=2), mdiv, ("sak", "sbn")) == [
        "a mask is not proved constant over 8-element chunks"]
    assert "no tt.dot accumulates" in why(A.attn_fwd, A.SIG, dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64),
                                          tuple(A.SIG))[0]
