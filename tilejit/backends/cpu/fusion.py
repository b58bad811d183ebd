"""Which lazy tiles to materialize, decided once per function before lowering.

A tile produced by an elementwise or shape op stays lazy (fused into the loop of
the op that consumes it) unless it has several users and is costly to recompute.
A ``tt.load`` stays lazy only when deferring it cannot change what it reads: it has
one chain of single users in its own block (or several users whose lazy chains all
end in one op), no op that writes memory (or has
regions) lies between it and the op that finally consumes the chain, and if that
op is a store, the store cannot alias the load differently (same pointer tile, or
pointers rooted at different kernel arguments).
"""
from __future__ import annotations

from ...ir import ops
from .tiles import COST_LOAD, MATERIALIZE_COST

_LAZY = (ops.ElementwiseOp, ops.SplatOp, ops.BroadcastOp, ops.ExpandDimsOp, ops.TransOp, ops.HintOp)
_THROUGH = (ops.AddPtrOp, ops.SplatOp, ops.BroadcastOp, ops.ExpandDimsOp, ops.ReshapeOp,
            ops.TransOp, ops.HintOp, ops.CastOp, ops.BitcastOp)


class FusionPlan:
    def __init__(self, func):
        self.func = func
        self.users: dict = {}            # Value -> list of distinct user ops
        self.pos: dict = {}              # op -> index in its block
        self.fn_args = {a.value for a in func.arguments}
        for op in func.walk():
            if op.parent is not None:
                pass
            for v in {id(x): x for x in op.operands}.values():
                self.users.setdefault(v, []).append(op)
        for op in func.walk():
            for region in op.regions:
                for blk in region.blocks:
                    for i, o in enumerate(blk.ops):
                        self.pos[o] = i
        for i, o in enumerate(func.block.ops):
            self.pos[o] = i
        self._load_ok: dict = {}

    def user_ops(self, v) -> list:
        return self.users.get(v, [])

    def must_materialize(self, op, rep) -> bool:
        if isinstance(op, ops.LoadOp):
            ok = self._load_ok.get(op)
            if ok is None:
                ok = self._load_ok[op] = self._load_fusable(op)
            return not ok
        users = self.user_ops(op.result)
        if rep.cost >= MATERIALIZE_COST:
            if len(users) > 1 or any(u.parent is not op.parent for u in users):
                return True
        return rep.cost >= COST_LOAD and len(users) != 1

    def root_arg(self, v):
        """The kernel argument a pointer value is derived from, or None."""
        for _ in range(64):
            if v in self.fn_args:
                return v
            op = v.op
            if op is None or not isinstance(op, _THROUGH):
                return None
            v = op.ptr if isinstance(op, ops.AddPtrOp) else op.src
            if not v.type.element.is_ptr():
                return None
        return None

    def _single_end(self, load):
        """The one non-lazy op that every user chain of ``load`` (lazy ops of its
        block) ends in, or None: e.g. GELU's ``x * 0.5 * (1 + erf(x * c))`` reads
        ``x`` twice and ends in one store.  Elementwise ops only: every user then reads
        the element at the index the end op consumes, before the end op writes it."""
        block, ends, seen, stack = load.parent, set(), set(), [load]
        while stack:
            for u in self.user_ops(stack.pop().result):
                if u.parent is not block or (isinstance(u, _LAZY) and not isinstance(u, ops.ElementwiseOp)):
                    return None
                if not isinstance(u, _LAZY):
                    ends.add(u)
                elif u not in seen:
                    seen.add(u)
                    stack.append(u)
        return ends.pop() if len(ends) == 1 else None

    def _load_fusable(self, load) -> bool:
        block = load.parent
        cur = load
        if len(self.user_ops(load.result)) > 1:
            end = self._single_end(load)
            return end is not None and self._no_write_between(load, end)
        while True:
            users = self.user_ops(cur.result)
            if len(users) != 1:
                end = cur if cur is not load else None
                break
            u = users[0]
            if u.parent is not block:
                return False
            if isinstance(u, _LAZY):
                cur = u
                continue
            end = u
            break
        return end is not None and self._no_write_between(load, end)

    def _no_write_between(self, load, end) -> bool:
        """Deferring ``load`` to ``end`` (in its block) cannot change what it reads."""
        block = load.parent
        start, stop = self.pos[load], self.pos[end]
        for o in block.ops[start + 1:stop]:
            if o.regions or o.has_trait("writes_memory") or o.has_trait("side_effect"):
                return False
        if isinstance(end, ops.StoreOp):
            if end.ptr is load.ptr:
                return True
            ra, rb = self.root_arg(end.ptr), self.root_arg(load.ptr)
            return ra is not None and rb is not None and ra is not rb
        return not end.has_trait("side_effect")
