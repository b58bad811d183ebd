"""The interpreter driver: walks blocks, runs structured control flow, one program
at a time, and wraps every failure with the op's source location and program id."""
from __future__ import annotations

import itertools

import numpy as np

from ..ir import ops
from ..ir.core import Block, Function
from . import numerics as nm
from ..errors import InterpreterError
from .memory import Memory
from .rules import RULES
from . import rules_tile  # noqa: F401  (registers the tile rules)
from . import rules_atomic  # noqa: F401  (registers the atomic rules)
from . import rules_combine  # noqa: F401  (registers tt.combine_reduce)
from . import rules_gather  # noqa: F401  (registers tt.gather, tt.histogram)


class _Return(Exception):
    """``tt.return`` reached inside a nested region."""


class Context:
    """State of one launch; ``pid`` changes per program."""

    def __init__(self, func: Function, grid, memory: Memory, options=None, observer=None):
        self.func = func
        self.grid = tuple(int(g) for g in grid)
        self.memory = memory
        self.options = options
        self.observer = observer
        self.pid = (0, 0, 0)
        self.consts: dict = {}
        self.plans: dict = {}
        self.env: dict = {}

    # ------------------------------------------------------------ blocks
    def plan(self, block: Block):
        """Per block: (op, rule, operand values, result values), computed once."""
        p = self.plans.get(block)
        if p is None:
            p = self.plans[block] = [(op, _rule_for(op), op.operands, op.results) for op in block.ops]
        return p

    def run_block(self, block: Block, args):
        """Run ``block`` with its arguments bound to ``args``; returns the values of
        its terminator (yield / condition) or None.  One environment per program
        serves every region (SSA values are unique objects)."""
        env = self.env
        for a, v in zip(block.args, args):
            env[a] = v
        observer = self.observer
        for op, rule, ins, outs in self.plan(block):
            try:
                res = rule(self, op, [env[v] for v in ins])
            except (InterpreterError, _Return):
                raise
            except Exception as e:  # wrap with the op's location
                raise InterpreterError(f"{op.name}: {type(e).__name__}: {e}", kernel=self.func.name,
                                       loc=op.loc, program_id=self.pid) from e
            if res.__class__ is _Terminator:
                return res.values
            for v, r in zip(outs, res):
                env[v] = r
            if observer is not None:
                observer(op, self.pid, [np.asarray(r) for r in res])
        return None


class _Terminator:
    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values


def _rule_for(op):
    cls = type(op)
    if cls in CONTROL:
        return CONTROL[cls]
    return RULES.lookup(cls)


# ---------------------------------------------------------------- control flow
def _yield(ctx, op, vals):
    return _Terminator(vals)


def _condition(ctx, op, vals):
    return _Terminator(vals)


def _return(ctx, op, vals):
    raise _Return()


def _for(ctx, op, vals):
    lb, ub, step = vals[0], vals[1], vals[2]
    carried = list(vals[3:])
    body = op.body
    ivt = type(np.asarray(lb)[()])
    i, ub_i, st = int(lb), int(ub), int(step)
    if st == 0:
        raise ValueError("scf.for with step 0")
    while (i < ub_i) if st > 0 else (i > ub_i):
        carried = ctx.run_block(body, [ivt(i)] + carried) or []
        i += st
    return carried


def _if(ctx, op, vals):
    region = op.regions[0] if bool(vals[0]) else op.regions[1]
    if not region.blocks or not region.blocks[0].ops:
        return []
    return ctx.run_block(region.blocks[0], []) or []


def _while(ctx, op, vals):
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    cur = list(vals)
    while True:
        res = ctx.run_block(before, cur)
        cond, fwd = res[0], res[1:]
        if not bool(cond):
            return list(fwd)
        cur = ctx.run_block(after, fwd)


CONTROL = {ops.YieldOp: _yield, ops.ConditionOp: _condition, ops.ReturnOp: _return,
           ops.ForOp: _for, ops.IfOp: _if, ops.WhileOp: _while}


# ---------------------------------------------------------------- entry point
def run(func: Function, grid, launch_args, options=None, observer=None) -> None:
    """Run ``func`` over ``grid`` (3 ints; programs in row-major order, axis 0
    fastest) with ``launch_args`` (``backends.LaunchArgs``).  ``observer(op,
    program_id, results)`` is called after every op when given."""
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(tuple(grid)))
    ctx = Context(func, grid, Memory(launch_args.buffers), options, observer)
    block = func.block
    if len(launch_args.values) != len(block.args):
        raise TypeError(f"{func.name}: expected {len(block.args)} launch values, got {len(launch_args.values)}")
    args = [nm.to_scalar(v, a.type.element) for v, a in zip(launch_args.values, block.args)]
    with np.errstate(all="ignore"):
        for z, y, x in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            ctx.pid = (x, y, z)
            ctx.env = {}
            try:
                ctx.run_block(block, args)
            except _Return:
                pass
