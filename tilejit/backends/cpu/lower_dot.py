"""``tt.dot`` lowering: a register-blocked micro-kernel.

A and B are materialized (converted to the compute type: fp32, or fp64 for an
fp64 accumulator; fp16/bf16 inputs accumulate in fp32).  C is computed in MR x NR
blocks held in LLVM vector registers across the K loop: per k, NR/VL vectors of B
are loaded, each of MR A elements is broadcast and FMA'd into the block.  Integer
dots use a plain loop nest.  When the dot's only user is the ``scf.yield`` of its
block, it writes straight into the loop-carried buffer (no extra copy).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.types import float32, float64
from ..llvm import intrinsics as intr
from ..llvm.casts import lower_cast
from ..llvm.types import F32, F64, I64, storage_type, to_storage, value_type
from .lower import RULES
from .tiles import BufTile, LazyTile, Tile, materialize, linear_index, strides_of

_SHAPE = []


def kernel_shape():
    """(fp32 lanes per vector, rows per block) for the host: 16 lanes (zmm) and 8 rows
    with AVX-512's 32 registers, else 8 lanes (ymm) and 4 rows."""
    if not _SHAPE:
        import llvmlite.binding as llvm
        feats = llvm.get_host_cpu_features()
        _SHAPE.append((16, 8) if feats.get("avx512f") else (8, 4))
    return _SHAPE[0]


def _converted(ctx, tile, dt):
    """Materialized copy of ``tile`` with element type ``dt``."""
    if tile.dtype == dt:
        return materialize(ctx, tile)
    conv = LazyTile(tile.shape, dt, lambda c, idx: lower_cast(c.b, tile.elem(c, idx), tile.dtype, dt))
    return materialize(ctx, conv)


class DotTile(Tile):
    """``a @ b + acc`` evaluated when materialized (into its final buffer)."""

    def __init__(self, a: BufTile, b: BufTile, acc, out_dtype, cdt):
        super().__init__((a.shape[0], b.shape[1]), out_dtype)
        self.a, self.b, self.acc, self.cdt = a, b, acc, cdt
        self.cost = 1000

    def _elem(self, ctx, idx):
        raise AssertionError("DotTile must be materialized before use")

    def materialize_into(self, ctx, ptr):
        if self.cdt.kind == "float":
            _float_kernel(ctx, self, ptr)
        else:
            _int_kernel(ctx, self, ptr)


def _pick(n, options):
    for o in options:
        if n % o == 0:
            return o
    return 1


def _float_kernel(ctx, d: DotTile, out_ptr):
    (M, K), N = d.a.shape, d.b.shape[1]
    cty = value_type(d.cdt)
    lanes, rows = kernel_shape()
    vl = lanes if d.cdt == float32 else lanes // 2
    nr = _pick(N, (2 * vl, vl, 8, 4, 2))
    w = min(nr, vl)              # lanes per vector
    nc = nr // w                 # vectors per row of the block
    mr = _pick(M, (rows, 4, 2))
    vty = ir.VectorType(cty, w) if w > 1 else cty
    em = ctx.em
    c64 = lambda x: ir.Constant(I64, x)  # noqa: E731

    def block(i0, j0):
        b = ctx.b
        ctx.elem_cache = {}
        accs = [[_load_c(ctx, d, i0, j0, r, c * w, w, vty) for c in range(nc)] for r in range(mr)]
        pre = b.block
        head, body, done = em.new_block("k.head"), em.new_block("k.body"), em.new_block("k.done")
        b.branch(head)
        b.position_at_end(head)
        k = b.phi(I64)
        k.add_incoming(c64(0), pre)
        phis = [[b.phi(vty) for _ in range(nc)] for _ in range(mr)]
        for r in range(mr):
            for c in range(nc):
                phis[r][c].add_incoming(accs[r][c], pre)
        b.cbranch(b.icmp_signed("<", k, c64(K)), body, done)
        b.position_at_end(body)
        brow = b.add(b.mul(k, c64(N)), j0)
        bv = []
        for c in range(nc):
            p = b.gep(d.b.ptr, [b.add(brow, c64(c * w))], source_etype=cty)
            ld = b.load(p, typ=vty)
            ld.align = _elem_align(cty)
            bv.append(ld)
        new = []
        for r in range(mr):
            pa = b.gep(d.a.ptr, [b.add(b.mul(b.add(i0, c64(r)), c64(K)), k)], source_etype=cty)
            a = b.load(pa, typ=cty)
            av = _splat(b, a, vty)
            new.append([intr.call_overloaded(b, "fma", [av, bv[c], phis[r][c]]) for c in range(nc)])
        kn = b.add(k, c64(1), flags=("nsw",))
        latch = b.block
        k.add_incoming(kn, latch)
        for r in range(mr):
            for c in range(nc):
                phis[r][c].add_incoming(new[r][c], latch)
        b.branch(head)
        b.position_at_end(done)
        for r in range(mr):
            for c in range(nc):
                _store_c(ctx, d, out_ptr, i0, j0, r, c * w, w, phis[r][c], N)
        ctx.elem_cache = {}

    em.counted_loop(c64(0), c64(M), c64(mr), name="mi",
                    body=lambda i0: em.counted_loop(c64(0), c64(N), c64(nr), name="nj",
                                                    body=lambda j0: block(i0, j0)))


def _elem_align(ty) -> int:
    """Element alignment: tile rows need not start on a vector boundary."""
    return 8 if ty == F64 else 4


def _splat(b, s, vty):
    if not isinstance(vty, ir.VectorType):
        return s
    v = b.insert_element(ir.Constant(vty, ir.Undefined), s, ir.Constant(ir.IntType(32), 0))
    return b.shuffle_vector(v, ir.Constant(vty, ir.Undefined),
                            ir.Constant(ir.VectorType(ir.IntType(32), vty.count), [0] * vty.count))


def _load_c(ctx, d, i0, j0, r, cofs, w, vty):
    b = ctx.b
    c64 = lambda x: ir.Constant(I64, x)  # noqa: E731
    i = b.add(i0, c64(r))
    acc = d.acc
    if isinstance(acc, BufTile) and acc.dtype == d.cdt:
        lin = b.add(b.mul(i, c64(acc.shape[1])), b.add(j0, c64(cofs)))
        ld = b.load(b.gep(acc.ptr, [lin], source_etype=value_type(d.cdt)), typ=vty)
        ld.align = _elem_align(value_type(d.cdt))
        return ld
    vals = [lower_cast(b, acc.elem(ctx, (i, b.add(j0, c64(cofs + l)))), acc.dtype, d.cdt) for l in range(w)]
    if w == 1:
        return vals[0]
    v = ir.Constant(vty, ir.Undefined)
    for l, x in enumerate(vals):
        v = b.insert_element(v, x, ir.Constant(ir.IntType(32), l))
    return v


def _store_c(ctx, d, out_ptr, i0, j0, r, cofs, w, v, N):
    b = ctx.b
    c64 = lambda x: ir.Constant(I64, x)  # noqa: E731
    lin = b.add(b.mul(b.add(i0, c64(r)), c64(N)), b.add(j0, c64(cofs)))
    if d.dtype == d.cdt:
        st = b.store(v, b.gep(out_ptr, [lin], source_etype=value_type(d.cdt)))
        st.align = _elem_align(value_type(d.cdt))
        return
    sty = storage_type(d.dtype)
    for l in range(w):
        x = b.extract_element(v, ir.Constant(ir.IntType(32), l)) if w > 1 else v
        x = to_storage(b, lower_cast(b, x, d.cdt, d.dtype), d.dtype)
        b.store(x, b.gep(out_ptr, [b.add(lin, c64(l))], source_etype=sty))


def _int_kernel(ctx, d: DotTile, out_ptr):
    (M, K), N = d.a.shape, d.b.shape[1]
    cty = value_type(d.cdt)
    sty = storage_type(d.dtype)
    strides = strides_of((M, N))

    def body(idx):
        b = ctx.b
        i, j = idx
        acc0 = lower_cast(b, d.acc.elem(ctx, idx), d.acc.dtype, d.cdt)
        slot = ctx.alloca(cty)
        b.store(acc0, slot)

        def kbody(k):
            a = b.load(b.gep(d.a.ptr, [b.add(b.mul(i, ir.Constant(I64, K)), k)], source_etype=cty), typ=cty)
            x = b.load(b.gep(d.b.ptr, [b.add(b.mul(k, ir.Constant(I64, N)), j)], source_etype=cty), typ=cty)
            b.store(b.add(b.load(slot, typ=cty), b.mul(a, x)), slot)
        ctx.em.counted_loop(ir.Constant(I64, 0), ir.Constant(I64, K), name="k", body=kbody)
        res = lower_cast(b, b.load(slot, typ=cty), d.cdt, d.dtype)
        b.store(to_storage(b, res, d.dtype), b.gep(out_ptr, [linear_index(ctx, idx, strides)], source_etype=sty))
    ctx.loop_nest((M, N), body)


def _is_zero_const(v) -> bool:
    op = v.op
    return isinstance(op, ops.ConstantOp) and op.value == 0


def fold_add_into_dot(ctx, op, reps):
    """``dot(a, b, 0) + c`` (the dot's only use) -> ``dot(a, b, c)``; else None."""
    for i, r in enumerate(reps):
        if isinstance(r, DotTile) and r.acc is None:
            other = reps[1 - i]
            if not isinstance(other, Tile):
                return None
            if not isinstance(other, BufTile) and other.cost > 0:
                other = materialize(ctx, other)
            tile = DotTile(r.a, r.b, other, op.result.type.element, r.cdt)
            _bind(ctx, op, tile)
            return tile
    return None


def _bind(ctx, op, tile):
    users = ctx.plan.user_ops(op.result)
    if len(users) == 1 and isinstance(users[0], ops.YieldOp) and users[0].parent is op.parent:
        ctx.set(op.result, tile)          # written by the yield into the carried buffer
    else:
        ctx.set(op.result, materialize(ctx, tile))


@RULES.register(ops.DotOp)
def _dot(ctx, op):
    acc_t = op.acc.type.element
    if acc_t.kind == "float":
        cdt = float64 if acc_t == float64 else float32
    else:
        cdt = acc_t
    a = _converted(ctx, ctx.get(op.a), cdt)
    bb = _converted(ctx, ctx.get(op.b), cdt)
    users = ctx.plan.user_ops(op.result)
    if (acc_t.kind == "float" and _is_zero_const(op.acc) and len(users) == 1
            and isinstance(users[0], ops.AddOp) and users[0].parent is op.parent
            and users[0].lhs is not users[0].rhs):
        ctx.set(op.result, DotTile(a, bb, None, acc_t, cdt))     # folded into the add
        return
    acc = ctx.get(op.acc)
    if not isinstance(acc, BufTile) and acc.cost > 0:
        acc = materialize(ctx, acc)
    _bind(ctx, op, DotTile(a, bb, acc, acc_t, cdt))
