"""Regressions for Triton's alignment-analysis bugs, in tilejit form: each kernel runs on
the interpreter under the claim checker (results against numpy), the analysis gives
the sound facts, and Triton's wrong claim is shown to be refuted by real values.

* triton #741: ``xnumel = 2000`` reassigned; the scattered store looked contiguous.
* triton #4871 / triton-cpu #159: descending sequences (torch.flip) taken as contiguous.
* triton #7749: signed // and % on negative values claimed constant / contiguous runs.
"""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.analysis import Fact, analyze
from tilejit.analysis.checker import AnalysisClaimError, ClaimChecker, check_value
from tilejit.analysis.lattice import AxisInfo
from tilejit.frontend import build_ir
from tilejit.ir import dtype_from_name, ops
from tilejit.runtime.options import use_options


def ir_of(jitfn, types: dict, constexprs: dict, spec=None):
    return build_ir(jitfn, {k: dtype_from_name(v) for k, v in types.items()}, constexprs, spec)


def by_name(func, name):
    for op in func.walk():
        for v in op.results:
            if v.name_hint == name:
                return v
    raise KeyError(name)


def store_address(func):
    return next(op for op in func.walk() if isinstance(op, ops.StoreOp)).ptr


@pytest.fixture
def checked_interpreter():
    with use_options(backend="interpreter", interpret=True, check_analysis=True):
        yield


# ---------------------------------------------------------------- triton #741
@tilejit.jit
def k741_plain(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000*tmp0) + (196000*x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


@tilejit.jit
def k741_reassigned(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 2000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000*tmp0) + (196000*x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


K741_TYPES = {"in_ptr0": "*i64", "in_ptr1": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32"}


@pytest.mark.parametrize("kernel", [k741_plain, k741_reassigned], ids=["plain", "reassigned"])
@pytest.mark.parametrize("spec", [True, False], ids=["xnumel_div16", "unspecialized"])
@pytest.mark.parametrize("grid", [(2, 1, 1), None], ids=["grid", "anygrid"])
def test_741_store_is_scattered_and_loads_contiguous(kernel, spec, grid):
    sp = {"in_ptr0": (16, False), "in_ptr1": (16, False), "out_ptr0": (16, False)}
    if spec:
        sp["xnumel"] = (16, False)
    f = ir_of(kernel, K741_TYPES, {"XBLOCK": 1024}, sp)
    F = analyze(f, grid)
    assert F.axis(store_address(f)).contiguity == (1,)
    x2_ptrs = [op.result for op in f.walk() if isinstance(op, ops.AddPtrOp)
               and op.offset.name_hint == "xindex"]
    assert [F.axis(p)[:1] for p in x2_ptrs] == [((1024,),), ((1024,),)]
    assert all(F.axis(p).divisibility == (16,) for p in x2_ptrs)
    mask_constancy = F.axis(by_name(f, "xmask")).constancy
    assert mask_constancy == ((16,) if spec or kernel is k741_reassigned else (1,))


def _scatter_reference(a0, a1):
    ref = np.zeros((2, 196, 1000), np.float32)
    i = np.arange(2000)
    ref[i // 1000, a0, i % 1000] = a1
    return ref


@pytest.mark.parametrize("kernel", [k741_plain, k741_reassigned], ids=["plain", "reassigned"])
@pytest.mark.parametrize("xblock", [128, 1024])
def test_741_runs_correctly_under_the_checker(checked_interpreter, kernel, xblock):
    a0 = (np.arange(2000) % 196).astype(np.int64)
    a1 = np.arange(1, 2001, dtype=np.float32)
    out = np.zeros((2, 196, 1000), np.float32)
    kernel[(tilejit.cdiv(2000, xblock),)](a0, a1, out, 2000, XBLOCK=xblock)
    np.testing.assert_array_equal(out, _scatter_reference(a0, a1))


def test_741_tritons_claim_is_refuted():
    """Claiming the store address contiguous (what Triton did) fails on real values."""
    f = ir_of(k741_reassigned, K741_TYPES, {"XBLOCK": 1024},
              {"in_ptr0": (16, False), "in_ptr1": (16, False), "out_ptr0": (16, False)})
    ptr = store_address(f)
    facts = analyze(f, (2, 1, 1))
    facts._state[ptr] = Fact(None, AxisInfo((4,), (16,), (1,)))
    with use_options(backend="interpreter", interpret=True):
        from tilejit.backends import Buffer, LaunchArgs
        from tilejit.interpreter import run
        a0 = (np.arange(2000) % 196).astype(np.int64)
        a1 = np.arange(1, 2001, dtype=np.float32)
        out = np.zeros((2, 196, 1000), np.float32)
        arrays = [a0, a1, out]
        bufs = [Buffer(n, a.ctypes.data, a.nbytes, a.itemsize) for n, a in zip("abc", arrays)]
        args = LaunchArgs([a.ctypes.data for a in arrays] + [2000], bufs, arrays)
        with pytest.raises(AnalysisClaimError, match="contiguity"):
            run(f, (2, 1, 1), args, None, ClaimChecker(f, facts=facts))


# ---------------------------------------------------------------- descending sequences
@tilejit.jit
def flip(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rev = BLOCK - 1 - offs
    tl.store(out_ptr + offs, tl.load(x_ptr + rev))


@tilejit.jit
def flip_inductor(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 16
    x1 = xindex // 16
    tmp0 = tl.load(in_ptr0 + (15 + (-1 * x0) + (16 * x1)), xmask)
    tl.store(out_ptr0 + xindex, tmp0, xmask)


def test_descending_offsets_are_not_contiguous(checked_interpreter):
    f = ir_of(flip, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 64},
              {"x_ptr": (16, False), "out_ptr": (16, False)})
    F = analyze(f)
    rev = by_name(f, "rev")
    assert F.axis(rev).contiguity == (1,) and F.range(rev) == (0, 63)
    load_ptr = next(op for op in f.walk() if isinstance(op, ops.LoadOp)).ptr
    assert F.axis(load_ptr).contiguity == (1,)
    # Triton's claim (contiguity 64 for BLOCK - 1 - arange) is refuted by the values
    assert check_value(rev.type, np.arange(64)[::-1].astype(np.int32),
                       Fact((0, 63), AxisInfo((64,), (1,), (1,))))[0] == "contiguity[0] = 64"
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    flip[(1,)](x, out, BLOCK=64)
    np.testing.assert_array_equal(out, x[::-1])


@pytest.mark.parametrize("xblock", [16, 64])
def test_torch_flip_as_inductor_writes_it(checked_interpreter, xblock):
    f = ir_of(flip_inductor, {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32"},
              {"XBLOCK": xblock}, {"in_ptr0": (16, False), "out_ptr0": (16, False)})
    F = analyze(f, (8, 1, 1))
    assert F.axis(next(op for op in f.walk() if isinstance(op, ops.LoadOp)).ptr).contiguity == (1,)
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    out = np.zeros_like(x)
    flip_inductor[(tilejit.cdiv(128, xblock),)](x, out, 128, XBLOCK=xblock)
    np.testing.assert_array_equal(out, x[:, ::-1])


# ---------------------------------------------------------------- signed div / rem
@tilejit.jit
def divrem(q_ptr, r_ptr, s_ptr, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = offs - shift
    tl.store(q_ptr + offs, x // 4)
    tl.store(r_ptr + offs, x % 4)
    tl.store(s_ptr + offs, x >> 2)


@pytest.mark.parametrize("shift", [8, 16, -8, 0, 7])
def test_signed_divrem_on_negative_values(checked_interpreter, shift):
    n = 32
    q, r, s = (np.zeros(n, np.int32) for _ in range(3))
    divrem[(1,)](q, r, s, shift, BLOCK=n)
    x = np.arange(n) - shift
    np.testing.assert_array_equal(q, np.fix(x / 4).astype(np.int32))
    np.testing.assert_array_equal(r, x - 4 * np.fix(x / 4).astype(np.int64))
    np.testing.assert_array_equal(s, x >> 2)


def test_signed_divrem_facts_and_tritons_claims():
    f = ir_of(divrem, {"q_ptr": "*i32", "r_ptr": "*i32", "s_ptr": "*i32", "shift": "i32"},
              {"BLOCK": 32}, {"shift": (16, False)})
    F = analyze(f)
    q, r, s = [op.value for op in f.walk() if isinstance(op, ops.StoreOp)]
    assert F.axis(q).constancy == (1,)         # x may be negative: truncation is not floor
    assert F.axis(r).contiguity == (1,)
    assert F.axis(s).constancy == (4,)         # >> floors: sound for any sign
    x = (np.arange(32) - 16).astype(np.int32)
    trunc = np.fix(x / 4).astype(np.int32)
    assert check_value(q.type, trunc, Fact(None, AxisInfo((1,), (1,), (4,))))[0] == "constancy[0] = 4"
    assert check_value(r.type, (x - 4 * trunc).astype(np.int32),
                       Fact(None, AxisInfo((4,), (1,), (1,))))[0] == "contiguity[0] = 4"
    f2 = ir_of(divrem, {"q_ptr": "*i32", "r_ptr": "*i32", "s_ptr": "*i32", "shift": "i32"},
               {"BLOCK": 32}, {"shift": (1, True)})            # shift == 1: x >= -1
    F2 = analyze(f2)
    q2 = [op.value for op in f2.walk() if isinstance(op, ops.StoreOp)][0]
    assert F2.range(q2) == (0, 7)


# ---------------------------------------------------------------- the backend's view
def test_741_access_plans():
    """What the CPU backend may do with the #741 kernel: vector loads of in_ptr1 + x2
    (one predicate per 16 lanes: 2000 is a multiple of 16), a per-lane store."""
    from tilejit.analysis.vector import access_plan
    f = ir_of(k741_reassigned, K741_TYPES, {"XBLOCK": 1024},
              {"in_ptr0": (16, False), "in_ptr1": (16, False), "out_ptr0": (16, False)})
    F = analyze(f)
    loads = [op for op in f.walk() if isinstance(op, ops.LoadOp)]
    store = next(op for op in f.walk() if isinstance(op, ops.StoreOp))
    assert [access_plan(F, op.ptr, op.mask, max_lanes=64) for op in loads] == [(16, 16), (16, 16)]
    assert access_plan(F, loads[1].ptr, None, max_lanes=64) == (64, 16)
    assert access_plan(F, store.ptr, store.mask).width == 1
