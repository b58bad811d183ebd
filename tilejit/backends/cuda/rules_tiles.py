"""Lowering rules for ids, ranges, shape ops, hints, reductions and dot.

Shape ops that keep the element count (reshape, expand_dims) are free in the
blocked layout; broadcast and trans move elements between threads through shared
memory (:func:`exchange`).  Reductions combine a thread's slots, then a warp with
butterfly shuffles, then the warps through shared memory.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from ...ir.types import int32
from . import types as T
from .lowering import RULES, Tile

_AXIS = "xyz"


@RULES.register(ops.ProgramIdOp)
def _pid(lw, op):
    return [Tile([lw.sreg(f"ctaid.{_AXIS[op.axis]}")], None)]


@RULES.register(ops.NumProgramsOp)
def _nprog(lw, op):
    return [Tile([lw.sreg(f"nctaid.{_AXIS[op.axis]}")], None)]


@RULES.register(ops.ArangeOp)
def _arange(lw, op):
    ty = op.result.type
    lay = lw.layout(ty)
    regs = [lw.b.add(lw.elem_index(lay, s), lw.i32(op.start)) for s in range(lay.nslots)]
    return [Tile(regs, lay)]


@RULES.register(ops.SplatOp)
def _splat(lw, op):
    ty = op.result.type
    return [lw.tile_like(ty, [lw.get(op.src).scalar] * lw.nslots(ty))]


@RULES.register(ops.ReshapeOp, ops.ExpandDimsOp)
def _same_elements(lw, op):
    src = lw.get(op.src)
    ty = op.result.type
    if not ty.shape:                      # a one-element tile to a scalar
        return [Tile([src.regs[0]], None)]
    lay = lw.layout(ty)
    if src.layout is None:
        return [Tile([src.regs[0]] * lay.nslots, lay)]
    if src.layout.same_slots(lay):        # the same slot -> element map
        return [Tile(src.regs, lay)]
    # the chunk width follows the last dimension ([8, 16] -> [8, 8, 2] halves it), so the
    # slots hold other elements: keep the row-major order through shared memory
    return [exchange(lw, src, op.src.type, ty, lambda idx: lw.flat_index(ty.shape, idx))]


@RULES.register(ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp, ops.AssumeRangeOp)
def _hint(lw, op):
    return [lw.get(op.src)]


def exchange(lw, src: Tile, src_ty, dst_ty, src_flat_of):
    """Move elements through shared memory: slot s of the result holds source element
    ``src_flat_of(dst multi-index)`` (an i32 flat index).  Returns the result Tile."""
    el = src_ty.element
    mty, size = T.mem_type(el), T.mem_size(el)
    base = lw.smem(src_ty.numel * size)
    lw.barrier()
    for s, v in enumerate(src.regs):
        e = lw.elem_index(src.layout, s)
        v = lw.b.zext(v, T.I8) if mty == T.I8 and v.type == T.I1 else v
        lw.b.store(v, lw.smem_addr(base, lw.b.mul(e, lw.i32(size)))).align = size
    lw.barrier()
    lay = lw.layout(dst_ty)
    regs = []
    for s in range(lay.nslots):
        idx = lw.multi_index(dst_ty.shape, lw.elem_index(lay, s))
        f = src_flat_of(idx)
        v = lw.b.load(lw.smem_addr(base, lw.b.mul(f, lw.i32(size))), typ=mty)
        v.align = size
        regs.append(lw.b.icmp_unsigned("!=", v, ir.Constant(T.I8, 0)) if T.llvm_type(el) == T.I1 else v)
    return Tile(regs, lay)


def exchange_2d(lw, src: Tile, el, lay):
    """``src`` (a 2-D tile) in layout ``lay`` of the same shape, through shared memory whose
    rows are padded by one element: a dim-0-first tile's column writes and a row-major
    tile's row reads then hit distinct banks (unpadded rows of 32 words or a multiple put
    a warp's column on one bank)."""
    R, C = src.layout.shape
    mty, size = T.mem_type(el), T.mem_size(el)
    pitch = C + 1
    base = lw.smem(R * pitch * size)

    def addr(layout, s):
        i, k = _coords(lw, layout, s)
        return lw.smem_addr(base, lw.b.mul(lw.b.add(lw.b.mul(i, lw.i32(pitch)), k), lw.i32(size)))
    lw.barrier()
    for s, v in enumerate(src.regs):
        v = lw.b.zext(v, T.I8) if mty == T.I8 and v.type == T.I1 else v
        lw.b.store(v, addr(src.layout, s)).align = size
    lw.barrier()
    regs = []
    for s in range(lay.nslots):
        v = lw.b.load(addr(lay, s), typ=mty)
        v.align = size
        regs.append(lw.b.icmp_unsigned("!=", v, ir.Constant(T.I8, 0)) if T.llvm_type(el) == T.I1 else v)
    return Tile(regs, lay)


def _coords(lw, lay, s):
    """(row, column) of slot ``s`` of the 2-D layout ``lay``: where every repetition of the
    threads covers whole rows (columns for a dim-0-first layout), a per-thread part read
    once plus constants (so shared-memory addresses are a register plus an immediate);
    else from the slot's flat index."""
    R, C = lay.shape
    inner = R if lay.dim0_first else C
    T_, V = lay.threads, lay.vec
    if not lay.exact or (T_ * V) % inner:
        return lw.multi_index((R, C), lw.elem_index(lay, s))
    key = (lay, "coords", lw.b.block)
    if key not in lw._slot_index:       # tid*V = q*inner + a: the thread's first element
        tv = lw.b.mul(lw.tid, lw.i32(V))
        lw._slot_index[key] = (lw.b.urem(tv, lw.i32(inner)), lw.b.udiv(tv, lw.i32(inner)))
    a, q = lw._slot_index[key]
    r, j = divmod(s, V)                 # element (r*T + t)*V + j; V divides inner
    a = lw.b.add(a, lw.i32(j)) if j else a
    q = lw.b.add(q, lw.i32(r * T_ * V // inner)) if r else q
    return (a, q) if lay.dim0_first else (q, a)


@RULES.register(ops.BroadcastOp)
def _broadcast(lw, op):
    src, sty, dty = lw.get(op.src), op.src.type, op.result.type
    if sty.shape == dty.shape:
        return [src]
    if sty.numel == 1:
        return [lw.tile_like(dty, [src.regs[0]] * lw.nslots(dty))]
    regs = rematerialize(lw, op.result)
    if regs is not None:
        return [Tile(regs, lw.layout(dty))]

    def src_flat(idx):
        sidx = [i if d != 1 else lw.i32(0) for i, d in zip(idx, sty.shape)]
        return lw.flat_index(sty.shape, sidx)
    return [exchange(lw, src, sty, dty, src_flat)]


@RULES.register(ops.TransOp)
def _trans(lw, op):
    src, sty, dty = lw.get(op.src), op.src.type, op.result.type
    perm = list(op.perm)

    def src_flat(idx):
        sidx = [None] * len(perm)
        for i, p in enumerate(perm):
            sidx[p] = idx[i]
        return lw.flat_index(sty.shape, sidx)
    return [exchange(lw, src, sty, dty, src_flat)]


# ------------------------------------------------------------------ rematerialization
# ``CudaTuning.remat_broadcasts``: checked on an H200 (bench/results/memory_bound_notes.md)
REMAT_MAX_OPS = 24      # ops recomputed per broadcast at most (else: shared memory)


def _index_map(op, dims):
    """The operand's index map for a result index map ``dims`` (one entry per result
    dimension: the destination dimension it follows, or None for index 0); None when
    ``op`` cannot be recomputed per destination element."""
    if isinstance(op, (ops.ElementwiseOp, ops.HintOp)):
        return dims
    if not isinstance(op, (ops.BroadcastOp, ops.ExpandDimsOp, ops.ReshapeOp)):
        return None
    rty = op.result.type
    if isinstance(op, ops.BroadcastOp):
        sh = op.src.type.shape
        return tuple(None if s == 1 and r != 1 else d for s, r, d in zip(sh, rty.shape, dims))
    if isinstance(op, (ops.ExpandDimsOp, ops.ReshapeOp)):
        big = [d for n, d in zip(rty.shape, dims) if n != 1]
        ssh = op.src.type.shape
        if [n for n in ssh if n != 1] != [n for n in rty.shape if n != 1]:
            return None                              # a real reshape: elements move
        it = iter(big)
        return tuple(None if n == 1 else next(it) for n in ssh)
    return None


def _plan(lw, value, dims, plan, seen) -> bool:
    """Post-order ``(value, dims)`` steps recomputing ``value`` per destination slot."""
    key = (id(value), dims)
    if key in seen:
        return True
    t = lw.values.get(value)
    op = value.op
    if t is not None and t.layout is None or not value.type.shape:
        leaf = True                                  # a scalar: one register for every slot
    elif op is None or isinstance(op, (ops.ConstantOp, ops.SplatOp, ops.ArangeOp)):
        leaf = op is not None
        if not leaf:
            return False                             # a block argument tile
    else:
        leaf = False
        sub = _index_map(op, dims)
        if sub is None or len(plan) >= REMAT_MAX_OPS:
            return False
        if isinstance(op, ops.ElementwiseOp) and any(
                o is not None and o.type.shape != value.type.shape for o in op.operands):
            return False
        for v in op.operands:
            if v is None:
                continue
            vd = sub if isinstance(op, (ops.BroadcastOp, ops.ExpandDimsOp, ops.ReshapeOp)) else dims
            if not _plan(lw, v, vd, plan, seen):
                return False
    seen.add(key)
    plan.append((value, dims, leaf))
    return True


def _remat_plan(lw, value, trans, dims=None):
    """rematerialize's steps for ``value`` (``trans``: of its 2-D transpose; ``dims``: as
    placed by ``rematerialize``'s ``at``), or None."""
    if not lw.tuning.remat_broadcasts or lw.sanitize or getattr(lw, "in_remat", False):
        return None
    if dims is None:
        dims = (1, 0) if trans else tuple(range(len(value.type.shape)))
    plan = []
    if not _plan(lw, value, dims, plan, set()) or value.op is None:
        return None
    return plan


def can_rematerialize(lw, value, trans: bool = False) -> bool:
    """:func:`rematerialize` succeeds for ``value`` (decidable before lowering)."""
    return _remat_plan(lw, value, trans) is not None


def rematerialize(lw, value, trans: bool = False, at=None, lay=None):
    """Registers of ``value`` (a broadcast result) in its blocked layout, recomputed
    per slot from its definition -- aranges, constants, scalars and pure elementwise
    ops under broadcasts/expand_dims -- instead of moved through shared memory; the
    same ops on the same operands, so bit-identical.  None when some leaf is a tile
    that only exists in another layout (loads, reductions, loop-carried values).
    ``trans``: of the transposed 2-D value, in the blocked layout of the reversed shape
    (slot ``s`` holds element ``(j, i)`` where that layout's slot ``s`` is ``(i, j)``).
    ``at = (shape, dims)``: ``value`` placed in the blocked layout of ``shape``, its dim
    ``k`` following the destination dim ``dims[k]`` (None: index 0), as a chain of
    expand_dims / broadcast / transposes would place it (pipeline.IterSlice's leaves).
    ``lay``: another layout of that shape to compute it in (a restaged store's
    row-major one, dim_order.py)."""
    ty = value.type
    if at is not None:
        shape, dims = tuple(at[0]), tuple(at[1])
    else:
        shape = tuple(reversed(ty.shape)) if trans else tuple(ty.shape)
        dims = (1, 0) if trans else tuple(range(len(shape)))
    plan = _remat_plan(lw, value, trans, dims)
    if plan is None:
        return None
    lay = lay or lw.layout(shape)
    idx = [lw.multi_index(shape, lw.elem_index(lay, s)) for s in range(lay.nslots)]
    got = {}
    saved = {}
    lw.in_remat = True
    try:
        for v, d, leaf in plan:
            got[(id(v), d)] = _remat_step(lw, v, d, leaf, lay, idx, got, saved)
    finally:
        lw.in_remat = False
        for v, t in saved.items():
            if t is None:
                lw.values.pop(v, None)
            else:
                lw.values[v] = t
    return got[(id(value), dims)]


def _remat_step(lw, v, d, leaf, lay, idx, got, saved):
    n = lay.nslots
    op = v.op
    if leaf and (op is None or not isinstance(op, (ops.ConstantOp, ops.ArangeOp, ops.SplatOp))):
        return [lw.get(v).regs[0]] * n
    if isinstance(op, ops.ConstantOp):
        return [T.const(v.type.element, op.value)] * n
    if isinstance(op, ops.SplatOp):
        return [lw.get(op.src).regs[0]] * n
    if isinstance(op, ops.ArangeOp):
        k = d[0]
        return [lw.b.add(lw.i32(0) if k is None else idx[s][k], lw.i32(op.start)) for s in range(n)]
    if not isinstance(op, ops.ElementwiseOp):                  # shape ops and hints: the operand's slots
        sub = _index_map(op, d) if not isinstance(op, ops.HintOp) else d
        return got[(id(op.operands[0]), sub)]
    for o in op.operands:
        if o is None:
            continue
        if o not in saved:
            saved[o] = lw.values.get(o)
        src = got[(id(o), d)]
        lw.values[o] = Tile(src, lay) if o.type.shape else Tile([src[0]], None)
    out = RULES.lookup(type(op))(lw, op)[0]
    return out.regs
