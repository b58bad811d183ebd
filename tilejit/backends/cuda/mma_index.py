"""Index tiles of a row region evaluated at the mma layout's coordinates (mma_rows).

Causal attention's diagonal-band loop masks its scores with
``offs_m[:, None] >= start_n + offs_n[None, :]``: a 2-D integer/boolean value built only
from ``arange``s, splats of scalars and constants by shape ops (expand_dims, broadcast,
hints) and integer elementwise ops.  Lowered tile by tile, its vectors come from outside
the region (blocked layouts, broadcasts through shared memory); here such a value of the
region's (M, N') shape is computed directly in the mma accumulator layout: each of a
thread's slots evaluates the expression at its own (row, column) (``rules_mma._coords``),
so the mask, and the softmax after it, stay in registers (the loop then qualifies for
rows_ring).  Row-only parts are loop-invariant and LLVM hoists them.
"""
from __future__ import annotations

from ...ir import ops
from . import types as T
from .lowering import Tile

_BIN = {ops.AddOp: "add", ops.SubOp: "sub", ops.MulOp: "mul", ops.AndOp: "and_",
        ops.OrOp: "or_", ops.XorOp: "xor"}
_SHAPE = (ops.ExpandDimsOp, ops.BroadcastOp, ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp,
          ops.AssumeRangeOp)
_PRED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _int(value) -> bool:
    el = value.type.element
    return not el.is_ptr() and el.kind in ("int", "uint", "bool")


def is_index(value, memo=None) -> bool:
    """``value`` (an integer or boolean tile) is built from aranges, splats of scalars
    and constants by shape ops and integer add/sub/mul/and/or/xor, compares and casts."""
    memo = {} if memo is None else memo
    if value in memo:
        return memo[value]
    o = value.op
    ok = False
    if o is not None and value.type.shape and _int(value):
        if isinstance(o, (ops.ArangeOp, ops.ConstantOp)):
            ok = True
        elif isinstance(o, ops.SplatOp):
            ok = not o.src.type.shape
        elif isinstance(o, _SHAPE):
            ok = is_index(o.src, memo)
        elif type(o) in _BIN or isinstance(o, ops.CmpOp) or (isinstance(o, ops.CastOp) and _int(o.src)):
            ok = all(_int(x) and is_index(x, memo) for x in o.operands)
    memo[value] = ok
    return ok


def _at(lw, v, idx, memo):
    """LLVM scalar of element ``idx`` (i32 values, one per dim) of the index value ``v``."""
    key = (v, tuple(id(i) for i in idx))
    if key in memo:
        return memo[key][0]
    b, o = lw.b, v.op
    if isinstance(o, ops.ArangeOp):
        r = b.add(idx[0], lw.i32(o.attrs["start"]))
    elif isinstance(o, ops.ConstantOp):
        r = T.const(v.type.element, o.attrs["value"])
    elif isinstance(o, ops.SplatOp):
        r = lw.get(o.src).scalar
    elif isinstance(o, ops.ExpandDimsOp):
        a = o.attrs["axis"]
        r = _at(lw, o.src, idx[:a] + idx[a + 1:], memo)
    elif isinstance(o, ops.BroadcastOp):
        src = tuple(o.src.type.shape)
        r = _at(lw, o.src, [lw.i32(0) if s == 1 else i for s, i in zip(src, idx)], memo)
    elif isinstance(o, _SHAPE):
        r = _at(lw, o.src, idx, memo)
    elif type(o) in _BIN:
        r = getattr(b, _BIN[type(o)])(_at(lw, o.lhs, idx, memo), _at(lw, o.rhs, idx, memo))
    elif isinstance(o, ops.CmpOp):
        cmp = b.icmp_unsigned if T.is_unsigned(o.lhs.type.element) else b.icmp_signed
        r = cmp(_PRED[o.attrs["pred"]], _at(lw, o.lhs, idx, memo), _at(lw, o.rhs, idx, memo))
    else:                                               # an integer cast
        x = _at(lw, o.src, idx, memo)
        to = T.llvm_type(v.type.element)
        w0, w1 = x.type.width, to.width
        r = (x if w0 == w1 else b.trunc(x, to) if w1 < w0
             else b.zext(x, to) if T.is_unsigned(o.src.type.element) else b.sext(x, to))
    memo[key] = (r, idx)            # idx kept alive: the key holds the ids of its values
    return r


def index_tile(lw, value, ml) -> Tile:
    """The index value ``value`` of shape ``ml.shape`` in the mma layout ``ml``."""
    from .rules_mma import _coords
    memo = {}
    return Tile([_at(lw, value, [r, c], memo) for r, c in _coords(lw, ml)], ml)
