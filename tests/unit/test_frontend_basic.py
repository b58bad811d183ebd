"""Frontend: kernels build typed IR; names rebind (triton #741)."""
import tilejit
import tilejit.language as tl
from tilejit.frontend import build_ir
from tilejit.ir import ops
from tilejit.ir.types import PointerType, TileType, float32, int32, int64


def op_names(func):
    return [op.name for op in func.walk()]


def find(func, op_cls):
    return [op for op in func.walk() if isinstance(op, op_cls)]


def producer(value):
    return value.op


@tilejit.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


ADD_TYPES = {"x_ptr": PointerType(float32), "y_ptr": PointerType(float32),
             "out_ptr": PointerType(float32), "n": int32}


def test_vector_add_builds():
    f = build_ir(add_kernel, ADD_TYPES, {"BLOCK": 128})
    assert [a.name for a in f.arguments] == ["x_ptr", "y_ptr", "out_ptr", "n"]
    assert [a.value.type for a in f.arguments] == [TileType(PointerType(float32))] * 3 + [TileType(int32)]
    assert f.constexprs == {"BLOCK": 128}
    names = op_names(f)
    assert names.count("tt.load") == 2 and names.count("tt.store") == 1
    assert names[-1] == "tt.return"
    (store,) = find(f, ops.StoreOp)
    assert store.value.type == TileType(float32, (128,))
    assert store.mask.type == TileType(tl.int1, (128,))
    (rng,) = find(f, ops.ArangeOp)
    assert (rng.start, rng.end) == (0, 128)
    # the mask compares against the argument n
    (cmp,) = find(f, ops.CmpOp)
    assert cmp.pred == "lt"
    assert producer(cmp.rhs).src is f.arguments[3].value


def test_locations_point_at_kernel_source():
    f = build_ir(add_kernel, ADD_TYPES, {"BLOCK": 64})
    first = add_kernel.first_line
    (store,) = find(f, ops.StoreOp)
    assert store.loc.file == add_kernel.file
    assert store.loc.line == first + 4
    assert store.loc.col == 4
    (rng,) = find(f, ops.ArangeOp)
    assert rng.loc.line == first + 2


def _kernel741(reassign):
    src_ns = {}

    @tilejit.jit
    def k_same(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
        xnumel = 2000
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
        xmask = xindex < xnumel
        x2 = xindex
        x0 = xindex % 1000
        x1 = (xindex // 1000)
        tmp0 = tl.load(in_ptr0 + x2, xmask)
        tmp1 = tl.load(in_ptr1 + x2, xmask)
        tl.store(out_ptr0 + x0 + (1000 * tmp0) + (196000 * x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)

    @tilejit.jit
    def k_other(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
        xnumel = 1000
        xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
        xmask = xindex < xnumel
        tmp1 = tl.load(in_ptr1 + xindex, xmask)
        tl.store(out_ptr0 + xindex, tmp1 + xnumel, xmask)

    @tilejit.jit
    def k_plain(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
        xmask = xindex < xnumel
        tmp1 = tl.load(in_ptr1 + xindex, xmask)
        tl.store(out_ptr0 + xindex, tmp1, xmask)

    return {"same": k_same, "other": k_other, "plain": k_plain}[reassign]


T741 = {"in_ptr0": PointerType(int64), "in_ptr1": PointerType(float32),
        "out_ptr0": PointerType(float32), "xnumel": int32}


def _const_value(v):
    """The constant behind ``v`` (through splats, broadcasts and the int32 -> fp32 cast a
    named number gets in arithmetic with a float tile, as Triton's scalar tensor does)."""
    op = v.op
    while isinstance(op, (ops.SplatOp, ops.BroadcastOp, ops.CastOp)):
        op = op.src.op
    assert isinstance(op, ops.ConstantOp), op
    return op.value


def test_741_reassigned_argument_is_a_new_value():
    f = build_ir(_kernel741("same"), T741, {"XBLOCK": 64})
    (cmp,) = find(f, ops.CmpOp)
    assert _const_value(cmp.rhs) == 2000
    xnumel_arg = f.arguments[3].value
    for op in f.walk():
        assert xnumel_arg not in op.operands, f"{op} still uses the xnumel argument"
    # the store address mixes int64 (tmp0) and int32 index math
    addptrs = find(f, ops.AddPtrOp)
    assert any(a.offset.type.element == int64 for a in addptrs)


def test_741_reassigned_to_other_constant():
    f = build_ir(_kernel741("other"), T741, {"XBLOCK": 64})
    (cmp,) = find(f, ops.CmpOp)
    assert _const_value(cmp.rhs) == 1000
    (add,) = [op for op in find(f, ops.AddOp) if op.result.type.element == float32]
    assert _const_value(add.rhs) == 1000.0


def test_741_plain_uses_argument():
    f = build_ir(_kernel741("plain"), T741, {"XBLOCK": 64})
    (cmp,) = find(f, ops.CmpOp)
    assert cmp.rhs.op.src is f.arguments[3].value


def test_equal_to_1_argument_binds_constant():
    f = build_ir(add_kernel, ADD_TYPES, {"BLOCK": 16}, {"n": (1, True), "x_ptr": (16, False)})
    assert f.arguments[3].equal_to_1 and f.arguments[0].divisibility == 16
    (cmp,) = find(f, ops.CmpOp)
    assert _const_value(cmp.rhs) == 1


def test_columns_match_the_real_file_for_nested_kernels():
    import linecache

    @tilejit.jit
    def nested(x_ptr, n):
        offs = tl.arange(0, 16)
        tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)

    f = build_ir(nested, {"x_ptr": PointerType(float32), "n": int32}, {})
    (store,) = find(f, ops.StoreOp)
    line = linecache.getline(store.loc.file, store.loc.line)
    assert line[store.loc.col:].startswith("tl.store(")
    (rng,) = find(f, ops.ArangeOp)
    line = linecache.getline(rng.loc.file, rng.loc.line)
    assert line[rng.loc.col:].startswith("tl.arange(0, 16)")
    (cmp,) = find(f, ops.CmpOp)
    assert linecache.getline(cmp.loc.file, cmp.loc.line)[cmp.loc.col:].startswith("offs < n")
