"""Runtime alignment versioning (tilejit/transforms/align_version.py) on Triton's grouped
GEMM tutorial (matrix pointers and leading dimensions read from memory): the dot loop
is versioned on ``ptr % 16 == 0`` / ``ld % 8 == 0``, the fast version's operand loads get
a 16-byte access plan, results equal numpy (and the analysis claims hold) with aligned
and misaligned pointers and strides under the interpreter and the cpu backend; for
cuda:90 the fast version is a cp.async ring feeding wgmma.  No GPU needed."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.analysis import analyze
from tilejit.analysis.checker import make_observer
from tilejit.backends import Buffer, LaunchArgs
from tilejit.backends.cuda import target as tgt
from tilejit.interpreter import run as interpret
from tilejit.ir import ops
from tilejit.ir.parser import roundtrip_check
from tilejit.ir.printer import print_function
from tilejit.ir.verifier import verify_function
from tilejit.runtime.compiler import build
from tilejit.transforms import align_version as AV

from test_tutorials_ptx import _kernels, _sig

needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")

GG_SIG = _sig("*i64", "*i64", "*i64", "*i32", "*i32", "i32")
NUM_SM = 4


def gg_func(BM=32, BN=32, BK=32):
    """The tutorial kernel's tile IR, its table pointers specialised (as the launcher does)."""
    fn = _kernels("grouped_gemm.py")["grouped_matmul_kernel"]
    cx = dict(NUM_SM=NUM_SM, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK)
    func, _ = build(fn, GG_SIG, cx, divisible_by_16=(0, 1, 2, 3, 4))
    return func


# ---------------------------------------------------------------- data
def _aligned(n, dtype, off=0):
    """(owner, view of n elements starting ``off`` elements past a 64-byte boundary)."""
    dt = np.dtype(dtype)
    raw = np.zeros(n + off + 64 // dt.itemsize, dt)
    lead = (-raw.ctypes.data) % 64 // dt.itemsize
    return raw, raw[lead + off: lead + off + n]


class Problem:
    """Groups of (M, N, K) fp16 GEMMs; per group: element offsets of A/B from a 16-byte
    boundary and row paddings (ld = cols + pad)."""

    def __init__(self, groups, rng, a_off=0, b_off=0, a_pad=0, b_pad=0):
        per = lambda x: x if isinstance(x, (list, tuple)) else [x] * len(groups)   # noqa: E731
        self.owners, self.mats, lds = [], [], []
        for (M, N, K), ao, bo, ap, bp in zip(groups, per(a_off), per(b_off), per(a_pad), per(b_pad)):
            A = self._matrix(rng, M, K, ap, ao)
            B = self._matrix(rng, K, N, bp, bo)
            C = self._matrix(None, M, N, 0, 0)
            self.mats.append((A, B, C))
            lds += [K + ap, N + bp, N]
        ptr = [[m[i].ctypes.data for m in self.mats] for i in range(3)]
        self.tables = [self._table(p, np.int64) for p in ptr]
        self.tables.append(self._table([x for g in groups for x in g], np.int32))
        self.tables.append(self._table(lds, np.int32))
        self.n = len(groups)

    def _matrix(self, rng, rows, cols, pad, off):
        raw, flat = _aligned(rows * (cols + pad), np.float16, off)
        self.owners.append(raw)
        m = flat.reshape(rows, cols + pad)[:, :cols]
        if rng is not None:
            m[...] = rng.integers(-3, 4, (rows, cols)).astype(np.float16)
        return m

    def _table(self, values, dtype):
        raw, t = _aligned(len(values), dtype)
        t[:] = values
        self.owners.append(raw)
        return t

    def args(self) -> LaunchArgs:
        values = [t.ctypes.data for t in self.tables] + [self.n]
        bufs = [Buffer(f"b{i}", o.ctypes.data, o.nbytes, o.itemsize) for i, o in enumerate(self.owners)]
        return LaunchArgs(values, bufs, list(self.owners))

    def check(self):
        for A, B, C in self.mats:
            want = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)
            np.testing.assert_array_equal(C, want)


GROUPS = [(64, 64, 32), (32, 96, 96), (96, 32, 64)]
CASES = {          # name: (Problem keywords, which versions run)
    "aligned": (dict(), {"fast"}),
    "a_ptr_off_by_one_element": (dict(a_off=1), {"slow"}),
    "b_ptr_off_by_4_elements": (dict(b_off=4), {"slow"}),
    "lda_odd": (dict(a_pad=1), {"slow"}),
    "ldb_plus_8_stays_aligned": (dict(b_pad=8), {"fast"}),
    "mixed_groups": (dict(a_off=[0, 1, 0], b_pad=[0, 0, 3]), {"fast", "slow"}),
}


def _versioned():
    func = gg_func()
    vs = AV.version_loops(func)
    assert len(vs) == 1
    return func, vs[0]


def _tracker(v):
    fast, slow = set(v.fast_loop.body.ops), set(v.loop.body.ops)
    ran = set()

    def observe(op, pid, results):
        if op in fast:
            ran.add("fast")
        elif op in slow:
            ran.add("slow")
    return ran, observe


# ---------------------------------------------------------------- the transform
def test_grouped_gemm_loop_is_versioned_on_its_loaded_pointers_and_strides():
    func, v = _versioned()
    roots = {r.name_hint: div for r, div in ((r, h.attrs["values"][0]) for r, h in v.hints)}
    assert roots == {"a_ptr": 16, "b_ptr": 16, "lda": 8, "ldb": 8}
    assert isinstance(v.if_op, ops.IfOp) and v.loop.parent is v.if_op.regions[1].block
    assert v.fast_loop.parent is v.if_op.regions[0].block
    # the nest: for g { while { ... if { for kk } else { for kk } ... } }
    assert isinstance(v.if_op.parent.parent.parent, ops.WhileOp)
    assert func.attrs[AV.DONE] == 1
    verify_function(func)
    roundtrip_check(func)
    text = print_function(func)
    assert text.count("tt.multiple_of") == 4 and text.count("scf.if") == 1


def test_fast_loads_get_a_16_byte_plan_the_original_loads_lack():
    func, v = _versioned()
    facts = analyze(func)
    loads = AV._dot_loads(v.loop)
    assert len(loads) == 2
    for ld in loads:
        assert not AV.plan_ok(facts, ld)
        assert AV.plan_ok(facts, v.fast_load(ld))
    before = analyze(gg_func())
    assert all(not AV.plan_ok(before, ld) for o in gg_func().walk() if isinstance(o, ops.ForOp)
               for ld in AV._dot_loads(o))
    assert AV.plan_ok(facts, v.fast_load(loads[0])) and facts.axis(v.fast_load(loads[0]).ptr).divisibility[-1] >= 16


@pytest.mark.parametrize("case", list(CASES))
def test_interpreter_results_and_claims_aligned_and_misaligned(case):
    kw, want_ran = CASES[case]
    func, v = _versioned()
    prob = Problem(GROUPS, np.random.default_rng(3), **kw)
    grid = (NUM_SM, 1, 1)
    checker = make_observer(func, grid)
    ran, track = _tracker(v)

    def observe(op, pid, results):
        checker(op, pid, results)
        track(op, pid, results)
    interpret(func, grid, prob.args(), None, observe)
    prob.check()
    assert ran == want_ran


@pytest.mark.parametrize("case", ["aligned", "a_ptr_off_by_one_element", "lda_odd", "mixed_groups"])
def test_cpu_backend_runs_the_versioned_kernel(case):
    kw, _ = CASES[case]
    func, _v = _versioned()
    k = tilejit.compile(func, target="cpu")
    prob = Problem(GROUPS, np.random.default_rng(5), **kw)
    k.launch((NUM_SM, 1, 1), prob.args())
    prob.check()


def test_switch_off_and_idempotent():
    from tilejit.runtime.options import Options
    func = gg_func(128, 128, 64)
    func.attrs.update(target="cuda:90", num_warps=8, num_stages=3)     # as compile sets them
    before = print_function(func)
    tilejit.compile(func, target="cuda:90", num_warps=8, num_stages=3, options=Options(align_version=False))
    assert "align_versioned" not in func.attrs and print_function(func) == before
    func = gg_func()
    assert len(AV.version_loops(func)) == 1
    once = print_function(func)
    assert AV.version_loops(func) == [] and print_function(func) == once


def test_specialised_matmul_is_not_versioned():
    import test_cuda_ptx as K
    func = K.matmul_kernel(128, 128, 64, "fp16")
    before = print_function(func)
    assert AV.version_loops(func) == [] and print_function(func) == before
    assert AV.DONE not in func.attrs


@tilejit.jit
def colmajor(a_ptr, b_ptr, c_ptr, K, sam, sbn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om, on, ok = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    ap = a_ptr + om[:, None] * sam + ok[None, :]
    bp = b_ptr + ok[:, None] + on[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(ap), tl.load(bp))
        ap += BK
        bp += BK
    tl.store(c_ptr + om[:, None] * BN + on[None, :], acc)


def test_loop_that_hints_cannot_help_is_left_alone():
    """B read column-wise (stride between neighbours unknown): no contiguity to gain, so
    after the trial the loop is put back exactly as it was."""
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32", "sam": "i32", "sbn": "i32"}
    func, _ = build(colmajor, sig, dict(BM=32, BN=32, BK=32))
    before = print_function(func)
    facts = analyze(func)
    assert AV.candidates(func, facts)            # it looked ...
    assert AV.version_loops(func, facts) == []   # ... and found nothing that pays
    assert print_function(func) == before and AV.DONE not in func.attrs


# ---------------------------------------------------------------- cuda (PTX, no GPU)
def _gg_ptx(arch, align_version=True):
    from tilejit.runtime.options import Options
    func = gg_func(128, 128, 64)
    return tilejit.compile(func, target=f"cuda:{arch}", num_warps=8, num_stages=3,
                           options=Options(align_version=align_version))


def _count(ptx, pat):
    return len(re.findall(pat, ptx))


def test_cuda90_grouped_gemm_fast_version_is_cp_async_ring_and_wgmma():
    """Which path each version takes (the fast copy a cp.async ring on wgmma, the fallback
    the register path; with the option off one loop on the register path) is the plan's
    decision: tests/golden/cuda_plan/grouped_gemm.py.  Here: the PTX has both versions,
    and the tile IR the backend lowered (asm['ttir'], what TILEJIT_DUMP_DIR writes) is
    the versioned one."""
    k = _gg_ptx(90)
    ptx = k.asm["ptx"]
    assert re.search(r"^\.target sm_90a\b", ptx, re.M)
    assert _count(ptx, r"cp\.async\.cg\.shared\.global \[%r\d+(?:\+\d+)?\], \[%rd\d+\], 16;") > 0
    assert "wgmma.mma_async" in ptx and "mma.sync" in ptx
    assert "tt.multiple_of" in k.asm["ttir"] and "scf.if" in k.asm["ttir"]
    off = _gg_ptx(90, align_version=False)
    assert "tt.multiple_of" not in off.asm["ttir"] and "cp.async" not in off.asm["ptx"]


def test_cuda80_grouped_gemm_fast_version_is_cp_async_ring_and_ldmatrix():
    ptx = _gg_ptx(80).asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx and "wgmma" not in ptx
    assert _count(ptx, r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16") > 0


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
def test_versioned_grouped_gemm_assembles(arch):
    msgs = tgt.ptxas(_gg_ptx(arch).asm["ptx"], arch, verbose=True)
    assert ("sm_90a" in msgs) == (arch == 90)
    assert "serializ" not in msgs.lower(), msgs


def test_normal_matmul_ptx_is_byte_identical_with_the_pass_on_or_off():
    import test_cuda_ptx as K
    from tilejit.backends import get_backend
    out = []
    from tilejit.runtime.options import Options
    for on in (True, False):
        func = K.matmul_kernel(128, 128, 64, "fp16")
        func.attrs.update(num_warps=8, target="cuda:90", num_stages=3)
        out.append(get_backend("cuda").compile(func, Options(align_version=on)).ptx)
    assert out[0] == out[1] and "wgmma" in out[0]


# ---------------------------------------------------------------- a masked loop: K decides
def _masked_mm():
    import test_cuda_ptx_pipeline as P
    spec = ("a_ptr", "b_ptr", "c_ptr", "sam", "sbk", "scm")          # K not specialised
    func, _ = build(P.jit_mm, P.SIG, dict(BM=32, BN=32, BK=32, MASKED=True, FOLD=False), divisible_by_16=spec)
    return func


def test_masked_loop_is_versioned_on_k_alone():
    """``ok < K - k*BK`` is constant over 8-lane groups only when K % 8 == 0."""
    func = _masked_mm()
    vs = AV.version_loops(func)
    assert [[(r.name_hint, h.attrs["values"]) for r, h in v.hints] for v in vs] == [[("K", (8,))]]


@pytest.mark.parametrize("K,fast", [(72, True), (70, False), (40, True)])
def test_masked_loop_results_and_claims(K, fast):
    from irkit import launch
    func = _masked_mm()
    (v,) = AV.version_loops(func)
    rng = np.random.default_rng(K)
    sam = -(-K // 16) * 16                                      # specialised: a multiple of 16
    a_full = _aligned(64 * sam, np.float16)[1].reshape(64, sam)   # views of 64-byte aligned memory
    a_full[:, :K] = rng.integers(-3, 4, (64, K))
    a = a_full[:, :K]
    b = _aligned(K * 64, np.float16)[1].reshape(K, 64)
    b[...] = rng.integers(-3, 4, (K, 64))
    c, c2 = (_aligned(64 * 64, np.float32)[1].reshape(64, 64) for _ in range(2))
    grid = (2, 2, 1)
    checker = make_observer(func, grid)
    ran, track = _tracker(v)

    def observe(op, pid, results):
        checker(op, pid, results)
        track(op, pid, results)
    launch(func, grid, a_full, b, c, K, sam, 64, 64, observer=observe)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))
    assert ran == ({"fast"} if fast else {"slow"})
    kcpu = tilejit.compile(func, target="cpu")
    bufs = [Buffer(n, x.ctypes.data, x.nbytes, x.itemsize) for n, x in zip("abc", (a_full, b, c2))]
    kcpu.launch(grid, LaunchArgs([a_full.ctypes.data, b.ctypes.data, c2.ctypes.data, K, sam, 64, 64],
                                 bufs, [a_full, b, c2]))
    np.testing.assert_array_equal(c2, c)


# ---------------------------------------------------------------- two loops, each on its own roots
@tilejit.jit
def two_dots(ptrs, lds, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om, on, ok = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for j in tl.static_range(2):
        a = tl.load(ptrs + 2 * j).to(tl.pointer_type(tl.float16))
        b = tl.load(ptrs + 2 * j + 1).to(tl.pointer_type(tl.float16))
        lda, ldb = tl.load(lds + 2 * j), tl.load(lds + 2 * j + 1)
        ap = a + om[:, None] * lda + ok[None, :]
        bp = b + ok[:, None] * ldb + on[None, :]
        for k in range(0, K, BK):
            acc = tl.dot(tl.load(ap), tl.load(bp), acc)
            ap += BK
            bp += BK * ldb
    tl.store(c_ptr + om[:, None] * BN + on[None, :], acc)


@pytest.mark.parametrize("offs,pads,want", [((0, 0, 0, 0), (0, 0, 0, 0), ({"fast"}, {"fast"})),
                                            ((0, 0, 1, 0), (0, 0, 0, 0), ({"fast"}, {"slow"})),
                                            ((0, 0, 0, 0), (0, 5, 0, 8), ({"slow"}, {"fast"}))])
def test_two_loops_versioned_independently(offs, pads, want):
    sig = {"ptrs": "*i64", "lds": "*i32", "c_ptr": "*fp32", "K": "i32"}
    func, _ = build(two_dots, sig, dict(BM=16, BN=32, BK=16), divisible_by_16=("ptrs", "lds", "c_ptr", "K"))
    vs = AV.version_loops(func)
    assert len(vs) == 2
    K, rng, owners, mats = 48, np.random.default_rng(1), [], []
    for i, (rows, cols) in enumerate([(16, K), (K, 32)] * 2):
        raw, flat = _aligned(rows * (cols + pads[i]), np.float16, offs[i])
        m = flat.reshape(rows, cols + pads[i])[:, :cols]
        m[...] = rng.integers(-3, 4, (rows, cols))
        owners.append(raw)
        mats.append(m)
    ptrs = _aligned(4, np.int64)[1]
    ptrs[:] = [m.ctypes.data for m in mats]
    lds = _aligned(4, np.int32)[1]
    lds[:] = [m.strides[0] // 2 for m in mats]
    c = _aligned(16 * 32, np.float32)[1].reshape(16, 32)
    checker = make_observer(func, (1, 1, 1))
    tracks = [_tracker(v) for v in vs]

    def observe(op, pid, results):
        checker(op, pid, results)
        for _ran, tr in tracks:
            tr(op, pid, results)
    bufs = [Buffer(f"m{i}", o.ctypes.data, o.nbytes, 2) for i, o in enumerate(owners)]
    for name, x in (("ptrs", ptrs), ("lds", lds), ("c", c)):
        bufs.append(Buffer(name, x.ctypes.data, x.nbytes, x.itemsize))
    interpret(func, (1, 1, 1), LaunchArgs([ptrs.ctypes.data, lds.ctypes.data, c.ctypes.data, K], bufs, owners),
              None, observe)
    f64 = [m.astype(np.float64) for m in mats]
    np.testing.assert_array_equal(c, f64[0] @ f64[1] + f64[2] @ f64[3])
    assert tuple(r for r, _ in tracks) == want


def _dot_b_plans(func, facts):
    """The cpu access widths of the b operand loads of the dots in ``func``, fast copy first."""
    from tilejit.analysis.access import plan_access
    from tilejit.backends.cpu.vectorize import CPU_ACCESS
    return [plan_access(facts, o.b.op.ptr, o.b.op.mask, CPU_ACCESS).width
            for o in func.walk() if isinstance(o, ops.DotOp)]


def test_cpu_range_versions_tutorial03_b_load():
    """On the cpu pipeline tutorial 03 as published (``% N`` of ``pid_n * BLOCK_SIZE_N``)
    is range-versioned: the fast copy loads B in 64-byte vectors, the fallback per lane;
    no alignment root is tested (cpu vector accesses take any alignment)."""
    from tests.shared_kernels import script_kernels
    kernel = script_kernels("matmul_tutorial03.py")["matmul_kernel"]
    sig = {0: "*fp32", 1: "*fp32", 2: "*fp16", **{i: "i32" for i in (3, 4, 5, 6, 8, 10)}}
    k = tilejit.compile(kernel, signature=sig, target="cpu", divisible_by_16=tuple(sig),  # as a launch specialises
                        constexprs=dict(stride_ak=1, stride_bn=1, stride_cn=1, BLOCK_SIZE_M=32,
                                        BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION=""))
    assert k.func.attrs.get(AV.DONE) == 1
    assert not any(isinstance(o, ops.MultipleOfOp) for o in k.func.walk())
    assert any(isinstance(o, ops.AssumeRangeOp) for o in k.func.walk())
    assert _dot_b_plans(k.func, k.facts) == [16, 1]


def test_cpu_versions_shifted_cols_kernel():
    """The e2e fallback test's kernel (tests/e2e/test_matmul_tutorial03.py) is versioned on
    cpu on its range root, so programs with ``pid_n < shift`` run the fallback loop."""
    from tests.e2e.test_matmul_tutorial03 import _shifted_cols
    sig = {0: "*fp32", 1: "*fp32", 2: "*fp32", 3: "i32", 4: "i32", 5: "i32", 6: "i32"}
    k = tilejit.compile(_shifted_cols, signature=sig, divisible_by_16=(0, 1, 2, 3, 4, 5),
                        constexprs=dict(BM=16, BN=32, BK=16), target="cpu")
    assert k.func.attrs.get(AV.DONE) == 1
    assert sum(isinstance(o, ops.AssumeRangeOp) for o in k.func.walk()) == 1
    assert _dot_b_plans(k.func, k.facts) == [16, 1]
