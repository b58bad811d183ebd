"""Structural and type verification of a Function.

    verify_function(func)     # raises VerificationError (a ValueError) naming the op

Checks: every operand is a Value defined before its use in a position that dominates
it (structured regions: a value is visible in its block after its definition and in
every region nested there; never outside its region); operand slots and attributes
match the op's declaration; result types equal ``infer_types``; each op's own
``verify()``; ownership links (results, block arguments, parents); terminators
(``tt.return`` ends the function body and appears nowhere else; ``scf.for`` and
``scf.if`` blocks end with ``scf.yield``; ``scf.while`` with ``scf.condition`` then
``scf.yield``) with yielded types matching the results; region and block-argument
counts and types.  Conventions checked for ``scf.for``: ``lb``, ``ub``, ``step`` are
scalar integers of one type, which is also the induction variable's type.
"""
from __future__ import annotations

from ..errors import VerificationError
from .core import Block, Function, Op, Region, Value
from .printer import Namer, describe, format_type
from .types import TileType, int1


def _fail(op: Op | None, msg: str):
    prefix = f"{describe(op)}: " if op is not None else ""
    raise VerificationError(f"invalid IR: {prefix}{msg}")


class _Verifier:
    def __init__(self, func: Function):
        self.func = func
        self.visible: list[set[int]] = []
        self.name = Namer(func)

    def run(self) -> None:
        func = self.func
        if len(func.body.blocks) != 1:
            _fail(None, f"function {func.name} must have exactly one block")
        block = func.block
        if [a.value for a in func.arguments] != block.args or \
                any(a is not b.value for a, b in zip(block.args, func.arguments)):
            _fail(None, f"function {func.name}: arguments and body block arguments differ")
        self.block(block, kind="func")
        term = block.ops[-1] if block.ops else None
        if term is None or term.name != "tt.return":
            _fail(term, f"function {func.name} must end with tt.return")

    # ---- blocks and ops ------------------------------------------------------
    def block(self, block: Block, kind: str) -> None:
        scope: set[int] = set()
        self.visible.append(scope)
        for i, a in enumerate(block.args):
            if not isinstance(a, Value) or a.owner is not block or a.index != i:
                _fail(None, f"block argument {i} is not owned by its block")
            scope.add(id(a))
        for i, op in enumerate(block.ops):
            if op.parent is not block:
                _fail(op, "op's parent link does not point to its block")
            if op.has_trait("terminator") and i != len(block.ops) - 1:
                _fail(op, "terminator in the middle of a block")
            self.op(op)
            for r in op.results:
                scope.add(id(r))
        self.visible.pop()

    def op(self, op: Op) -> None:
        self.slots(op)
        for v in op.operands:
            if not any(id(v) in s for s in self.visible):
                where = "is not defined" if v.owner is None else "does not dominate this use"
                _fail(op, f"operand {self.name(v)} ({format_type(v.type)}) {where}")
        self.attrs(op)
        for i, r in enumerate(op.results):
            if r.owner is not op or r.index != i or not isinstance(r.type, TileType):
                _fail(op, f"result {i} is malformed")
        try:
            inferred = op.infer_types(op.slots, op.attrs)
        except Exception as e:  # noqa: BLE001
            _fail(op, f"cannot infer result types: {e}")
        actual = [r.type for r in op.results]
        if list(inferred) != actual:
            _fail(op, f"result types {', '.join(map(format_type, actual)) or 'none'} differ from the "
                      f"inferred {', '.join(map(format_type, inferred)) or 'none'}")
        try:
            op.verify()
        except (ValueError, TypeError, AttributeError, IndexError) as e:
            _fail(op, str(e))
        if op.name == "tt.return" and (op.parent is not self.func.block):
            _fail(op, "tt.return outside the function body")
        if len(op.regions) != op.REGIONS:
            _fail(op, f"has {len(op.regions)} regions, expected {op.REGIONS}")
        for r in op.regions:
            if r.parent is not op:
                _fail(op, "region's parent link does not point to its op")
        check = _REGION_CHECKS.get(op.name)
        if check is not None:
            check(self, op)
        else:
            for region in op.regions:
                self.region(region)

    def region(self, region: Region) -> None:
        for b in region.blocks:
            if b.parent is not region:
                _fail(region.parent, "block's parent link does not point to its region")
            self.block(b, kind="region")

    def slots(self, op: Op) -> None:
        declared = {n for n, _o, _v in op.slot_names()}
        extra = set(op.slots) - declared
        if extra:
            _fail(op, f"unknown operand slot(s) {sorted(extra)}")
        for name, optional, variadic in op.slot_names():
            v = op.slots.get(name)
            if variadic:
                if not isinstance(v, (list, tuple)) or not all(isinstance(x, Value) for x in v):
                    _fail(op, f"variadic operand {name!r} must be a list of values")
            elif v is None:
                if not optional:
                    _fail(op, f"missing operand {name!r}")
            elif not isinstance(v, Value):
                _fail(op, f"operand {name!r} is not a Value: {v!r}")

    def attrs(self, op: Op) -> None:
        extra = set(op.attrs) - set(op.ATTRS)
        if extra:
            _fail(op, f"unknown attribute(s) {sorted(extra)}")
        missing = [a for a in op.ATTRS if a not in op.attrs]
        if missing:
            _fail(op, f"missing attribute(s) {missing}")

    # ---- structured control flow --------------------------------------------
    def single_block(self, op: Op, region: Region, what: str) -> Block:
        if len(region.blocks) != 1:
            _fail(op, f"{what} region must have exactly one block, has {len(region.blocks)}")
        return region.blocks[0]

    def terminated(self, op: Op, block: Block, name: str, what: str) -> Op:
        term = block.ops[-1] if block.ops else None
        if term is None or term.name != name:
            found = term.name if term is not None else "nothing"
            _fail(op, f"{what} must end with {name}, ends with {found}")
        return term

    def types_match(self, op: Op, what: str, got, want) -> None:
        got, want = [v.type for v in got], list(want)
        if got != want:
            _fail(op, f"{what} types ({', '.join(map(format_type, got))}) do not match "
                      f"({', '.join(map(format_type, want))})")


def _check_for(v: _Verifier, op: Op) -> None:
    body = v.single_block(op, op.regions[0], "scf.for body")
    bounds = [op.lb.type, op.ub.type, op.step.type]
    if any(not t.is_scalar or not t.element.is_int() for t in bounds) or len(set(bounds)) != 1:
        _fail(op, f"bounds must be scalar integers of one type, got {', '.join(map(format_type, bounds))}")
    inits = list(op.inits)
    if len(body.args) != 1 + len(inits):
        _fail(op, f"body has {len(body.args)} arguments, expected 1 + {len(inits)} iter_args")
    if body.args[0].type != op.lb.type:
        _fail(op, f"induction variable type {format_type(body.args[0].type)} differs from the "
                  f"bounds' {format_type(op.lb.type)}")
    v.types_match(op, "iter_args", body.args[1:], [x.type for x in inits])
    v.region(op.regions[0])
    term = v.terminated(op, body, "scf.yield", "scf.for body")
    v.types_match(op, "scf.yield", term.values, [r.type for r in op.results])


def _check_if(v: _Verifier, op: Op) -> None:
    if op.cond.type != TileType(int1):
        _fail(op, f"condition must be a scalar i1, got {format_type(op.cond.type)}")
    want = [r.type for r in op.results]
    for region, what in zip(op.regions, ("then", "else")):
        if not region.blocks and what == "else" and not want:
            continue
        block = v.single_block(op, region, f"scf.if {what}")
        if block.args:
            _fail(op, f"scf.if {what} block takes no arguments")
        v.region(region)
        term = v.terminated(op, block, "scf.yield", f"scf.if {what} block")
        v.types_match(op, f"scf.yield in the {what} block", term.values, want)


def _check_while(v: _Verifier, op: Op) -> None:
    before = v.single_block(op, op.regions[0], "scf.while before")
    after = v.single_block(op, op.regions[1], "scf.while after")
    v.types_match(op, "before-block arguments", before.args, [x.type for x in op.inits])
    v.region(op.regions[0])
    cond = v.terminated(op, before, "scf.condition", "scf.while before block")
    if cond.cond.type != TileType(int1):
        _fail(cond, f"condition must be a scalar i1, got {format_type(cond.cond.type)}")
    v.types_match(op, "scf.condition values", cond.values, [r.type for r in op.results])
    v.types_match(op, "after-block arguments", after.args, [r.type for r in op.results])
    v.region(op.regions[1])
    term = v.terminated(op, after, "scf.yield", "scf.while after block")
    v.types_match(op, "scf.yield in the after block", term.values, [x.type for x in op.inits])


def _check_combine_reduce(v: _Verifier, op: Op) -> None:
    body = v.single_block(op, op.regions[0], "tt.combine_reduce combine")
    scalars = [TileType(x.type.element) for x in op.srcs]
    v.types_match(op, "combine arguments", body.args, scalars + scalars)
    v.region(op.regions[0])
    term = v.terminated(op, body, "scf.yield", "tt.combine_reduce combine block")
    v.types_match(op, "combine yield", term.values, scalars)
    for o in body.walk():
        if not o.has_trait("pure") or o.regions:
            if o is not term:
                _fail(o, "a combine region holds only pure ops without regions")


_REGION_CHECKS = {"scf.for": _check_for, "scf.if": _check_if, "scf.while": _check_while,
                  "tt.combine_reduce": _check_combine_reduce}


def verify_function(func: Function, where: str = "") -> Function:
    """Verify ``func``; raise :class:`VerificationError` (a ValueError) naming the op and
    its location on the first problem.  ``where`` (e.g. 'after cse') is added to the
    message.  Returns ``func``."""
    v = _Verifier(func)
    try:
        v.run()
    except VerificationError as e:
        if where:
            raise VerificationError(f"{where}: {e}") from None
        raise
    return func
