"""``tt.reduce`` lowering: one loop nest over the source (fused with its producers),
accumulating into a per-program buffer (or a stack slot for a scalar result) that
LLVM promotes to registers; float sums are marked reassociable so they vectorize."""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.types import int32
from ..llvm.reductions import identity
from ..llvm.scalar import apply_binary
from ..llvm.types import I32, I64, from_storage, storage_type, to_storage
from .lower import RULES, LoweringError
from .partial_acc import PartialAcc
from .tiles import BufTile, Tile, linear_index, materialize, strides_of, versioned

_FAST = ("reassoc", "nsz", "contract")


def combine(b, kind, acc, v, dt):
    if kind == "sum":
        if dt.kind == "float" and dt.name != "bf16":
            return b.fadd(acc, v, flags=_FAST)
        return apply_binary(b, ops.AddOp, acc, v, dt) if dt.kind != "bool" else b.xor(acc, v)
    if kind == "xor_sum":
        return b.xor(acc, v)
    cls = ops.MaxOp if kind == "max" else ops.MinOp
    if dt.kind == "bool":
        return b.or_(acc, v) if kind == "max" else b.and_(acc, v)
    if dt.kind == "float" and dt.name != "bf16":
        return _float_extremum(b, kind, acc, v)
    return apply_binary(b, cls, acc, v, dt)


def _float_extremum(b, kind, acc, v):
    """``maxnum``/``minnum`` of the accumulator and ``v`` (a NaN ``v`` is skipped) as a
    compare and select.  Not ``llvm.maxnum``: LLVM 22's loop vectorizer turns a maxnum
    reduction over a row count that is not a multiple of its vector width into a vector
    loop with a NaN check whose NaN-free exit skips the remaining rows (seen on an
    AVX-512 host: the max of a (6, 12) tile along axis 0 ignored rows 4 and 5)."""
    keep = b.or_(b.fcmp_ordered(">" if kind == "max" else "<", acc, v),
                 b.fcmp_unordered("uno", v, v))
    return b.select(keep, acc, v)


def _better(b, kind, v, best, dt):
    pred = ">" if kind == "argmax" else "<"
    if dt.kind == "float":
        return b.fcmp_ordered(pred, v, best)
    if dt.kind == "int":
        return b.icmp_signed(pred, v, best)
    return b.icmp_unsigned(pred, v, best)


def _bytes(dt) -> int:
    return max(1, dt.bits // 8)


def _partial_lanes(op) -> int:
    """Lanes of partial extrema kept per output for a float max/min along the last
    axis (0: none).  Those compare-and-select reductions (see ``_float_extremum``) are
    not recognised by LLVM's loop vectorizer, so they would run as one serial chain;
    ``W`` partial results, each over every ``W``-th element, form an elementwise loop
    that vectorizes, and are combined at the end.  max/min of the same elements in
    any order is the same value (but for the sign of a zero among equal zeros, which
    maxnum/minnum leave unspecified too)."""
    dt, shape = op.src.type.element, op.src.type.shape
    if (op.kind not in ("max", "min") or dt.kind != "float" or dt.name == "bf16" or dt.bits < 16  # plain types
            or op.axis != len(shape) - 1):
        return 0
    for w in (16, 8, 4):
        if shape[-1] % w == 0 and shape[-1] >= 2 * w:
            return w
    return 0


def _fill(ctx, ptr, count, value, adt):
    stored = to_storage(ctx.b, value, adt)
    ctx.em.counted_loop(ir.Constant(I64, 0), ir.Constant(I64, count), name="rinit",
                        body=lambda i: ctx.b.store(stored, ctx.b.gep(ptr, [i], source_etype=storage_type(adt))))


def _reduce_partial(ctx, op, src, acc, w):
    """``acc[o] = kind over the last axis`` via ``w`` partial accumulators per output
    (see ``_partial_lanes``)."""
    dt, kind, shape = op.src.type.element, op.kind, op.src.type.shape
    n_out = max(1, op.result.type.numel)
    part = ctx.alloca(storage_type(dt), n_out * w)
    _fill(ctx, part, n_out * w, identity(kind, dt), dt)
    partial_accumulate(ctx, kind, dt, src, shape, part, w)
    partial_fold(ctx, kind, dt, part, n_out, w, acc)


def partial_accumulate(ctx, kind, dt, src, shape, part, w):
    """``part[o, :] = kind(part[o, :], src[o, g*w : g*w + w])`` for every group ``g`` of
    the last axis of ``src`` (a tile of ``shape``, or a scalar) and every ``o`` over the
    other axes, ``part`` holding ``w`` consecutive partial results per ``o``: one
    ``<w x T>`` combine per group.  The groups come from the source's own vector code
    where it has some and its masks are known true here (``tiles.versioned``), else
    from a copy of the source in a buffer (one loop LLVM vectorizes, masked loads
    included; building the ``w`` lanes one by one would emit ``w`` copies of the
    element code per group)."""
    from .vectorize import _lanes, _vector_of, vec_of
    sty = storage_type(dt)
    vty = ir.VectorType(sty, w)
    ostrides, W = strides_of(shape[:-1]), ir.Constant(I64, w)
    masks = getattr(src, "masks", ())

    def body(gidx, rep):
        b = ctx.b
        *outer, g = gidx
        idx = tuple(outer) + (b.mul(g, W, flags=("nuw", "nsw")),)
        if isinstance(rep, BufTile):
            v = b.load(b.gep(rep.ptr, [linear_index(ctx, idx, rep.strides)], source_etype=sty), typ=vty)
            v.align = _bytes(dt)
        else:
            v = vec_of(ctx, rep, idx, w)
            if v is None:
                v = _vector_of(ctx, rep, _lanes(ctx, idx, w), sty)
        p = b.gep(part, [b.mul(linear_index(ctx, tuple(outer), ostrides), W, flags=("nuw", "nsw"))],
                  source_etype=sty)
        cur = b.load(p, typ=vty)
        cur.align = _bytes(dt)
        st = b.store(combine(b, kind, cur, v, dt), p)
        st.align = cur.align

    def emit():
        rep = src
        if isinstance(src, Tile) and not isinstance(src, BufTile) and (
                getattr(src, "vec", None) is None or not all(id(m) in ctx.known_true for m in masks)):
            rep = materialize(ctx, src)
        ctx.loop_nest(tuple(shape[:-1]) + (shape[-1] // w,), lambda gidx: body(gidx, rep))
    versioned(ctx, masks, emit)


def partial_fold(ctx, kind, dt, part, n_out, w, acc):
    """``acc[o] = kind of part[o*w : o*w + w]`` for ``o < n_out``: a pairwise tree,
    log2(w) dependent steps, each one combine of two halves as vectors."""
    sty = storage_type(dt)

    def fold(o):
        b = ctx.b
        v = b.load(b.gep(part, [b.mul(o, ir.Constant(I64, w), flags=("nuw", "nsw"))], source_etype=sty),
                   typ=ir.VectorType(sty, w))
        v.align = _bytes(dt)
        n = w
        while n > 1:
            n //= 2
            half = [ir.Constant(ir.VectorType(I32, n), list(range(k, k + n))) for k in (0, n)]
            lo, hi = (b.shuffle_vector(v, v, sel) for sel in half)
            v = combine(b, kind, lo, hi, dt)
        b.store(b.extract_element(v, ir.Constant(I32, 0)), b.gep(acc, [o], source_etype=sty))
    ctx.em.counted_loop(ir.Constant(I64, 0), ir.Constant(I64, n_out), name="rfold", body=fold)


def _bind_result(ctx, op, res_ptr, res_dt):
    if op.result.type.is_scalar:
        ctx.set(op.result, from_storage(ctx.b, ctx.b.load(res_ptr, typ=storage_type(res_dt)), res_dt))
    else:
        ctx.set(op.result, BufTile(op.result.type.shape, res_dt, res_ptr))


@RULES.register(ops.ReduceOp)
def _reduce(ctx, op):
    src = ctx.get(op.src)
    if isinstance(src, PartialAcc):             # a loop's sum kept as partial sums
        acc = ctx.alloca(storage_type(src.dtype), src.n_out)
        src.fold_into(ctx, acc)
        _bind_result(ctx, op, acc, src.dtype)
        return
    if not isinstance(src, Tile):
        raise LoweringError(f"{op.loc}: tt.reduce of a scalar")
    dt, kind, axis = op.src.type.element, op.kind, op.axis
    out_shape = op.result.type.shape
    n_out = max(1, op.result.type.numel)
    sty = storage_type(dt)
    acc = ctx.alloca(sty, n_out)
    w = _partial_lanes(op)
    if w:
        _reduce_partial(ctx, op, src, acc, w)
        _bind_result(ctx, op, acc, dt)
        return
    arg = kind in ("argmax", "argmin")
    accs = [(acc, dt, identity(kind, dt))]
    if arg:
        accs.append((ctx.alloca(I32, n_out), int32, ir.Constant(I32, 0)))
    for ptr, adt, init in accs:
        _fill(ctx, ptr, n_out, init, adt)
    ostrides = strides_of(out_shape)

    def body(idx):
        b = ctx.b
        v = src.elem(ctx, idx)
        oidx = tuple(idx[:axis]) + tuple(idx[axis + 1:])
        lin = linear_index(ctx, oidx, ostrides)
        p = b.gep(acc, [lin], source_etype=sty)
        cur = from_storage(b, b.load(p, typ=sty), dt)
        if not arg:
            b.store(to_storage(b, combine(b, kind, cur, v, dt), dt), p)
            return
        pi = b.gep(accs[1][0], [lin], source_etype=I32)
        better = _better(b, kind, v, cur, dt)
        b.store(to_storage(b, b.select(better, v, cur), dt), p)
        b.store(b.select(better, b.trunc(idx[axis], I32), b.load(pi, typ=I32)), pi)
    versioned(ctx, src.masks, lambda: ctx.loop_nest(op.src.type.shape, body))
    _bind_result(ctx, op, *((accs[1][0], int32) if arg else (acc, dt)))
