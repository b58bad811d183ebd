"""Structured control flow (scf.for / scf.if / scf.while), tt.return, tt.assert and
tt.print for the CPU backend.

Loop-carried scalars are phis.  A loop-carried tile lives in two per-program
buffers swapped each iteration: the body reads the current one, the yield writes
the next one (so a yield may read any carried value while writing).  A carried sum
accumulator that is only reduced after the loop is kept as partial sums in one
buffer instead (partial_acc.py).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ..llvm.builder_utils import loop_condition, open_loop
from ..llvm.types import I1, I32, I64, PTR, F64, storage_type, value_type
from ..llvm.printing import line_format, value_spec
from ..llvm.scalar import bf16_to_f32
from .lower import RULES, LoweringError
from .partial_acc import PartialAcc, narrowed_slots, start_partial
from .tiles import COST_LOAD, BufTile, LazyTile, OrderedBufTile, Tile, materialize


def _lower_body(ctx, block):
    """Lower all ops of ``block`` but its terminator, which is returned."""
    term = block.terminator
    for op in block.ops:
        if op is not term:
            ctx.lower_op(op)
    return term


def uniform_ptr_step(op, i):
    """For scf.for ``op``: the scalar step (IR value or Python int) when carried value
    ``i`` is a pointer tile advanced each iteration by one uniform offset
    (``p = p + splat(s)``), else None."""
    t = op.inits[i].type
    term = op.body.terminator
    if t.is_scalar or not t.element.is_ptr() or term is None:
        return None
    y = term.values[i].op
    if not isinstance(y, ops.AddPtrOp) or y.ptr is not op.body.args[1 + i]:
        return None
    off = y.offset.op
    if isinstance(off, ops.SplatOp):
        return off.src
    if isinstance(off, ops.ConstantOp) and not isinstance(off.value, (list, tuple)):
        return int(off.value)
    return None


class _UniformPtr:
    """A carried pointer tile kept as its (loop-invariant) initial tile plus one
    scalar i64 element offset that advances by ``step`` each iteration."""

    def __init__(self, ctx, t, init_rep, step):
        if not isinstance(init_rep, BufTile) and init_rep.cost >= COST_LOAD:
            init_rep = materialize(ctx, init_rep)
        self.t, self.init, self.step = t, init_rep, step

    def rep(self, off):
        init, sty = self.init, storage_type(self.t.element.element)
        return LazyTile(self.t.shape, self.t.element,
                        lambda c, idx: c.b.gep(init.elem(c, idx), [off], source_etype=sty), 1)

    def next_offset(self, ctx, off):
        s = self.step
        if isinstance(s, int):
            return ctx.b.add(off, ir.Constant(I64, s))
        v, dt = ctx.get(s), s.type.element
        if v.type != I64:
            v = ctx.b.sext(v, I64) if dt.kind == "int" else ctx.b.zext(v, I64)
        return ctx.b.add(off, v)


class _Carried:
    """Loop-carried values: scalar phis, double-buffered tiles, and sum accumulators
    kept as partial sums (slots in ``narrow``: one buffer, no phi, updated in place
    by their ``arith.add``)."""

    def __init__(self, ctx, types, inits, steps=None, orders=None, narrow=()):
        self.ctx, self.types = ctx, types
        self.bufs = []
        steps = steps or [None] * len(types)
        self.orders = orders or [None] * len(types)
        for k, (t, v, step, order) in enumerate(zip(types, inits, steps, self.orders)):
            if k in narrow:
                self.bufs.append(start_partial(ctx, t, v, ctx.get(v)))
            elif step is not None:
                self.bufs.append(_UniformPtr(ctx, t, ctx.get(v), step))
            elif t.is_scalar:
                self.bufs.append(None)
            else:
                a = ctx.alloca(storage_type(t.element), t.numel)
                bb = ctx.alloca(storage_type(t.element), t.numel)
                _into(ctx, ctx.get(v), t, a, order) if isinstance(ctx.get(v), Tile) else None
                self.bufs.append((a, bb))
        self.init_vals = [ctx.get(v) if t.is_scalar else None for t, v in zip(types, inits)]

    def initial_state(self):
        """The state before the first iteration: per slot a pointer offset (uniform
        pointer tiles), a scalar value, or a tile's (current, other) buffers."""
        return [ir.Constant(I64, 0) if isinstance(u, _UniformPtr) else
                (None if isinstance(u, PartialAcc) else iv if u is None else tuple(u))
                for iv, u in zip(self.init_vals, self.bufs)]

    def make_phis(self, pre, start=None):
        """Phis of the loop head, entered from ``pre`` with ``start`` (default: the
        initial state)."""
        b = self.ctx.b
        self.phis = []
        for t, s, u in zip(self.types, start or self.initial_state(), self.bufs):
            if isinstance(u, PartialAcc):
                self.phis.append(None)
                continue
            if isinstance(u, _UniformPtr):
                p = b.phi(I64)
            elif u is None:
                p = b.phi(value_type(t.element))
            else:
                p = (b.phi(PTR), b.phi(PTR))
            for ph, v in zip(p, s) if isinstance(p, tuple) else ((p, s),):
                ph.add_incoming(v, pre)
            self.phis.append(p)

    def reps(self, state=None):
        out = []
        for t, p, u, order in zip(self.types, self.phis if state is None else state, self.bufs, self.orders):
            if isinstance(u, _UniformPtr):
                out.append(u.rep(p))
            elif isinstance(u, PartialAcc):
                out.append(u)
            elif isinstance(p, tuple) and order is not None:
                out.append(OrderedBufTile(t.shape, t.element, p[0], order))
            elif isinstance(p, tuple):
                out.append(BufTile(t.shape, t.element, p[0]))
            else:
                out.append(p)
        return out

    def yield_values(self, values, state=None, keep=()):
        """Evaluate the yielded values into next-iteration slots (call at the latch);
        from ``state`` (default: the phis); slots in ``keep`` stay as they are."""
        ctx = self.ctx
        nexts = []
        for i, (t, p, v, u) in enumerate(zip(self.types, self.phis if state is None else state, values, self.bufs)):
            rep = ctx.get(v) if i not in keep else None
            if i in keep:
                nexts.append(p)
            elif isinstance(u, PartialAcc):
                if rep is not u:
                    raise LoweringError("a partial-sum accumulator yielded something else")
                nexts.append(None)
            elif isinstance(u, _UniformPtr):
                nexts.append(u.next_offset(ctx, p))
            elif not isinstance(p, tuple):
                nexts.append(rep)
            else:
                _into(ctx, rep, t, p[1], self.orders[i])
                nexts.append((p[1], p[0]))
        return nexts

    def add_latch(self, nexts, latch):
        for p, n in zip(self.phis, nexts):
            if p is None:
                continue
            if isinstance(p, tuple):
                p[0].add_incoming(n[0], latch)
                p[1].add_incoming(n[1], latch)
            else:
                p.add_incoming(n, latch)


def _into(ctx, rep, t, ptr, order=None):
    if isinstance(rep, Tile):       # (dot tiles take no order: carried_order gives them None)
        rep.materialize_into(ctx, ptr, order) if order is not None else rep.materialize_into(ctx, ptr)
    else:   # a scalar yielded for a tile slot cannot happen (types match); be safe
        raise LoweringError("scalar value yielded for a tile")


def carried_order(ctx, op, t):
    """Axis order (outermost first) of the buffers of a carried tile of type ``t`` in
    scf.for ``op``, or None for row-major.  When the body loads tiles of ``t``'s shape
    that run contiguously along a leading axis and never along the last (e.g.
    Inductor's looped reduction over a non-last dim, ``x0 + 256*r0_1``), that axis is
    laid out and iterated innermost, so those loads and the accumulator's reads and
    writes are all unit-stride in the vectorised loop.  Only the buffer layout and
    the order of independent elementwise steps change: every element's value is
    the same."""
    facts = getattr(ctx, "facts", None)
    if facts is None or t.is_scalar or len(t.shape) < 2:
        return None
    if any(isinstance(o, ops.DotOp) for o in op.body.ops):
        return None                       # dot accumulators stay row-major (lower_dot*)
    best, runs = None, 1
    for ld in op.body.ops:
        if not isinstance(ld, ops.LoadOp) or ld.ptr.type.is_scalar or tuple(ld.ptr.type.shape) != tuple(t.shape):
            continue
        c = facts.axis(ld.ptr).contiguity
        if c[-1] > 1:
            return None
        for d in range(len(c) - 1):
            if c[d] > runs:
                best, runs = d, c[d]
    if best is None or runs < 4:
        return None
    return tuple(d for d in range(len(t.shape)) if d != best) + (best,)


def carried_of(ctx, op):
    """The loop-carried values of scf.for ``op`` (buffers allocated, inits written)."""
    types = [v.type for v in op.inits]
    return _Carried(ctx, types, op.inits, [uniform_ptr_step(op, i) for i in range(len(types))],
                    [carried_order(ctx, op, t) for t in types], narrowed_slots(ctx, op))


@RULES.register(ops.ForOp)
def _for(ctx, op):
    from .lower_dot_loop import lower_fused_dot_loop    # dot loops (imports this module)
    if lower_fused_dot_loop(ctx, op):
        return
    b = ctx.b
    lb, ub, step = ctx.get(op.lb), ctx.get(op.ub), ctx.get(op.step)
    signed = op.lb.type.element.kind == "int"
    carried = carried_of(ctx, op)
    pre, head, body, done, iv = open_loop(b, ctx.em.fn, "for", lb)
    carried.make_phis(pre)
    b.cbranch(loop_condition(b, iv, ub, step, signed), body, done)
    b.position_at_end(body)
    blk = op.body
    ctx.set(blk.args[0], iv)
    for a, r in zip(blk.args[1:], carried.reps()):
        ctx.set(a, r)
    term = _lower_body(ctx, blk)
    nexts = carried.yield_values(term.values if term is not None else [])
    nxt = b.add(iv, step)
    latch = b.block
    iv.add_incoming(nxt, latch)
    carried.add_latch(nexts, latch)
    b.branch(head)
    b.position_at_end(done)
    for r, rep in zip(op.results, carried.reps()):
        ctx.set(r, rep)


@RULES.register(ops.IfOp)
def _if(ctx, op):
    b = ctx.b
    cond = ctx.get(op.cond)
    types = [r.type for r in op.results]
    bufs = [None if t.is_scalar else ctx.alloca(storage_type(t.element), t.numel) for t in types]
    then_bb, else_bb, merge = (ctx.em.new_block(n) for n in ("if.then", "if.else", "if.end"))
    b.cbranch(cond, then_bb, else_bb)
    incoming = []
    for region, bb in zip(op.regions, (then_bb, else_bb)):
        b.position_at_end(bb)
        vals = []
        if region.blocks and region.blocks[0].ops:
            term = _lower_body(ctx, region.blocks[0])
            vals = list(term.values) if term is not None else []
        scal = []
        for t, buf, v in zip(types, bufs, vals):
            if buf is None:
                scal.append(ctx.get(v))
            else:
                _into(ctx, ctx.get(v), t, buf)
        incoming.append((scal, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    si = 0
    for k, (t, buf) in enumerate(zip(types, bufs)):
        if buf is None:
            phi = b.phi(value_type(t.element))
            for scal, blk in incoming:
                phi.add_incoming(scal[si], blk)
            si += 1
            ctx.set(op.results[k], phi)
        else:
            ctx.set(op.results[k], BufTile(t.shape, t.element, buf))


@RULES.register(ops.WhileOp)
def _while(ctx, op):
    b = ctx.b
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    types = [v.type for v in op.inits]
    carried = _Carried(ctx, types, op.inits)
    rtypes = [r.type for r in op.results]
    fwd = [None if t.is_scalar else ctx.alloca(storage_type(t.element), t.numel) for t in rtypes]
    pre = b.block
    head, body, done = ctx.em.new_block("while.head"), ctx.em.new_block("while.body"), ctx.em.new_block("while.done")
    b.branch(head)
    b.position_at_end(head)
    carried.make_phis(pre)
    for a, r in zip(before.args, carried.reps()):
        ctx.set(a, r)
    cterm = _lower_body(ctx, before)
    cond = ctx.get(cterm.cond)
    fwd_reps = []
    for t, buf, v in zip(rtypes, fwd, cterm.values):
        if buf is None:
            fwd_reps.append(ctx.get(v))
        else:
            _into(ctx, ctx.get(v), t, buf)
            fwd_reps.append(BufTile(t.shape, t.element, buf))
    b.cbranch(cond, body, done)
    b.position_at_end(body)
    for a, r in zip(after.args, fwd_reps):
        ctx.set(a, r)
    term = _lower_body(ctx, after)
    nexts = carried.yield_values(term.values if term is not None else [])
    carried.add_latch(nexts, b.block)
    b.branch(head)
    b.position_at_end(done)
    for r, rep in zip(op.results, fwd_reps):
        ctx.set(r, rep)


@RULES.register(ops.YieldOp, ops.ConditionOp)
def _stray_terminator(ctx, op):
    raise LoweringError(f"{op.loc}: {op.name} outside its region op")


@RULES.register(ops.ReturnOp)
def _return(ctx, op):
    ctx.b.ret(ir.Constant(I32, 0))
    ctx.em.b.position_at_end(ctx.em.new_block("after.ret"))


# --------------------------------------------------------------------------
# assert / print
# --------------------------------------------------------------------------
@RULES.register(ops.DeviceAssertOp)
def _assert(ctx, op):
    b = ctx.b
    ctx.asserts.append(op)
    code = len(ctx.asserts)
    cond = ctx.get(op.cond)
    if isinstance(cond, Tile):
        slot = ctx.alloca(I1)
        b.store(ir.Constant(I1, 1), slot)
        ctx.loop_nest(cond.shape, lambda idx: b.store(b.and_(b.load(slot, typ=I1), cond.elem(ctx, idx)), slot))
        cond = b.load(slot, typ=I1)
    with b.if_then(b.not_(cond), likely=False):
        b.ret(ir.Constant(I32, code))


def _printf(ctx):
    fn = ctx.module.globals.get("printf")
    if fn is None:
        fn = ir.Function(ctx.module, ir.FunctionType(I32, [PTR], var_arg=True), name="printf")
    return fn


def _cstring(ctx, text):
    data = bytearray(text.encode() + b"\0")
    ty = ir.ArrayType(ir.IntType(8), len(data))
    g = ir.GlobalVariable(ctx.module, ty, name=ctx.module.get_unique_name("fmt"))
    g.global_constant = True
    g.linkage = "internal"
    g.initializer = ir.Constant(ty, data)
    return g


def _print_arg(b, v, dt, hex=False):
    """(printf conversion, widened value) of one element (backends/llvm/printing.py)."""
    if dt.kind == "float":
        if dt.name == "bf16":
            v = bf16_to_f32(b, v)
        return value_spec(dt), (b.fpext(v, F64) if v.type != F64 else v)
    if dt.is_ptr():
        return value_spec(dt), b.ptrtoint(v, I64)
    widen = b.sext if dt.kind == "int" and not hex else b.zext
    return value_spec(dt, hex), (widen(v, I64) if v.type.width < 64 else v)


def _fflush(ctx):
    fn = ctx.module.globals.get("fflush")
    if fn is None:
        fn = ir.Function(ctx.module, ir.FunctionType(I32, [PTR]), name="fflush")
    ctx.b.call(fn, [ir.Constant(PTR, None)])


@RULES.register(ops.DebugBarrierOp)
def _debug_barrier(ctx, op):
    """One thread runs a program: its accesses are already in program order."""
    return None


@RULES.register(ops.DevicePrintOp)
def _print(ctx, op):
    _print_values(ctx, op)
    _fflush(ctx)


def _print_values(ctx, op):
    """Triton's lines (backends/llvm/printing.py); a program prints each element once."""
    b = ctx.b
    printf = _printf(ctx)
    pids = [b.sext(p, I64) for p in ctx.pid]
    if not op.args:
        b.call(printf, [_cstring(ctx, line_format(op.prefix, None, None))] + pids)
    many = len(op.args) > 1
    for n, v in enumerate(op.args):
        rep, dt = ctx.get(v), v.type.element
        operand = n if many else None
        if not isinstance(rep, Tile):
            spec, val = _print_arg(b, rep, dt, op.hex)
            b.call(printf, [_cstring(ctx, line_format(op.prefix, (), spec, operand))] + pids + [val])
            continue

        def body(idx, rep=rep, dt=dt, operand=operand):
            spec, val = _print_arg(b, rep.elem(ctx, idx), dt, op.hex)
            fmt = _cstring(ctx, line_format(op.prefix, rep.shape, spec, operand))
            b.call(printf, [fmt] + pids + [b.sext(i, I64) if i.type != I64 else i for i in idx] + [val])
        ctx.loop_nest(rep.shape, body)
