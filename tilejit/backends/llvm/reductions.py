"""What the cpu and cuda reductions share (``tt.reduce``), for every target."""
from __future__ import annotations

from .capabilities import CPU, Capabilities
from .types import constant


def identity(kind: str, dt, caps: Capabilities = CPU):
    """The LLVM constant a ``kind`` reduction ('sum', 'xor_sum', 'max', 'min', 'argmax',
    'argmin') of ``dt`` values starts from.  A float max/min starts from NaN, which
    maxnum/minnum skip (an all-NaN input stays NaN); argmax/argmin from -inf/+inf."""
    if kind in ("sum", "xor_sum"):
        return constant(dt, 0, caps)
    big = kind in ("min", "argmin")
    if dt.kind == "float" and kind in ("max", "min"):
        return constant(dt, float("nan"), caps)
    if dt.kind == "float":
        return constant(dt, float("inf") if big else float("-inf"), caps)
    if dt.kind == "bool":
        return constant(dt, 1 if big else 0, caps)
    lo, hi = ((0, (1 << dt.bits) - 1) if dt.kind == "uint" else
              (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1))
    return constant(dt, hi if big else lo, caps)
