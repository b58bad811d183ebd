"""CPU tier of cuda/mma_rows.py's planning: which loops get a row region, which ops it
lowers, which carried values stay in the row layout, and that loops without one keep
their usual dot layouts.  No GPU needed (the plans are read off a Lowering; the PTX of
the attention loop is checked in test_cuda_ptx_attention.py)."""
from __future__ import annotations

import pytest

import tilejit.language as tl
import tilejit
from tilejit.ir import ops
from tilejit.runtime.compiler import build


def _plans(fn, sig, cx, warps, tuning=None):
    """{loop: RowPlan or None} and the forced dot layouts, from a full lowering
    (``tuning``: a CudaTuning, default as shipped)."""
    from tilejit.backends.cuda import mma_rows
    from tilejit.backends.cuda.kernel import lower_kernel
    from tilejit.analysis import analyze
    func, _ = build(fn, sig, cx, tuple(k for k, v in sig.items() if v.startswith("*")))
    func.attrs["num_stages"] = 3
    got = {}
    orig = mma_rows.plan_rows

    def spy(lw, op):
        got[op] = orig(lw, op)
        return got[op]
    mma_rows.plan_rows = spy
    try:
        lw = lower_kernel(func, 90, warps, analyze(func), tuning=tuning)
    finally:
        mma_rows.plan_rows = orig
    return got, getattr(lw, "forced_ml", {})


from tests.e2e.test_attention_rows import attn_rows, row_stats  # noqa: E402

ATTN_SIG = dict(Q="*fp16", K="*fp16", V="*fp16", sm_scale="fp32", Out="*fp16", M="*fp32", N_CTX="i32")


def test_attention_loop_plan():
    plans, forced = _plans(attn_rows, ATTN_SIG, dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=False,
                                                     BF16=False), 8)
    (plan,) = plans.values()
    assert plan is not None and plan.wm == 8 and plan.M == 128
    kinds = {type(o).__name__ for o in plan.ops}
    # the row max / sum, the math on qk and on the row vectors, the broadcasts
    assert {"ReduceOp", "MathExp2Op", "MaxOp", "SubOp", "MulOp", "ExpandDimsOp", "BroadcastOp",
            "CastOp"} <= kinds
    assert sum(isinstance(o, ops.ReduceOp) for o in plan.ops) == 2
    assert len(plan.rows) == 2                   # m_i and l_i carried in the row layout
    assert len(plan.hoist) == 1                  # q's fragments read before the loop
    assert {(ml.wm, ml.wn) for ml in forced.values()} == {(8, 1)}


def test_causal_mask_outside_the_region_falls_back():
    """``index_tiles`` off: the mask is built from blocked vectors defined before the loop:
    the row max reads a value outside the region, so nothing is left that the region would
    save."""
    from tilejit.runtime.options import CudaTuning
    plans, forced = _plans(attn_rows, ATTN_SIG, dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=True,
                                                     BF16=False), 8, CudaTuning(index_tiles=False))
    assert list(plans.values()) == [None] and not forced


def test_causal_mask_as_index_tiles_joins_the_region():
    """As shipped (CudaTuning.index_tiles): the mask's 2-D index values (the broadcasts of
    offs_m and of start_n + offs_n, their compare) join the region (evaluated at the mma
    coordinates), so the whole softmax and p do: a full plan, as for the non-causal loop."""
    plans, forced = _plans(attn_rows, ATTN_SIG, dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=True,
                                                     BF16=False), 8)
    (plan,) = plans.values()
    assert plan is not None and len(plan.rows) == 2 and len(plan.hoist) == 1
    cmp = [o for o in plan.ops if isinstance(o, ops.CmpOp)]
    assert len(cmp) == 1 and cmp[0].attrs["pred"] == "ge"
    assert sum(isinstance(o, ops.BroadcastOp) and o.result.type.element.kind == "int" for o in plan.ops) == 2
    assert any(isinstance(o, ops.SelectOp) for o in plan.ops)
    assert sum(isinstance(o, ops.ReduceOp) for o in plan.ops) == 2
    assert {(ml.wm, ml.wn) for ml in forced.values()} == {(8, 1)}


def test_index_expressions():
    """mma_index.is_index: aranges, splats of scalars, constants, shape ops and integer
    arithmetic / compares qualify; a load or a float does not."""
    from tilejit.backends.cuda.mma_index import is_index

    @tilejit.jit
    def k(X, n, B: tl.constexpr):
        r = tl.arange(0, B)
        m = (r[:, None] + n) >= r[None, :] * 2
        x = tl.load(X + r[:, None] * B + r[None, :])
        f = tl.zeros([B, B], dtype=tl.float32) + n
        tl.store(X + r[:, None] * B + r[None, :], tl.where(m, x, 0) + f.to(tl.float16))
    func, _ = build(k, dict(X="*fp16", n="i32"), dict(B=16), ("X",))
    two_d = [o for o in func.walk() if o.results and len(o.results[0].type.shape) == 2]
    ints = [o for o in two_d if o.results[0].type.element.kind in ("int", "bool")
            and not isinstance(o, ops.AddPtrOp) and not o.results[0].type.element.is_ptr()]
    assert ints and all(is_index(o.results[0]) for o in ints)
    assert any(isinstance(o, ops.CmpOp) for o in ints)
    floats = [o for o in two_d if isinstance(o, (ops.LoadOp, ops.SelectOp))]
    assert len(floats) == 2 and not any(is_index(o.results[0]) for o in floats)


def test_too_few_rows_per_warp_keep_the_usual_layout():
    plans, forced = _plans(attn_rows, ATTN_SIG, dict(HEAD_DIM=32, BLOCK_M=64, BLOCK_N=32, CAUSAL=False,
                                                     BF16=False), 8)
    assert list(plans.values()) == [None] and not forced     # 64 rows < 16 x 8 warps


@tilejit.jit
def plain_matmul(A, B, C, K_TOTAL, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K_TOTAL, BK):
        a = tl.load(A + rm[:, None] * K_TOTAL + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(C + rm[:, None] * BN + rn[None, :], acc)


def test_plain_matmul_loop_has_no_region():
    plans, forced = _plans(plain_matmul, dict(A="*fp16", B="*fp16", C="*fp32", K_TOTAL="i32"),
                           dict(BM=128, BN=64, BK=32), 8)
    assert all(p is None for p in plans.values()) and not forced


def test_row_stats_region_carries_three_rows():
    plans, forced = _plans(row_stats, dict(A="*fp16", B="*fp16", Out="*fp32", R="*fp32", K_TOTAL="i32"),
                           dict(BM=64, BN=32, D=32), 4)
    (plan,) = plans.values()
    assert plan is not None and len(plan.rows) == 3 and plan.hoist      # max, min, sum; a hoisted
    assert sum(isinstance(o, ops.ReduceOp) for o in plan.ops) == 3      # max, min (CSE: once), sum


@pytest.mark.parametrize("warps", [4, 8])
def test_row_layout_slots(warps):
    from tilejit.backends.cuda.mma_rows import RowLayout
    lay = RowLayout((128,), warps)
    assert lay.mt == 128 // (16 * warps) and lay.nslots == 2 * lay.mt and lay.vec == 1
