"""Where an access's pointer comes from, for out-of-bounds reports.

The interpreter and sanitize mode check every access against the arrays the launch
passed.  A kernel that reads addresses from memory -- a table of pointers (Triton's
grouped GEMM), or integers cast to pointers -- reaches arrays the launch never saw, so
those accesses are reported as out of bounds even when they are fine.  The report says
so when the pointer's definition chain holds such a value."""
from __future__ import annotations

from ..ir import ops
from ..ir.core import Block
from ..ir.types import PointerType

HINT = ("; this pointer is made from an address the kernel read from memory or cast from "
        "an integer (a pointer table?): the interpreter and sanitize mode can check only "
        "the arrays passed to the launch, so arrays reached this way cannot be checked -- "
        "if the access is meant, run the kernel compiled without sanitize (TILEJIT_BACKEND=cpu "
        "or cuda)")


def _is_pointer(value) -> bool:
    return isinstance(value.type.element, PointerType)


def _sources(value):
    """The values ``value`` is computed from (loop and branch values followed)."""
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent.parent if owner.parent is not None else None
        if isinstance(parent, ops.ForOp) and value.index > 0:
            j = value.index - 1
            return [parent.inits[j], parent.body.terminator.values[j]]
        if isinstance(parent, ops.WhileOp):
            return list(parent.operands)
        return []
    if isinstance(owner, (ops.ForOp, ops.IfOp, ops.WhileOp)):
        out = [r.block.terminator.values[value.index] for r in owner.regions
               if r.block.terminator is not None and value.index < len(r.block.terminator.values)]
        if isinstance(owner, ops.ForOp):
            out.append(owner.inits[value.index])
        return out
    return list(owner.operands) if owner is not None else []


def from_memory(value, limit: int = 512) -> bool:
    """``value`` (a pointer) is derived from a pointer loaded from memory or from an
    integer cast to a pointer."""
    stack, seen = [value], set()
    while stack and len(seen) < limit:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        op = v.op
        if isinstance(op, ops.LoadOp) and _is_pointer(v):
            return True
        if isinstance(op, (ops.CastOp, ops.BitcastOp)) and _is_pointer(v) and not _is_pointer(op.src):
            return True
        stack.extend(s for s in _sources(v) if _is_pointer(s))
    return False


def hint(op) -> str:
    """The report's extra sentence for access ``op`` (empty when it does not apply)."""
    try:
        return HINT if from_memory(op.ptr) else ""
    except Exception:          # a report must never fail on its hint
        return ""
