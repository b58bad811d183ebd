"""The access plan of a tile load or store: how the backends group its lanes into
vector accesses.  One decision for every backend; what differs between targets is
stated as :class:`AccessLimits` (the cpu backend's in ``backends/cpu/vectorize.py``,
the cuda backend's in ``backends/cuda/rules_memory.py``).

    plan = plan_access(facts, op.ptr, op.mask, limits, max_lanes=None)
    plan.width      # lanes per group along the last dimension (a power of two; 1: per lane)
    plan.align      # bytes: the first address of every group is a multiple of it
    plan.lane_mask  # the mask varies within a group: one masked vector access per group

A plan with ``width >= 2`` and ``lane_mask`` False is :func:`access_plan`'s grouping
(``analysis/vector.py``): every aligned group of ``width`` lanes addresses consecutive
elements and has one mask value, so one vector access behind one predicate is exact.
Under ``limits.aligned`` (PTX ``ld.global.v*``) the width is also halved until every
group's first address is a multiple of the access size.  Where the mask varies within
every group and the target has masked vector accesses (``limits.lane_mask``: LLVM's
``llvm.masked.load``), the grouping of the pointers alone is used with a per-lane mask.
"""
from __future__ import annotations

from typing import NamedTuple

from ..ir.core import Value
from ..ir.types import PointerType
from .lattice import elem_div, elem_step
from .vector import access_plan


class AccessLimits(NamedTuple):
    """What one target's vector accesses can do."""
    max_bytes: int       # the widest access
    aligned: bool        # an access of n bytes needs an n-byte aligned address
    lane_mask: bool      # per-lane masked vector accesses exist
    bools: bool          # bool tiles (one byte per element) are vectorised
    pointers: bool       # tiles of pointers (8 bytes per element) are vectorised


class AccessPlan(NamedTuple):
    width: int
    align: int
    lane_mask: bool


SCALAR = AccessPlan(1, 1, False)


def element_bytes(pointee, limits: AccessLimits) -> int | None:
    """Bytes of one element in memory, or None when ``limits`` keeps its tiles per lane."""
    if isinstance(pointee, PointerType):
        return 8 if limits.pointers else None
    if pointee.kind == "bool":
        return 1 if limits.bools else None
    return pointee.bits // 8 if pointee.bits >= 8 else None


def _aligned_width(facts, ptr: Value, width: int) -> int:
    """The widest ``w <= width`` (halving) whose groups start at multiples of ``w``
    elements' bytes."""
    info, step = facts.axis(ptr), elem_step(ptr.type)
    d = info.rank - 1
    while width > 1 and elem_div(info, d, width, step) % (width * step):
        width //= 2
    return width


def _group(facts, ptr, mask, lanes: int, limits: AccessLimits):
    p = access_plan(facts, ptr, mask, lanes)
    if not limits.aligned or p.width < 2:
        return p
    w = _aligned_width(facts, ptr, p.width)
    return p if w == p.width else access_plan(facts, ptr, mask, w)


def plan_access(facts, ptr: Value, mask: Value | None, limits: AccessLimits,
                max_lanes: int | None = None) -> AccessPlan:
    """The access plan of a tile access through ``ptr`` under ``mask`` (see the module
    docstring); ``max_lanes`` caps the width further (the cuda backend: the elements
    one thread holds in a row of its layout).  :data:`SCALAR` without ``facts``."""
    ty = ptr.type
    if facts is None or not ty.shape:
        return SCALAR
    size = element_bytes(ty.element.element, limits)
    if size is None:
        return SCALAR
    lanes = max(1, limits.max_bytes // size)
    if max_lanes is not None:
        lanes = min(lanes, max_lanes)
    p = _group(facts, ptr, mask, lanes, limits)
    lane_mask = False
    if p.width < 2 and mask is not None and limits.lane_mask:
        p = _group(facts, ptr, None, lanes, limits)
        lane_mask = True
    if p.width < 2:
        return SCALAR
    return AccessPlan(p.width, max(1, min(p.align, p.width * size)), lane_mask)


def access_plans(func, facts, limits: AccessLimits) -> list:
    """The plan of every load and store of ``func``, in order."""
    from ..ir import ops
    return [plan_access(facts, o.ptr, o.mask, limits) for o in func.walk()
            if isinstance(o, (ops.LoadOp, ops.StoreOp))]


def bounded_facts(func, limits: AccessLimits, grid_bound):
    """``(facts, grid_bound)``: the analysis under ``grid_bound`` programs per axis when
    that changes an access plan under ``limits`` (the kernel then checks every launch's
    grid and runs a variant compiled without the bound beyond it), else the analysis
    without a bound and None.  The cpu and cuda backends' bounded compiles."""
    from . import analyze
    free = analyze(func)
    tight = analyze(func, grid_bound=grid_bound)
    if access_plans(func, tight, limits) == access_plans(func, free, limits):
        return free, None
    return tight, grid_bound


__all__ = ["AccessLimits", "AccessPlan", "SCALAR", "access_plans", "bounded_facts", "element_bytes",
           "plan_access"]
