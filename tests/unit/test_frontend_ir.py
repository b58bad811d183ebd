"""Frontend: the IR built for control flow, calls, globals and compile-time folding.

Every kernel built here also passes the verifier and round-trips through the
printer and parser."""
import math

import pytest

import tilejit
import tilejit.language as tl
from tilejit.frontend import build_ir
from tilejit.ir import ops
from tilejit.ir.parser import roundtrip_check
from tilejit.ir.types import PointerType, TileType, float32, int1, int32, int64
from tilejit.ir.verifier import verify_function

P32 = PointerType(float32)
BLOCK_G = 32
SCALE_G = tl.constexpr(2.5)


def build(kernel, types, constexprs=None):
    f = build_ir(kernel, types, constexprs or {})
    verify_function(f)
    roundtrip_check(f)
    return f


def top_names(f):
    return [op.name for op in f.block.ops]


def all_of(f, cls):
    return [op for op in f.walk() if isinstance(op, cls)]


def const(v):
    op = v.op
    while isinstance(op, (ops.SplatOp, ops.BroadcastOp)):
        op = op.src.op
    assert isinstance(op, ops.ConstantOp), op
    return op.value


# ---------------------------------------------------------------- compile-time folding
@tilejit.jit
def folding_kernel(x_ptr, BLOCK: tl.constexpr, FLAG: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 2
    n = HALF * 2 + min(BLOCK, 4) - max(1, 2) + abs(-3) + int(2.7) + len((1, 2))
    if FLAG:
        v = tl.full([HALF], 1.0, tl.float32)
    else:
        v = tl.full([HALF], float("inf"), tl.float32)
    w = v * SCALE_G if BLOCK > 8 else v
    tl.store(x_ptr + tl.arange(0, HALF) + n + BLOCK_G, w)


@pytest.mark.parametrize("flag", [True, False])
def test_compile_time_values_fold(flag):
    f = build(folding_kernel, {"x_ptr": P32}, {"BLOCK": 16, "FLAG": flag})
    assert not all_of(f, ops.IfOp)                       # constexpr ifs pick a branch
    assert not all_of(f, ops.IDivOp)
    (rng,) = all_of(f, ops.ArangeOp)
    assert rng.end == 8
    consts = [op.value for op in all_of(f, ops.ConstantOp)]
    n = 8 * 2 + 4 - 2 + 3 + 2 + 2
    assert n in consts and BLOCK_G in consts
    assert (1.0 if flag else math.inf) in consts
    assert 2.5 in consts                                 # global constexpr


# ---------------------------------------------------------------- rebinding
@tilejit.jit
def rebind_kernel(x_ptr, stride, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = x_ptr + offs
    ptrs += BLOCK * stride
    BLOCK = 4
    n = n + BLOCK
    stride = 7
    tl.store(ptrs, n + stride)


def test_augmented_and_plain_rebinding():
    f = build(rebind_kernel, {"x_ptr": P32, "stride": int32, "n": int32}, {"BLOCK": 16})
    (store,) = all_of(f, ops.StoreOp)
    addptrs = all_of(f, ops.AddPtrOp)
    assert len(addptrs) == 2 and store.ptr is addptrs[1].result     # ptrs += ... made a new value
    mul = addptrs[1].offset.op.src.op
    assert isinstance(mul, ops.MulOp) and const(mul.lhs) == 16 and mul.rhs is f.arguments[1].value
    # n = n + BLOCK uses the rebound BLOCK (4); stride = 7 hides the argument
    add_n = [op for op in all_of(f, ops.AddOp) if op.lhs is f.arguments[2].value][0]
    assert const(add_n.rhs) == 4
    final = store.value.op.src.op if isinstance(store.value.op, ops.SplatOp) else store.value.op
    assert isinstance(final, ops.CastOp) or isinstance(final, ops.AddOp)


# ---------------------------------------------------------------- if / else
@tilejit.jit
def if_kernel(x_ptr, n, BLOCK: tl.constexpr):
    a = 1
    b = 2.0
    c = tl.zeros([BLOCK], tl.float32)
    if n > 10:
        a = n
        c = c + 1.0
        only_then = 5
    else:
        b = 3.0
    tl.store(x_ptr + tl.arange(0, BLOCK), c + a + b)


def test_runtime_if_yields_changed_names():
    f = build(if_kernel, {"x_ptr": P32, "n": int32}, {"BLOCK": 8})
    (if_op,) = all_of(f, ops.IfOp)
    assert [str(t) for t in if_op.result_types] == ["int32", "fp32", "<8xfp32>"]
    then_y, else_y = (r.block.terminator for r in if_op.regions)
    assert isinstance(then_y, ops.YieldOp) and len(then_y.values) == 3
    assert then_y.values[0] is f.arguments[1].value              # a = n
    assert const(else_y.values[0]) == 1                           # a unchanged -> materialized 1
    assert const(then_y.values[1]) == 2.0 and const(else_y.values[1]) == 3.0
    assert if_op.cond.type == TileType(int1)


@tilejit.jit
def ternary_kernel(x_ptr, n):
    v = n * 2 if n > 0 else 0
    w = 1.5 if n > 100 else 2
    tl.store(x_ptr, v + w)


def test_runtime_conditional_expression():
    f = build(ternary_kernel, {"x_ptr": P32, "n": int32})
    ifs = all_of(f, ops.IfOp)
    assert len(ifs) == 2
    assert ifs[0].result_types == [TileType(int32)]
    assert ifs[1].result_types == [TileType(float32)]          # 1.5 vs 2 -> fp32


# ---------------------------------------------------------------- loops
@tilejit.jit
def for_kernel(x_ptr, n, BLOCK: tl.constexpr):
    acc = 0
    total = 0.0
    ptrs = x_ptr + tl.arange(0, BLOCK)
    for i in range(1, n, 3):
        acc = acc + tl.load(ptrs)
        ptrs += BLOCK
        total += i
    for j in tl.static_range(3):
        total = total * 2
    tl.store(ptrs, acc + total)


def test_for_loop_carried_values_and_promotion():
    f = build(for_kernel, {"x_ptr": P32, "n": int32}, {"BLOCK": 8})
    (loop,) = all_of(f, ops.ForOp)
    assert const(loop.lb) == 1 and loop.ub is f.arguments[1].value and const(loop.step) == 3
    # acc started as the Python int 0 and becomes a <8xfp32> tile
    assert [str(v.type) for v in loop.inits] == ["<8xfp32>", "<8x*fp32>", "fp32"]
    assert [str(a.type) for a in loop.body.args] == ["int32", "<8xfp32>", "<8x*fp32>", "fp32"]
    y = loop.body.terminator
    assert isinstance(y, ops.YieldOp) and len(y.values) == 3
    # static_range unrolls: three multiplications after the loop, no second loop
    muls = [op for op in f.block.ops if isinstance(op, ops.MulOp)]
    assert len(muls) == 3 and len(all_of(f, ops.ForOp)) == 1


@tilejit.jit
def for_int64_kernel(x_ptr, n):
    s = 0
    for i in range(0, n):
        s += i
    tl.store(x_ptr, s)


def test_loop_bounds_promote_and_carry_widens():
    f = build(for_int64_kernel, {"x_ptr": P32, "n": int64})
    (loop,) = all_of(f, ops.ForOp)
    assert loop.induction_var.type == TileType(int64)
    assert loop.inits[0].type == TileType(int64)                  # s widened from int32 0


@tilejit.jit
def loop_var_kernel(x_ptr, n):
    i = 100
    for i in range(n):
        i = i * 2
    tl.store(x_ptr, i)


def test_loop_variable_rebinding_in_body():
    f = build(loop_var_kernel, {"x_ptr": P32, "n": int32})
    (loop,) = all_of(f, ops.ForOp)
    assert loop.inits == []                      # the target is not carried
    (store,) = all_of(f, ops.StoreOp)
    cast = store.value.op                        # after the loop the name keeps its old binding
    assert isinstance(cast, ops.CastOp) and const(cast.src) == 100


@tilejit.jit
def while_kernel(x_ptr, n):
    i = 0
    v = 1.0
    while i < n:
        i += 1
        v = v * 0.5
    tl.store(x_ptr, v + i)


def test_while_loop():
    f = build(while_kernel, {"x_ptr": P32, "n": int32})
    (loop,) = all_of(f, ops.WhileOp)
    assert [str(t) for t in loop.result_types] == ["int32", "fp32"]
    before, after = loop.regions[0].block, loop.regions[1].block
    assert isinstance(before.terminator, ops.ConditionOp)
    assert before.terminator.cond.type == TileType(int1)
    assert isinstance(after.terminator, ops.YieldOp)


# ---------------------------------------------------------------- calls
@tilejit.jit
def pick(a, b, FIRST: tl.constexpr):
    if FIRST:
        return a, b
    return b, a


@tilejit.jit
def select_helper(x, lo, hi):
    for k in range(0, 2):
        x = x + k
    if x < lo:
        return lo
    elif x > hi:
        return hi
    return x


@tilejit.jit
def call_kernel(x_ptr, n, m):
    a, b = pick(n, m, True)
    c, d = pick(n, m, FIRST=False)
    e = select_helper(a, 0, m)
    tl.store(x_ptr, a - b + c - d + e)


def test_inlined_calls_with_early_returns():
    f = build(call_kernel, {"x_ptr": P32, "n": int32, "m": int32})
    subs = [op for op in f.block.ops if isinstance(op, ops.SubOp)]
    assert subs[0].lhs is f.arguments[1].value and subs[0].rhs is f.arguments[2].value
    ifs = all_of(f, ops.IfOp)
    assert len(ifs) == 2                         # if / elif, nested
    outer = [op for op in f.block.ops if isinstance(op, ops.IfOp)][0]
    assert outer.result_types == [TileType(int32)]
    assert isinstance(outer.regions[1].block.ops[-2], ops.IfOp)    # the elif in the else branch


# ---------------------------------------------------------------- misc expressions
@tilejit.jit
def attr_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    z = tl.zeros(x.shape, x.dtype)
    if x.dtype == tl.float32:
        z = z + 1
    y = x.to(tl.int32, bitcast=True).to(tl.float16)
    tl.static_assert(len(x.shape) == 2 and x.shape[0] == BLOCK)
    m = (x > 0) & (y < 1) | ~(x != x)
    tl.store(y_ptr + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :],
             tl.where(m, z, x.T) + y)


def test_attributes_casts_and_bitwise():
    f = build(attr_kernel, {"x_ptr": P32, "y_ptr": P32}, {"BLOCK": 4})
    assert all_of(f, ops.BitcastOp)[0].to == int32
    assert any(op.to.name == "fp16" for op in all_of(f, ops.CastOp))
    assert all_of(f, ops.TransOp)[0].perm == (1, 0)
    assert not all_of(f, ops.IfOp)
    (store,) = all_of(f, ops.StoreOp)
    assert store.value.type == TileType(float32, (4, 4))


@tilejit.jit
def bool_kernel(x_ptr, n, m):
    a = n > 0 and m > 0
    b = n > 0 or m
    c = not (n > 5)
    d = 0 < n < 10
    tl.store(x_ptr, a + b + c + d)


def test_boolean_operators_on_tensors():
    f = build(bool_kernel, {"x_ptr": P32, "n": int32, "m": int32})
    ands = all_of(f, ops.AndOp)
    ors = all_of(f, ops.OrOp)
    assert len(ands) == 2 and len(ors) == 1
    assert all(op.result.type.element == int1 for op in ands + ors)


@tilejit.jit
def hint_debug_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.max_contiguous(tl.multiple_of(tl.arange(0, BLOCK), BLOCK), BLOCK)
    n = tl.multiple_of(n, 16)
    tl.device_assert(n > 0, "n must be positive")
    assert n < 1000, "too big"
    tl.device_print("offs", offs)
    tl.static_print("compiling with", BLOCK)
    print("at run time too", BLOCK)       # Triton's print is device_print
    tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)


def test_hints_and_debug_ops(capsys):
    f = build(hint_debug_kernel, {"x_ptr": P32, "n": int32}, {"BLOCK": 16})
    mo = all_of(f, ops.MultipleOfOp)
    assert [op.values for op in mo] == [(16,), (16,)]
    assert all_of(f, ops.MaxContiguousOp)[0].values == (16,)
    asserts = all_of(f, ops.DeviceAssertOp)
    assert [op.msg for op in asserts] == ["n must be positive", "too big"]
    pr, pr2 = all_of(f, ops.DevicePrintOp)
    # Triton's prefix shaping: " <prefix>: " where there are values
    assert pr.prefix == " offs: " and len(pr.args) == 1
    assert pr2.prefix == " at run time too: " and len(pr2.args) == 1
    out = capsys.readouterr().out
    assert "compiling with 16" in out and "at run time" not in out


@tilejit.jit
def unrolled_kernel(x_ptr, n):
    acc = n
    for k, scale in enumerate((2, 3)):
        acc = acc * scale + k
    for v in (5, 7):
        acc += v
    tl.store(x_ptr, acc)


def test_iteration_over_compile_time_sequences_unrolls():
    f = build(unrolled_kernel, {"x_ptr": P32, "n": int32})
    assert not all_of(f, ops.ForOp)
    muls = all_of(f, ops.MulOp)
    assert [const(m.rhs) for m in muls] == [2, 3]
    adds = all_of(f, ops.AddOp)
    assert [const(a.rhs) for a in adds] == [0, 1, 5, 7]


@tilejit.jit
def type_view_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.static_assert(out_ptr.type.element_ty == tl.float16)
    tl.static_assert(x.type.element_ty == tl.float32 and x.type.is_block() and not out_ptr.type.is_block())
    tl.static_assert(out_ptr.dtype.element_ty == tl.float16)
    y = tl.zeros(x.shape, out_ptr.type.element_ty) + x.to(out_ptr.type.element_ty)
    tl.store(out_ptr + tl.arange(0, BLOCK), y.to(x.type))


def test_triton_type_view():
    f = build(type_view_kernel, {"x_ptr": P32, "out_ptr": PointerType(tl.float16)}, {"BLOCK": 8})
    (store,) = all_of(f, ops.StoreOp)
    assert store.value.type == TileType(tl.float16, (8,))
