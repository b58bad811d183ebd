"""Claim checking: compare every value the interpreter computes with every claim
the analysis made about it.

    observer = make_observer(func, grid)          # analyses func for this grid
    interpreter.run(func, grid, args, observer=observer)

The observer is called ``observer(op, program_id, results)`` after every op and
raises :class:`AnalysisClaimError` (op, source line, claim, counter-example) on
the first value that violates a range, contiguity, divisibility or constancy
claim (meanings in ``lattice``).  ``TILEJIT_CHECK_ANALYSIS=1`` turns it on for
every interpreted launch.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..errors import AnalysisClaimError
from ..ir.core import Function
from .lattice import Fact, div_cap, elem_step, is_int_type, is_ptr_type


# ---------------------------------------------------------------- value checks
def _consecutive(a: np.ndarray, b: np.ndarray, step: int) -> np.ndarray:
    """b == a + step exactly (no wraparound)."""
    if a.dtype.itemsize < 8 or a.dtype == np.bool_:
        return (b.astype(np.int64) - a.astype(np.int64)) == step
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    return ((ub - ua) == np.uint64(step)) & (b > a)


def _bits_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        u = np.dtype(f"u{a.dtype.itemsize}")
        return a.view(u) == b.view(u)
    return a == b


def _divisible(x: np.ndarray, v: int, cap: int) -> np.ndarray:
    if v <= 1:
        return np.ones(x.shape, dtype=bool)
    u = x.astype(np.uint64)
    if v >= cap:
        return u == 0
    return (u & np.uint64(v - 1)) == 0


def _first_bad(bad: np.ndarray, positions, d: int):
    """Original index of the first True in ``bad`` (axis d moved last, last axis
    indexing ``positions``)."""
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    j = int(positions[idx[-1]])
    rest = list(idx[:-1])
    rest.insert(d, j)
    return tuple(rest), j


def _check_runs(x, d, m, test, what):
    """Within blocks of ``m`` along ``d``: test(prev, cur) must hold."""
    n = x.shape[-1]
    if m <= 1 or n <= 1:
        return None
    j = np.arange(1, n)
    pos = j[j % m != 0]
    if pos.size == 0:
        return None
    bad = ~test(x[..., pos - 1], x[..., pos])
    if bad.any():
        idx, jj = _first_bad(bad, pos, d)
        prev = list(idx)
        prev[d] = jj - 1
        return f"{what}: element {tuple(prev)} = {_at(x, idx, d, jj - 1)}, element {idx} = {_at(x, idx, d, jj)}"
    return None


def _at(x, idx, d, j):
    rest = list(idx[:d]) + list(idx[d + 1:])
    return x[tuple(rest) + (j,)].item()


def check_value(ty, arr, fact: Fact):
    """(claim, counter-example) for the first violated claim, or None."""
    a = np.asarray(arr)
    if a.shape == () or a.ndim == 0:
        a = a.reshape(1)
    integral, ptr = is_int_type(ty), is_ptr_type(ty)
    if integral and fact.range is not None and a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < fact.range[0] or hi > fact.range[1]:
            bad = lo if lo < fact.range[0] else hi
            where = tuple(int(i) for i in np.argwhere(a == bad)[0])
            return f"range [{fact.range[0]}, {fact.range[1]}]", f"element {where} = {bad}"
    step = elem_step(ty)
    cap = div_cap(ty)
    for d in range(a.ndim):
        c, v, k = fact.axis.dim(d)
        x = np.moveaxis(a, d, -1)
        err = _check_runs(x, d, k, _bits_equal, "not equal")
        if err:
            return f"constancy[{d}] = {k}", err
        if not (integral or ptr):
            continue
        err = _check_runs(x, d, c, lambda p, q: _consecutive(p, q, step), f"not +{step} apart")
        if err:
            return f"contiguity[{d}] = {c}", err
        if v > 1:
            starts = np.arange(0, x.shape[-1], c)
            bad = ~_divisible(x[..., starts], v, cap)
            if bad.any():
                idx, j = _first_bad(bad, starts, d)
                return f"divisibility[{d}] = {v}", f"element {idx} = {_at(x, idx, d, j)}"
    return None


# ---------------------------------------------------------------- observer
class ClaimChecker:
    """Interpreter observer that checks the analysis of ``func`` (for ``grid``)."""

    def __init__(self, func: Function, grid=None, facts=None):
        from . import analyze
        self.func = func
        self.facts = facts if facts is not None else analyze(func, grid)
        self.checked = 0

    def __call__(self, op, program_id, results) -> None:
        for i, (v, arr) in enumerate(zip(op.results, results)):
            bad = check_value(v.type, arr, self.facts.fact(v))
            self.checked += 1
            if bad is not None:
                raise AnalysisClaimError(op, i, bad[0], bad[1], program_id, self.func.name)


_FACTS_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def make_observer(func: Function, grid=None) -> ClaimChecker:
    """The observer the runtime passes to the interpreter under
    ``options.check_analysis`` (TILEJIT_CHECK_ANALYSIS=1).  The analysis of each
    (function, grid) is computed once and reused by later launches."""
    from . import analyze
    key = tuple(grid) if grid is not None else None
    per_func = _FACTS_CACHE.setdefault(func, {})
    facts = per_func.get(key)
    if facts is None:
        facts = per_func[key] = analyze(func, grid)
    return ClaimChecker(func, grid, facts)
