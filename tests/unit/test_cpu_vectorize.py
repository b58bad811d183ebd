"""Analysis-driven vector loads/stores in the CPU backend (issue 4): the #741 kernel's
contiguous loads become vector loads and its scattered store stays per-element, flips
are not contiguous, results are bit-exact vs the interpreter (which checks every
analysis claim), TILEJIT_VECTORIZE=0 turns it off, and the grid bound is checked."""
import re

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import Buffer, LaunchArgs, get_backend
from tilejit.backends.cpu.vectorize import GRID_BOUND, plan_access
from tilejit.analysis import analyze
from tilejit.frontend import build_ir
from tilejit.interpreter import run as interp_run
from tilejit.analysis.checker import ClaimChecker
from tilejit.ir import dtype_from_name, ops
from tilejit.runtime.options import Options
from tilejit.transforms import run_pipeline
from test_analysis_regressions import K741_TYPES, k741_plain, k741_reassigned

VLOAD = re.compile(r"%\"?vld[.\w]*\"? = (?:load|call) <(\d+) x (\w+)>")
VSTORE = re.compile(r"!tilejit\.vst|llvm\.masked\.store")


def compile_ir(jitfn, types, constexprs, spec=None, **opts):
    f = build_ir(jitfn, {k: dtype_from_name(v) for k, v in types.items()}, constexprs, spec)
    for a in f.arguments:
        d, one = (spec or {}).get(a.name, (1, False))
        a.divisibility, a.equal_to_1 = max(a.divisibility, d), one
    f = run_pipeline(f, Options())
    return f, get_backend("cpu").compile(f, Options(**opts))


def launch(kernel, f, grid, arrays, scalars, interpret=False, facts=None):
    arrays = [a.copy() for a in arrays]
    bufs = [Buffer(f"a{i}", a.ctypes.data, a.nbytes, a.itemsize) for i, a in enumerate(arrays)]
    args = LaunchArgs([a.ctypes.data for a in arrays] + list(scalars), bufs, arrays)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    if interpret:      # the reference, checking every analysis claim (incl. the backend's facts)
        checker = ClaimChecker(f, None, facts=facts) if facts is not None else ClaimChecker(f, grid)
        interp_run(f, grid, args, Options(), observer=checker)
        assert checker.checked > 0
    else:
        kernel.launch(grid, args)
    return arrays


def both(f, kernel, grid, arrays, scalars=()):
    """Compiled == interpreted (bit-exact), the interpreter checking the facts the
    backend compiled with (grid-bounded ones included)."""
    facts = analyze(f, grid_bound=kernel.grid_bound) if kernel.grid_bound else None
    ref = launch(None, f, grid, arrays, scalars, interpret=True, facts=facts)
    got = launch(kernel, f, grid, arrays, scalars)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(g, r)
    return got


def vloads(kernel):
    return [(int(n), t) for n, t in VLOAD.findall(kernel.asm["llir"])]


# ---------------------------------------------------------------- triton #741
def _741_inputs():
    a0 = (np.arange(2000, dtype=np.int64) % 196)
    a1 = np.arange(1, 2001, dtype=np.float32)
    return [a0, a1, np.zeros((2, 196, 1000), np.float32)]


@pytest.mark.parametrize("kernel", [k741_plain, k741_reassigned], ids=["plain", "reassigned"])
@pytest.mark.parametrize("spec", [True, False], ids=["xnumel_div16", "unspecialized"])
def test_741_loads_vectorised_store_scattered(kernel, spec):
    sp = {"in_ptr0": (16, False), "in_ptr1": (16, False), "out_ptr0": (16, False)}
    if spec:
        sp["xnumel"] = (16, False)
    f, k = compile_ir(kernel, K741_TYPES, {"XBLOCK": 1024}, sp)
    facts = analyze(f, grid_bound=k.grid_bound)
    store = next(op for op in f.walk() if isinstance(op, ops.StoreOp))
    loads = [op for op in f.walk() if isinstance(op, ops.LoadOp)]
    assert plan_access(facts, store).width == 1
    plans = [plan_access(facts, op) for op in loads]
    assert all(p.width >= 8 and p.align >= 16 for p in plans)
    # with xnumel % 16 == 0 (or the constant 2000) the mask is constant over 16 lanes
    group_mask = spec or kernel is k741_reassigned
    assert all(p.lane_mask is (not group_mask) for p in plans)
    llir = k.asm["llir"]
    found = vloads(k)
    assert any(t == "float" and n >= 8 for n, t in found), found     # in_ptr1 + x2
    assert any(t == "i64" and n >= 8 for n, t in found), found       # in_ptr0 + x2
    assert not VSTORE.search(llir)                                   # the scatter: per element
    # the scatter's lanes run in groups and take their values out of the vector loads
    assert re.search(r'extractelement <\d+ x float> %"?vld', llir)
    assert re.search(r'extractelement <\d+ x i64> %"?vld', llir)
    assert re.search(r"store float %[^,]+, ptr", llir)
    opt = k.asm["llir-opt"]
    assert re.search(r"load <\d+ x float>|masked\.load\.v\d+f32", opt)
    assert not re.search(r"store <\d+ x float>[^\n]*%out|masked\.store", opt)
    out = both(f, k, (2,), _741_inputs(), [2000])[2]
    assert out[0].max(-1)[:4].tolist() == [981.0, 982.0, 983.0, 984.0]
    assert out.sum() == 2001000.0


def test_741_through_jit_matches_scatter():
    a0, a1, out = _741_inputs()
    ref = np.zeros((2, 196, 1000), np.float32)
    np.put_along_axis(ref, a0.reshape(2, 1, 1000), a1.reshape(2, 1, 1000), axis=1)
    for kern in (k741_plain, k741_reassigned):
        o = out.copy()
        with tilejit.runtime.options.use_options(backend="cpu"):
            kern[(2,)](a0, a1, o, 2000, XBLOCK=1024)
        np.testing.assert_array_equal(o, ref)


# ---------------------------------------------------------------- copy / flip
@tilejit.jit
def copy_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m, other=-1.0), mask=m)


@tilejit.jit
def flip_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + (BLOCK - 1 - offs))
    tl.store(y + offs, v)


@tilejit.jit
def row_mod_kernel(x, y, BLOCK: tl.constexpr, K: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs % K))


COPY_T = {"x": "*fp32", "y": "*fp32", "n": "i32"}
SPEC = {"x": (16, False), "y": (16, False)}


@pytest.mark.parametrize("n", [4096, 4000, 37])
def test_copy_vectorised(n):
    spec = dict(SPEC, n=(16, False)) if n % 16 == 0 else SPEC
    f, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, spec)
    found = vloads(k)
    assert found and all(t == "float" and w == 16 for w, t in found)
    assert VSTORE.search(k.asm["llir"])                              # vector stores too
    x = np.arange(4096, dtype=np.float32) * 1.5
    y = np.zeros(4096 + 64, np.float32)
    got = both(f, k, (-(-n // 256),), [x, y], [n])[1]
    np.testing.assert_array_equal(got[:n], x[:n])
    assert (got[n:] == 0).all()


def test_flip_not_vectorised():
    f, k = compile_ir(flip_kernel, {"x": "*fp32", "y": "*fp32", "n": "i32"}, {"BLOCK": 64}, SPEC)
    facts = analyze(f)
    ld = next(op for op in f.walk() if isinstance(op, ops.LoadOp))
    assert plan_access(facts, ld).width == 1
    assert vloads(k) == []                          # descending: per-lane loads
    assert VSTORE.search(k.asm["llir"])             # the ascending store is vectorised
    x = np.arange(64, dtype=np.float32)
    got = both(f, k, (1,), [x, np.zeros(64, np.float32)], [64])[1]
    np.testing.assert_array_equal(got, x[::-1])


def test_vectorize_off():
    assert Options.from_env({"TILEJIT_VECTORIZE": "0"}).vectorize is False
    assert Options.from_env({}).vectorize is True
    f, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, dict(SPEC, n=(16, False)), vectorize=False)
    assert vloads(k) == [] and not VSTORE.search(k.asm["llir"]) and k.grid_bound is None
    x = np.arange(4096, dtype=np.float32)
    got = both(f, k, (16,), [x, np.zeros(4096, np.float32)], [4096])[1]
    np.testing.assert_array_equal(got, x)


def test_sanitize_keeps_per_lane_accesses():
    f, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, dict(SPEC, n=(16, False)), sanitize=True)
    assert vloads(k) == [] and not VSTORE.search(k.asm["llir"])


# ---------------------------------------------------------------- the grid bound
def test_grid_bound_used_only_when_it_helps():
    _, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, SPEC)
    assert k.grid_bound is None                     # pid*BLOCK + arange: runs hold anyway
    f, k = compile_ir(row_mod_kernel, {"x": "*fp32", "y": "*fp32"}, {"BLOCK": 64, "K": 32}, SPEC)
    assert k.grid_bound == GRID_BOUND               # offs % K needs offs >= 0
    assert (32 // 2, "float") <= max(vloads(k))
    unbounded = get_backend("cpu").compile(f, Options(), bounded=False)
    assert unbounded.grid_bound is None and vloads(unbounded) == []
    x = np.arange(32, dtype=np.float32)
    got = both(f, k, (8,), [x, np.zeros(512, np.float32)])[1]
    np.testing.assert_array_equal(got, np.tile(x, 16))


@tilejit.jit
def wrap_kernel(x, y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, 16)          # wraps int32 once pid >= 2**20
    v = tl.load(x + 16 + offs % 16)
    tl.store(y + tl.arange(0, 16), v, mask=(tl.zeros([16], tl.int32) + pid) == 1048576)


def test_launch_beyond_grid_bound_runs_unbounded_code():
    f, k = compile_ir(wrap_kernel, {"x": "*i32", "y": "*i32"}, {"BLOCK": 2048}, SPEC)
    assert k.grid_bound == GRID_BOUND and vloads(k)
    x = np.arange(32, dtype=np.int32)
    y = np.zeros(16, np.int32)
    n = GRID_BOUND[0] + 1                           # program 2**20 sees offs wrapped negative
    k.launch((n, 1, 1), LaunchArgs([x.ctypes.data, y.ctypes.data], [], [x, y]))
    offs = (np.int64(2**20) * 2048 + np.arange(16)).astype(np.int64)
    offs = ((offs + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(y, x[16 + np.fmod(offs, 16)])   # C remainder, negative
    general = k._general()
    assert general.grid_bound is None and vloads(general) == []


def _jit_cases():
    a0, a1, out = _741_inputs()
    x = np.arange(4096, dtype=np.float32) * 0.5
    return [("741plain", k741_plain, (2,), [a0, a1, out], dict(xnumel=2000, XBLOCK=1024)),
            ("741reassigned", k741_reassigned, (2,), [a0, a1, out], dict(xnumel=1999, XBLOCK=1024)),
            ("copy", copy_kernel, (16,), [x, np.zeros(4096, np.float32)], dict(n=4001, BLOCK=256)),
            ("flip", flip_kernel, (1,), [x[:64].copy(), np.zeros(64, np.float32)], dict(n=64, BLOCK=64)),
            ("rowmod", row_mod_kernel, (8,), [x[:32].copy(), np.zeros(512, np.float32)],
             dict(BLOCK=64, K=32))]


@pytest.mark.parametrize("case", _jit_cases(), ids=lambda c: c[0])
def test_jit_cpu_matches_checked_interpreter(case):
    """kernel[grid](...) on the CPU (vectorised) == the interpreter with
    TILEJIT_CHECK_ANALYSIS=1 (options.check_analysis), bit for bit."""
    from tilejit.runtime.options import use_options
    _, kern, grid, arrays, kw = case
    outs = {}
    for name, opts in (("cpu", dict(backend="cpu")),
                       ("interp", dict(backend="interpreter", interpret=True, check_analysis=True))):
        arrs = [a.copy() for a in arrays]
        with use_options(**opts):
            kern[grid](*arrs, **kw)
        outs[name] = arrs
    for c, i in zip(outs["cpu"], outs["interp"]):
        np.testing.assert_array_equal(c, i)


@tilejit.jit
def permute_runs_of_8(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # Inductor's clone of a (8, 64, 4, 8) -> (8, 4, 64, 8) permute of a (.., 96) qkv row:
    # the load is contiguous in runs of 8 lanes, the store in the whole block
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    x0 = xindex % 8
    x1 = (xindex // 8) % 64
    x2 = (xindex // 512) % 4
    x3 = xindex // 2048
    tmp0 = tl.load(in_ptr0 + (x0 + 8 * x2 + 96 * x1 + 6144 * x3), None)
    tl.store(out_ptr0 + xindex, tmp0, None)


def test_runs_shorter_than_the_store_group_load_as_vectors():
    """A load contiguous in runs of 8 feeding a store planned 16 wide: each store group
    takes two 8-wide vector loads (concatenated), not 16 per-lane loads."""
    types = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32"}
    sp = {"in_ptr0": (16, False), "out_ptr0": (16, False)}
    f, k = compile_ir(permute_runs_of_8, types, {"XBLOCK": 128}, sp)
    assert any(t == "float" and n == 8 for n, t in vloads(k)), vloads(k)
    assert re.search(r"shufflevector <8 x float>", k.asm["llir"])
    src = np.random.default_rng(0).standard_normal(8 * 64 * 96).astype(np.float32)
    out = both(f, k, (16384 // 128,), [src, np.zeros(16384, np.float32)], [16384])[1]
    want = src.reshape(8, 64, 12, 8)[:, :, :4, :].transpose(0, 2, 1, 3).reshape(-1)
    np.testing.assert_array_equal(out, want)
