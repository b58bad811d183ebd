"""Type promotion of binary operators against an independent model of Triton's rules.

The model is written from Triton's documented behaviour in terms of numpy dtypes
(kind, width, signedness) rather than by calling ``semantic``.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilejit.ir import ops
from tilejit.ir.builder import Builder
from tilejit.ir.core import Function
from tilejit.ir.types import (PointerType, TileType, int1, int8, int16, int32, int64, uint8, uint16,
                              uint32, uint64, float16, bfloat16, float32, float64)
from tilejit.language import core, semantic as sem

DTYPES = [int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32,
          float64]
NP = {int1: np.bool_, int8: np.int8, int16: np.int16, int32: np.int32, int64: np.int64, uint8: np.uint8,
      uint16: np.uint16, uint32: np.uint32, uint64: np.uint64, float16: np.float16, float32: np.float32,
      float64: np.float64}
OPS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "and", "lt", "minimum"]


def kind(dt):
    if dt is bfloat16:
        return 2
    k = np.dtype(NP[dt]).kind
    return {"b": 0, "i": 1, "u": 1, "f": 2}[k]


def signed(dt):
    return dt is not bfloat16 and np.dtype(NP[dt]).kind == "i"


def width(dt):
    return 16 if dt is bfloat16 else (1 if dt is int1 else np.dtype(NP[dt]).itemsize * 8)


def py_scalar_dtype(v):
    if isinstance(v, bool):
        return int1
    if isinstance(v, int):
        for dt, lo, hi in ((int32, -2**31, 2**31), (uint32, 2**31, 2**32), (int64, -2**63, 2**63)):
            if lo <= v < hi:
                return dt
        return uint64
    # floats that fp32 holds as a normal number (or 0, inf, nan) are fp32, others fp64
    a = abs(v)
    if a == 0 or a == float("inf") or v != v or np.finfo(np.float32).tiny <= a <= np.finfo(np.float32).max:
        return float32
    return float64


def model_int(a, b):
    if signed(a) == signed(b):
        return a if width(a) > width(b) else b
    u, s = (a, b) if not signed(a) else (b, a)
    return u if width(u) >= width(s) else s


def model(a, a_scalar, b, b_scalar, op):
    """Result dtype of ``a op b`` in Triton, or the exception class it raises."""
    return model_both(a, a_scalar, b, b_scalar, op)[1]


def model_both(a, a_scalar, b, b_scalar, op):
    """(computation dtype, result dtype or exception class) of ``a op b``."""
    r = _model(a, a_scalar, b, b_scalar, op)
    return r if isinstance(r, tuple) else (None, r)


def _model(a, a_scalar, b, b_scalar, op):
    divmod_ = op in ("truediv", "floordiv", "mod")
    comp = None
    if a_scalar != b_scalar:
        s, t = (a, b) if a_scalar else (b, a)
        if kind(s) <= kind(t):
            comp = float32 if divmod_ and t in (float16, bfloat16) else t
    if comp is None:
        fl = {a, b}
        if float64 in fl:
            comp = float64
        elif float32 in fl:
            comp = float32
        elif float16 in fl:
            comp = float32 if divmod_ else float16
        elif fl == {bfloat16}:
            comp = float32 if divmod_ else bfloat16
        elif bfloat16 in fl:
            comp = float32
        else:
            if divmod_ and signed(a) != signed(b):
                return TypeError
            comp = model_int(a, b)
    if op == "and":
        return comp, (TypeError if kind(comp) == 2 else comp)
    if op == "truediv":
        return comp, (float32 if kind(comp) < 2 else comp)
    if op == "floordiv" and kind(comp) != 1:
        return comp, TypeError
    if op == "mod" and kind(comp) == 0:
        return comp, TypeError
    if op == "lt":
        return comp, int1
    return comp, comp


def apply(op, x, y):
    fn = {"add": sem.add, "sub": sem.sub, "mul": sem.mul, "truediv": sem.truediv,
          "floordiv": sem.floordiv, "mod": sem.mod, "and": sem.and_, "minimum": sem.minimum,
          "lt": lambda p, q: sem.compare(p, q, "lt")}[op]
    return fn(x, y)


def make_operand(func, dt, scalar_value, shape):
    if scalar_value is not None:
        return scalar_value
    v = func.add_argument(f"a{len(func.arguments)}", TileType(dt))
    t = core.tensor(v)
    return sem.splat(t, shape) if shape else t


scalar_values = st.one_of(st.booleans(), st.integers(-2**31, 2**32 - 1), st.integers(2**32, 2**63 - 1),
                          st.floats(-1e6, 1e6, allow_nan=False, width=32), st.floats(-1e-300, 1e-300),
                          st.sampled_from([1e300, -1e300, float("inf")]))


@settings(max_examples=400, deadline=None)
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES), op=st.sampled_from(OPS),
       which_scalar=st.sampled_from([None, "a", "b"]), value=scalar_values,
       shape=st.sampled_from([(), (4,), (2, 4)]))
def test_binary_promotion_matches_model(a, b, op, which_scalar, value, shape):
    func = Function("t")
    builder = Builder(func)
    a_val = value if which_scalar == "a" else None
    b_val = value if which_scalar == "b" else None
    a_ty = py_scalar_dtype(value) if which_scalar == "a" else a
    b_ty = py_scalar_dtype(value) if which_scalar == "b" else b
    comp, expected = model_both(a_ty, which_scalar == "a", b_ty, which_scalar == "b", op)
    with core.building(builder):
        x = make_operand(func, a, a_val, shape)
        y = make_operand(func, b, b_val, shape)
        if comp is not None and which_scalar:
            # out-of-range / negative-to-unsigned scalars are ValueErrors in Triton
            scalar = value
            if comp.is_int() and not comp.is_bool() and not isinstance(scalar, float):
                from tilejit.ir.types import int_range
                lo, hi = int_range(comp)
                if not lo <= scalar <= hi:
                    with pytest.raises(ValueError):
                        apply(op, x, y)
                    return
        if expected is TypeError:
            with pytest.raises(TypeError):
                apply(op, x, y)
            return
        r = apply(op, x, y)
    assert r.dtype == expected, (a_ty, which_scalar, b_ty, op)
    assert r.shape == shape


@pytest.mark.parametrize("a,b,expect", [
    (int32, int64, int64), (int32, uint32, uint32), (int64, uint32, int64), (uint64, int64, uint64),
    (int8, uint8, uint8), (int1, int8, int8), (int16, uint8, int16), (float16, bfloat16, float16),
    (float16, int64, float16), (bfloat16, int32, float32), (float32, float64, float64),
])
def test_promotion_table_examples(a, b, expect):
    func = Function("t")
    with core.building(Builder(func)):
        x = core.tensor(func.add_argument("x", TileType(a)))
        y = core.tensor(func.add_argument("y", TileType(b)))
        assert sem.add(x, y).dtype == expect
        assert sem.add(y, x).dtype == expect


def test_python_scalars_do_not_participate():
    func = Function("t")
    with core.building(Builder(func)):
        h = core.tensor(func.add_argument("h", TileType(float16)))
        i8 = core.tensor(func.add_argument("i", TileType(int8)))
        assert (h * 2.5).dtype == float16          # float scalar, float tensor
        assert (h / 2).dtype == float32            # / upcasts fp16
        assert (i8 * 2.0).dtype == float32         # float scalar on an int tensor participates
        assert (i8 + 100).dtype == int8
        with pytest.raises(ValueError):
            i8 + 1000                              # out of range for int8
        u = core.tensor(func.add_argument("u", TileType(uint32)))
        with pytest.raises(ValueError):
            u + (-1)
        assert (5 // 2) == 2                       # compile-time values keep Python semantics


def test_pointer_arithmetic():
    func = Function("t")
    with core.building(Builder(func)):
        p = core.tensor(func.add_argument("p", TileType(PointerType(float32))))
        o = sem.splat(core.tensor(func.add_argument("o", TileType(uint32))), (8,))
        q = p + o
        assert q.dtype == PointerType(float32) and q.shape == (8,)
        add = q.handle.op
        assert isinstance(add, ops.AddPtrOp) and add.offset.type.element == int64   # zero-extended
        r = 3 + p
        assert r.dtype == PointerType(float32)
        s = p - 2
        assert isinstance(s.handle.op, ops.AddPtrOp)
        with pytest.raises(TypeError):
            p + 1.5
        with pytest.raises(TypeError):
            p + p
        with pytest.raises(TypeError):
            p * 2


def test_sum_and_max_accumulator_types():
    from tilejit.language import standard
    func = Function("t")
    with core.building(Builder(func)):
        for dt, sum_dt, max_dt in ((int8, int32, int32), (int16, int32, int32), (uint8, uint32, int32),
                                   (int1, uint32, int32), (float16, float16, float32),
                                   (bfloat16, float32, float32), (int64, int64, int64)):
            x = sem.splat(core.tensor(func.add_argument("x", TileType(dt))), (8,))
            assert standard.sum(x, 0).dtype == sum_dt
            assert standard.max(x, 0).dtype == max_dt
            if dt.is_int() and not dt.is_bool():
                assert standard.xor_sum(x, 0).dtype == dt
            assert standard.argmax(x, 0).dtype == int32
