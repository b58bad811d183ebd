"""Loads of an ``scf.if`` branch issued before the branch: read-modify-write under a lock.

Tutorial 05's layer-norm backward holds a spin lock while it does::

    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
    tl.store(DW, partial_dw, mask=mask)

so the critical section -- which 43 programs per lock run one after another -- waits
for two global round trips in a row: ``Count``, then ``DW``.  The load of ``DW`` does
not depend on ``count``; it only sits in the branch.  :func:`hoist_branch_loads` moves
such a load out of its branch and up to just after the last op before the ``scf.if``
that writes memory or has side effects (here: the lock's ``scf.while``), so both loads
are in flight together.

A load moves only when

* it comes before any op of its branch that writes memory, has side effects or regions;
* its pointer, mask and ``other`` are defined outside the ``scf.if`` or by pure ops of
  its branch (which move with it) from such values;
* after the ``scf.if``, in the same block, a ``tt.store`` through the same pointer with
  the same mask (the same values, or the same pure ops of the same values) follows with only region-free ops without side effects or
  memory writes other than stores in between: every path writes (so may read) the
  addresses the load reads -- reading them early cannot fault where the program would
  not have;

and it moves across plain loads and pure ops only, never across a store, an atomic, a
barrier or a loop, so a program without data races reads the same values.  A branch not
taken reads memory it did not before (the addresses it then writes).
"""
from __future__ import annotations

from ...ir import ops

_STAY = (ops.LoadOp, ops.IDivOp, ops.RemOp)     # never run where the program did not run them


def _effects(op) -> bool:
    return any(o.has_trait("writes_memory") or o.has_trait("side_effect") for o in op.walk())


def _inside(value, if_op) -> bool:
    """``value`` is defined inside ``if_op``'s regions."""
    owner = value.owner
    blk = owner.parent if isinstance(owner, ops.Op) else owner
    while blk is not None:
        region = blk.parent
        parent_op = region.parent if region is not None else None
        if parent_op is if_op:
            return True
        blk = parent_op.parent if parent_op is not None else None
    return False


def _same(a, b, depth=8) -> bool:
    """``a`` and ``b`` hold the same value: one value, or the same pure op (class,
    attributes) of operands that hold the same values."""
    if a is b:
        return True
    if a is None or b is None or depth == 0:
        return False
    oa, ob = a.op, b.op
    if oa is None or ob is None or type(oa) is not type(ob) or oa.regions or not oa.has_trait("pure") \
            or a.index != b.index or oa.attrs != ob.attrs or a.type != b.type:
        return False
    xa, xb = oa.operands, ob.operands
    return len(xa) == len(xb) and all(_same(x, y, depth - 1) for x, y in zip(xa, xb))


def _stored_after(block, i, load) -> bool:
    """A ``tt.store`` through ``load``'s pointer and mask follows ``block.ops[i]`` on every path."""
    for o in block.ops[i + 1:]:
        if isinstance(o, ops.StoreOp) and _same(o.ptr, load.ptr) and _same(o.mask, load.mask):
            return True
        if o.regions or o.has_trait("side_effect") or o.has_trait("terminator") \
                or (o.has_trait("writes_memory") and not isinstance(o, ops.StoreOp)):
            return False
    return False


def _movable(if_op, block, i):
    """[(load, the pure ops of its branch it needs, in order)] that may move."""
    out = []
    for region in if_op.regions:
        pure = []                               # the branch's pure ops so far
        for o in region.block.ops:
            if o.regions or _effects(o):
                break
            if isinstance(o, ops.LoadOp) and _stored_after(block, i, o):
                need = _needed(o, pure, if_op)
                if need is not None:
                    out.append((o, need))
                    pure = [p for p in pure if p not in need]
            elif o.has_trait("pure") and not isinstance(o, _STAY):
                pure.append(o)
    return out


def _needed(load, pure, if_op):
    """The ops of ``pure`` that ``load``'s operands are made by (None if an operand
    comes from elsewhere inside ``if_op``)."""
    need, stack = set(), list(load.operands)
    while stack:
        v = stack.pop()
        if not _inside(v, if_op):
            continue
        if v.op not in pure:
            return None
        if v.op not in need:
            need.add(v.op)
            stack.extend(v.op.operands)
    return [p for p in pure if p in need]


def _insert_at(block, i, load, need) -> int:
    """Earliest index before ``i``: after the last op with effects and after the
    definitions of the operands of ``load`` and of the ops it needs."""
    used = {v for o in need + [load] for v in o.operands}
    at = 0
    for j in range(i):
        o = block.ops[j]
        if o.regions or _effects(o) or any(r in used for r in o.results):
            at = j + 1
    return at


def hoist_branch_loads(func) -> int:
    """Move the qualifying loads of every ``scf.if`` (see the module docstring); returns
    how many moved.  The lowering calls it when ``CudaTuning.hoist_branch_loads`` is on."""
    moved = 0
    blocks = [func.block] + [b for o in func.walk() for r in o.regions for b in r.blocks]
    for block in blocks:
        i = 0
        while i < len(block.ops):
            if_op = block.ops[i]
            if isinstance(if_op, ops.IfOp):
                prev = -1
                for load, need in _movable(if_op, block, i):
                    at = max(_insert_at(block, i, load, need), prev + 1)   # in their order
                    for o in need + [load]:
                        o.parent.ops.remove(o)
                        block.ops.insert(at, o)
                        o.parent = block
                        at += 1
                        i += 1
                    prev = at - 1
                    moved += 1
            i += 1
    return moved
