"""What a backend may assume about a tile of pointers: the API for vectorised
memory access (the CPU backend's ``access_width``).

    plan = access_plan(facts, op.ptr, op.mask, max_lanes=16)
    plan.width   # lanes per group along the last dimension (a power of two)
    plan.align   # bytes: the first address of every group is a multiple of it

Every aligned group of ``width`` lanes along the last dimension (lanes ``[i*width,
(i+1)*width)`` of each row) addresses consecutive elements, and the mask (when given)
has one value over the group: one vector access with one predicate per group is
exact.  ``width == 1`` means per-lane access (gather/scatter).
"""
from __future__ import annotations

from math import gcd
from typing import NamedTuple

from ..ir.core import Value
from .lattice import elem_div, elem_step


class AccessPlan(NamedTuple):
    width: int
    align: int


def _pow2_part(x: int) -> int:
    return x & -x


def access_plan(facts, ptr: Value, mask: Value | None = None, max_lanes: int = 64) -> AccessPlan:
    """The widest safe grouping of ``ptr``'s lanes (see the module docstring)."""
    ty = ptr.type
    step = elem_step(ty)
    info = facts.axis(ptr)
    d = info.rank - 1
    if not ty.shape:
        return AccessPlan(1, elem_div(info, 0, 1, step))
    n = ty.shape[-1]
    g = gcd(info.contiguity[d], n)
    if mask is not None:
        g = gcd(g, facts.axis(mask).constancy[d])
    w = _pow2_part(g)
    while w > max(1, max_lanes):
        w //= 2
    return AccessPlan(w, elem_div(info, d, w, step))
