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

:class:`IterSlice` evaluates such a slice for any iteration with the shape ops sunk
below the elementwise ops (no shared-memory broadcast of an iteration-dependent
value; loop-invariant leaves lowered once, before the loop); :func:`recurrences`
finds the scalar iter args (block-pointer offsets) it may read.  The cp.async ring
(``async_pipeline``) and the register path (``rules_control``) both use them.
"""
from __future__ import annotations

import math

from ...ir import ops
from ...ir.types import TileType
from . import types as T
from .lowering import Tile
from .rules_tiles import _index_map, exchange, rematerialize

_SLICE_OK = (ops.ConstantOp, ops.SplatOp, ops.ArangeOp, ops.ExpandDimsOp, ops.ReshapeOp,
             ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp, ops.AssumeRangeOp)


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


# ---- a body slice evaluated for another iteration ------------------------------------
_SHAPE_OPS = (ops.ExpandDimsOp, ops.BroadcastOp, ops.ReshapeOp, ops.SplatOp)
_HINTS = (ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp, ops.AssumeRangeOp)


def recurrences(body):
    """{block arg: (iter position, update slice)} of the scalar iter args whose next value
    the body computes by a cheap pure slice from the induction variable and such args
    alone: block pointers' offsets (``off + BLOCK``), and the bases and strides they
    carry unchanged.  Their values ``D`` iterations ahead are the slices applied ``D``
    times (exact: the very ops the loop runs)."""
    term = body.terminator
    if term is None:
        return {}
    body_ops, args = set(body.ops), list(body.args)
    cand = {}
    for j, a in enumerate(args[1:]):
        v = term.values[j]
        if a.type.shape:
            continue
        sl = _slice(v, body_ops, _PTR_OK)
        if sl is None:
            continue
        uses = {x for o in sl for x in o.operands if any(x is y for y in args)}
        if any(v is y for y in args):
            uses.add(v)
        cand[a] = (j, sl, uses)
    changed = True
    while changed:
        changed = False
        for a in list(cand):
            if any(u is not args[0] and u not in cand for u in cand[a][2]):
                del cand[a]
                changed = True
    return {a: (j, sl) for a, (j, sl, _) in cand.items()}


class IterSlice:
    """Body values computed by the slice ``sl`` (ops of :func:`_slice` with ``_PTR_OK``)
    from the block args ``args`` (default: the induction variable; also scalar
    :func:`recurrences`) and loop-invariant values, evaluated for any iteration:
    ``at(value, env)``, ``env`` mapping each of ``args`` to its tile there.

    Shape ops are sunk below the elementwise ops (they commute): a value that depends
    on ``iv`` is computed directly in the layout of the shape it is finally used at,
    so no broadcast of an iteration-dependent value goes through shared memory.  The
    leaves (loop-invariant values with the shape ops above them applied) are lowered
    the first time they are needed and reused (call ``at`` before the loop first:
    they must dominate the loop)."""

    def __init__(self, lw, body, sl, args=None, remat_leaves=False, split_offsets=False):
        self.lw, self.body, self.sl = lw, body, frozenset(sl)
        self.args = set(args) if args else {body.args[0]}
        self._leaves, self._variant = {}, {}
        self.remat_leaves = remat_leaves    # leaves recomputed per slot where they can be
        self.split_offsets = split_offsets  # ptr + (u + i): (ptr + i) once, + u per iteration

    def variant(self, v) -> bool:
        """``v`` depends on one of ``args`` (through ops of the slice)."""
        if v in self.args:
            return True
        o = v.op
        if o is None or o not in self.sl:
            return False
        if v not in self._variant:
            self._variant[v] = any(self.variant(x) for x in o.operands)
        return self._variant[v]

    def at(self, value, env, trans: bool = False):
        """``value``'s tile with ``args`` bound to ``env`` (block arg -> scalar tile);
        ``trans``: of the transposed 2-D value (the blocked layout of the reversed shape;
        the invariant leaves are transposed once, the elementwise ops commute)."""
        chain = ()
        if trans:
            tr = self.__dict__.setdefault("_trans", {})
            chain = (tr.setdefault(value, _Trans(value)),)
        return self._ev(value, chain, env, {})

    def _shape(self, v, chain):
        return tuple(chain[-1].result.type.shape) if chain else tuple(v.type.shape)

    def _splat(self, scalar, shape):
        lay = self.lw.layout(shape)
        return Tile([scalar] * (1 if lay is None else lay.nslots), lay)

    def _ev(self, v, chain, env, memo):
        key = (v, chain)
        if key in memo:
            return memo[key]
        o = v.op
        if not self.variant(v):
            t = self._leaf(v, chain)
        elif not v.type.shape:                       # an iteration-dependent scalar
            s = env[v] if v in self.args else self._lower(o, [self._ev(x, (), env, memo) for x in o.operands])
            t = self._splat(s.scalar, self._shape(v, chain)) if chain else s
        elif isinstance(o, _SHAPE_OPS):
            t = self._ev(o.src, (o,) + chain, env, memo)
        elif isinstance(o, _HINTS):
            t = self._ev(o.src, chain, env, memo)
        else:                                         # elementwise: operands in the final layout
            t = self._split_ptr(o, chain, env, memo) if self.split_offsets else None
            if t is None:
                t = self._lower(o, [self._ev(x, chain, env, memo) for x in o.operands])
        memo[key] = t
        return t

    # ``ptr + (u + i) * c`` (tutorial 06's block pointers: ``base + d + (off_n + n) * stride``,
    # ``off_n`` carried) is evaluated as ``(ptr + i * c) + u * c``: the first part, invariant,
    # made once before the loop (a 64-bit pointer per slot, as Triton carries them), the
    # second one scalar per iteration, so each copy's address is one 64-bit add instead of a
    # wide multiply-add.  Integer + and * wrap, so the sum is the same (emitted without
    # no-wrap flags).  ``CudaTuning.ring_split_offsets``.
    def _split_ptr(self, o, chain, env, memo):
        """``o`` (an addptr with a 64-bit offset) as ``(ptr + I) + splat(U)`` when its
        offset splits (:meth:`_split`), else None.  Nothing is cached: ``ptr + I`` is
        recomputed where it is used and LLVM hoists it out of the loop when it is
        invariant (a block pointer's base and strides are carried unchanged: their phis
        fold away)."""
        if (not isinstance(o, ops.AddPtrOp) or not o.result.type.shape
                or o.offset.type.element.bits != 64):      # an i32 offset's sum would wrap first
            return None
        parts = self._split(o.offset, chain, env, memo)
        if parts is None or parts[0] is None or parts[1] is None:
            return None
        u, inv = parts
        at = self._lower(o, [self._ev(o.ptr, chain, env, memo), inv])
        return self._lower(o, [at, self._splat(u, self._shape(o.result, chain))])

    def _split(self, v, chain, env, memo):
        """(U, I): ``v`` (an integer value, ``chain`` applied) = splat(U) + I with U an LLVM
        scalar (None: 0) and I a tile with no iteration-dependent part other than
        uniform factors (None: 0), or None when ``v`` is not built so by splats, +, and *
        by a value equal on every slot."""
        o, b = v.op, self.lw.b
        if not self.variant(v):
            return None, self._leaf(v, chain)
        if not v.type.shape:
            return self._ev(v, (), env, memo).scalar, None
        if isinstance(o, (ops.SplatOp,) + _HINTS):
            return self._split(o.src, chain, env, memo)
        if isinstance(o, _SHAPE_OPS):
            return self._split(o.src, (o,) + chain, env, memo)
        if v.type.element.is_ptr() or v.type.element.kind not in ("int", "uint"):
            return None
        if isinstance(o, ops.AddOp):
            a, c = self._split(o.lhs, chain, env, memo), self._split(o.rhs, chain, env, memo)
            if a is None or c is None:
                return None
            u = a[0] if c[0] is None else c[0] if a[0] is None else b.add(a[0], c[0])
            inv = a[1] if c[1] is None else c[1] if a[1] is None else self._lower(o, [a[1], c[1]])
            return u, inv
        if isinstance(o, ops.MulOp):
            for x, y in ((o.lhs, o.rhs), (o.rhs, o.lhs)):
                k = self._uniform(y, env, memo)
                a = None if k is None else self._split(x, chain, env, memo)
                if a is None:
                    continue
                u = None if a[0] is None else b.mul(a[0], k)
                if a[1] is None:
                    return u, None
                kt = self._splat(k, self._shape(v, chain))
                return u, self._lower(o, [a[1], kt] if x is o.lhs else [kt, a[1]])
        return None

    def _uniform(self, v, env, memo):
        """The LLVM scalar of ``v`` where it is one value on every slot (a splat of a
        scalar or a constant, under shape ops and hints), or None."""
        o = v.op
        while isinstance(o, _SHAPE_OPS[:-1] + _HINTS):
            v = o.src
            o = v.op
        if isinstance(o, ops.SplatOp):
            v = o.src
        elif isinstance(o, ops.ConstantOp) and v.type.shape:
            return T.const(v.type.element, o.value)
        if v.type.shape:
            return None
        return self._ev(v, (), env, memo).scalar if self.variant(v) else self._invariant(v).scalar

    def _lower(self, o, tiles):
        """``o``'s result with its operands bound to ``tiles`` (bindings restored)."""
        lw = self.lw
        keys = list(o.operands) + list(o.results)
        saved = {k: lw.values[k] for k in keys if k in lw.values}
        for x, t in zip(o.operands, tiles):
            lw.values[x] = t
        lw.lower_op(o)
        out = lw.values[o.result]
        for k in keys:
            if k in saved:
                lw.values[k] = saved[k]
            else:
                lw.values.pop(k, None)
        return out

    def _leaf(self, v, chain):
        """A loop-invariant value with the shape ops ``chain`` applied (once)."""
        key = (v, chain)
        if key in self._leaves:
            return self._leaves[key]
        lw, o = self.lw, v.op
        shape = self._shape(v, chain)
        while isinstance(o, _HINTS) and o in self.sl:
            v, o = o.src, o.src.op
        if not v.type.shape:
            t = self._splat(self._invariant(v).scalar, shape)
        elif isinstance(o, ops.ConstantOp) and o in self.sl:
            t = self._splat(T.const(v.type.element, o.value), shape)
        elif isinstance(o, ops.SplatOp) and o in self.sl:
            t = self._splat(self._invariant(o.src).scalar, shape)
        elif self.remat_leaves and (t := self._remat_leaf(v, chain, shape)) is not None:
            pass
        else:   # moved through shared memory: per-slot arange leaves (tutorial 03's K masks,
            # 4 fewer barriers) measured slower on the H200 (0.2188 against 0.2141 ms) and went
            t, cur = self._invariant(v), tuple(v.type.shape)
            for c in chain:
                nxt = tuple(c.result.type.shape)
                if isinstance(c, _Trans):
                    t = _transpose_tile(lw, t, v.type.element, cur)
                else:
                    t = _reshape_tile(lw, t, v.type.element, cur, nxt, isinstance(c, ops.BroadcastOp))
                cur = nxt
        self._leaves[key] = t
        return t

    def _remat_leaf(self, v, chain, shape):
        """The leaf ``v`` with ``chain`` applied, recomputed per slot of the blocked layout
        of ``shape`` from its aranges, splats and constants (rules_tiles.rematerialize; no
        shared-memory exchange, no barrier), or None.  The slice's ops are not lowered yet:
        its tile ops are recomputed, but a scalar it computes cannot be read."""
        dims = tuple(range(len(shape)))
        for c in reversed(chain):
            if isinstance(c, _Trans):
                dims = tuple(reversed(dims))
            else:
                dims = _index_map(c, dims)
                if dims is None:
                    return None
        if any(not x.type.shape and x.op in self.sl for x in _values(v)):
            return None             # a scalar of the slice: not lowered yet
        regs = rematerialize(self.lw, v, at=(shape, dims))
        return None if regs is None else Tile(regs, self.lw.layout(shape))

    def _invariant(self, v):
        """The tile of a loop-invariant value (its slice ops lowered in body order)."""
        lw = self.lw
        if v.op is None or v.op not in self.sl:
            return lw.get(v)
        if v in self._leaves:
            return self._leaves[v]
        need, stack = set(), [v]
        while stack:
            o = stack.pop().op
            if o is not None and o in self.sl and o not in need:
                need.add(o)
                stack.extend(o.operands)
        keys = [r for o in need for r in o.results]
        saved = {k: lw.values[k] for k in keys if k in lw.values}
        for o in self.body.ops:
            if o in need:
                lw.lower_op(o)
        t = lw.get(v)
        for k in keys:
            if k in saved:
                lw.values[k] = saved[k]
            else:
                lw.values.pop(k, None)
        self._leaves[v] = t
        return t


def _values(v):
    """The values ``v`` is computed from (itself included), not looking past scalars."""
    out, stack = set(), [v]
    while stack:
        x = stack.pop()
        if x in out:
            continue
        out.add(x)
        if x.op is not None and x.type.shape:
            stack.extend(y for y in x.op.operands if y is not None)
    return out


def _reshape_tile(lw, t, el, sshape, dshape, broadcast: bool):
    """``t`` (shape ``sshape``, element ``el``) broadcast (or reshaped) to ``dshape``."""
    if sshape == dshape:
        return t
    dl = lw.layout(dshape)
    if t.layout is None or math.prod(sshape) == 1:
        return Tile([t.regs[0]] * dl.nslots, dl)
    sl = t.layout
    if not broadcast and sl.same_slots(dl):
        return Tile(t.regs, dl)                   # same elements in the same slots

    def src_flat(idx):
        if not broadcast:
            return lw.flat_index(dshape, idx)
        return lw.flat_index(sshape, [i if d != 1 else lw.i32(0) for i, d in zip(idx, sshape)])
    return exchange(lw, t, TileType(el, sshape), TileType(el, dshape), src_flat)


class _Trans:
    """The outermost link of an IterSlice chain that transposes a 2-D value."""

    class _Result:
        def __init__(self, ty):
            self.type = ty

    def __init__(self, value):
        self.result = _Trans._Result(value.type.with_shape(tuple(reversed(value.type.shape))))


def _transpose_tile(lw, t, el, shape):
    """The blocked tile ``t`` of a 2-D ``shape`` transposed (through shared memory)."""
    dshape = tuple(reversed(shape))
    if t.layout is None:
        dl = lw.layout(dshape)
        return Tile([t.regs[0]] * dl.nslots, dl)
    return exchange(lw, t, TileType(el, shape), TileType(el, dshape),
                    lambda idx: lw.flat_index(shape, [idx[1], idx[0]]))
