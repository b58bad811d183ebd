"""Loop-carried sum accumulators kept as partial sums (``scf.for`` in lower_cf.py).

Triton's reduction idiom carries a whole block through the loop and reduces it once
after it::

    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(0, n, BLOCK):
        acc += tl.load(...)
    total = tl.sum(acc, axis=0)

Carried as is, ``acc`` is a block-sized buffer that every iteration reads and writes
back (two memory accesses per element loaded) and that is zeroed and reduced once
per program.  When the carried value is used only that way -- in the body only by
one ``arith.add`` whose result is only yielded back into the same slot, and after the
loop only by ``tt.reduce`` sums over its last axis -- it is instead carried as ``w``
partial sums per row of that axis (``w`` lanes hold every ``w``-th element's running
sum: a few vector registers once LLVM promotes the small buffer), and the reduce
folds them as a pairwise tree.  Inductor's form of the body,
``acc = tl.where(mask, acc + x, acc)``, is the same sum of ``where(mask, x, 0)``
(an excluded lane adds zero instead of keeping ``acc``: equal but for the sign of a
zero sum).  Only the order of a sum's additions changes: float
sums are reassociable (as every CPU reduction is, README "Semantics notes"),
integer sums wrap and are exact in any order.
"""
from __future__ import annotations

import math

from ...ir import ops
from ..llvm.reductions import identity
from ..llvm.types import storage_type

_LANE_BYTES = 256           # partial sums per row: 8 AVX2 / 4 AVX-512 registers' worth


class PartialAcc:
    """A carried tile of ``shape`` held as ``w`` partial sums per row of its last axis
    in ``ptr`` (``prod(shape[:-1]) * w`` elements).  Deliberately not a ``Tile``: only
    the ``arith.add`` that accumulates into it and the ``tt.reduce`` that folds it
    may see it (``narrowed_slots`` checks that nothing else uses it)."""

    def __init__(self, shape, dtype, ptr, w):
        self.shape, self.dtype, self.ptr, self.w = tuple(shape), dtype, ptr, w
        self.pending = None        # x of ``acc + x`` awaiting its ``where(mask, acc + x, acc)``

    @property
    def n_out(self) -> int:
        return max(1, math.prod(self.shape[:-1]))

    def accumulate(self, ctx, rep) -> None:
        """Add the tile (or scalar) ``rep`` of this shape into the partial sums."""
        from .lower_reduce import partial_accumulate
        partial_accumulate(ctx, "sum", self.dtype, rep, self.shape, self.ptr, self.w)

    def fold_into(self, ctx, acc) -> None:
        """``acc[o]`` = the sum of row ``o`` (``acc``: ``n_out`` elements)."""
        from .lower_reduce import partial_fold
        partial_fold(ctx, "sum", self.dtype, self.ptr, self.n_out, self.w, acc)


def start_partial(ctx, t, init, init_rep) -> PartialAcc:
    """The partial sums of a narrowed slot of type ``t`` (``w`` from
    ``narrowed_slots``) holding the initial value ``init`` (IR value, lowered as
    ``init_rep``): zero, plus ``init`` unless it is a constant zero."""
    from .lower_reduce import _fill
    w, n_out = lanes_for(t), max(1, math.prod(t.shape[:-1]))
    acc = PartialAcc(t.shape, t.element, ctx.alloca(storage_type(t.element), n_out * w), w)
    _fill(ctx, acc.ptr, acc.n_out * w, identity("sum", t.element), t.element)
    c = init.op
    if not (isinstance(c, ops.ConstantOp) and not isinstance(c.value, (list, tuple)) and c.value == 0):
        acc.accumulate(ctx, init_rep)
    return acc


def lanes_for(t) -> int:
    """Partial sums per row for a carried tile of type ``t`` (0: not narrowable):
    ``_LANE_BYTES`` worth, fewer when the last axis is not a multiple of that."""
    dt = t.element
    if t.is_scalar or not (dt.kind in ("int", "uint") or dt.name in ("fp32", "fp64")) or dt.bits < 8:
        return 0
    n = t.shape[-1]
    w = _LANE_BYTES // (dt.bits // 8)
    while w >= 2:
        if n % w == 0:
            return w
        w //= 2
    return 0


def narrowed_slots(ctx, op) -> set:
    """Indices of the carried values of scf.for ``op`` kept as partial sums (see the
    module docstring for the conditions)."""
    body, term = op.body, op.body.terminator
    if term is None or any(isinstance(o, ops.DotOp) for o in body.ops):
        return set()
    users = ctx.plan.user_ops
    out = set()
    for i, init in enumerate(op.inits):
        t = init.type
        if not lanes_for(t):
            continue
        arg = body.args[1 + i]
        nxt = _next_value(users, arg, t, body)
        if nxt is None or users(nxt) != [term] or list(term.values).count(nxt) != 1 or term.values[i] is not nxt:
            continue
        res = op.results[i]
        after = users(res)
        if after and all(isinstance(u, ops.ReduceOp) and u.kind == "sum" and u.axis == len(t.shape) - 1
                         for u in after):
            out.add(i)
    return out


def _next_value(users, arg, t, body):
    """The value ``arg + x`` or ``where(mask, arg + x, arg)`` when that is all ``arg``
    is used for in ``body``, else None."""
    got = users(arg)
    adds = [u for u in got if _accumulates(u, arg, t, body)]
    if len(adds) != 1:
        return None
    add = adds[0]
    if len(got) == 1:
        return add.result
    sel = [u for u in got if u is not add]
    if len(got) != 2 or users(add.result) != sel or not guarded(sel[0], add, arg, body):
        return None
    return sel[0].result


def guarded(sel, add, arg, body) -> bool:
    """``sel`` is ``where(mask, add, arg)`` in ``body`` (Inductor's masked accumulation)."""
    return (isinstance(sel, ops.SelectOp) and sel.parent is body and sel.true_value is add.result
            and sel.false_value is arg and sel.cond is not arg and sel.cond is not add.result)


def _accumulates(add, arg, t, body) -> bool:
    """``add`` is ``arg + x`` (or ``x + arg``) in ``body`` with ``x`` of ``arg``'s shape."""
    if not isinstance(add, ops.AddOp) or add.parent is not body or add.result.type != t:
        return False
    if [add.lhs, add.rhs].count(arg) != 1:
        return False
    x = add.rhs if add.lhs is arg else add.lhs
    return x.type.is_scalar or tuple(x.type.shape) == tuple(t.shape)
