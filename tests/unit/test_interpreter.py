"""Reference interpreter on IR built directly with the Builder."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilejit.interpreter import DeviceAssertError, OutOfBoundsError
from tilejit.ir import TileType, float32, int1, int32, int64, ops

from irkit import K, elementwise, launch


def _wrap(v, bits, signed):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def _cdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _crem(a, b):
    return a - b * _cdiv(a, b)


MODEL = {
    ops.AddOp: lambda a, b, bits: a + b,
    ops.SubOp: lambda a, b, bits: a - b,
    ops.MulOp: lambda a, b, bits: a * b,
    ops.IDivOp: lambda a, b, bits: _cdiv(a, b),
    ops.RemOp: lambda a, b, bits: _crem(a, b),
    ops.AndOp: lambda a, b, bits: a & b,
    ops.OrOp: lambda a, b, bits: a | b,
    ops.XorOp: lambda a, b, bits: a ^ b,
    ops.MinOp: lambda a, b, bits: min(a, b),
    ops.MaxOp: lambda a, b, bits: max(a, b),
    ops.UmulhiOp: lambda a, b, bits: ((a % (1 << bits)) * (b % (1 << bits))) >> bits,
}

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64]


def _check_binary(opcls, dtype, a, b):
    a = np.asarray(a, dtype=dtype)
    b = np.asarray(b, dtype=dtype)
    out = np.zeros_like(a)
    launch(elementwise(opcls, dtype, a.size), (1,), a, b, out)
    info = np.iinfo(dtype)
    signed = info.min < 0
    want = [_wrap(MODEL[opcls](int(x), int(y), info.bits), info.bits, signed) for x, y in zip(a, b)]
    assert out.tolist() == want, (opcls.name, dtype, a, b)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("opcls", list(MODEL))
def test_integer_binary_ops_edges(opcls, dtype):
    info = np.iinfo(dtype)
    vals = sorted(v for v in {info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 3, 7, info.max - 1, info.max}
                  if info.min <= v <= info.max)
    a = [x for x in vals for _ in vals]
    b = [y for _ in vals for y in vals]
    if opcls in (ops.IDivOp, ops.RemOp):
        a, b = zip(*[(x, y) for x, y in zip(a, b) if y != 0])
    _check_binary(opcls, dtype, list(a), list(b))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([np.int32, np.int64, np.uint32]), st.data())
def test_integer_div_rem_property(dtype, data):
    info = np.iinfo(dtype)
    ints = st.integers(int(info.min), int(info.max))
    a = data.draw(st.lists(ints, min_size=1, max_size=16))
    b = data.draw(st.lists(ints.filter(lambda v: v != 0), min_size=len(a), max_size=len(a)))
    _check_binary(ops.IDivOp, dtype, a, b)
    _check_binary(ops.RemOp, dtype, a, b)
    _check_binary(ops.MulOp, dtype, a, b)


def test_int_min_div_minus_one_wraps():
    _check_binary(ops.IDivOp, np.int32, [-2**31, -2**31], [-1, 1])
    _check_binary(ops.RemOp, np.int32, [-2**31], [-1])


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.int8])
def test_shifts(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, -1 if info.min < 0 else info.max, 1, 12345 % (info.max + 1), info.max], dtype=dtype)
    for s in range(info.bits):
        b = np.full(a.shape, s, dtype=dtype)
        out = np.zeros_like(a)
        launch(elementwise(ops.ShlOp, dtype, a.size), (1,), a, b, out)
        assert out.tolist() == [_wrap(int(x) << s, info.bits, info.min < 0) for x in a]
        launch(elementwise(ops.ShrOp, dtype, a.size), (1,), a, b, out)
        assert out.tolist() == [int(x) >> s for x in a]   # arithmetic for signed, logical for unsigned


def test_float_ops_and_fmin_nan():
    a = np.array([1.0, np.nan, -3.0, 5.5, -0.0], np.float32)
    b = np.array([np.nan, 2.0, 4.0, -7.25, 3.0], np.float32)
    out = np.zeros_like(a)
    launch(elementwise(ops.MinOp, np.float32, 5), (1,), a, b, out)
    assert out.tolist() == [1.0, 2.0, -3.0, -7.25, -0.0]
    launch(elementwise(ops.MaxOp, np.float32, 5), (1,), a, b, out)
    assert out.tolist() == [1.0, 2.0, 4.0, 5.5, 3.0]
    launch(elementwise(ops.RemOp, np.float32, 5), (1,), a, b, out)
    np.testing.assert_array_equal(out, np.fmod(a, b))


def test_fp16_and_bf16_arith():
    a = np.array([1.0, 0.1, 65504.0, -2.5], np.float16)
    b = np.array([2.0**-11, 0.2, 1.0, 1.0], np.float16)
    out = np.zeros_like(a)
    launch(elementwise(ops.AddOp, np.float16, 4), (1,), a, b, out)
    np.testing.assert_array_equal(out, (a.astype(np.float64) + b).astype(np.float16))
    # bf16 stored as uint16 bits: 1 + 2**-8 rounds to even (1.0), 1 + 3*2**-8 to 1 + 2**-6
    k = K("bf", a="*bf16", b="*bf16", o="*bf16")
    offs = k.arange(2)
    s = k.v(ops.AddOp, lhs=k.v(ops.LoadOp, ptr=k.ptrs(k.a, offs)), rhs=k.v(ops.LoadOp, ptr=k.ptrs(k.b, offs)))
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, offs), value=s)
    f = k.done()
    bits = lambda x: (np.array(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
    a16, b16, o16 = bits([1.0, 1.0]), bits([2.0**-8, 3 * 2.0**-8]), np.zeros(2, np.uint16)
    launch(f, (1,), a16, b16, o16)
    got = (o16.astype(np.uint32) << 16).view(np.float32)
    assert got.tolist() == [1.0, 1.015625]


@pytest.mark.parametrize("src,dst,vals,want", [
    (np.float32, np.int32, [-1.7, 2.9, -0.5, 100.99], [-1, 2, 0, 100]),
    (np.int32, np.int8, [255, 128, -129, 7], [-1, -128, 127, 7]),
    (np.int32, np.uint32, [-1, 5, -2**31, 0], [2**32 - 1, 5, 2**31, 0]),
    (np.uint32, np.int64, [2**32 - 1, 0, 7, 2**31], [2**32 - 1, 0, 7, 2**31]),
    (np.int8, np.int64, [-1, -128, 127, 0], [-1, -128, 127, 0]),
    (np.float32, np.float16, [1.0 + 2**-11, 1.0 + 3 * 2**-11, 65520.0, -0.0], None),
])
def test_casts(src, dst, vals, want):
    from tilejit.ir import dtype_from_numpy
    t_src, t_dst = dtype_from_numpy(src), dtype_from_numpy(dst)
    k = K("cast", a="*" + t_src.name, o="*" + t_dst.name)
    offs = k.arange(4)
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a, offs))
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, offs), value=k.v(ops.CastOp, src=x, to=t_dst))
    a = np.array(vals, dtype=src)
    out = np.zeros(4, dtype=dst)
    launch(k.done(), (1,), a, out)
    if want is None:
        with np.errstate(over="ignore"):
            want = a.astype(dst)   # numpy rounds to nearest even (65520 -> inf)
    np.testing.assert_array_equal(out, np.array(want, dtype=dst))


def test_cast_to_int1_and_bitcast():
    k = K("c", a="*fp32", o="*i8", p="*i32")
    offs = k.arange(4)
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a, offs))
    bit = k.v(ops.CastOp, src=x, to=int1)
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, offs), value=k.v(ops.CastOp, src=bit, to=k.o.type.element.element))
    k.op(ops.StoreOp, ptr=k.ptrs(k.p, offs), value=k.v(ops.BitcastOp, src=x, to=int32))
    a = np.array([0.0, -0.0, 0.25, np.nan], np.float32)
    o, p = np.full(4, 9, np.int8), np.zeros(4, np.int32)
    launch(k.done(), (1,), a, o, p)
    assert o.tolist() == [0, 0, 1, 1]
    assert p.tolist() == a.view(np.int32).tolist()


def _for_sum_kernel():
    """out[pid] = sum_{i=lb}^{ub-1 step s} (i * pid) via a carried scalar, and a
    tile carried value acc += arange."""
    k = K("loop", o="*i32", t="*i32", lb="i32", ub="i32", st="i32")
    pid = k.v(ops.ProgramIdOp, axis=0)
    zero = k.const(0, int32)
    tile0 = k.const(0, int32, (4,))
    loop = k.op(ops.ForOp, lb=k.lb, ub=k.ub, step=k.st, inits=[zero, tile0])
    body = loop.body
    iv = body.add_arg(TileType(int32))
    c = body.add_arg(TileType(int32))
    tacc = body.add_arg(TileType(int32, (4,)))
    with k._b.at_end(body):
        nc = k.v(ops.AddOp, lhs=c, rhs=k.v(ops.MulOp, lhs=iv, rhs=pid))
        nt = k.v(ops.AddOp, lhs=tacc, rhs=k.arange(4))
        k.op(ops.YieldOp, values=[nc, nt])
    k.op(ops.StoreOp, ptr=k.v(ops.AddPtrOp, ptr=k.o, offset=pid), value=loop.results[0])
    base = k.v(ops.MulOp, lhs=pid, rhs=k.const(4, int32))
    offs = k.v(ops.AddOp, lhs=k.splat(base, (4,)), rhs=k.arange(4))
    k.op(ops.StoreOp, ptr=k.ptrs(k.t, offs), value=loop.results[1])
    return k.done()


@pytest.mark.parametrize("lb,ub,step", [(0, 10, 1), (3, 17, 4), (10, 0, -3), (5, 5, 1), (7, 2, 1)])
def test_for_with_carried_values(lb, ub, step):
    f = _for_sum_kernel()
    out = np.zeros(3, np.int32)
    tiles = np.zeros(12, np.int32)
    launch(f, (3,), out, tiles, lb, ub, step)
    its = list(range(lb, ub, step))
    assert out.tolist() == [sum(i * p for i in its) for p in range(3)]
    assert tiles.tolist() == [len(its) * j for _ in range(3) for j in range(4)]


def test_while_and_if():
    """Collatz steps of n (while) and a branch on parity (if) per program."""
    k = K("w", o="*i32", n="i32")
    one = k.const(1, int32)
    w = k.op(ops.WhileOp, inits=[k.n, k.const(0, int32)], result_types=[TileType(int32)] * 2)
    before, after = w.regions[0].block, w.regions[1].block
    x, c = before.add_arg(TileType(int32)), before.add_arg(TileType(int32))
    with k._b.at_end(before):
        k.op(ops.ConditionOp, cond=k.v(ops.CmpOp, lhs=x, rhs=one, pred="ne"), values=[x, c])
    x2, c2 = after.add_arg(TileType(int32)), after.add_arg(TileType(int32))
    with k._b.at_end(after):
        odd = k.v(ops.CmpOp, lhs=k.v(ops.AndOp, lhs=x2, rhs=one), rhs=one, pred="eq")
        br = k.op(ops.IfOp, cond=odd, result_types=[TileType(int32)])
        with k._b.at_end(br.regions[0].block):
            k.op(ops.YieldOp, values=[k.v(ops.AddOp, lhs=k.v(ops.MulOp, lhs=x2, rhs=k.const(3, int32)), rhs=one)])
        with k._b.at_end(br.regions[1].block):
            k.op(ops.YieldOp, values=[k.v(ops.IDivOp, lhs=x2, rhs=k.const(2, int32))])
        k.op(ops.YieldOp, values=[br.result, k.v(ops.AddOp, lhs=c2, rhs=one)])
    k.op(ops.StoreOp, ptr=k.o, value=w.results[1])
    f = k.done()
    for n, steps in [(1, 0), (6, 8), (27, 111)]:
        out = np.zeros(1, np.int32)
        launch(f, (1,), out, n)
        assert out[0] == steps


@pytest.mark.parametrize("kind", ["sum", "max", "min", "argmax", "argmin", "xor_sum"])
@pytest.mark.parametrize("axis", [0, 1])
def test_reductions(kind, axis, rng):
    dtype = np.float32 if kind != "xor_sum" else np.int32
    from tilejit.ir import dtype_from_numpy
    t = dtype_from_numpy(dtype)
    k = K("red", a="*" + t.name, o="*" + ("i32" if kind.startswith("arg") else t.name))
    r, c = k.arange(8), k.arange(16)
    r2 = k.v(ops.BroadcastOp, src=k.v(ops.ExpandDimsOp, src=r, axis=1), shape=(8, 16))
    c2 = k.v(ops.BroadcastOp, src=k.v(ops.ExpandDimsOp, src=c, axis=0), shape=(8, 16))
    offs = k.v(ops.AddOp, lhs=k.v(ops.MulOp, lhs=r2, rhs=k.const(16, int32, (8, 16))), rhs=c2)
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a, offs))
    red = k.v(ops.ReduceOp, src=x, kind=kind, axis=axis)
    n = red.type.shape[0]
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, k.arange(n)), value=red)
    if dtype == np.int32:
        a = rng.integers(-2**31, 2**31, size=(8, 16)).astype(np.int32)
    else:
        a = rng.integers(-4, 5, size=(8, 16)).astype(np.float32)   # ties test the first index
    out = np.zeros(n, np.int32 if kind.startswith("arg") or dtype == np.int32 else np.float32)
    launch(k.done(), (1,), a, out)
    ref = {"sum": lambda: a.sum(axis), "max": lambda: a.max(axis), "min": lambda: a.min(axis),
           "argmax": lambda: a.argmax(axis), "argmin": lambda: a.argmin(axis),
           "xor_sum": lambda: np.bitwise_xor.reduce(a, axis)}[kind]()
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.int8])
def test_dot(dt, rng):
    from tilejit.ir import dtype_from_numpy
    t = dtype_from_numpy(dt)
    acc_t = int32 if dt == np.int8 else float32
    k = K("dot", a="*" + t.name, b="*" + t.name, o="*" + acc_t.name)
    M, N, KK = 16, 8, 32

    def grid2(rows, cols):
        r = k.v(ops.BroadcastOp, src=k.v(ops.ExpandDimsOp, src=k.arange(rows), axis=1), shape=(rows, cols))
        c = k.v(ops.BroadcastOp, src=k.v(ops.ExpandDimsOp, src=k.arange(cols), axis=0), shape=(rows, cols))
        return k.v(ops.AddOp, lhs=k.v(ops.MulOp, lhs=r, rhs=k.const(cols, int32, (rows, cols))), rhs=c)
    a = k.v(ops.LoadOp, ptr=k.ptrs(k.a, grid2(M, KK)))
    b = k.v(ops.LoadOp, ptr=k.ptrs(k.b, grid2(KK, N)))
    acc = k.const(1, acc_t, (M, N))
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, grid2(M, N)), value=k.v(ops.DotOp, a=a, b=b, acc=acc))
    if dt == np.int8:
        A = rng.integers(-128, 128, (M, KK)).astype(np.int8)
        B = rng.integers(-128, 128, (KK, N)).astype(np.int8)
    else:
        A = rng.standard_normal((M, KK)).astype(dt)
        B = rng.standard_normal((KK, N)).astype(dt)
    out = np.zeros((M, N), np.int32 if dt == np.int8 else np.float32)
    launch(k.done(), (1,), A, B, out)
    ref = A.astype(np.float64) @ B.astype(np.float64) + 1
    if dt == np.int8:
        np.testing.assert_array_equal(out, ref.astype(np.int32))
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


def _gather_kernel(n):
    k = K("gather", a="*fp32", o="*fp32", lim="i32")
    pid = k.v(ops.ProgramIdOp, axis=0)
    offs = k.v(ops.AddOp, lhs=k.splat(k.v(ops.MulOp, lhs=pid, rhs=k.const(n, int32)), (n,)), rhs=k.arange(n))
    m = k.v(ops.CmpOp, lhs=offs, rhs=k.splat(k.lim, (n,)), pred="lt")
    other = k.const(-1.0, float32, (n,))
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a, offs), mask=m, other=other)
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, offs), value=x)
    return k.done()


def test_masked_lanes_touch_nothing_and_take_other():
    a = np.arange(10, dtype=np.float32)
    o = np.zeros(16, np.float32)
    launch(_gather_kernel(8), (2,), a, o, 10)
    assert o.tolist() == list(range(10)) + [-1.0] * 6


def test_out_of_bounds_names_line_program_and_lane():
    a = np.arange(10, dtype=np.float32)
    o = np.zeros(16, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        launch(_gather_kernel(8), (2,), a, o, 12)   # lanes 10, 11 of 'a' are masked in
    e = ei.value
    msg = str(e)
    assert e.program_id == (1, 0, 0) and e.lane == 2
    assert e.address == a.ctypes.data + 40
    assert "gather" in msg and "kern.py:" in msg and "program (1, 0, 0)" in msg
    assert "lane 2" in msg and "'a'" in msg and "past its end" in msg
    import tilejit
    assert tilejit.OutOfBoundsError is OutOfBoundsError


def test_misaligned_access_is_an_error():
    k = K("mis", a="*i8", o="*i32")
    p = k.v(ops.CastOp, src=k.v(ops.AddPtrOp, ptr=k.a, offset=k.const(1, int32)), to=k.o.type.element)
    k.op(ops.StoreOp, ptr=k.o, value=k.v(ops.LoadOp, ptr=p))
    a, o = np.zeros(16, np.int8), np.zeros(1, np.int32)
    with pytest.raises(OutOfBoundsError):
        launch(k.done(), (1,), a, o)


def test_observer_sees_every_op_and_assert_print(capsys):
    k = K("obs", n="i32")
    pid = k.v(ops.ProgramIdOp, axis=0)
    k.op(ops.DevicePrintOp, prefix="pid=", args=[pid])
    ok = k.v(ops.CmpOp, lhs=pid, rhs=k.n, pred="lt")
    k.op(ops.DeviceAssertOp, cond=ok, msg="pid < n")
    f = k.done()
    seen = []
    launch(f, (3,), 5, observer=lambda op, pid, res: seen.append((op.name, pid, [r.tolist() for r in res])))
    assert ("tt.get_program_id", (2, 0, 0), [2]) in seen
    assert ("arith.cmp", (1, 0, 0), [True]) in seen
    assert "pid=2" in capsys.readouterr().out
    with pytest.raises(DeviceAssertError) as ei:
        launch(f, (3,), 2)
    assert "pid < n" in str(ei.value) and ei.value.program_id == (2, 0, 0) and ei.value.loc.line > 0


def test_int64_pointer_casts_roundtrip():
    k = K("p2i", a="*fp32", o="*i64")
    addr = k.v(ops.CastOp, src=k.a, to=int64)
    k.op(ops.StoreOp, ptr=k.o, value=addr)
    a, o = np.zeros(4, np.float32), np.zeros(1, np.int64)
    launch(k.done(), (1,), a, o)
    assert int(o[0]) == a.ctypes.data


def test_interpreter_backend_registered():
    from tilejit.backends import LaunchArgs, Buffer, get_backend
    f = _gather_kernel(4)
    ck = get_backend("interpreter").compile(f, None)
    a = np.arange(4, dtype=np.float32)
    o = np.zeros(4, np.float32)
    ck.launch((1, 1, 1), LaunchArgs([a.ctypes.data, o.ctypes.data, 4],
                                     [Buffer("a", a.ctypes.data, 16), Buffer("o", o.ctypes.data, 16)]))
    assert o.tolist() == a.tolist()
