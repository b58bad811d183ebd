"""Core IR objects: source locations, values, ops, blocks, regions, functions.

An :class:`Op` has named operand *slots* (some optional, holding ``None``),
attributes, results and nested regions.  Op classes are declared once in
``ops.py``; interpreter rules, analysis transfer functions and backend lowerings
register against those classes in their own modules (see :class:`RuleTable`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .types import TileType


@dataclass(frozen=True)
class Loc:
    """A source location inside a kernel: file, 1-based line, 0-based column."""

    file: str
    line: int
    col: int = 0
    func: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_LOC = Loc("<unknown>", 0, 0)


class Value:
    """An SSA value: an op result or a block argument."""

    __slots__ = ("type", "owner", "index", "name_hint")

    def __init__(self, type: TileType, owner=None, index: int = 0, name_hint: str = ""):
        assert isinstance(type, TileType), type
        self.type = type
        self.owner = owner          # Op (result) or Block (argument)
        self.index = index
        self.name_hint = name_hint

    @property
    def is_block_arg(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def op(self):
        """The defining op, or None for block arguments."""
        return self.owner if isinstance(self.owner, Op) else None

    def __repr__(self) -> str:
        return f"Value({self.type}, {self.name_hint or id(self)})"


def _plain(v):
    """An attribute as a plain Python value (an int or float subclass -- the language's
    typed literals -- becomes the base type, so printing and parsing agree)."""
    if isinstance(v, int) and type(v) not in (int, bool):
        return int(v)
    if isinstance(v, float) and type(v) is not float:
        return float(v)
    if type(v) in (tuple, list):
        return type(v)(_plain(x) for x in v)
    return v


class Op:
    """Base class of every IR op.  Subclasses declare:

    ``name``       the printed op name, e.g. ``"arith.add"``;
    ``OPERANDS``   operand slot names; a trailing ``?`` marks an optional slot and a
                   leading ``*`` a variadic tail (a list of values);
    ``ATTRS``      attribute names (all required unless listed in ``ATTR_DEFAULTS``);
    ``REGIONS``    number of nested regions;
    ``TRAITS``     a frozenset of trait names ('pure', 'elementwise', 'terminator', ...);
    ``infer_types(operands, attrs)`` -> list of result TileTypes (a classmethod);
    ``verify()``   extra checks, raising ``ValueError``.
    """

    name = "op"
    OPERANDS: tuple = ()
    ATTRS: tuple = ()
    ATTR_DEFAULTS: dict = {}
    REGIONS = 0
    TRAITS: frozenset = frozenset()

    def __init__(self, operands: dict, attrs: dict, result_types: list, loc: Loc = UNKNOWN_LOC,
                 regions: list | None = None):
        self.slots: dict[str, Any] = dict(operands)
        self.attrs: dict[str, Any] = {**self.ATTR_DEFAULTS, **{k: _plain(v) for k, v in attrs.items()}}
        self.results = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.regions: list[Region] = list(regions) if regions is not None else [
            Region() for _ in range(self.REGIONS)]
        for r in self.regions:
            r.parent = self
        self.loc = loc
        self.parent: Block | None = None

    # ---- operand access ------------------------------------------------
    @classmethod
    def slot_names(cls) -> tuple[tuple[str, bool, bool], ...]:
        """((name, optional, variadic), ...) for each declared operand slot (worked out
        once per class and declaration: every pass walks every op's operands)."""
        memo = cls.__dict__.get("_slot_memo")
        if memo is None or memo[0] is not cls.OPERANDS:
            memo = (cls.OPERANDS, tuple((s.strip("*?"), s.endswith("?"), s.startswith("*"))
                                        for s in cls.OPERANDS))
            cls._slot_memo = memo
        return memo[1]

    @property
    def operands(self) -> list[Value]:
        """All operand values in slot order (absent optional slots skipped)."""
        out = []
        for name, _opt, variadic in self.slot_names():
            v = self.slots.get(name)
            if variadic:
                out.extend(v or ())
            elif v is not None:
                out.append(v)
        return out

    def replace_operands(self, mapping: Callable[[Value], Value]) -> None:
        """Replace every operand ``v`` by ``mapping(v)`` (in place)."""
        for name, _opt, variadic in self.slot_names():
            v = self.slots.get(name)
            if variadic:
                self.slots[name] = [mapping(x) for x in (v or ())]
            elif v is not None:
                self.slots[name] = mapping(v)

    def __getattr__(self, item):
        slots = self.__dict__.get("slots")
        if slots is not None and item in slots:
            return slots[item]
        attrs = self.__dict__.get("attrs")
        if attrs is not None and item in attrs:
            return attrs[item]
        raise AttributeError(f"{type(self).__name__} has no attribute {item!r}")

    @property
    def result(self) -> Value:
        assert len(self.results) == 1, f"{self.name} has {len(self.results)} results"
        return self.results[0]

    def has_trait(self, trait: str) -> bool:
        return trait in self.TRAITS

    # ---- declaration hooks ----------------------------------------------
    @classmethod
    def infer_types(cls, operands: dict, attrs: dict) -> list[TileType]:
        return []

    def verify(self) -> None:
        pass

    def walk(self) -> Iterator["Op"]:
        """Pre-order walk over this op and every op nested in its regions."""
        yield self
        for region in self.regions:
            yield from region.walk()

    def __repr__(self) -> str:
        return f"<{self.name} at {self.loc}>"


class Block:
    """A list of ops with block arguments."""

    def __init__(self, arg_types=(), arg_names=()):
        names = list(arg_names) + [""] * (len(arg_types) - len(arg_names))
        self.args = [Value(t, self, i, n) for i, (t, n) in enumerate(zip(arg_types, names))]
        self.ops: list[Op] = []
        self.parent: Region | None = None

    def append(self, op: Op) -> Op:
        op.parent = self
        self.ops.append(op)
        return op

    def add_arg(self, type: TileType, name: str = "") -> Value:
        v = Value(type, self, len(self.args), name)
        self.args.append(v)
        return v

    @property
    def terminator(self) -> Op | None:
        return self.ops[-1] if self.ops and self.ops[-1].has_trait("terminator") else None

    def walk(self) -> Iterator[Op]:
        for op in list(self.ops):
            yield from op.walk()


class Region:
    """An ordered list of blocks (structured control flow uses exactly one)."""

    def __init__(self, blocks=None):
        self.blocks: list[Block] = list(blocks or [])
        for b in self.blocks:
            b.parent = self
        self.parent: Op | None = None

    @property
    def block(self) -> Block:
        if not self.blocks:
            self.add_block(Block())
        return self.blocks[0]

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    def walk(self) -> Iterator[Op]:
        for b in self.blocks:
            yield from b.walk()


@dataclass
class Argument:
    """A kernel parameter as seen by the IR: its value and specialization facts."""

    name: str
    value: Value
    divisibility: int = 1       # known power-of-two divisor (16 when specialized)
    equal_to_1: bool = False


class Function:
    """A kernel: name, runtime arguments, constexpr bindings and a body block."""

    def __init__(self, name: str, loc: Loc = UNKNOWN_LOC):
        self.name = name
        self.loc = loc
        self.body = Region([Block()])
        self.arguments: list[Argument] = []
        self.constexprs: dict[str, Any] = {}
        self.attrs: dict[str, Any] = {}

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def add_argument(self, name: str, type: TileType, divisibility: int = 1,
                     equal_to_1: bool = False) -> Value:
        v = self.block.add_arg(type, name)
        self.arguments.append(Argument(name, v, divisibility, equal_to_1))
        return v

    def walk(self) -> Iterator[Op]:
        return self.body.walk()


class _Rules(dict):
    """A rule table's dict; any change forgets the table's resolved lookups."""

    def __init__(self, resolved: dict):
        super().__init__()
        self._resolved = resolved

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._resolved.clear()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._resolved.clear()


class RuleTable:
    """A table from op class to a rule (interpreter, analysis, lowering, ...).

    Lookup follows the op class's MRO, so a rule registered for a base class
    (e.g. ``BinaryOp``) serves all its subclasses unless one is more specific.
    A missing rule raises ``NotImplementedError`` naming the op and the table.
    """

    def __init__(self, what: str):
        self.what = what
        self._resolved: dict[type, Callable] = {}     # op class -> rule found through its MRO
        self.rules: dict[type, Callable] = _Rules(self._resolved)

    def register(self, *op_classes):
        def deco(fn):
            for cls in op_classes:
                self.rules[cls] = fn
            return fn
        return deco

    def lookup(self, op_cls: type) -> Callable:
        rule = self._resolved.get(op_cls)
        if rule is not None:
            return rule
        for klass in op_cls.__mro__:
            rule = self.rules.get(klass)
            if rule is not None:
                self._resolved[op_cls] = rule
                return rule
        raise NotImplementedError(f"{self.what}: no rule for op '{op_cls.name}'")

    def __contains__(self, op_cls) -> bool:
        try:
            self.lookup(op_cls)
            return True
        except NotImplementedError:
            return False
