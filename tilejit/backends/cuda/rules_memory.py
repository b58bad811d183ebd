"""Lowering rules for tt.load and tt.store.

A thread's ``V`` slots of one chunk hold contiguous elements.  Where the access plan
(``analysis/access.py``, shared with the cpu backend, under :data:`CUDA_ACCESS`) proves
that the pointers of a chunk are contiguous and aligned (and the mask constant over
it), the chunk is moved with one vector access of up to 16 bytes (``ld.global.v4``);
otherwise, and always when no analysis is available, each slot is accessed on its own.
Masked-off accesses are predicated off (``@p ld``/``@p st`` in inline PTX; 8-bit ones
branch around the access), so they never touch memory; a load's masked-off slots take
``other`` (0 by default).
"""
from __future__ import annotations

from llvmlite import ir

from ...analysis.access import AccessLimits, plan_access
from ...ir import ops
from . import scatter
from . import types as T
from .lowering import RULES, Tile
from .sanitize import check_slots, finish


# PTX global accesses: up to 16 bytes (ld.global.v4.b32), naturally aligned, one
# predicate per access; pointer tiles are 8-byte words, bool tiles stay per lane.
CUDA_ACCESS = AccessLimits(max_bytes=16, aligned=True, lane_mask=False, bools=False, pointers=True)


def vector_width(lw, op, ptr_value, mask_value, el) -> int:
    """Elements per vector access for ``op``'s chunks through ``ptr_value`` (elements
    ``el``) under ``mask_value`` (1 = scalar accesses): the access plan's width, at most
    a chunk of the blocked layout.  The planning stage (plan.py) asks; the rules read
    its answer from ``lw.plan``."""
    lay = lw.layout(ptr_value.type)
    if lay is None or lay.vec == 1 or not lw.vectorize or lw.sanitize:
        return 1
    if lay.dim0_first:                  # chunks along dim 0 (dim_order.py)
        from .dim_order import dim0_width
        return dim0_width(lw.facts, op, lay.vec) if ptr_value is op.ptr and mask_value is op.mask else 1
    return plan_access(lw.facts, ptr_value, mask_value, CUDA_ACCESS, max_lanes=lay.vec).width


def dim0_width(lw, ld) -> int:
    """Elements per access when the 2-D load ``ld`` is read transposed -- in the blocked
    layout of the reversed shape, in vectors along its dim 0 -- where its pointer is
    contiguous and aligned along dim 0 (0: fewer than two)."""
    info = lw.axis(ld.ptr) if lw.facts is not None and lw.vectorize and not lw.sanitize else None
    if info is None or len(ld.ptr.type.shape) != 2:
        return 0
    R, C = ld.ptr.type.shape
    size = T.mem_size(ld.ptr.type.element.element)
    lay = lw.layout((C, R))
    contig, div = info.contiguity[0], info.divisibility[0]
    w = min(lay.vec, contig, max(1, 16 // size))
    while w > 1 and (div % (w * size) or R % w or contig % w or lay.vec % w):
        w //= 2
    return w if w > 1 else 0


def _load_transposed(lw, op, w):
    """A load planned transposed (plan.kmajor): its pointer recomputed per slot in the
    blocked layout of the reversed shape (rules_tiles.rematerialize), ``w`` elements per
    access along dim 0; a mma_rows.TransposedLayout tile (the dot stages it so)."""
    from .mma_rows import TransposedLayout
    from .rules_tiles import rematerialize
    R, C = op.ptr.type.shape
    lay = lw.layout((C, R))
    regs = rematerialize(lw, op.ptr, trans=True)
    t = load_tile(lw, op, Tile(regs, lay), [None] * len(regs), w)
    return Tile(t.regs, TransposedLayout(lay))


def _store_owned(lw, lay, slot, mask):
    own = lw.owned(lay, slot)
    if own is None:
        return mask
    return own if mask is None else lw.b.and_(mask, own)


_REG = {16: ("h", T.I16), 32: ("r", T.I32), 64: ("l", T.I64)}


def _as_int(lw, v, ity):
    if isinstance(v.type, ir.PointerType):
        return lw.b.ptrtoint(v, ity)
    return v if v.type == ity else lw.b.bitcast(v, ity)


def _from_int(lw, v, mty):
    if isinstance(mty, ir.PointerType):
        return lw.b.inttoptr(v, mty)
    return v if v.type == mty else lw.b.bitcast(v, mty)


def _regroup(lw, values, ity, count):
    """``values`` (all of type ``ity``) reinterpreted as ``count`` wider integers (or,
    with ``count`` > len(values), narrower ones): a bitcast through a vector."""
    n = len(values)
    if n == count:
        return values
    vec = ir.Constant(ir.VectorType(ity, n), None)
    for i, v in enumerate(values):
        vec = lw.b.insert_element(vec, v, lw.i32(i))
    oty = ir.IntType(ity.width * n // count)
    out = lw.b.bitcast(vec, ir.VectorType(oty, count))
    return [lw.b.extract_element(out, lw.i32(i)) for i in range(count)]


def _access_regs(n, size):
    """(registers, their bits) for one access of ``n`` ``size``-byte elements: PTX
    vectors have at most 4 registers, so 8 halves travel as 4 x b32."""
    regs = min(n, 4)
    return regs, n * size * 8 // regs


def predicated_load(lw, ptr, mask, others, mty, size, evict=""):
    """``@mask ld.global.vN.bX`` in inline PTX (no branch): lanes where mask is false
    keep ``others``.  Returns the loaded values in memory type ``mty``.  ``evict``: the
    load's ``eviction_policy`` (``evict_first`` / ``evict_last``: L1 priority and an L2
    cache policy, as Triton's loads carry them; sm_80+)."""
    _c, ity = _REG[size * 8]
    n, (k, bits) = len(others), _access_regs(len(others), size)
    c, rty = _REG[bits]
    regs = ",".join(f"${i}" for i in range(k))
    vec = f".v{k}" if k > 1 else ""
    dst = "{" + regs + "}" if k > 1 else "$0"
    asm = f"@${k + 1} ld.global{vec}.b{bits} {dst}, [${k}];"
    if evict in ("evict_first", "evict_last") and lw.arch >= 80:
        asm = (f"{{ .reg .b64 pol; createpolicy.fractional.L2::{evict}.b64 pol, 1.0; "
               f"@${k + 1} ld.global.L1::{evict}.L2::cache_hint{vec}.b{bits} {dst}, [${k}], pol; }}")
    cons = ",".join([f"={c}"] * k + ["l", "b"] + [str(i) for i in range(k)])
    ret = rty if k == 1 else ir.LiteralStructType([rty] * k)
    fty = ir.FunctionType(ret, [T.I64, T.I1] + [rty] * k)
    olds = _regroup(lw, [_as_int(lw, o, ity) for o in others], ity, k)
    r = lw.b.asm(fty, asm, cons, [lw.b.ptrtoint(ptr, T.I64), mask] + olds, True)
    outs = [r] if k == 1 else [lw.b.extract_value(r, i) for i in range(k)]
    return [_from_int(lw, o, mty) for o in _regroup(lw, outs, rty, n)]


def predicated_store(lw, ptr, mask, values, size):
    _c, ity = _REG[size * 8]
    k, bits = _access_regs(len(values), size)
    c, _rty = _REG[bits]
    vec = f".v{k}" if k > 1 else ""
    src = "{" + ",".join(f"${i + 1}" for i in range(k)) + "}" if k > 1 else "$1"
    asm = f"@${k + 1} st.global{vec}.b{bits} [$0], {src};"
    cons = ",".join(["l"] + [c] * k + ["b"])
    fty = ir.FunctionType(T.VOID, [T.I64] + [_rty] * k + [T.I1])
    words = _regroup(lw, [_as_int(lw, v, ity) for v in values], ity, k)
    lw.b.asm(fty, asm, cons, [lw.b.ptrtoint(ptr, T.I64)] + words + [mask], True)


def _masked_value(lw, mask, load_fn, other):
    """``mask ? load_fn() : other`` with the load only executed where mask holds."""
    if mask is None:
        return load_fn()
    b = lw.b
    pre = b.block
    then = lw.kernel.append_basic_block("ld.then")
    done = lw.kernel.append_basic_block("ld.done")
    b.cbranch(mask, then, done)
    b.position_at_end(then)
    v = load_fn()
    then_end = b.block
    b.branch(done)
    b.position_at_end(done)
    phi = b.phi(v.type)
    phi.add_incoming(v, then_end)
    phi.add_incoming(other, pre)
    return phi


def _to_reg(lw, v, el):
    if not isinstance(el, T.PointerType) and el.kind == "bool":
        return lw.b.icmp_unsigned("!=", v, ir.Constant(T.I8, 0))
    return v


def _to_mem(lw, v, el):
    if not isinstance(el, T.PointerType) and el.kind == "bool":
        return lw.b.zext(v, T.I8)
    return v


def _other_regs(lw, op, el, n):
    if op.other is not None:
        return [_to_mem(lw, v, el) for v in lw.get(op.other).regs]
    zero = ir.Constant(T.mem_type(el), None if isinstance(el, T.PointerType) else 0)
    return [zero] * n


@RULES.register(ops.LoadOp)
def _load(lw, op):
    if op in lw.plan.kmajor:            # read transposed, only by dots (plan.py)
        return [_load_transposed(lw, op, lw.plan.kmajor[op])]
    w = lw.plan.access[op]              # elements per access (plan.py)
    ptile = lw.get(op.ptr)
    masks = lw.get(op.mask).regs if op.mask is not None else [None] * len(ptile.regs)
    if lw.sanitize:
        masks = check_slots(lw, op, ptile.regs, masks, T.mem_size(op.ptr.type.element.element),
                            ptile.layout)
    out = load_tile(lw, op, ptile, masks, w)
    finish(lw)
    return [out]


def load_tile(lw, op, ptile, masks, w):
    """``op``'s load through the pointer tile ``ptile`` with per-slot ``masks`` (masked-off
    slots take ``op.other``)."""
    el = op.ptr.type.element.element
    mty, size = T.mem_type(el), T.mem_size(el)
    ptrs = ptile.regs
    others = _other_regs(lw, op, el, len(ptrs))
    evict = getattr(op, "eviction", "")
    out = []
    for s0 in range(0, len(ptrs), w):
        if masks[s0] is not None and size * 8 in _REG:     # @p ld, no branch
            out.extend(predicated_load(lw, ptrs[s0], masks[s0], others[s0:s0 + w], mty, size, evict))
            continue
        if w == 1:
            def ld(p=ptrs[s0]):
                v = lw.b.load(ptrs[s0] if p is None else p, typ=mty)
                v.align = size
                return v
            out.append(_masked_value(lw, masks[s0], ld, others[s0]))
            continue
        vty = ir.VectorType(mty, w)

        def ldv(p=ptrs[s0]):
            v = lw.b.load(p, typ=vty)
            v.align = w * size
            return v
        other_vec = ir.Constant(vty, None)
        for j in range(w):
            other_vec = lw.b.insert_element(other_vec, others[s0 + j], lw.i32(j))
        vec = _masked_value(lw, masks[s0], ldv, other_vec)
        out.extend(lw.b.extract_element(vec, lw.i32(j)) for j in range(w))
    return Tile([_to_reg(lw, v, el) for v in out], ptile.layout)


@RULES.register(ops.StoreOp)
def _store(lw, op):
    el = op.ptr.type.element.element
    mty, size = T.mem_type(el), T.mem_size(el)
    w = lw.plan.access[op]              # elements per access (plan.py)
    restaged = lw.plan.restaged.get(op)
    if restaged is not None:            # a dim-0-first tile stored along dim 1 (dim_order.py)
        lay, w, ptrs, vals, masks = _restage(lw, op, *restaged)
    else:
        ptile = lw.get(op.ptr)
        lay = ptile.layout
        ptrs = ptile.regs
        vals = [_to_mem(lw, v, el) for v in lw.get(op.value).regs]
        masks = lw.get(op.mask).regs if op.mask is not None else [None] * len(ptrs)
    if lay is None:   # a scalar store: one thread writes
        masks = [_and(lw, masks[0], lw.b.icmp_unsigned("==", lw.tid, lw.i32(0)))]
    planned = lw.plan.relayout.get(op)  # (layout, decision) planned (plan.py); another layout: none
    if planned is not None and planned[0] == lay and planned[1]:
        lay, ptrs, vals, masks = scatter.relayout(lw, lay, ptrs, vals, masks)
    if lw.sanitize:   # w == 1: checked lanes, each owned copy once
        masks = check_slots(lw, op, ptrs, [_store_owned(lw, lay, s, m) for s, m in enumerate(masks)],
                            size, lay)
    for s0 in range(0, len(ptrs), w):
        cond = masks[s0] if lw.sanitize else _store_owned(lw, lay, s0, masks[s0])
        if cond is not None and size * 8 in _REG:      # @p st, no branch
            predicated_store(lw, ptrs[s0], cond, vals[s0:s0 + w], size)
            continue
        if w == 1:
            def st(s0=s0):
                lw.b.store(vals[s0], ptrs[s0]).align = size
        else:
            def st(s0=s0):
                vec = ir.Constant(ir.VectorType(mty, w), None)
                for j in range(w):
                    vec = lw.b.insert_element(vec, vals[s0 + j], lw.i32(j))
                lw.b.store(vec, ptrs[s0]).align = w * size
        lw.guarded(cond, st)
    finish(lw)
    return []


def _restage(lw, op, lay, w):
    """(layout, width, pointers, values, masks) of a restaged store in the row-major
    ``lay``: the value through shared memory (rules_tiles.exchange_2d), the pointer and
    mask recomputed per slot there (rules_tiles.rematerialize)."""
    from .rules_tiles import exchange_2d, rematerialize
    el = op.ptr.type.element.element
    ptrs = rematerialize(lw, op.ptr, lay=lay)
    masks = rematerialize(lw, op.mask, lay=lay) if op.mask is not None else [None] * lay.nslots
    vals = exchange_2d(lw, lw.get(op.value), el, lay).regs
    return lay, w, ptrs, [_to_mem(lw, v, el) for v in vals], masks


def _and(lw, a, b):
    return b if a is None else lw.b.and_(a, b)
