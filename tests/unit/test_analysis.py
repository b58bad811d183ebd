"""Range and axis-info analysis: exact facts for the patterns that matter, range rules
against brute force, and the solver through loops and branches.  Kernels are built
directly as IR (``irkit.K``) and, where they run, checked by the claim checker."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irkit import K, launch
from tilejit.analysis import AXIS_RULES, RANGE_RULES, analyze
from tilejit.analysis import ranges as R
from tilejit.analysis.checker import ClaimChecker
from tilejit.analysis.lattice import elem_div, join, pow2div, wrap_range
from tilejit.ir import TileType, ops
from tilejit.ir.types import int8, int32, int64, uint8

I32 = TileType(int32)


def ax(facts, v):
    a = facts.axis(v)
    return a.contiguity, a.divisibility, a.constancy


def run_checked(f, grid, *args):
    checker = ClaimChecker(f, grid)
    launch(f, grid, *args, observer=checker)
    return checker


# ---------------------------------------------------------------- lattice helpers
def test_pow2div_and_elem_div():
    assert pow2div(48, 1 << 32) == 16
    assert pow2div(-12, 1 << 32) == 4
    assert pow2div(0, 1 << 32) == 1 << 32
    from tilejit.analysis.lattice import AxisInfo
    a = AxisInfo((8,), (16,), (1,))      # runs of 8 starting at multiples of 16
    assert elem_div(a, 0, 8) == 16       # run starts
    assert elem_div(a, 0, 4) == 4        # s + 4
    assert elem_div(a, 0, 1) == 1        # s + 1
    assert elem_div(a, 0, 1, step=4) == 4   # pointers to 4-byte elements


def test_join_of_runs_keeps_sound_divisibility():
    from tilejit.analysis.lattice import AxisInfo, Fact
    t = TileType(int32, (16,))
    a = Fact((0, 15), AxisInfo((16,), (16,), (1,)))
    b = Fact((32, 39), AxisInfo((8,), (32,), (1,)))
    j = join(t, a, b)
    assert j.range == (0, 39)
    assert j.axis.contiguity == (8,) and j.axis.divisibility == (8,)


# ---------------------------------------------------------------- range rules vs brute force
def _wrap(x, ty):
    bits = ty.element.bits
    x &= (1 << bits) - 1
    return x - (1 << bits) if ty.element.kind == "int" and x >= 1 << (bits - 1) else x


def _tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


REF = {
    ops.AddOp: lambda x, y: x + y, ops.SubOp: lambda x, y: x - y, ops.MulOp: lambda x, y: x * y,
    ops.IDivOp: lambda x, y: None if y == 0 else _tdiv(x, y),
    ops.RemOp: lambda x, y: None if y == 0 else x - y * _tdiv(x, y),
    ops.ShlOp: lambda x, y: x << y if 0 <= y < 8 else None,
    ops.ShrOp: lambda x, y: x >> y if 0 <= y < 8 else None,
    ops.AndOp: lambda x, y: x & y, ops.OrOp: lambda x, y: x | y, ops.XorOp: lambda x, y: x ^ y,
    ops.MinOp: min, ops.MaxOp: max,
}


def _interval(ty):
    lo, hi = (-128, 127) if ty.element.kind == "int" else (0, 255)
    return st.tuples(st.integers(lo, hi), st.integers(0, 20)).map(
        lambda t: (t[0], min(hi, t[0] + t[1])))


@pytest.mark.parametrize("ty", [TileType(int8), TileType(uint8)], ids=["i8", "u8"])
@pytest.mark.parametrize("cls", list(REF), ids=lambda c: c.name)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_range_rule_is_sound_exhaustively(cls, ty, data):
    a, b = data.draw(_interval(ty)), data.draw(_interval(ty))
    lo, hi = wrap_range(*R._BINARY[cls](a, b, ty), ty)
    for x in range(a[0], a[1] + 1):
        for y in range(b[0], b[1] + 1):
            r = REF[cls](x, y)
            if r is not None:
                assert lo <= _wrap(r, ty) <= hi, (cls.name, a, b, x, y)


def test_range_rules_are_tight_where_it_matters():
    t = TileType(int32)
    assert R.idiv_range((-8, 7), (4, 4), t) == (-2, 1)
    assert R.rem_range((-8, 7), (4, 4), t) == (-3, 3)
    assert R.rem_range((0, 2047), (1000, 1000), t) == (0, 999)
    assert R.rem_range((3, 5), (8, 9), t) == (3, 5)
    assert R.shr_range((-8, 7), (2, 2), t) == (-2, 1)
    assert R.and_range((0, 100), (0, 15)) == (0, 15)
    assert wrap_range(*R.add_range((2**31 - 4, 2**31 - 4), (0, 15)), t) == (-2**31, 2**31 - 1)


# ---------------------------------------------------------------- axis facts
def test_arange_and_program_offsets():
    k = K("k", o="*i32")
    a = k.arange(128)
    b = k.v(ops.ArangeOp, start=4, end=12)
    pid = k.v(ops.ProgramIdOp, axis=0)
    off = k.v(ops.MulOp, lhs=pid, rhs=k.const(128, int32))
    x = k.v(ops.AddOp, lhs=k.splat(off, (128,)), rhs=a)
    f = k.done()
    F = analyze(f)
    assert ax(F, a) == ((128,), (1 << 32,), (1,)) and F.range(a) == (0, 127)
    assert ax(F, b) == ((8,), (4,), (1,))
    # pid * 128 may wrap for a huge grid, but a block starting at a multiple of 128
    # never straddles the wrap: contiguity survives, the range does not
    assert ax(F, x) == ((128,), (128,), (1,))
    assert F.range(x) == (-2**31, 2**31 - 1)
    G = analyze(f, grid=(10, 1, 1))
    assert G.range(x) == (0, 1279) and G.range(pid) == (0, 9)


def test_wraparound_inside_a_block_cuts_the_runs():
    k = K("k", o="*i64")
    a = k.arange(16)
    x = k.v(ops.AddOp, lhs=a, rhs=k.const(2**31 - 4, int32, (16,)))
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, a), value=k.v(ops.CastOp, src=x, to=int64))
    f = k.done()
    F = analyze(f)
    assert F.range(x) == (-2**31, 2**31 - 1)
    assert ax(F, x) == ((4,), (4,), (1,))
    out = np.zeros(16, np.int64)
    run_checked(f, (1,), out)
    assert out[3] == 2**31 - 1 and out[4] == -2**31


def test_two_dimensional_offsets_and_masks():
    k = K("k", p="*fp32", stride="i32", n="i32")
    f = k._f
    f.arguments[0].divisibility = 16
    f.arguments[1].divisibility = 16
    rm = k.v(ops.ExpandDimsOp, src=k.arange(8), axis=1)                # [8, 1]
    rn = k.v(ops.ExpandDimsOp, src=k.arange(32), axis=0)               # [1, 32]
    rows = k.v(ops.MulOp, lhs=rm, rhs=k.v(ops.SplatOp, src=k.stride, shape=(8, 1)))
    offs = k.v(ops.AddOp, lhs=k.v(ops.BroadcastOp, src=rows, shape=(8, 32)),
               rhs=k.v(ops.BroadcastOp, src=rn, shape=(8, 32)))
    ptr = k.v(ops.AddPtrOp, ptr=k.splat(k.p, (8, 32)), offset=offs)
    mask = k.v(ops.CmpOp, lhs=k.v(ops.BroadcastOp, src=rn, shape=(8, 32)),
               rhs=k.splat(k.n, (8, 32)), pred="lt")
    k.done()
    F = analyze(f)
    # rows * stride may wrap (stride is any multiple of 16): a row of 32 may straddle
    # the wrap point, so only runs of 16 (which start at multiples of 16) are claimed
    assert ax(F, ptr) == ((1, 16), (4, 16), (1, 1))
    assert ax(F, mask) == ((1, 1), (1, 1), (8, 1))     # n is not specialized
    f.arguments[2].divisibility = 16
    assert ax(analyze(f), mask) == ((1, 1), (1, 1), (8, 16))


def test_rem_div_need_nonnegative_dividends():
    k = K("k", n="i32")
    a = k.arange(64)
    c8 = k.const(8, int32, (64,))
    r = k.v(ops.RemOp, lhs=a, rhs=c8)
    q = k.v(ops.IDivOp, lhs=a, rhs=c8)
    shifted = k.v(ops.AddOp, lhs=a, rhs=k.splat(k.n, (64,)))
    k._f.arguments[0].divisibility = 16
    r2 = k.v(ops.RemOp, lhs=shifted, rhs=c8)
    q2 = k.v(ops.IDivOp, lhs=shifted, rhs=c8)
    s2 = k.v(ops.ShrOp, lhs=shifted, rhs=k.const(3, int32, (64,)))
    m2 = k.v(ops.AndOp, lhs=shifted, rhs=k.const(7, int32, (64,)))
    F = analyze(k.done())
    assert ax(F, r) == ((8,), (8,), (1,))
    assert ax(F, q) == ((1,), (1,), (8,))
    # n may be negative: truncating // and % lose their runs; >> and & floor, and keep them
    assert ax(F, r2)[0] == (1,) and ax(F, q2)[2] == (1,)
    assert ax(F, s2)[2] == (8,)
    assert ax(F, m2) == ((8,), (8,), (1,))


def test_hints_compose_as_in_triton():
    k = K("k", n="i32")
    a = k.arange(64)
    x = k.v(ops.RemOp, lhs=a, rhs=k.splat(k.n, (64,)))
    inner = k.v(ops.MultipleOfOp, src=x, values=[16])
    outer = k.v(ops.MaxContiguousOp, src=inner, values=[16])
    alone = k.v(ops.MultipleOfOp, src=k.splat(k.n, (64,)), values=[16])
    F = analyze(k.done())
    assert ax(F, inner) == ax(F, x)                 # deferred to the outer hint
    assert ax(F, outer) == ((16,), (16,), (1,))
    assert ax(F, alone) == ((1,), (16,), (64,))


def test_casts_keep_values_that_fit():
    k = K("k")
    a = k.arange(16)
    wide = k.v(ops.CastOp, src=a, to=int64)
    big = k.v(ops.AddOp, lhs=wide, rhs=k.const(2**32 - 8, int64, (16,)))
    narrow = k.v(ops.CastOp, src=big, to=int32)
    F = analyze(k.done())
    assert ax(F, wide) == ax(F, a) and F.range(wide) == (0, 15)
    assert ax(F, big) == ((16,), (8,), (1,))
    assert ax(F, narrow) == ((8,), (8,), (1,)) and F.range(narrow) == (-2**31, 2**31 - 1)


# ---------------------------------------------------------------- control flow
def _for(k, lb, ub, step, inits):
    op = k.op(ops.ForOp, lb=lb, ub=ub, step=step, inits=inits)
    body = op.body
    iv = body.add_arg(I32, "i")
    args = [body.add_arg(v.type, f"a{j}") for j, v in enumerate(inits)]
    return op, iv, args


def test_for_loop_fixed_point_and_widening():
    k = K("k", o="*i64", n="i32")
    a = k.arange(16)
    c0 = k.const(0, int32)
    op, iv, (acc, cnt) = _for(k, c0, k.const(10, int32), k.const(1, int32), [a, c0])
    with k._b.at_end(op.body):
        nacc = k.v(ops.AddOp, lhs=acc, rhs=k.const(16, int32, (16,)))
        ncnt = k.v(ops.AddOp, lhs=cnt, rhs=k.const(1, int32))
        k.op(ops.YieldOp, values=[nacc, ncnt])
    res, cnt_out = op.results
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, a), value=k.v(ops.CastOp, src=res, to=int64))
    f = k.done()
    F = analyze(f)
    assert F.range(iv) == (0, 9)
    assert ax(F, acc) == ((16,), (16,), (1,))        # a run of 16 starting at 16*i
    assert ax(F, res) == ((16,), (16,), (1,))
    lo, hi = F.range(cnt_out)        # widened (to the type's range: +1 may wrap), terminated
    assert lo <= 0 and hi >= 10
    out = np.zeros(16, np.int64)
    run_checked(f, (1,), out, 5)
    np.testing.assert_array_equal(out, np.arange(16) + 160)


def test_if_joins_both_branches_and_while_terminates():
    k = K("k", n="i32")
    a = k.arange(32)
    cond = k.v(ops.CmpOp, lhs=k.n, rhs=k.const(0, int32), pred="gt")
    op = k.op(ops.IfOp, cond=cond, result_types=[a.type])
    with k._b.at_end(op.regions[0].block):
        k.op(ops.YieldOp, values=[a])
    with k._b.at_end(op.regions[1].block):
        k.op(ops.YieldOp, values=[k.v(ops.AddOp, lhs=a, rhs=k.const(64, int32, (32,)))])
    w = k.op(ops.WhileOp, inits=[k.n], result_types=[I32])
    before = w.regions[0].block
    x = before.add_arg(I32, "x")
    with k._b.at_end(before):
        c = k.v(ops.CmpOp, lhs=x, rhs=k.const(100, int32), pred="gt")
        k.op(ops.ConditionOp, cond=c, values=[x])
    after = w.regions[1].block
    y = after.add_arg(I32, "y")
    with k._b.at_end(after):
        k.op(ops.YieldOp, values=[k.v(ops.IDivOp, lhs=y, rhs=k.const(2, int32))])
    F = analyze(k.done())
    assert F.range(op.results[0]) == (0, 95)
    assert ax(F, op.results[0]) == ((32,), (64,), (1,))     # starts at 0 or 64
    assert F.range(w.results[0]) == (-2**31, 2**31 - 1)


# ---------------------------------------------------------------- coverage
def test_every_op_has_specific_rules():
    from tilejit.ir.ops import OPS_BY_NAME
    exempt = {ops.YieldOp, ops.ConditionOp, ops.ReturnOp, ops.ForOp, ops.IfOp, ops.WhileOp,
              ops.StoreOp, ops.DeviceAssertOp, ops.DevicePrintOp, ops.DebugBarrierOp}  # no results
    for cls in OPS_BY_NAME.values():
        if cls in exempt:
            continue
        assert RANGE_RULES.lookup(cls) is not RANGE_RULES.rules[ops.Op], cls.name
        assert AXIS_RULES.lookup(cls) is not AXIS_RULES.rules[ops.Op], cls.name


# ---------------------------------------------------------------- lattice soundness
def _best_facts(x: np.ndarray, ty):
    """The most precise true facts of a 1-D array, by brute force."""
    from tilejit.analysis.lattice import AxisInfo, Fact, normalize
    n = x.size
    xs = [int(v) for v in x]
    def runs_ok(m, test):
        return all(test(xs[j - 1], xs[j]) for j in range(1, n) if j % m)
    pows = [m for m in (16, 8, 4, 2, 1) if n % m == 0]
    c = next(m for m in pows if runs_ok(m, lambda a, b: b == a + 1))
    k = next(m for m in pows if runs_ok(m, lambda a, b: a == b))
    v = 1 << 32
    for s in xs[::c]:
        v = min(v, pow2div(s, 1 << 32))
    return normalize(ty, (min(xs), max(xs)), AxisInfo((c,), (v,), (k,)))


@st.composite
def _structured(draw):
    """16 int32 values made of runs: ascending, constant or random, at some offset."""
    out = []
    while len(out) < 16:
        m = draw(st.sampled_from([1, 2, 4, 8, 16]))
        base = draw(st.sampled_from([0, 16, 64, -32, 2**31 - 16, -2**31])) + draw(st.integers(-2, 2)) * m
        kind = draw(st.sampled_from(["asc", "const", "rand"]))
        for j in range(m):
            out.append(base + j if kind == "asc" else base if kind == "const"
                       else draw(st.integers(-2**31, 2**31 - 1)))
    arr = np.array(out[:16], dtype=np.int64)
    return np.clip(arr, -2**31, 2**31 - 1).astype(np.int32)


@settings(max_examples=300, deadline=None)
@given(_structured(), _structured())
def test_join_and_widen_are_sound(x, y):
    from tilejit.analysis.checker import check_value
    from tilejit.analysis.lattice import widen
    t = TileType(int32, (16,))
    fx, fy = _best_facts(x, t), _best_facts(y, t)
    assert check_value(t, x, fx) is None and check_value(t, y, fy) is None
    for merged in (join(t, fx, fy), widen(t, fx, fy)):
        assert check_value(t, x, merged) is None, (fx, fy, merged)
        assert check_value(t, y, merged) is None, (fx, fy, merged)
