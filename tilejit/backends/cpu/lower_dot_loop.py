"""Dot loops on the CPU backend: the accumulator updated in place, ``U`` iterations
of a K loop as one dot.

The tutorial matmul loop ::

    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))     # or acc = tl.dot(a, b, acc)
        a_ptrs += ...; b_ptrs += ...

evaluates one ``BM x BK @ BK x BN`` dot per iteration.  Lowered as any loop
(lower_cf.py), the accumulator lives in two buffers swapped each iteration and the
micro-kernel (dot_microkernel.py) reloads and stores its registers every ``BK``
values of k.  When the body only loads and computes (nothing in it writes memory)
and the accumulator is used by the dot alone, this module lowers the loop ``U``
iterations at a time instead: the body's ops are lowered ``U`` times (each copy with
its own induction value and pointer offsets), the ``U`` dots are evaluated together
as one ``BM x (U*BK) @ (U*BK) x BN`` dot (:class:`SegmentedDot`: A's segments copied
side by side, B's packed into one set of panels, each read where its load read it
when it may be) written in place into the accumulator's one buffer; the iterations
left over (``trip count % U``) run the same way one at a time.

``U`` (:func:`fuse_factor`) makes a fused dot about 64 fp32 (32 fp64) values of k
long, measured on the tutorial kernel (Sapphire Rapids, 1 thread, 1024^3, median of
15, against numpy in the same run; bench/results/cpu_matmul_notes.md):
BK=64: U=1 0.89-0.90x numpy (0.85-0.86x before), U=2 0.87-0.89x, U=4 0.80-0.88x;
BK=32: U=2 0.91x (0.81x before); BK=16 (64x64 tiles): U=4 0.80x (0.62x before).
Longer fused dots lose: their B panels and A rows no longer share L1.  When A may be
shared by the programs of a chunk (dot_share.py: packed once, in row blocks),
``KC_SHARED_BYTES`` (128 fp32) is used instead: 1024^3 0.88-0.90x -> 0.90-0.92x,
2048^3 0.83-0.84x -> 0.90-0.95x numpy (znver3, one thread, same process); 256 fp32
gained another 0-2% for a third more compile time.  The iterations left over are
not shared.

Each element of the result is ``acc + (sum of the U*BK products in k order)``
where the loop one iteration at a time computes ``((acc + s_0) + s_1) + ...``: the
same values up to fp rounding, as between any two summation orders of a dot.
"""
from __future__ import annotations

from typing import NamedTuple

import llvmlite.ir as ir

from ...ir import ops
from ...ir.types import float32, float64
from ..llvm.builder_utils import open_loop
from ..llvm.types import I64
from .dot_microkernel import choose_shape, emit_float_dot
from .lower_cf import carried_of, uniform_ptr_step
from . import lower_dot
from .tiles import BufTile, Tile

KC_BYTES = 256           # bytes of k per fused dot: 64 fp32 (see the module docstring)
KC_SHARED_BYTES = 512    # the same when A is shared (dot_share.py): 128 fp32
MAX_A_BYTES = 256 << 10  # the side-by-side A copy of one fused dot at most


class _Match(NamedTuple):
    slot: int            # the accumulator's carried slot
    dot: object          # the tt.dot
    add: object          # the arith.add folding the dot into acc, or None
    factor: int          # iterations per fused dot


class _Part(NamedTuple):
    """One iteration's operands: compute-type buffers and in-place readers."""
    a: BufTile
    b: BufTile
    a_src: object
    b_src: object


class SegmentedDot(Tile):
    """``concat(a_i, axis=1) @ concat(b_i, axis=0) + acc`` over the ``parts``."""

    cost = 1000

    def __init__(self, parts, acc, out_dtype, cdt, share=None):
        super().__init__((parts[0].a.shape[0], parts[0].b.shape[1]), out_dtype)
        self.parts, self.acc, self.cdt = parts, acc, cdt
        self.share = share       # (A's dot_share.Site or None, B's, i64 trip number of its loop)

    def _elem(self, ctx, idx):
        raise AssertionError("SegmentedDot must be materialized before use")

    def materialize_into(self, ctx, ptr, order=None):
        if order is not None and tuple(order) != tuple(range(len(self.shape))):
            lower_dot._reordered(ctx, self, ptr, order)
        else:
            emit_float_dot(ctx, self, ptr)


def fuse_factor(bm, bn, bk, cdt, shared=False) -> int:
    """Iterations per fused dot for ``bm x bk @ bk x bn`` tiles (1: no fusion);
    ``shared``: A may be shared by the programs (dot_share.py)."""
    esz = 8 if cdt == float64 else 4
    u = max(1, (KC_SHARED_BYTES if shared else KC_BYTES) // (bk * esz))
    while u > 1 and bm * u * bk * esz > MAX_A_BYTES:
        u //= 2
    return u


def _only_user(ctx, value, user) -> bool:
    users = ctx.plan.user_ops(value)
    return len(users) == 1 and users[0] is user


def match(ctx, op):
    """The fused-dot plan of scf.for ``op``, or None (see the module docstring)."""
    step = op.step.op
    if not isinstance(step, ops.ConstantOp) or not isinstance(step.value, int) or step.value <= 0:
        return None
    if op.lb.type.element.kind != "int":
        return None
    body = op.body
    term = body.terminator
    if term is None or not all(o is term or isinstance(o, ops.LoadOp) and not o.volatile
                               or o.has_trait("pure") and not o.regions for o in body.ops):
        return None
    for slot, y in enumerate(term.values):
        m = _match_slot(ctx, op, slot, y)
        if m is not None:
            return m
    return None


def _match_slot(ctx, op, slot, y):
    arg, t = op.body.args[1 + slot], op.inits[slot].type
    if t.is_scalar or len(t.shape) != 2 or t.element not in (float32, float64):
        return None
    dot = add = None
    if isinstance(y.op, ops.DotOp) and y.op.acc is arg:
        dot = y.op
    elif isinstance(y.op, ops.AddOp) and y.op.lhs is not y.op.rhs and arg in (y.op.lhs, y.op.rhs):
        add = y.op
        other = add.rhs if add.lhs is arg else add.lhs
        if isinstance(other.op, ops.DotOp) and lower_dot._is_zero_const(other.op.acc) and _only_user(ctx, other, add):
            dot = other.op
    if dot is None or dot.result.type != t or not _only_user(ctx, arg, add or dot):
        return None
    if not _only_user(ctx, y, op.body.terminator) or list(op.body.terminator.values).count(y) != 1:
        return None
    for i, v in enumerate(op.inits):                 # other carried values: scalars, pointer steps
        if i != slot and not v.type.is_scalar and uniform_ptr_step(op, i) is None:
            return None
    bm, bk = dot.a.type.shape
    from . import dot_share
    u = fuse_factor(bm, dot.b.type.shape[1], bk, float64 if t.element == float64 else float32,
                    dot_share.may_share(ctx, op, dot.a))
    return _Match(slot, dot, add, u)


class _Unread(NamedTuple):
    """An operand read only in place: its load's copy was never emitted."""
    shape: tuple


def _in_place(ctx, o, dot, cdt, vl):
    """``(addr, group)`` when load ``o`` feeds ``dot`` alone and the fused dot will
    read it in place (dot_microkernel ``_reader``: groups of whole vectors), so that
    its per-program copy need not be emitted at all; else None."""
    if not isinstance(o, ops.LoadOp) or o.result not in (dot.a, dot.b) or not _only_user(ctx, o.result, dot):
        return None
    direct = lower_dot._direct_source(ctx, o.result, cdt)
    return direct if direct is not None and direct[1] % vl == 0 else None


def _part(ctx, dot, cdt, direct) -> _Part:
    """The operands of ``dot`` as lowered in the current copy of the body; ``direct``
    maps the loads read only in place to their sources."""
    def operand(v):
        if v.op in direct:
            return _Unread(tuple(v.type.shape)), direct[v.op]
        return lower_dot._converted(ctx, ctx.get(v), cdt), lower_dot._direct_source(ctx, v, cdt)
    (a, a_src), (b, b_src) = operand(dot.a), operand(dot.b)
    return _Part(a, b, a_src, b_src)


def lower_fused_dot_loop(ctx, op) -> bool:
    """Lower scf.for ``op`` as in-place fused dots (the module docstring); False
    (nothing emitted) when the loop is not such a dot loop."""
    m = match(ctx, op)
    if m is None:
        return False
    carried = carried_of(ctx, op)
    lb = ctx.get(op.lb)
    iv = _dot_loop(ctx, op, m, carried, lb, carried.initial_state(), lb)
    if m.factor > 1:                                  # the iterations left over, one at a time (not shared)
        _dot_loop(ctx, op, m._replace(factor=1), carried, iv, list(carried.phis), lb, False)
    for r, rep in zip(op.results, carried.reps()):
        ctx.set(r, rep)
    return True


def _sites(ctx, op, m, cdt, direct):
    """``(A's site, B's site)`` (dot_share.py) of the fused dots of ``m``: for each
    operand read in place (``direct``), when it may be shared; else None."""
    from . import dot_share
    if not dot_share.loop_may_share(ctx, op):
        return None, None
    (bm, bk), bn = m.dot.a.type.shape, m.dot.b.type.shape[1]
    esz = 8 if cdt == float64 else 4
    k = bk * m.factor
    out = []
    for v, n in ((m.dot.a, bm * k), (m.dot.b, k * bn)):
        out.append(dot_share.plan(ctx, op, v.op, n * esz) if v.op in direct else None)
    return tuple(out)


def _dot_loop(ctx, op, m, carried, lb, start, lb0, share=True):
    """The loop running ``m.factor`` iterations of ``op`` per trip while that many are
    left, from induction value ``lb`` and carried ``start``; returns its induction
    phi (the first iteration not run), ``carried.phis`` its exit state.  ``lb0``: the
    loop's first induction value (iterations are numbered from it)."""
    b = ctx.b
    t = op.inits[m.slot].type
    cdt = float64 if t.element == float64 else float32
    ub, step = ctx.get(op.ub), op.step.op.value
    pre, head, body, done, iv = open_loop(b, ctx.em.fn, "dotloop", lb)
    carried.make_phis(pre, start)
    wide = lambda v: b.sext(v, I64) if v.type != I64 else v      # noqa: E731
    last = b.add(wide(iv), ir.Constant(I64, (m.factor - 1) * step))
    b.cbranch(b.icmp_signed("<", last, wide(ub)), body, done)
    b.position_at_end(body)
    state, parts = list(carried.phis), []
    blk, term = op.body, op.body.terminator
    (bm, bk), bn = m.dot.a.type.shape, m.dot.b.type.shape[1]
    vl = choose_shape(bm, bn, bk * m.factor, cdt).vl
    sites = None
    for j in range(m.factor):
        ctx.set(blk.args[0], b.add(iv, ir.Constant(lb.type, j * step)) if j else iv)
        for a, r in zip(blk.args[1:], carried.reps(state)):
            ctx.set(a, r)
        direct = {}
        for o in blk.ops:
            if o is term or o is m.dot or o is m.add:
                continue
            src = _in_place(ctx, o, m.dot, cdt, vl)
            if src is not None:
                direct[o] = src
            else:
                ctx.lower_op(o)
        parts.append(_part(ctx, m.dot, cdt, direct))
        sites = (_sites(ctx, op, m, cdt, direct) if share else (None, None)) if sites is None else \
            tuple(s if v.op in direct else None for s, v in zip(sites, (m.dot.a, m.dot.b)))
        state = carried.yield_values(term.values, state, keep=(m.slot,))
    acc_buf = state[m.slot][0]
    share = None
    if any(sites):
        n = b.sub(wide(iv), wide(lb0))
        share = sites + (b.udiv(n, ir.Constant(I64, step * m.factor)),)     # this loop's trip number
    SegmentedDot(parts, BufTile(t.shape, t.element, acc_buf), t.element, cdt, share).materialize_into(ctx, acc_buf)
    iv.add_incoming(b.add(iv, ir.Constant(lb.type, m.factor * step)), b.block)
    carried.add_latch(state, b.block)
    b.branch(head)
    b.position_at_end(done)
    return iv
