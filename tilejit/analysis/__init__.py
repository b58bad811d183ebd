"""Sound value-range and axis-info analysis of the tile IR.

    facts = analyze(func, grid=None)
    facts.range(v)  -> (lo, hi) | None        signed bounds over all elements
    facts.axis(v)   -> AxisInfo(contiguity, divisibility, constancy)

Every claim holds for every program of every launch with ``grid`` (any grid when
None); ``tilejit.analysis.checker`` verifies them against the interpreter.  The
meaning of each fact is documented in ``lattice``; the solver in ``solver``; the
transfer rules in ``ranges`` (``RANGE_RULES``), ``axisinfo`` and ``axisinfo_tile``
(``AXIS_RULES``).
"""
from __future__ import annotations

from math import gcd

from ..errors import AnalysisError
from ..ir.core import Argument, Function, Value
from ..ir.types import TileType
from . import axisinfo_tile  # noqa: F401  (registers the tile rules)
from .axisinfo import AXIS_RULES
from .lattice import (AxisInfo, Fact, elem_div, join, normalize, shape_of, top, type_range,
                      widen)
from .ranges import RANGE_RULES
from .solver import Solver

__all__ = ["analyze", "AnalysisError", "Facts", "AxisInfo", "Fact", "RANGE_RULES", "AXIS_RULES"]


class Facts:
    """The analysis result: one :class:`Fact` per value of the function."""

    def __init__(self, func: Function, grid, state: dict):
        self.func = func
        self.grid = grid
        self.grid_bound = None           # set by analyze() when a bound was assumed
        self._state = state

    def fact(self, v: Value) -> Fact:
        f = self._state.get(v)
        return f if f is not None else top(v.type)

    def range(self, v: Value):
        """Signed bounds ``(lo, hi)`` of every element, or None (floats, pointers)."""
        return self.fact(v).range

    def axis(self, v: Value) -> AxisInfo:
        return self.fact(v).axis

    def __contains__(self, v: Value) -> bool:
        return v in self._state


class _Lattice:
    """The (range, axis info) lattice as the solver sees it."""

    top = staticmethod(top)
    join = staticmethod(join)
    widen = staticmethod(widen)

    @staticmethod
    def entry(arg: Argument) -> Fact:
        ty = arg.value.type
        r = len(shape_of(ty))
        rng = (1, 1) if arg.equal_to_1 and type_range(ty) else type_range(ty)
        info = AxisInfo((1,) * r, (max(1, int(arg.divisibility)),) * r, (1,) * r)
        return normalize(ty, rng, info)

    @staticmethod
    def decide(f: Fact):
        if f.range == (1, 1):
            return True
        if f.range == (0, 0):
            return False
        return None

    @staticmethod
    def induction(op, lb: Fact, ub: Fact, step: Fact) -> Fact:
        ty = op.induction_var.type
        v = gcd(elem_div(lb.axis, 0, 1), elem_div(step.axis, 0, 1))
        info = AxisInfo((1,), (v,), (1,))
        if None in (lb.range, ub.range, step.range):
            return normalize(ty, None, info)
        if step.range[0] > 0:
            rng = (lb.range[0], max(lb.range[0], ub.range[1] - 1))
        elif step.range[1] < 0:
            rng = (min(lb.range[1], ub.range[0] + 1), lb.range[1])
        else:
            rng = (min(lb.range[0], ub.range[0] + 1), max(lb.range[1], ub.range[1] - 1))
        return normalize(ty, rng, info)


class _Context:
    """What transfer rules see: operand facts, the grid, use lists."""

    def __init__(self, solver: Solver, func: Function, grid, grid_bound=None):
        self.solver = solver
        self.func = func
        self.grid = grid
        self.grid_bound = grid_bound
        self._uses = None

    def fact(self, v: Value) -> Fact:
        return self.solver.get(v)

    def range(self, v: Value):
        return self.solver.get(v).range

    def axis(self, v: Value) -> AxisInfo:
        return self.solver.get(v).axis

    def uses(self, v: Value) -> list:
        if self._uses is None:
            self._uses = {}
            for op in self.func.walk():
                for x in op.operands:
                    self._uses.setdefault(x, []).append(op)
        return self._uses.get(v, [])


def _transfer(ctx: _Context):
    def transfer(op, solver):
        exact = RANGE_RULES.lookup(type(op))(op, ctx)
        axes = AXIS_RULES.lookup(type(op))(op, ctx, exact)
        return [normalize(r.type, e, a) for r, e, a in zip(op.results, exact, axes)]
    return transfer


def analyze(func: Function, grid=None, grid_bound=None) -> Facts:
    """Ranges and axis info of every value of ``func``; ``grid`` (up to 3 ints)
    is the launch grid when given.  ``grid_bound`` (up to 3 ints, missing axes 1)
    is used when ``grid`` is None: the claims then hold for every launch whose grid
    is at most ``grid_bound`` on each axis (a backend checks that at launch).  A rule
    that fails raises :class:`AnalysisError` naming the kernel."""
    if grid_bound is not None:
        grid_bound = tuple(int(x) for x in grid_bound) + (1,) * (3 - len(tuple(grid_bound)))
    solver = Solver(_Lattice, None)
    ctx = _Context(solver, func, grid, grid_bound)
    solver.transfer = _transfer(ctx)
    try:
        facts = Facts(func, grid, solver.run(func))
    except Exception as e:          # a rule's bug: a compile error naming the kernel
        raise AnalysisError(func, e) from e
    facts.grid_bound = grid_bound if grid is None else None
    return facts


def facts_of_type(ty: TileType, rng, info: AxisInfo) -> Fact:
    """Build a normalized fact by hand (tests, other analyses)."""
    return normalize(ty, rng, info)
