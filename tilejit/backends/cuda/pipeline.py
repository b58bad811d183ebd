"""Software pipelining of global loads in ``scf.for`` loops that feed ``tt.dot``.

A load whose pointer is a loop-carried value ``p`` (no mask), where the next ``p``
is computed by a cheap pure slice of the body (``p + step``), is rotated: the
first tile is loaded before the loop, and each iteration issues the load of the
next tile (predicated on there being a next iteration) *before* its dot, so the
global-memory latency overlaps the tensor-core work.  Results are unchanged: the
same addresses are read, one iteration earlier, and never past the last one.

A load whose pointer tile is *computed* in the body by a cheap pure slice from
loop-carried scalars (block pointers: base + offsets * strides, advanced each
iteration) is rotated too, when the body writes no memory: the slice is evaluated
again with the next iteration's carried values (``plan`` entry ``(load, slice)``).
"""
from __future__ import annotations

from ...ir import ops

_SLICE_OK = (ops.ConstantOp, ops.SplatOp, ops.ArangeOp, ops.ExpandDimsOp, ops.ReshapeOp,
             ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp)


_PTR_OK = _SLICE_OK + (ops.BroadcastOp,)


def _slice(value, body_ops: set, ok=_SLICE_OK):
    """Ops of the body needed to compute ``value`` (None if one is not cheap and pure)."""
    out, stack = set(), [value]
    while stack:
        v = stack.pop()
        o = v.op
        if o is None or o not in body_ops or o in out:
            continue
        if o.regions or not (o.has_trait("elementwise") or isinstance(o, ok)):
            return None
        if not o.has_trait("pure") and not isinstance(o, ops.ElementwiseOp):
            return None
        out.add(o)
        stack.extend(o.operands)
    return out


def _writes(for_op):
    return any(o.has_trait("writes_memory") or o.has_trait("side_effect") for o in for_op.body.walk())


def _computed(for_op, o, body_ops, pos, term, early):
    """(slice, early ops) to recompute ``o``'s pointer for the next iteration, or None."""
    sl = _slice(o.ptr, body_ops, _PTR_OK)
    if not sl:
        return None
    args = {x for op_ in sl for x in op_.operands if x.op is None and x in pos}
    need = set()
    for a in args:
        nxt = _slice(term.values[pos[a]], body_ops)
        if nxt is None or nxt & sl:
            return None
        need |= nxt
    if need & sl or early & sl or any(x is for_op.body.args[0] for op_ in need for x in op_.operands):
        return None
    return frozenset(sl), need


def plan_prefetch(for_op):
    """([(load op, iter position or pointer slice)], early ops) for ``for_op``'s
    rotatable loads."""
    body = for_op.body
    term = body.terminator
    if term is None:
        return [], set()
    pos = {a: i - 1 for i, a in enumerate(body.args) if i > 0}
    body_ops = set(body.ops)
    loads, early = [], set()
    writes = _writes(for_op)
    for o in body.ops:
        if not isinstance(o, ops.LoadOp) or o.mask is not None or o.other is not None:
            continue
        j = pos.get(o.ptr)
        if o.attrs.get("volatile"):
            continue
        if j is None:
            got = None if writes else _computed(for_op, o, body_ops, pos, term, early)
            if got is not None:
                loads.append((o, got[0]))
                early |= got[1]
            continue
        sl = _slice(term.values[j], body_ops)
        if sl is None or any(not isinstance(k, int) and sl & k for _, k in loads):
            continue
        loads.append((o, j))
        early |= sl
    return loads, early
