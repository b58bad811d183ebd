"""Constant folding against an independent numpy model of the integer semantics.

Each example folds ``op(const a, const b)`` and compares with numpy arithmetic on arrays
of the dtype (which wraps like C).  Where the operation is undefined (division by zero,
INT_MIN / -1, shift amounts outside [0, bits)) folding must not happen; everywhere else it
must.  ``TILEJIT_LONG_FUZZ=1`` raises the example count.
"""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilejit.ir import Builder, Function, TileType, int_range, ops
from tilejit.ir import float32, float64, int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from tilejit.transforms import fold_constants

EXAMPLES = 2000 if os.environ.get("TILEJIT_LONG_FUZZ") == "1" else 150
INT_TYPES = [int8, int16, int32, int64, uint8, uint16, uint32, uint64]


def fold(op_cls, dt, *values, shape=(), **attrs):
    """Fold ``op_cls`` applied to constants; the folded Python value or None."""
    f = Function("f")
    b = Builder(f)
    t = TileType(dt, shape)
    cs = [b.constant(v, t) for v in values]
    names = [n for n, _o, _v in op_cls.slot_names()]
    r = b.value(op_cls, **dict(zip(names, cs)), **attrs)
    b.create(ops.DevicePrintOp, args=[r], prefix="")
    b.create(ops.ReturnOp)
    fold_constants(f)
    src = f.block.ops[-2].args[0].op
    if isinstance(src, ops.ConstantOp):
        assert src.type == r.type
        return src.value
    assert type(src) is op_cls
    return None


def ints(dt):
    lo, hi = int_range(dt)
    edges = st.sampled_from([lo, hi, 0, 1, -1 if lo < 0 else 2, lo + 1, hi - 1])
    return st.one_of(st.integers(lo, hi), edges)


def _arr(v, dt):
    return np.array([v], dtype=dt.to_numpy())


def _umulhi_ref(a, b, dt):
    ua = _arr(a, dt).view(np.dtype(f"u{dt.itemsize}")).astype(np.uint64)
    ub = _arr(b, dt).view(np.dtype(f"u{dt.itemsize}")).astype(np.uint64)
    if dt.bits < 64:
        hi = (ua * ub) >> np.uint64(dt.bits)
    else:
        m = np.uint64(0xFFFFFFFF)
        s = np.uint64(32)
        a0, a1, b0, b1 = ua & m, ua >> s, ub & m, ub >> s
        t = a1 * b0 + ((a0 * b0) >> s)
        w1 = (t & m) + a0 * b1
        hi = a1 * b1 + (t >> s) + (w1 >> s)
    return hi.astype(dt.to_numpy())


def reference(op_cls, a, b, dt):
    """numpy result, or None where the operation is undefined."""
    x, y = _arr(a, dt), _arr(b, dt)
    lo, _hi = int_range(dt)
    if op_cls in (ops.IDivOp, ops.RemOp):
        if b == 0 or (dt.kind == "int" and a == lo and b == -1):
            return None
        r = np.fmod(x, y)                   # C remainder: sign of the dividend
        return (x - r) // y if op_cls is ops.IDivOp else r
    if op_cls in (ops.ShlOp, ops.ShrOp):
        if not 0 <= b < dt.bits:
            return None
        return np.left_shift(x, y) if op_cls is ops.ShlOp else np.right_shift(x, y)
    if op_cls is ops.UmulhiOp:
        return _umulhi_ref(a, b, dt)
    fn = {ops.AddOp: np.add, ops.SubOp: np.subtract, ops.MulOp: np.multiply,
          ops.AndOp: np.bitwise_and, ops.OrOp: np.bitwise_or, ops.XorOp: np.bitwise_xor,
          ops.MinOp: np.minimum, ops.MaxOp: np.maximum}[op_cls]
    return fn(x, y)


INT_BINARY = [ops.AddOp, ops.SubOp, ops.MulOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp,
              ops.XorOp, ops.ShlOp, ops.ShrOp, ops.MinOp, ops.MaxOp, ops.UmulhiOp]


@st.composite
def int_cases(draw):
    dt = draw(st.sampled_from(INT_TYPES))
    op_cls = draw(st.sampled_from(INT_BINARY))
    a = draw(ints(dt))
    if op_cls in (ops.ShlOp, ops.ShrOp):
        b = draw(st.one_of(st.integers(-2, dt.bits + 2), ints(dt)).filter(
            lambda v: int_range(dt)[0] <= v <= int_range(dt)[1]))
    else:
        b = draw(ints(dt))
    return op_cls, dt, a, b


@settings(max_examples=EXAMPLES, deadline=None)
@given(int_cases())
def test_integer_binary_folds_match_numpy(case):
    op_cls, dt, a, b = case
    with np.errstate(all="ignore"):
        want = reference(op_cls, a, b, dt)
    got = fold(op_cls, dt, a, b, shape=(2,))
    if want is None:
        assert got is None, f"{op_cls.name}({a}, {b}) : {dt} is undefined but was folded to {got}"
    else:
        assert got is not None, f"{op_cls.name}({a}, {b}) : {dt} was not folded"
        assert got == int(want[0]) and type(got) is int, (op_cls.name, dt, a, b, got, want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(INT_TYPES).flatmap(lambda dt: st.tuples(st.just(dt), ints(dt), ints(dt))),
       st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]))
def test_integer_compares_match_numpy(case, pred):
    dt, a, b = case
    x, y = _arr(a, dt), _arr(b, dt)
    want = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}[pred](x, y)[0]
    assert fold(ops.CmpOp, dt, a, b, pred=pred) is bool(want)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(INT_TYPES).flatmap(lambda dt: st.tuples(st.just(dt), ints(dt))),
       st.sampled_from([ops.NegOp, ops.InvertOp, ops.AbsOp]))
def test_integer_unary_folds_match_numpy(case, op_cls):
    dt, a = case
    x = _arr(a, dt)
    with np.errstate(all="ignore"):
        if op_cls is ops.AbsOp:
            want = x if dt.kind == "uint" else np.where(x < 0, np.negative(x), x)
        else:
            want = {ops.NegOp: np.negative, ops.InvertOp: np.invert}[op_cls](x)
    assert fold(op_cls, dt, a) == int(want[0])


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(INT_TYPES + [int1]).flatmap(lambda dt: st.tuples(st.just(dt), ints(dt))),
       st.sampled_from(INT_TYPES + [int1, float32, float64]))
def test_casts_from_integers_match_numpy(case, to):
    src, a = case
    got = fold(ops.CastOp, src, bool(a) if src is int1 else a, to=to)
    want = _arr(a, src).astype(to.to_numpy())[0]
    if to.is_floating():
        limit = 2 ** (24 if to is float32 else 53)
        if abs(a) > limit:
            assert got is None                # possibly inexact: left to the backend
            return
        assert got == float(want) and type(got) is float
    elif to is int1:
        assert got is bool(want)
    else:
        assert got == int(want) and type(got) is int


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.floats(width=32, allow_nan=True), st.sampled_from(INT_TYPES))
def test_float_to_int_casts_truncate_or_stay(x, to):
    got = fold(ops.CastOp, float32, x, to=to)
    lo, hi = int_range(to)
    if np.isnan(x) or np.isinf(x) or not lo <= np.trunc(x) <= hi:
        assert got is None
    else:
        assert got == int(np.trunc(np.float32(x)))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.floats(width=32), st.floats(width=32),
       st.sampled_from([ops.AddOp, ops.SubOp, ops.MulOp, ops.TrueDivOp]),
       st.sampled_from([float32, float64]))
def test_float_folds_are_correctly_rounded(a, b, op_cls, dt):
    got = fold(op_cls, dt, a, b)
    fn = {ops.AddOp: np.add, ops.SubOp: np.subtract, ops.MulOp: np.multiply,
          ops.TrueDivOp: np.divide}[op_cls]
    with np.errstate(all="ignore"):
        want = fn(_arr(a, dt), _arr(b, dt))[0]
    assert type(got) is float
    got_np = dt.to_numpy().type(got)
    assert got_np.tobytes() == want.tobytes() or (np.isnan(got_np) and np.isnan(want))


@pytest.mark.parametrize("dt", INT_TYPES)
def test_out_of_range_constants_are_not_folded(dt):
    lo, hi = int_range(dt)
    assert fold(ops.AddOp, dt, hi + 1, 0) is None
    assert fold(ops.AddOp, dt, lo - 1, 0) is None
    assert fold(ops.AddOp, dt, hi, 0) == hi
