"""PTX of the rematerialisation across reductions (tilejit/backends/cuda/remat.py), no
GPU needed: tutorial 05's layer-norm backward dx kernel (fp16, 8192 columns, 8 warps)
converts x, w and dy from fp16 again after each row sum instead of holding xhat, w*dy
and dy in fp32 across it, asks ptxas for two programs per SM and gets them without
spills; with the switch off, or where the plan saves too little, the PTX is the plain
lowering's."""
from __future__ import annotations

import os
import re
import sys

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tests.cuda_switches import cuda_tuning

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from test_layer_norm_memory_bound import ln_bwd_dx  # noqa: E402  (the tutorial's dx kernel)
from test_row_loop_layouts import ln_forward_rows  # noqa: E402  (Liger's LayerNorm forward)

SIG = {"DX": "*fp16", "DY": "*fp16", "DW": "*fp16", "DB": "*fp16", "X": "*fp16", "W": "*fp16",
       "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"}
DIV16 = tuple(SIG)


def _ptx(fn=ln_bwd_dx, sig=SIG, warps=8, **cex):
    cex = cex or {"GROUP_SIZE_M": 96, "BLOCK_SIZE_N": 8192}
    return tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=tuple(sig),
                           target="cuda:90", num_warps=warps).asm["ptx"]


def _count(text, pat):
    return len(re.findall(pat, text))


def _dx_store_region(ptx):
    """From the row sums' last barrier to the first dx store (the code that makes dx)."""
    head = ptx[:ptx.index("st.global")]
    return head[[m.start() for m in re.finditer(r"bar\.sync", head)][-1]:]


@pytest.fixture
def remat_on():
    with cuda_tuning(remat_reductions=True, remat_occupancy=True):
        yield


@pytest.mark.parametrize("fused", [True, False])
def test_dx_recomputes_from_fp16_after_the_row_sums(remat_on, fused):
    with cuda_tuning(fuse_siblings=fused):
        ptx = _ptx()
    assert ".minnctapersm 2" in ptx
    # the plain lowering converts x, dy, w once (96) and the loaded partial DW once (32);
    # the second row sum, done apart from the first, needs w and dy again (64)
    assert _count(ptx, r"cvt\.f32\.f16") == 96 + (0 if fused else 64) + 96 + 32
    region = _dx_store_region(ptx)
    assert _count(region, r"cvt\.f32\.f16") == 96          # x, w, dy again for dx
    # the fp16 words pass through opaque copies (16 per tensor) before each recomputation
    assert _count(ptx, r"mov\.b32 \t?%r\d+, %r\d+;") >= 16 * 5


def test_switch_off_gives_the_plain_lowering():
    with cuda_tuning(remat_reductions=False):
        ptx = _ptx()
    assert ".minnctapersm" not in ptx
    assert _count(ptx, r"cvt\.f32\.f16") == 96 + 32
    assert _count(_dx_store_region(ptx), r"cvt\.f32\.f16") == 0


def test_small_rows_save_too_little_and_keep_their_ptx():
    """fp32 rows of 1024 in 4 warps: 8 values per thread -- nothing worth recomputing."""
    sig = dict(SIG, DX="*fp32", DY="*fp32", DW="*fp32", DB="*fp32", X="*fp32", W="*fp32")
    on = _ptx(sig=sig, warps=4, GROUP_SIZE_M=4, BLOCK_SIZE_N=1024)
    with cuda_tuning(remat_reductions=False):
        off = _ptx(sig=sig, warps=4, GROUP_SIZE_M=4, BLOCK_SIZE_N=1024)
    assert on == off


@tilejit.jit
def dot_then_sum(A, B, Out, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(A + r[:, None] * BLOCK + r[None, :]).to(tl.float32)
    b = tl.load(B + r[:, None] * BLOCK + r[None, :]).to(tl.float32)
    c = tl.dot(a, b)
    s = tl.sum(a, axis=1)
    tl.store(Out + r[:, None] * BLOCK + r[None, :], c + a * s[:, None])


def test_kernels_with_a_dot_are_left_alone():
    sig = {"A": "*fp16", "B": "*fp16", "Out": "*fp32"}
    with cuda_tuning(remat_min_saving=0):
        on = _ptx(dot_then_sum, sig, 4, BLOCK=64)
    with cuda_tuning(remat_min_saving=0, remat_reductions=False):
        assert on == _ptx(dot_then_sum, sig, 4, BLOCK=64)


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
def test_dx_fits_two_programs_per_sm_without_spills(remat_on):
    out = tgt.ptxas(_ptx(), 90, verbose=True)
    regs = int(re.search(r"Used (\d+) registers", out).group(1))
    assert regs <= 128
    assert "spill" not in out or "0 bytes spill stores" in out


@tilejit.jit
def held_rows(X, Y, Z, Out, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + cols).to(tl.float32)
    y = tl.load(Y + cols)
    z = tl.load(Z + cols)
    s = tl.sum(x * x, axis=0)
    tl.store(Out + cols, x * s + y + z)


def test_no_occupancy_request_when_much_stays_held(remat_on):
    """x is converted again after the sum, but y and z (fp32, 64 registers at 8192 in 8
    warps) stay held across it: more than half of two programs' budget -- no request."""
    sig = {"X": "*fp16", "Y": "*fp32", "Z": "*fp32", "Out": "*fp32"}
    ptx = _ptx(held_rows, sig, 8, BLOCK=8192)
    assert _count(ptx, r"cvt\.f32\.f16") == 64
    assert ".minnctapersm" not in ptx


@pytest.mark.parametrize("fused,bars", [(True, 2), (False, 10)])
def test_sibling_reductions_share_one_exchange(fused, bars):
    """Five full reductions of ready rows (8 warps): one barrier pair for all of them;
    the sixth needs the first's result and gets its own."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
    from test_fused_reductions import many_sums
    sig = {"X": "*fp32", "H": "*fp16", "I": "*i32", "Out": "*fp32", "N": "i32"}
    with cuda_tuning(fuse_siblings=fused):
        ptx = _ptx(many_sums, sig, 8, BLOCK=1024, TAG=0)
    assert _count(ptx, r"bar\.sync") == bars + 2


LN_SIG = {"Y": "*bf16", "X": "*bf16", "W": "*bf16", "B": "*bf16", "Mean": "*fp32", "Rstd": "*fp32",
          "stride": "i32", "n_cols": "i32", "eps": "fp32"}


def test_no_occupancy_request_where_the_plain_lowering_already_fits_two(remat_on):
    """16 bf16 values per thread: w, b, x in fp32 across the first sum are 48 registers,
    within half of two programs' budget already.  The plan still converts w and b again
    after the sums, but asks ptxas nothing: the request would only loosen it (Liger's
    LayerNorm forward: 47 registers without it, 63 with it -- 5 -> 4 programs per SM)."""
    ptx = _ptx(ln_forward_rows, LN_SIG, 8, BLOCK=4096)
    with cuda_tuning(remat_reductions=False):
        plain = _ptx(ln_forward_rows, LN_SIG, 8, BLOCK=4096)
    assert _count(ptx, r"cvt\.f32\.bf16") > _count(plain, r"cvt\.f32\.bf16") == 48
    assert ".minnctapersm" not in ptx


@tilejit.jit
def rms_fwd_rows(Y, X, W, Rstd, stride, n_cols, eps, BLOCK: tl.constexpr):
    """Liger-Kernel's RMSNorm forward (Llama casting): x in fp32 across the row sum."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * stride + cols, mask=mask, other=0)
    w = tl.load(W + cols, mask=mask, other=0)
    xf = x.to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(xf * xf, axis=0) / n_cols + eps)
    tl.store(Rstd + row, rstd)
    tl.store(Y + row * stride + cols, (xf * rstd).to(tl.bfloat16) * w, mask=mask)


RMS_SIG = {"Y": "*bf16", "X": "*bf16", "W": "*bf16", "Rstd": "*fp32", "stride": "i32", "n_cols": "i32",
           "eps": "fp32"}


def test_a_small_saving_counts_where_little_is_held(remat_on):
    """16 bf16 values per thread: x in fp32 (16 registers) and w (8) across the sum.
    Converting x again after it saves 8 -- half the usual minimum, but a third of what
    is held: the plan is used (Liger's RMSNorm forward: 48 -> 40 registers), without an
    occupancy request."""
    from tilejit.backends.cuda.remat import min_saving
    assert min_saving(16, 24) == 8 and min_saving(16, 200) == 16 and min_saving(0, 24) == 0
    ptx = _ptx(rms_fwd_rows, RMS_SIG, 8, BLOCK=4096)
    with cuda_tuning(remat_reductions=False):
        plain = _ptx(rms_fwd_rows, RMS_SIG, 8, BLOCK=4096)
    assert _count(ptx, r"cvt\.f32\.bf16") == _count(plain, r"cvt\.f32\.bf16") + 16
    assert ".minnctapersm" not in ptx
    if tgt.find_ptxas() is not None:
        regs = [int(re.search(r"Used (\d+) registers", tgt.ptxas(p, 90, verbose=True)).group(1))
                for p in (ptx, plain)]
        assert regs[0] < regs[1], regs
