"""Lowering rules for structured control flow (scf.for / scf.if / scf.while), yield,
return and device assertions.  Loop-carried tiles become one phi per slot."""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from ..llvm.builder_utils import loop_condition, open_loop as llvm_open_loop
from ..llvm.printing import line_format, value_spec
from . import rows_ring, types as T
from .async_pipeline import fresh_thread_ids, lower_for
from .lowering import RULES, Tile
from .mma_rows import TransposedLayout, hoist_a, to_rows
from .pipeline import _transpose_tile
from .plan import iter_slice
from .rules_memory import load_tile
from .rules_mma import to_flat, to_mma
from .sanitize import always_holds, report_assert


def _flat(tiles):
    return [r for t in tiles for r in t.regs]


def _unflat(regs, like):
    out, i = [], 0
    for t in like:
        out.append(Tile(regs[i:i + len(t.regs)], t.layout))
        i += len(t.regs)
    return out


def _run_region(lw, block, args):
    """Lower a region's block; returns the tiles its terminator yields."""
    lw._yielded = None
    lw.lower_block(block, args)
    out = lw._yielded
    lw._yielded = None
    return out


@RULES.register(ops.YieldOp)
def _yield(lw, op):
    lw._yielded = [lw.raw(v) for v in op.values]     # the parent op picks the layouts
    return []


def _flat_tiles(lw, tiles):
    return [to_flat(lw, t) for t in tiles]


@RULES.register(ops.ConditionOp)
def _condition(lw, op):
    lw._yielded = (lw.get(op.cond), [lw.get(v) for v in op.values])
    return []


def open_loop(lw, prefix: str, lb):
    """Head, body and exit blocks of a counted loop entered from the current block;
    leaves the builder in the head after creating the induction variable's phi.
    Returns (preheader, head, body, exit, iv) (backends/llvm's open_loop)."""
    return llvm_open_loop(lw.b, lw.kernel, prefix, lb)


def _phis(lw, regs, pre):
    phis = []
    for r in regs:
        p = lw.b.phi(r.type)
        p.add_incoming(r, pre)
        phis.append(p)
    return phis


def _loop_cond(lw, iv, ub, step, el):
    """scf.for's test (backends/llvm's loop_condition)."""
    return loop_condition(lw.b, iv, ub, step, signed=not T.is_unsigned(el))


def _prefetch(lw, lp, ptr_tiles, cond):
    """Load each rotated load of the loop plan ``lp`` through ``ptr_tiles`` where ``cond``
    (a scalar) holds.  A K-major load (``lp.kmajor``) yields a mma_rows.TransposedLayout
    tile: loaded in vectors along dim 0 through its transposed pointer tile, or (when the
    pointer could not be evaluated transposed) loaded as usual and transposed."""
    out = []
    for (ld, j), got in zip(lp.prefetch, ptr_tiles):
        pval, ptile = got[0], got[1]
        el = ld.ptr.type.element.element
        if len(got) > 2 and got[2]:           # the transposed pointer tile
            t = load_tile(lw, ld, ptile, [cond] * len(ptile.regs), lp.kmajor[ld])
            out.append(Tile(t.regs, TransposedLayout(t.layout)))
            continue
        t = load_tile(lw, ld, ptile, [cond] * len(ptile.regs), lp.widths[(ld, pval)])
        if ld in lp.kmajor:
            t = _transpose_tile(lw, t, el, tuple(ld.ptr.type.shape))
            t = Tile(t.regs, TransposedLayout(t.layout))
        out.append(t)
    return out


@RULES.register(ops.ForOp)
def _for(lw, op):
    """The loop as its plan says (plan.plan_loop): a cp.async ring, a row ring, or a
    counted loop with the planned layouts, rotated and direct loads."""
    lp = lw.plan.loops[op]
    if lp.ring is not None:
        return lower_for(lw, op, lp.ring)
    b = lw.b
    lb, ub, step = (lw.get(v).scalar for v in (op.lb, op.ub, op.step))
    el = op.lb.type.element
    carry, rows = lp.carry, lp.row_map
    if lp.rows is not None:
        lw.region_ops |= lp.rows.ops
        hoist_a(lw, lp.hoist_a)
    inits = [to_mma(lw, lw.raw(v), carry[i]) if i in carry else
             to_rows(lw, lw.raw(v), rows[i]) if i in rows else lw.get(v) for i, v in enumerate(op.inits)]
    if lp.row_ring is not None:       # the dots' B tiles in a cp.async ring (rows_ring)
        return rows_ring.lower_for(lw, op, lp.row_ring, inits, carry, rows)
    loads, direct = lp.prefetch, lp.direct
    if direct:                        # the invariant leaves, once, before the loop
        first = {a: t for a, t in zip(op.body.args, [Tile([lb], None)] + inits)}
        for ld, sl in direct.items():
            ev = iter_slice(lw, op, ld, sl)
            for v in (ld.ptr, ld.mask):
                if v is not None and v.op in sl:
                    ev.at(v, {a: first[a] for a in ev.args})
    if loads:
        first = {a: t for a, t in zip(op.body.args, [Tile([lb], None)] + inits)}
        inits = inits + _prefetch(lw, lp, [(op.inits[j], inits[j]) if isinstance(j, int)
                                           else _computed_ptr(lw, op, lp, ld, j, first) for ld, j in loads],
                                  _loop_cond(lw, lb, ub, step, el))
    pre, head, body, exit_, iv = open_loop(lw, "for", lb)
    phis = _phis(lw, _flat(inits), pre)
    b.cbranch(_loop_cond(lw, iv, ub, step, el), body, exit_)
    b.position_at_end(body)
    carried = _unflat(phis, inits)
    n = len(op.inits)
    with fresh_thread_ids(lw, op):
        nxt = _lower_body(lw, op, lp, iv, step, ub, el, carried[:n], carried[n:])
    nxt = [t if i >= n else to_mma(lw, t, carry[i]) if i in carry else
           to_rows(lw, t, rows[i]) if i in rows else _flat_tiles(lw, [t])[0]
           for i, t in enumerate(nxt)]
    latch = b.block
    iv.add_incoming(b.add(iv, step), latch)
    for p, v in zip(phis, _flat(nxt)):
        p.add_incoming(v, latch)
    b.branch(head)
    b.position_at_end(exit_)
    return carried[:n]


def _computed_ptr(lw, op, lp, ld, sl, env):
    """(pointer value, tile) of a rotated load whose pointer the body computes by the
    slice ``sl``, with the body's args bound to ``env``: evaluated by an
    :class:`~.pipeline.IterSlice` (broadcasts sunk, invariant leaves lowered at the
    first call, which is before the loop)."""
    ev = iter_slice(lw, op, ld, sl)
    if ev is not None and all(env.get(a) is not None for a in ev.args):
        if ld in lp.kmajor:
            return ld.ptr, ev.at(ld.ptr, {a: env[a] for a in ev.args}, trans=True), True
        return ld.ptr, ev.at(ld.ptr, {a: env[a] for a in ev.args})
    body = op.body
    keep = list(body.args) + [r for o in sl for r in o.results]
    saved = {v: lw.values.get(v) for v in keep}
    for a, t in env.items():
        if t is not None:
            lw.values[a] = t
    for o in body.ops:
        if o in sl:
            lw.lower_op(o)
    ptile = lw.get(ld.ptr)
    for v, t in saved.items():
        if t is None:
            lw.values.pop(v, None)
        else:
            lw.values[v] = t
    return ld.ptr, ptile


def _lower_direct_load(lw, op, ld, sl):
    """Lower ``ld`` with its pointer and mask evaluated by its IterSlice for the current
    iteration (the block args' tiles bound in ``lw.values``)."""
    ev = iter_slice(lw, op, ld, sl)
    env = {a: lw.values[a] for a in ev.args}
    lw.values[ld.ptr] = ev.at(ld.ptr, env)
    if ld.mask is not None and ld.mask.op in sl:
        lw.values[ld.mask] = ev.at(ld.mask, env)
    lw.lower_op(ld)


def _private(body, ld, sl):
    """The ops of ``sl`` whose results only ``sl`` and ``ld`` read (skipped in the body)."""
    res = {r: o for o in sl for r in o.results}
    used = {x for o in body.walk() if o not in sl and o is not ld for x in o.operands}
    out = set(sl)
    changed = True
    while changed:
        changed = False
        for o in list(out):
            if any(r in used for r in o.results) or any(r in x.operands for x in sl - out for r in o.results):
                out.discard(o)
                changed = True
    return out


def _lower_body(lw, op, lp, iv, step, ub, el, carried, prefetched):
    """Lower the loop body; with rotated loads (``lp.prefetch``), their values come from
    the previous iteration and the next tiles are requested before the rest of the body;
    direct loads (``lp.direct``: {load: slice}) take their pointers from their IterSlice."""
    loads, early, direct = lp.prefetch, lp.early, lp.direct
    if not loads and not direct:
        return _run_region(lw, op.body, [Tile([iv], None)] + carried)
    body = op.body
    lw._yielded = None
    for a, t in zip(body.args, [Tile([iv], None)] + carried):
        lw.values[a] = t
    for (ld, _j), t in zip(loads, prefetched):
        lw.values[ld.result] = t
    for o in body.ops:
        if o in early:
            lw.lower_op(o)
    nxt_loads = []
    if loads:
        term = body.terminator
        nxt_iv = lw.b.add(iv, step)
        more = _loop_cond(lw, nxt_iv, ub, step, el)
        nxt = {a: (Tile([nxt_iv], None) if i == 0 else None) for i, a in enumerate(body.args)}
        for i, a in enumerate(body.args[1:]):
            if term.values[i] in lw.values:         # computed early (or carried unchanged)
                nxt[a] = lw.raw(term.values[i])
        nxt_loads = _prefetch(lw, lp, [(term.values[j], lw.get(term.values[j])) if isinstance(j, int)
                                       else _computed_ptr(lw, op, lp, ld, j, nxt) for ld, j in loads], more)
    skip = early | {ld for ld, _ in loads}
    for ld, j in loads:
        if not isinstance(j, int):
            skip |= _private(body, ld, j)
    for ld, sl in direct.items():
        skip |= _private(body, ld, sl)
    for o in body.ops:
        if o in direct:
            _lower_direct_load(lw, op, o, direct[o])
        elif o not in skip:
            lw.lower_op(o)
    out = lw._yielded
    lw._yielded = None
    return list(out) + nxt_loads


@RULES.register(ops.IfOp)
def _if(lw, op):
    b = lw.b
    cond = lw.get(op.cond)
    if cond.layout is not None:
        raise NotImplementedError("scf.if on a tile condition")
    then_bb = lw.kernel.append_basic_block("if.then")
    else_bb = lw.kernel.append_basic_block("if.else")
    merge = lw.kernel.append_basic_block("if.end")
    b.cbranch(cond.scalar, then_bb, else_bb)
    ends = []
    for bb, region in ((then_bb, op.regions[0]), (else_bb, op.regions[1])):
        b.position_at_end(bb)
        out = _run_region(lw, region.block, []) if region.blocks else []
        out = _flat_tiles(lw, out or [])
        ends.append((b.block, out or []))
        if not b.block.is_terminated:
            b.branch(merge)
    b.position_at_end(merge)
    results = []
    if op.results:
        (tb, tv), (eb, ev) = ends
        regs = []
        for x, y in zip(_flat(tv), _flat(ev)):
            p = b.phi(x.type)
            p.add_incoming(x, tb)
            p.add_incoming(y, eb)
            regs.append(p)
        results = _unflat(regs, tv)
    return results


@RULES.register(ops.WhileOp)
def _while(lw, op):
    b = lw.b
    inits = [lw.get(v) for v in op.inits]
    pre = b.block
    head = lw.kernel.append_basic_block("while.before")
    after = lw.kernel.append_basic_block("while.after")
    exit_ = lw.kernel.append_basic_block("while.exit")
    b.branch(head)
    b.position_at_end(head)
    phis = _phis(lw, _flat(inits), pre)
    cond, fwd = _run_region(lw, op.regions[0].block, _unflat(phis, inits))
    b.cbranch(cond.scalar, after, exit_)
    b.position_at_end(after)
    with fresh_thread_ids(lw, op):
        nxt = _flat_tiles(lw, _run_region(lw, op.regions[1].block, fwd))
    latch = b.block
    for p, v in zip(phis, _flat(nxt)):
        p.add_incoming(v, latch)
    b.branch(head)
    b.position_at_end(exit_)
    return fwd


@RULES.register(ops.ReturnOp)
def _return(lw, op):
    lw.b.ret_void()
    dead = lw.kernel.append_basic_block("after.return")
    lw.b.position_at_end(dead)
    return []


@RULES.register(ops.DeviceAssertOp)
def _assert(lw, op):
    cond = lw.get(op.cond)
    ok = None
    for s, c in enumerate(cond.regs):
        own = lw.owned(cond.layout, s)
        c = c if own is None else lw.b.or_(c, lw.b.not_(own))
        ok = c if ok is None else lw.b.and_(ok, c)
    if lw.reports and not always_holds(op):   # record, vote, return; the host raises (sanitize.py)
        report_assert(lw, op, lw.b.not_(ok))
        return []
    lw.guarded(lw.b.not_(ok), lambda: lw.call("llvm.trap", T.VOID, []))
    return []


def _fmt_arg(lw, v, el, hex=False):
    """(printf conversion, i64/double value) of one element (backends/llvm/printing.py)."""
    b = lw.b
    if isinstance(el, T.PointerType):
        return value_spec(el), b.ptrtoint(v, T.I64)
    if el.kind == "float":
        return value_spec(el), (b.fpext(v, T.F64) if v.type != T.F64 else v)
    widen = b.sext if el.kind == "int" and not hex else b.zext
    return value_spec(el, hex), (widen(v, T.I64) if v.type.width < 64 else v)


def _cstring(lw, text: str):
    data = bytearray(text.encode()) + b"\0"
    name = f"tj_fmt{len(lw.module.globals)}"
    g = ir.GlobalVariable(lw.module, ir.ArrayType(T.I8, len(data)), name, addrspace=1)
    g.global_constant = True
    g.linkage = "internal"
    g.initializer = ir.Constant(ir.ArrayType(T.I8, len(data)), data)
    g.type = T.GLOBAL_PTR
    return lw.b.addrspacecast(g, ir.PointerType())


@RULES.register(ops.DebugBarrierOp)
def _debug_barrier(lw, op):
    """A CTA barrier: the threads' accesses before it happen before those after it."""
    lw.barrier()


@RULES.register(ops.DevicePrintOp)
def _print(lw, op):
    """Triton's lines (backends/llvm/printing.py) through vprintf: each owned element of
    a tile once, by its owning thread; a scalar (and a print without operands) by every
    thread of the CTA, as Triton does."""
    pids = [lw.b.sext(lw.sreg(f"ctaid.{a}"), T.I64) for a in "xyz"]
    if not op.args:
        _vprintf(lw, line_format(op.prefix, None, None), pids, None)
    many = len(op.args) > 1
    for n, v in enumerate(op.args):
        t, el, shape = lw.get(v), v.type.element, tuple(getattr(v.type, "shape", ()) or ())
        scalar = t.layout is None or not shape
        for s, x in enumerate(t.regs[:1] if scalar else t.regs):
            spec, val = _fmt_arg(lw, x, el, op.hex)
            fmt = line_format(op.prefix, shape, spec, n if many else None)
            if scalar:
                _vprintf(lw, fmt, pids + [val], None)
                continue
            idx = _unflatten(lw, lw.elem_index(t.layout, s), shape)
            _vprintf(lw, fmt, pids + idx + [val], lw.owned(t.layout, s))
    return []


def _unflatten(lw, flat, shape):
    """Row-major per-dimension indices (i64) of element number ``flat``."""
    out = []
    for d in reversed(shape[1:]):
        out.append(lw.b.urem(flat, lw.i32(d)))
        flat = lw.b.udiv(flat, lw.i32(d))
    out.append(flat)
    return [lw.b.zext(i, T.I64) for i in reversed(out)]


def _vprintf(lw, text, vals, own):
    """``vprintf(text, {vals})`` where ``own`` holds (every thread for None)."""
    vprintf = lw.intrinsic("vprintf", T.I32, [ir.PointerType(), ir.PointerType()])
    fmts = lw._print_fmts
    if text not in fmts:
        fmts[text] = _cstring(lw, text)
    fmt = fmts[text]
    sty = ir.LiteralStructType([x.type for x in vals])
    buf = lw.b.alloca(sty)
    buf.type = ir.PointerType()          # opaque (llvmlite types allocas)
    for i, x in enumerate(vals):
        lw.b.store(x, lw.b.gep(buf, [lw.i32(0), lw.i32(i)], source_etype=sty))
    lw.guarded(own, lambda: lw.b.call(vprintf, [fmt, buf]))
