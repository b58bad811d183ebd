"""Software pipelining of global loads in ``scf.for`` loops that feed ``tt.dot``.

A load whose pointer is a loop-carried value ``p`` (no mask), where the next ``p``
is computed by a cheap pure slice of the body (``p + step``), is rotated: the
first tile is loaded before the loop, and each iteration issues the load of the
next tile (predicated on there being a next iteration) *before* its dot, so the
global-memory latency overlaps the tensor-core work.  Results are unchanged: the
same addresses are read, one iteration earlier, and never past the last one.
"""
from __future__ import annotations

from ...ir import ops

_SLICE_OK = (ops.ConstantOp, ops.SplatOp, ops.ArangeOp, ops.ExpandDimsOp, ops.ReshapeOp,
             ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp)


def _slice(value, body_ops: set):
    """Ops of the body needed to compute ``value`` (None if one is not cheap and pure)."""
    out, stack = set(), [value]
    while stack:
        v = stack.pop()
        o = v.op
        if o is None or o not in body_ops or o in out:
            continue
        if o.regions or not (o.has_trait("elementwise") or isinstance(o, _SLICE_OK)):
            return None
        if not o.has_trait("pure") and not isinstance(o, ops.ElementwiseOp):
            return None
        out.add(o)
        stack.extend(o.operands)
    return out


def plan_prefetch(for_op):
    """([(load op, iter position)], early ops) for ``for_op``'s rotatable loads."""
    body = for_op.body
    term = body.terminator
    if term is None:
        return [], set()
    pos = {a: i - 1 for i, a in enumerate(body.args) if i > 0}
    body_ops = set(body.ops)
    loads, early = [], set()
    for o in body.ops:
        if not isinstance(o, ops.LoadOp) or o.mask is not None or o.other is not None:
            continue
        j = pos.get(o.ptr)
        if j is None or o.attrs.get("volatile"):
            continue
        sl = _slice(term.values[j], body_ops)
        if sl is None:
            continue
        loads.append((o, j))
        early |= sl
    return loads, early
