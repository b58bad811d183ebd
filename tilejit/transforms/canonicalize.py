"""Canonicalization: algebraic identities and shape-op simplifications.

Every rule here is exact for every input (integer identities only where they hold
under wrap-around; float identities only where IEEE arithmetic makes them exact, e.g.
``x * 1.0``; never ``x + 0.0``, which turns -0.0 into +0.0).  The pass also runs the
constant-folding rules, like MLIR's canonicalizer.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.core import Function, Op, RuleTable
from .fold import fold_rule
from .rewrite import (NOT_CONST, Rewriter, apply_rules, constant_of, has_side_effects,
                      int_constant_of, is_int_type)

CANON_RULES = RuleTable("canonicalize")


def _is_int(v, k) -> bool:
    """``v`` is a uniform integer constant equal to ``k`` (``-1`` means all ones)."""
    c = int_constant_of(v)
    if c is None:
        return False
    if k == -1 and v.type.element.kind in ("uint", "bool"):
        return c == (1 << v.type.element.bits) - 1
    return c == k


def _zero(rw: Rewriter, like) -> list:
    t = like.type
    return [rw.constant(False if t.element.kind == "bool" else 0, t)]


def _pair(op):
    return op.lhs, op.rhs


@CANON_RULES.register(ops.AddOp)
def _add(op, rw):
    a, b = _pair(op)
    if is_int_type(a.type):
        if _is_int(b, 0):
            return [a]
        if _is_int(a, 0):
            return [b]
    return None


@CANON_RULES.register(ops.SubOp)
def _sub(op, rw):
    a, b = _pair(op)
    if is_int_type(a.type):
        if _is_int(b, 0):
            return [a]
        if a is b:
            return _zero(rw, a)
    return None


def _float_one(v) -> bool:
    c = constant_of(v)
    return c is not NOT_CONST and isinstance(c, (int, float)) and not isinstance(c, bool) \
        and c == 1 and v.type.element.name in ("fp16", "bf16", "fp32", "fp64")


@CANON_RULES.register(ops.MulOp)
def _mul(op, rw):
    a, b = _pair(op)
    if is_int_type(a.type):
        for x, y in ((a, b), (b, a)):
            if _is_int(y, 1):
                return [x]
            if _is_int(y, 0):
                return _zero(rw, x)
    else:
        for x, y in ((a, b), (b, a)):
            if _float_one(y):
                return [x]
    return None


@CANON_RULES.register(ops.IDivOp)
def _idiv(op, rw):
    return [op.lhs] if _is_int(op.rhs, 1) else None


@CANON_RULES.register(ops.RemOp)
def _rem(op, rw):
    if is_int_type(op.lhs.type) and _is_int(op.rhs, 1):
        return _zero(rw, op.lhs)
    return None


@CANON_RULES.register(ops.AndOp)
def _and(op, rw):
    a, b = _pair(op)
    if a is b:
        return [a]
    for x, y in ((a, b), (b, a)):
        if _is_int(y, 0):
            return _zero(rw, x)
        if _is_int(y, -1):
            return [x]
    return None


@CANON_RULES.register(ops.OrOp)
def _or(op, rw):
    a, b = _pair(op)
    if a is b:
        return [a]
    for x, y in ((a, b), (b, a)):
        if _is_int(y, 0):
            return [x]
        if _is_int(y, -1):
            return [y] if y.type == op.result.type else None
    return None


@CANON_RULES.register(ops.XorOp)
def _xor(op, rw):
    a, b = _pair(op)
    if a is b:
        return _zero(rw, a)
    for x, y in ((a, b), (b, a)):
        if _is_int(y, 0):
            return [x]
    return None


@CANON_RULES.register(ops.ShlOp, ops.ShrOp)
def _shift(op, rw):
    return [op.lhs] if _is_int(op.rhs, 0) else None


@CANON_RULES.register(ops.MinOp, ops.MaxOp)
def _minmax(op, rw):
    return [op.lhs] if op.lhs is op.rhs else None


@CANON_RULES.register(ops.CmpOp)
def _cmp(op, rw):
    if op.lhs is op.rhs and is_int_type(op.lhs.type):
        return [rw.constant(op.pred in ("eq", "le", "ge"), op.result.type)]
    return None


@CANON_RULES.register(ops.NegOp, ops.InvertOp)
def _involution(op, rw):
    inner = op.src.op
    if type(inner) is type(op):
        return [inner.src]
    return None


@CANON_RULES.register(ops.SelectOp)
def _select(op, rw):
    if op.true_value is op.false_value:
        return [op.true_value]
    c = int_constant_of(op.cond)
    if c is not None:
        return [op.true_value if c else op.false_value]
    return None


@CANON_RULES.register(ops.CastOp, ops.BitcastOp)
def _cast(op, rw):
    return [op.src] if op.src.type == op.result.type else None


@CANON_RULES.register(ops.AddPtrOp)
def _addptr(op, rw):
    return [op.ptr] if _is_int(op.offset, 0) else None


# ---- shape ops -------------------------------------------------------------------
def _splat_source(v):
    """The scalar behind ``v`` when ``v`` is a splat, else None."""
    op = v.op
    return op.src if isinstance(op, ops.SplatOp) else None


def _resplat(op, rw):
    """Any shape op applied to a splat is a splat of the result's shape."""
    s = _splat_source(op.src)
    if s is None:
        return None
    return [rw.value(ops.SplatOp, src=s, shape=tuple(op.result.type.shape))]


@CANON_RULES.register(ops.BroadcastOp)
def _broadcast(op, rw):
    if op.src.type == op.result.type:
        return [op.src]
    inner = op.src.op
    if isinstance(inner, ops.BroadcastOp):
        return [rw.value(ops.BroadcastOp, src=inner.src, shape=op.shape)]
    return _resplat(op, rw)


@CANON_RULES.register(ops.ReshapeOp)
def _reshape(op, rw):
    if op.src.type == op.result.type:
        return [op.src]
    inner = op.src.op
    if isinstance(inner, ops.ReshapeOp):
        if inner.src.type == op.result.type:
            return [inner.src]
        return [rw.value(ops.ReshapeOp, src=inner.src, shape=op.shape)]
    return _resplat(op, rw)


@CANON_RULES.register(ops.ExpandDimsOp)
def _expand_dims(op, rw):
    return _resplat(op, rw)


@CANON_RULES.register(ops.TransOp)
def _trans(op, rw):
    perm = tuple(op.perm)
    if perm == tuple(range(len(perm))):
        return [op.src]
    inner = op.src.op
    if isinstance(inner, ops.TransOp):
        composed = tuple(inner.perm[p] for p in perm)
        if composed == tuple(range(len(composed))):
            return [inner.src]
        return [rw.value(ops.TransOp, src=inner.src, perm=composed)]
    return _resplat(op, rw)


# ---- control flow ------------------------------------------------------------------
@CANON_RULES.register(ops.IfOp)
def _if(op, rw):
    """``scf.if`` on a constant condition: the chosen branch's ops move in front of it."""
    c = int_constant_of(op.cond)
    if c is None:
        return _if_same_results(op)
    region = op.regions[0] if c else op.regions[1]
    if not region.blocks:
        return [] if not op.results else None
    block = region.blocks[0]
    yld = block.ops[-1] if block.ops else None
    if not isinstance(yld, ops.YieldOp):
        return None
    rw.pending.extend(block.ops[:-1])
    return list(yld.values)


def _if_same_results(op):
    """Both branches yield the same outer values and do nothing else observable: the
    ``scf.if`` is those values."""
    if not op.results or any(len(r.blocks) != 1 for r in op.regions) or has_side_effects(op):
        return None
    yields = [r.blocks[0].ops[-1] if r.blocks[0].ops else None for r in op.regions]
    if not all(isinstance(y, ops.YieldOp) for y in yields):
        return None
    then, other = (list(y.values) for y in yields)
    if len(then) != len(op.results) or any(a is not b for a, b in zip(then, other)):
        return None
    inside = {id(v) for o in op.walk() for v in o.results}
    inside |= {id(a) for r in op.regions for blk in r.blocks for a in blk.args}
    return None if any(id(v) in inside for v in then) else then


def trip_count_is_zero(lb: int, ub: int, step: int) -> bool:
    return (step > 0 and lb >= ub) or (step < 0 and lb <= ub)


@CANON_RULES.register(ops.ForOp)
def _for(op, rw):
    """A loop that runs zero times yields its initial values."""
    lb, ub, step = (int_constant_of(v) for v in (op.lb, op.ub, op.step))
    if lb is None or ub is None or step is None or not trip_count_is_zero(lb, ub, step):
        return None
    return list(op.inits)


# ---- driver ------------------------------------------------------------------------
def canonical_rule(op: Op, rw: Rewriter):
    try:
        rule = CANON_RULES.lookup(type(op))
    except NotImplementedError:
        rule = None
    if rule is not None:
        out = rule(op, rw)
        if out is not None:
            return out
    return fold_rule(op, rw)


def canonicalize(func: Function) -> Function:
    """Pass: apply the canonicalization and folding rules to a fixed point."""
    apply_rules(func, canonical_rule)
    return func
