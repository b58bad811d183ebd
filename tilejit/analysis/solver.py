"""A sparse forward dataflow solver over the structured tile IR.

The solver is generic in its lattice: it keeps one lattice element per SSA value,
asks a *transfer* function for the results of every ordinary op, and runs
structured control flow to a fixed point:

* ``scf.for``: the induction variable's element comes from ``lattice.induction``;
  loop-carried values start at the inits and are joined with the yielded values
  until nothing changes (after ``WIDEN_AFTER`` rounds the join becomes a widening
  so the iteration terminates).  The results are the loop-carried elements.
* ``scf.if``: both regions are analysed; the results join the yields of the
  regions that can run (``lattice.decide(cond)`` may rule one out).
* ``scf.while``: the ``before`` arguments join the inits and the ``after`` yields;
  the ``after`` arguments and the results are the ``scf.condition`` values.

A lattice provides ``entry(argument)``, ``join(type, a, b)``, ``widen(type, old,
new)``, ``top(type)``, ``decide(element) -> bool | None`` and ``induction(op, lb,
ub, step)``.  ``None`` is bottom (not reached).
"""
from __future__ import annotations

from typing import Callable

from ..ir import ops
from ..ir.core import Block, Function, Op, Value

WIDEN_AFTER = 3
MAX_ROUNDS = 40


class Solver:
    """Runs ``transfer(op, solver) -> [element per result]`` over a function."""

    def __init__(self, lattice, transfer: Callable):
        self.lattice = lattice
        self.transfer = transfer
        self.state: dict[Value, object] = {}

    # ------------------------------------------------------------ state
    def get(self, v: Value):
        f = self.state.get(v)
        return self.lattice.top(v.type) if f is None else f

    def set(self, v: Value, f) -> None:
        self.state[v] = f

    # ------------------------------------------------------------ driver
    def run(self, func: Function) -> dict:
        for arg in func.arguments:
            self.set(arg.value, self.lattice.entry(arg))
        for a in func.block.args:
            if a not in self.state:
                self.set(a, self.lattice.top(a.type))
        self.visit_block(func.block)
        return self.state

    def visit_block(self, block: Block) -> Op | None:
        for op in block.ops:
            if op.has_trait("terminator"):
                return op
            self.visit_op(op)
        return None

    def visit_op(self, op: Op) -> None:
        handler = _CONTROL.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        for v, f in zip(op.results, self.transfer(op, self)):
            self.set(v, f)

    def _step(self, values, cur, new, rnd):
        merge = self.lattice.widen if rnd >= WIDEN_AFTER else self.lattice.join
        return [merge(v.type, c, n) for v, c, n in zip(values, cur, new)]

    def _terminator_values(self, term, skip=0):
        if term is None:
            return []
        return [self.get(v) for v in term.operands[skip:]]


def _visit_for(s: Solver, op: ops.ForOp) -> None:
    body = op.body
    iv, carried = body.args[0], body.args[1:]
    s.set(iv, s.lattice.induction(op, s.get(op.lb), s.get(op.ub), s.get(op.step)))
    cur = [s.get(v) for v in op.inits]
    for rnd in range(MAX_ROUNDS):
        for a, f in zip(carried, cur):
            s.set(a, f)
        ys = s._terminator_values(s.visit_block(body))
        nxt = s._step(carried, cur, ys, rnd)
        if nxt == cur:
            break
        cur = nxt
    else:  # give up: unknown, and one last pass so the body sees it
        cur = [s.lattice.top(a.type) for a in carried]
        for a, f in zip(carried, cur):
            s.set(a, f)
        s.visit_block(body)
    for v, f in zip(op.results, cur):
        s.set(v, f)


def _visit_if(s: Solver, op: ops.IfOp) -> None:
    decided = s.lattice.decide(s.get(op.cond))
    out = [None] * len(op.results)
    for i, region in enumerate(op.regions):
        if not region.blocks:
            continue
        ys = s._terminator_values(s.visit_block(region.blocks[0]))
        live = decided is None or decided == (i == 0)
        if live and ys:
            out = [s.lattice.join(v.type, a, b) for v, a, b in zip(op.results, out, ys)]
    for v, f in zip(op.results, out):
        s.set(v, f if f is not None else s.lattice.top(v.type))


def _visit_while(s: Solver, op: ops.WhileOp) -> None:
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    cur = [s.get(v) for v in op.inits]
    fwd = []
    for rnd in range(MAX_ROUNDS + 1):
        if rnd == MAX_ROUNDS:   # give up: unknown loop values, one last pass
            cur = [s.lattice.top(a.type) for a in before.args]
        for a, f in zip(before.args, cur):
            s.set(a, f)
        fwd = s._terminator_values(s.visit_block(before), skip=1)
        for a, f in zip(after.args, fwd):
            s.set(a, f)
        ys = s._terminator_values(s.visit_block(after))
        if rnd == MAX_ROUNDS:
            break
        nxt = s._step(before.args, cur, ys, rnd)
        if nxt == cur:
            break
        cur = nxt
    for v, f in zip(op.results, fwd):
        s.set(v, f)


_CONTROL = {ops.ForOp: _visit_for, ops.IfOp: _visit_if, ops.WhileOp: _visit_while}
