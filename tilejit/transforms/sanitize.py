"""Sanitize mode (``TILEJIT_SANITIZE=1`` / ``kernel[grid](..., sanitize=True)``):
int32 overflow checks on offset arithmetic that feeds an address.

``instrument_offsets(func)`` finds every signed int32 ``arith.add`` / ``arith.sub`` /
``arith.mul`` whose result flows (through elementwise ops, shape ops, casts and
loop-carried values) into a ``tt.addptr`` and inserts after it, with the op's
source location, an exact int64 recomputation and a ``tt.assert`` that the int32
result equals it.  The checks are ordinary IR ops, so every backend runs them; a
failing check stops the program before any later access.  Backends turn the
failure of such an assert into :class:`tilejit.OffsetOverflowError` through
:func:`overflow_error` (its message starts with :data:`MARKER`).

The pass runs last in the pipeline and only when ``options.sanitize`` is set:
with the option off the IR, and so the generated code, is unchanged.
Masked-off lanes are checked too (an overflow in a lane whose access is masked
off is reported), a deliberate simplification: such offsets are bugs waiting to
happen when the mask changes.
"""
from __future__ import annotations

from ..ir import ops
from ..ir.builder import Builder
from ..ir.core import Block, Function, Op
from ..ir.types import int32, int64

MARKER = "int32 offset overflow"
_CHECKED = {ops.AddOp: "+", ops.SubOp: "-", ops.MulOp: "*"}
_STOP = (ops.LoadOp, ops.CmpOp, ops.DotOp, ops.ProgramIdOp, ops.NumProgramsOp, ops.ConstantOp)


def _region_yields(region):
    blk = region.blocks[0] if region.blocks else None
    term = blk.ops[-1] if blk is not None and blk.ops else None
    return term


def _loop_sources(func: Function) -> dict:
    """id(value) -> values it may take from (loop-carried / region results)."""
    src: dict = {}

    def add(v, *froms):
        src.setdefault(id(v), []).extend(f for f in froms if f is not None)

    for op in func.walk():
        if isinstance(op, ops.ForOp):
            y = _region_yields(op.regions[0])
            yv = list(y.values) if isinstance(y, ops.YieldOp) else []
            for i, init in enumerate(op.inits):
                later = yv[i] if i < len(yv) else None
                add(op.body.args[1 + i], init, later)
                add(op.results[i], init, later)
        elif isinstance(op, ops.IfOp):
            for region in op.regions:
                y = _region_yields(region)
                if isinstance(y, ops.YieldOp):
                    for r, v in zip(op.results, y.values):
                        add(r, v)
        elif isinstance(op, ops.WhileOp):
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            cond, y = _region_yields(op.regions[0]), _region_yields(op.regions[1])
            yv = list(y.values) if isinstance(y, ops.YieldOp) else []
            cv = list(cond.values) if isinstance(cond, ops.ConditionOp) else []
            for i, init in enumerate(op.inits):
                add(before.args[i], init, yv[i] if i < len(yv) else None)
            for i, v in enumerate(cv):
                if i < len(after.args):
                    add(after.args[i], v)
                if i < len(op.results):
                    add(op.results[i], v)
    return src


def address_slice(func: Function) -> set:
    """ids of every value whose computation feeds a ``tt.addptr``."""
    sources = _loop_sources(func)
    work = [v for op in func.walk() if isinstance(op, ops.AddPtrOp) for v in (op.ptr, op.offset)]
    seen: set = set()
    while work:
        v = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        work.extend(sources.get(id(v), ()))
        op = v.op
        if op is None or isinstance(op, _STOP) or op.regions:
            continue
        if isinstance(op, ops.SelectOp):
            work.extend((op.true_value, op.false_value))
        elif not op.has_trait("side_effect"):
            work.extend(op.operands)
    return seen


def _check_after(op: Op, sym: str) -> list[Op]:
    """The ops that recompute ``op`` exactly in int64 and assert it did not wrap."""
    b = Builder()
    b.block = None
    loc = op.loc
    wide = op.result.type.with_element(int64)
    lhs = b.value(ops.CastOp, src=op.lhs, to=int64, loc=loc)
    rhs = b.value(ops.CastOp, src=op.rhs, to=int64, loc=loc)
    exact = b.value(type(op), lhs=lhs, rhs=rhs, loc=loc)
    got = b.value(ops.CastOp, src=op.result, to=int64, loc=loc)
    ok = b.value(ops.CmpOp, lhs=exact, rhs=got, pred="eq", loc=loc)
    msg = (f"{MARKER}: '{sym}' wrapped past 2**31 in arithmetic that feeds an address "
           "(compute the offset in int64, e.g. x.to(tl.int64))")
    chk = b.create(ops.DeviceAssertOp, cond=ok, msg=msg, loc=loc)
    made = [lhs.op, rhs.op, exact.op, got.op, ok.op, chk]
    assert wide == exact.type
    return made


def instrument_offsets(func: Function) -> Function:
    """Insert int32 overflow checks on offset arithmetic (in place); returns ``func``."""
    feeds = address_slice(func)
    targets = [op for op in func.walk()
               if type(op) in _CHECKED and op.result.type.element == int32
               and id(op.result) in feeds]
    for op in targets:
        block: Block = op.parent
        at = next(i for i, o in enumerate(block.ops) if o is op) + 1
        new = _check_after(op, _CHECKED[type(op)])
        for o in new:
            o.parent = block
        block.ops[at:at] = new
    return func


def overflow_error(op, *, kernel, loc, program_id, detail=""):
    """The :class:`OffsetOverflowError` for a failed sanitizer assert ``op``, or None
    when ``op`` is an ordinary ``tl.device_assert``."""
    msg = getattr(op, "msg", "") or ""
    if not msg.startswith(MARKER):
        return None
    from ..errors import OffsetOverflowError
    return OffsetOverflowError(msg + detail, kernel=kernel, loc=loc, program_id=program_id)
