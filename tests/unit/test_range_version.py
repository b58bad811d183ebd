"""Range versioning (transforms/align_version.py, ``tj.assume_range``) and the cuda grid
bound (backends/cuda/backend.py): the proofs behind tutorial 03's ``(pid_n * BLOCK +
arange) % N`` operands and a bias load ``bias_ptr + offs % C``, without hints.

Tutorial 03's dot loop is versioned on ``0 <= pid_n * BLOCK_SIZE_N < 2**30``; the fast
version's B operand is 16-byte contiguous, and for cuda:90 it is a cp.async ring feeding
wgmma.  Results equal numpy and every analysis claim holds under the interpreter on both
versions.  No GPU needed."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.analysis import analyze
from tilejit.analysis.checker import ClaimChecker, make_observer
from tilejit.backends import Buffer, LaunchArgs
from tilejit.backends.cuda import async_pipeline as AP
from tilejit.backends.cuda import backend as CB
from tilejit.backends.cuda import target as tgt
from tilejit.interpreter import run as interpret
from tilejit.ir import ops
from tilejit.ir.parser import roundtrip_check
from tilejit.ir.verifier import verify_function
from tilejit.runtime.compiler import build
from tilejit.transforms import align_version as AV

from irkit import launch
from test_align_version import _aligned, _tracker
from test_tutorials_ptx import _kernels

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")

T03_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **{
    n: "i32" for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")}}
# what the launcher specialises for contiguous fp16 matrices with sizes divisible by 16
T03_DIV16 = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
T03_EQ1 = ("stride_ak", "stride_bn", "stride_cn")


def t03_func(BM=32, BN=32, BK=32, G=2):
    fn = _kernels("matmul_tutorial03.py")["matmul_kernel"]
    cx = dict(BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=G, ACTIVATION="")
    func, _ = build(fn, T03_SIG, cx, T03_DIV16, T03_EQ1)
    return func


# ---------------------------------------------------------------- the transform
def test_tutorial03_loop_is_versioned_on_the_range_of_pid_n_times_block():
    func = t03_func()
    vs = AV.version_loops(func)
    assert len(vs) == 1
    (root, hint), = vs[0].hints
    assert isinstance(hint, ops.AssumeRangeOp) and hint.attrs["values"] == (0, 2**30 - 1)
    assert isinstance(root.op, ops.MulOp) and root.type.shape == ()        # pid_n * BLOCK_SIZE_N
    verify_function(func)
    roundtrip_check(func)
    facts = analyze(func)
    for ld in AV._dot_loads(vs[0].loop):
        assert AV.plan_ok(facts, vs[0].fast_load(ld))
    a_ld, b_ld = AV._dot_loads(vs[0].loop)
    assert AV.plan_ok(facts, a_ld) and not AV.plan_ok(facts, b_ld)   # the fallback's B: no proof


def _t03_run(M, N, K, grid=None, BM=32, BN=32, BK=32, G=2):
    func = t03_func(BM, BN, BK, G)
    (v,) = AV.version_loops(func)
    rng = np.random.default_rng(M * N + K)
    a = _aligned(M * K, np.float16)[1].reshape(M, K)
    b_full = _aligned((K + 1) * N, np.float16)[1].reshape(K + 1, N)   # a row before b: see below
    b = b_full[1:]
    a[...] = rng.integers(-3, 4, (M, K))
    b[...] = rng.integers(-3, 4, (K, N))
    c = _aligned(M * N, np.float16)[1].reshape(M, N)
    grid = grid or (-(-M // BM) * -(-N // BN), 1, 1)
    checker = make_observer(func, grid)
    ran, track = _tracker(v)

    def observe(op, pid, results):
        checker(op, pid, results)
        track(op, pid, results)
    # programs past the tiles read B at offsets (pid_n * BN + j) % N in (-N, 0] (the
    # tutorial's `% N` of a negative pid_n): inside b_full's first row
    arrays = [a, b_full, c]
    bufs = [Buffer(n, x.ctypes.data, x.nbytes, x.itemsize) for n, x in zip(("a_ptr", "b_ptr", "c_ptr"), arrays)]
    vals = [a.ctypes.data, b.ctypes.data, c.ctypes.data, M, N, K, K, 1, N, 1, N, 1]
    interpret(func, grid, LaunchArgs(vals, bufs, arrays), None, observe)
    np.testing.assert_array_equal(c, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))
    return ran


@pytest.mark.parametrize("M,N,K", [(96, 80, 64), (64, 128, 48)])
def test_tutorial03_interpreter_results_and_claims_take_the_fast_version(M, N, K):
    assert _t03_run(M, N, K) == {"fast"}


def test_tutorial03_programs_past_the_tiles_take_the_fallback():
    """A grid larger than the tiles: group_size_m < 0 makes pid_n negative in the extra
    programs (their stores are masked off); those run the unversioned loop."""
    assert _t03_run(96, 64, 32, grid=(12, 1, 1)) == {"fast", "slow"}


# ---------------------------------------------------------------- a start offset argument
@tilejit.jit
def mm_rem(a_ptr, b_ptr, c_ptr, N, K, start, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b[:, (start + j) % N + N]: B's columns wrap at N inside a (K, 2N) matrix."""
    offs_m = tl.arange(0, BM)
    offs_n = (start + tl.arange(0, BN)) % N + N
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k * BK + offs_k)[None, :])
        b = tl.load(b_ptr + (k * BK + offs_k)[:, None] * (2 * N) + offs_n[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * BN + tl.arange(0, BN)[None, :], acc)


MM_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "N": "i32", "K": "i32", "start": "i32"}


def _mm_rem_func():
    func, _ = build(mm_rem, MM_SIG, dict(BM=16, BN=32, BK=16), ("a_ptr", "b_ptr", "c_ptr", "N", "K"))
    return func


def test_start_offset_is_tested_for_alignment_and_range():
    func = _mm_rem_func()
    (v,) = AV.version_loops(func)
    assert sorted((r.name_hint, h.name, h.attrs["values"]) for r, h in v.hints) == [
        ("start", "tj.assume_range", (0, 2**30 - 1)), ("start", "tt.multiple_of", (8,))]
    roundtrip_check(func)


@pytest.mark.parametrize("start,fast", [(0, True), (16, True), (40, True), (4, False), (-16, False),
                                        (2**30, False)])
def test_start_offset_results_and_claims(start, fast):
    func = _mm_rem_func()
    (v,) = AV.version_loops(func)
    N, K = 48, 32
    rng = np.random.default_rng(start & 0xffff)
    a = _aligned(16 * K, np.float16)[1].reshape(16, K)
    b = _aligned(K * 2 * N, np.float16)[1].reshape(K, 2 * N)
    a[...] = rng.integers(-3, 4, a.shape)
    b[...] = rng.integers(-3, 4, b.shape)
    c = np.zeros((16, 32), np.float32)
    checker = make_observer(func, (1, 1, 1))
    ran, track = _tracker(v)

    def observe(op, pid, results):
        checker(op, pid, results)
        track(op, pid, results)
    launch(func, (1,), a, b, c, N, K, start, observer=observe)
    cols = np.fmod(start + np.arange(32), N) + N          # C remainder: truncates toward zero
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b[:, cols].astype(np.float64))
    assert ran == ({"fast"} if fast else {"slow"})


# ---------------------------------------------------------------- cuda:90
def _t03_cuda(arch=90):
    fn = _kernels("matmul_tutorial03.py")["matmul_kernel"]
    cx = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="")
    return tilejit.compile(fn, T03_SIG, cx, T03_DIV16, T03_EQ1, target=f"cuda:{arch}", num_warps=8, num_stages=3)


def test_cuda90_tutorial03_takes_the_ring_without_hints():
    k = _t03_cuda()
    assert AP.rejections(k.func, 90, 8) == []
    ptx = k.asm["ptx"]
    # 16-byte copies, zero-filled where the K mask is off (src-size operand)
    assert len(re.findall(r"cp\.async\.cg\.shared\.global \[%r\d+(?:\+\d+)?\], \[%rd\d+\], 16, %r\d+;", ptx)) > 0
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16", ptx)
    func = t03_func(128, 128, 64, 8)           # unversioned: the reason the ring was refused
    func.attrs.update(num_warps=8, target="cuda:90")
    assert [why for _loc, why in AP.rejections(func, 90, 8)] == [
        "an operand pointer is not proved 16-byte contiguous and aligned"]


@needs_ptxas
def test_cuda90_tutorial03_assembles():
    msgs = tgt.ptxas(_t03_cuda().asm["ptx"], 90, verbose=True)
    assert "sm_90a" in msgs


# ---------------------------------------------------------------- bias + GELU: the grid bound
@tilejit.jit
def bias_gelu(x_ptr, bias_ptr, out_ptr, n, C, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + offs % C, mask=mask, other=0.0).to(tl.float32)
    y = x + b
    y = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
    tl.store(out_ptr + offs, y.to(tl.float16), mask=mask)


GELU_SIG = {"x_ptr": "*fp16", "bias_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32", "C": "i32"}
GELU_DIV16 = ("x_ptr", "bias_ptr", "out_ptr", "n", "C")


def _gelu(target="cuda:90"):
    return tilejit.compile(bias_gelu, GELU_SIG, dict(BLOCK=1024), GELU_DIV16, target=target)


def _loads(ptx):
    return (len(re.findall(r"ld\.global[^;]*\.v4\.b32", ptx)), len(re.findall(r"ld\.global[^;]*\.b16\b", ptx)),
            len(re.findall(r"rem\.s32", ptx)))


def test_bias_load_by_offs_mod_c_is_a_vector_load_under_the_grid_bound():
    k = _gelu()
    assert k.grid_bound == CB.GRID_BOUND
    v4, b16, rem = _loads(k.asm["ptx"])
    assert (v4, b16, rem) == (2, 0, 1)           # x and bias: 8 fp16 per load; one rem per 8 lanes
    g = k._general()                             # the variant for larger grids: no proof
    assert g.grid_bound is None and _loads(g.asm["ptx"])[1:] == (8, 8)
    assert k._general() is g


def test_bounded_facts_hold_in_the_interpreter():
    func, _ = build(bias_gelu, GELU_SIG, dict(BLOCK=64), GELU_DIV16)
    facts = analyze(func, grid_bound=CB.GRID_BOUND)
    rem = next(o for o in func.walk() if isinstance(o, ops.RemOp))
    assert facts.range(rem.lhs)[0] >= 0 and facts.axis(rem.result).contiguity == (16,)
    assert analyze(func).axis(rem.result).contiguity == (1,)
    n, C = 1008, 48                                     # both specialised: multiples of 16
    x, bias = np.arange(n, dtype=np.float16) / 512, (np.arange(C, dtype=np.float16) - 20) / 16
    out = np.zeros(n, np.float16)
    launch(func, (16,), x, bias, out, n, C, observer=ClaimChecker(func, None, facts))
    y = x.astype(np.float32) + bias[np.arange(n) % C].astype(np.float32)
    from math import erf
    ref = (0.5 * y * (1 + np.vectorize(erf)(y / np.sqrt(2)))).astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float32), atol=2e-3, rtol=2e-3)


def test_launches_past_the_bound_run_the_unbounded_variant():
    k = _gelu()
    seen = []

    class Stub:
        def __init__(self, name):
            self.name = name

        def __call__(self, grid, args, **kw):
            seen.append((self.name, grid))
    general = _gelu()
    general.grid_bound, general._launcher = None, Stub("general")
    k._launcher, k._general = Stub("bounded"), lambda: general
    k.launch((CB.GRID_BOUND[0], 1, 1), None)
    k.launch((CB.GRID_BOUND[0] + 1, 1, 1), None)
    k.launch((4, 65536, 1), None)
    assert seen == [("bounded", (CB.GRID_BOUND[0], 1, 1)), ("general", (CB.GRID_BOUND[0] + 1, 1, 1)),
                    ("general", (4, 65536, 1))]


@needs_ptxas
def test_bias_gelu_assembles():
    k = _gelu()
    tgt.ptxas(k.asm["ptx"], 90)
    tgt.ptxas(k._general().asm["ptx"], 90)


@pytest.mark.parametrize("start", [16, -16])
def test_cpu_backend_runs_the_range_versioned_kernel(start):
    """The cpu backend lowers tj.assume_range (a hint: its source) and agrees with the interpreter."""
    func = _mm_rem_func()
    AV.version_loops(func)
    N, K = 48, 32
    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, (16, K)).astype(np.float16)
    b = rng.integers(-3, 4, (K, 2 * N)).astype(np.float16)
    c_ref, c = np.zeros((16, 32), np.float32), np.zeros((16, 32), np.float32)
    launch(func, (1,), a, b, c_ref, N, K, start)
    kcpu = tilejit.compile(func, target="cpu")
    bufs = [Buffer(n, x.ctypes.data, x.nbytes, x.itemsize) for n, x in zip(("a_ptr", "b_ptr", "c_ptr"), (a, b, c))]
    kcpu.launch((1, 1, 1), LaunchArgs([a.ctypes.data, b.ctypes.data, c.ctypes.data, N, K, start], bufs, [a, b, c]))
    np.testing.assert_array_equal(c, c_ref)
