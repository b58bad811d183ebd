"""MLIR-like text form of the tile IR.

    tt.func @add(%x_ptr: *fp32 {tt.divisibility = 16}, %n: i32) attributes {constexprs = {BLOCK = 1024}} {
      %pid = tt.get_program_id {axis = 0} : i32 loc("k.py":3:10)
      %0 = arith.constant 1024 : i32
      %offs = tt.make_range {end = 1024, start = 0} : <1024xi32>
      %v = tt.load %p, mask = %m : <1024xfp32>
      %acc.1 = scf.for %i = %lb to %ub step %s iter_args(%acc = %a0) -> (fp32) {
        ...
        scf.yield %x
      }
      tt.return
    } loc("k.py":1:0)

Grammar (what :mod:`tilejit.ir.parser` reads back):

* Types: a scalar is its element name (``i32``, ``u8``, ``fp16``, ``bf16``, ``*fp32``,
  ``*fp32@0`` for address space 0); a tile is ``<16x32xfp32>``.  In attribute position a
  bare element name is a ``DType``/``PointerType`` and ``<...>`` is a ``TileType``
  (``<i32>`` a scalar one).
* Attribute values: ints, floats (``repr`` form, ``inf``, ``-inf``, ``nan``), ``true``,
  ``false``, ``none``, JSON strings, tuples ``(1, 2)`` (``(1,)`` for one), lists
  ``[1, 2]``, dicts ``{a = 1}``, types, and ``#opaque<"repr">`` for anything else
  (printed only; read back as :class:`Opaque`).
* Generic op: ``results = name operands {attrs} : types loc(...)`` where operands are the
  required slots then the variadic slot positionally and each present optional slot as
  ``slot = %v``; attributes equal to their declared default are omitted.
  ``arith.constant``, ``scf.for``, ``scf.if`` and ``scf.while`` have custom forms.
* Value names: a name hint used once prints as ``%hint``; repeated hints print as
  ``%hint``, ``%hint.1``, ...; values without a hint are numbered ``%0``, ``%1``, ...
  in text order.  Names are deterministic, so print(parse(print(f))) == print(f).
* ``// ...`` is a comment; the optional ``annotate`` callback's text is printed as one.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

import numpy as np

from .core import Block, Function, Loc, Op, Region, UNKNOWN_LOC, Value
from .types import DType, PointerType, TileType

_SHORT = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}
_HINT_BAD = re.compile(r"[^A-Za-z0-9_]")
CUSTOM_FORMS = ("arith.constant", "scf.for", "scf.if", "scf.while")


class Opaque:
    """An attribute value the text form cannot represent; kept as its ``repr`` text."""

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other):
        return isinstance(other, Opaque) and other.text == self.text

    def __hash__(self):
        return hash(("Opaque", self.text))

    def __repr__(self):
        return f"Opaque({self.text!r})"


# --------------------------------------------------------------------------
# types, attributes, locations
# --------------------------------------------------------------------------
def format_elem(el) -> str:
    """``i32``, ``fp32``, ``*fp16``, ``*i8@0``, ``*kfp32`` (a const pointer)."""
    if isinstance(el, PointerType):
        s = ("*k" if el.const else "*") + format_elem(el.element)
        return s if el.address_space == 1 else f"{s}@{el.address_space}"
    return _SHORT.get(el.name, el.name)


def format_type(t: TileType) -> str:
    """A value type: element name for a scalar, ``<4x8xfp32>`` for a tile."""
    if not t.shape:
        return format_elem(t.element)
    return "<" + "".join(f"{d}x" for d in t.shape) + format_elem(t.element) + ">"


def format_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def format_attr(v: Any) -> str:
    """Text of an attribute value (see the module docstring for the grammar)."""
    if v is None:
        return "none"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return format_float(float(v))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, TileType):
        return "<" + "".join(f"{d}x" for d in v.shape) + format_elem(v.element) + ">"
    if isinstance(v, (DType, PointerType)):
        return format_elem(v)
    if isinstance(v, tuple):
        inner = ", ".join(format_attr(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{format_key(k)} = {format_attr(x)}" for k, x in v.items()) + "}"
    if isinstance(v, Opaque):
        return f"#opaque<{json.dumps(v.text)}>"
    return f"#opaque<{json.dumps(_opaque_text(v))}>"


def _opaque_text(v) -> str:
    """Deterministic text for an arbitrary object (no memory addresses for functions)."""
    if callable(v) and hasattr(v, "__qualname__") and not isinstance(v, type):
        return f"{getattr(v, '__module__', '?')}.{v.__qualname__}"
    text = repr(v)
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def format_key(k) -> str:
    if isinstance(k, str) and _KEY_RE.match(k) and k not in ("true", "false", "none", "inf", "nan"):
        return k
    return json.dumps(str(k))


def format_attr_dict(attrs: dict) -> str:
    if not attrs:
        return ""
    return "{" + ", ".join(f"{format_key(k)} = {format_attr(v)}" for k, v in attrs.items()) + "}"


def format_loc(loc: Loc) -> str:
    if loc == UNKNOWN_LOC:
        return "loc(unknown)"
    s = f"loc({json.dumps(loc.file)}:{loc.line}:{loc.col}"
    if loc.func:
        s += f" in {json.dumps(loc.func)}"
    return s + ")"


def same_attr(a, b) -> bool:
    """Strict equality used to omit default attributes (``0`` is not ``False``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def non_default_attrs(op: Op) -> dict:
    defaults = op.ATTR_DEFAULTS
    return {k: v for k, v in op.attrs.items()
            if not (k in defaults and same_attr(v, defaults[k]))}


# --------------------------------------------------------------------------
# value naming
# --------------------------------------------------------------------------
def sanitize_hint(hint: str) -> str:
    if not hint:
        return ""
    h = _HINT_BAD.sub("_", hint)
    return "v" + h if h[0].isdigit() else h


def _values_in_text_order(func: Function):
    for a in func.block.args:
        yield a
    for op in func.block.ops:
        yield from _op_values(op)


def _op_values(op: Op):
    yield from op.results
    for region in op.regions:
        for block in region.blocks:
            yield from block.args
            for inner in block.ops:
                yield from _op_values(inner)


class Namer:
    """Deterministic printed names for every value of a function."""

    def __init__(self, func: Function | None = None):
        self.names: dict[int, str] = {}
        self._unknown = 0
        if func is not None:
            self._assign(list(_values_in_text_order(func)))

    def _assign(self, values: list[Value]) -> None:
        counts: dict[str, int] = {}
        for v in values:
            h = sanitize_hint(v.name_hint)
            if h:
                counts[h] = counts.get(h, 0) + 1
        seen: dict[str, int] = {}
        number = 0
        for v in values:
            h = sanitize_hint(v.name_hint)
            if not h:
                name = str(number)
                number += 1
            elif counts[h] == 1:
                name = h
            else:
                k = seen.get(h, 0)
                seen[h] = k + 1
                name = h if k == 0 else f"{h}.{k}"
            self.names[id(v)] = name

    def __call__(self, v: Value) -> str:
        if v is None:
            return "%<none>"
        name = self.names.get(id(v))
        if name is None:
            # a value not defined in this function (invalid IR): print something readable
            self._unknown += 1
            name = self.names[id(v)] = f"undef?{self._unknown}"
        return "%" + name


# --------------------------------------------------------------------------
# the printer
# --------------------------------------------------------------------------
class Printer:
    def __init__(self, func: Function | None, locs: bool = True,
                 annotate: Callable[[Value], str | None] | None = None, indent: str = "  "):
        self.name = Namer(func)
        self.locs = locs
        self.annotate = annotate
        self.indent = indent
        self.lines: list[str] = []

    # ---- helpers ---------------------------------------------------------
    def _loc(self, loc: Loc) -> str:
        # an unknown location is what the parser assumes when there is none: not printed
        return " " + format_loc(loc) if self.locs and loc != UNKNOWN_LOC else ""

    def _emit(self, depth: int, text: str, values=()) -> None:
        self.lines.append(self.indent * depth + text + self._annotation(values))

    def _annotation(self, values) -> str:
        if self.annotate is None or not values:
            return ""
        notes = [(v, self.annotate(v)) for v in values]
        notes = [(v, n) for v, n in notes if n is not None]
        if not notes:
            return ""
        if len(values) == 1:
            return "  // " + notes[0][1]
        return "  // " + "; ".join(f"{self.name(v)}: {n}" for v, n in notes)

    def _block_arg_notes(self, depth: int, args) -> None:
        if self.annotate is None:
            return
        for a in args:
            note = self.annotate(a)
            if note is not None:
                self.lines.append(self.indent * depth + f"// {self.name(a)}: {note}")

    def _results(self, op: Op) -> str:
        if not op.results:
            return ""
        return ", ".join(self.name(r) for r in op.results) + " = "

    def _types(self, types) -> str:
        types = list(types)
        if len(types) == 1:
            return format_type(types[0])
        return "(" + ", ".join(format_type(t) for t in types) + ")"

    # ---- function --------------------------------------------------------
    def function(self, func: Function) -> str:
        args = []
        for a in func.arguments:
            attrs = {}
            if a.name != self.name(a.value)[1:]:
                attrs["tt.name"] = a.name
            if a.divisibility != 1:
                attrs["tt.divisibility"] = a.divisibility
            if a.equal_to_1:
                attrs["tt.equal_to_1"] = True
            text = f"{self.name(a.value)}: {format_type(a.value.type)}"
            args.append(text + (" " + format_attr_dict(attrs) if attrs else ""))
        extra = [a for a in func.block.args if all(a is not x.value for x in func.arguments)]
        if extra:
            raise ValueError(f"function {func.name}: block arguments that are not Arguments")
        fattrs = {}
        if func.constexprs:
            fattrs["constexprs"] = dict(func.constexprs)
        fattrs.update(func.attrs)
        header = f"tt.func @{format_key(func.name)}(" + ", ".join(args) + ")"
        if fattrs:
            header += " attributes " + format_attr_dict(fattrs)
        self.lines.append(header + " {")
        self._block_arg_notes(1, func.block.args)
        for op in func.block.ops:
            self.op(op, 1)
        self.lines.append("}" + self._loc(func.loc))
        return "\n".join(self.lines) + "\n"

    # ---- ops -------------------------------------------------------------
    def op(self, op: Op, depth: int) -> None:
        printer = _CUSTOM.get(op.name)
        if printer is not None and printer(self, op, depth):
            return
        self.generic(op, depth)

    def operand_list(self, op: Op) -> str:
        pos, named = [], []
        for name, optional, variadic in op.slot_names():
            v = op.slots.get(name)
            if variadic:
                pos.extend(self.name(x) for x in (v or ()))
            elif optional:
                if v is not None:
                    named.append(f"{name} = {self.name(v)}")
            else:
                pos.append(self.name(v))
        return ", ".join(pos + named)

    def generic(self, op: Op, depth: int) -> None:
        # ops that have a custom form are written generically with a quoted name
        name = json.dumps(op.name) if op.name in CUSTOM_FORMS else op.name
        text = self._results(op) + name
        operands = self.operand_list(op)
        if operands:
            text += " " + operands
        attrs = non_default_attrs(op)
        if attrs:
            text += " " + format_attr_dict(attrs)
        if op.results:
            text += " : " + self._types(r.type for r in op.results)
        if not op.regions:
            self._emit(depth, text + self._loc(op.loc), op.results)
            return
        self._emit(depth, text + " (", op.results)
        for i, region in enumerate(op.regions):
            self.region(region, depth + 1, generic=True, last=(i == len(op.regions) - 1))
        self.lines.append(self.indent * depth + ")" + self._loc(op.loc))

    def region(self, region: Region, depth: int, generic: bool = False, last: bool = True) -> None:
        """A generic region: ``{`` blocks ``}``; each block with arguments starts with
        ``^bbN(%a: T, ...):``."""
        self.lines.append(self.indent * depth + "{")
        for i, block in enumerate(region.blocks):
            if block.args or len(region.blocks) > 1:
                args = ", ".join(f"{self.name(a)}: {format_type(a.type)}" for a in block.args)
                self.lines.append(self.indent * depth + f"^bb{i}({args}):")
            self.block_body(block, depth + 1)
        self.lines.append(self.indent * depth + "}" + ("" if last else ","))

    def block_body(self, block: Block, depth: int) -> None:
        self._block_arg_notes(depth, block.args)
        for op in block.ops:
            self.op(op, depth)


# ---- custom forms ------------------------------------------------------------
def _print_constant(p: Printer, op: Op, depth: int) -> bool:
    if len(op.results) != 1 or set(op.attrs) != {"value", "type"} or op.slots:
        return False
    if op.attrs["type"] != op.results[0].type:
        return False
    text = f"{p._results(op)}arith.constant {format_attr(op.value)} : {format_type(op.results[0].type)}"
    p._emit(depth, text + p._loc(op.loc), op.results)
    return True


def _single_block(region: Region):
    return region.blocks[0] if len(region.blocks) == 1 else None


def _print_for(p: Printer, op: Op, depth: int) -> bool:
    body = _single_block(op.regions[0]) if len(op.regions) == 1 else None
    inits = op.slots.get("inits") or []
    if body is None or len(body.args) != 1 + len(inits) or op.attrs:
        return False
    iv = body.args[0]
    text = (f"{p._results(op)}scf.for {p.name(iv)} = {p.name(op.lb)} to {p.name(op.ub)} "
            f"step {p.name(op.step)}")
    if iv.type != op.lb.type:
        text += f" : {format_type(iv.type)}"
    if inits:
        pairs = ", ".join(f"{p.name(a)} = {p.name(v)}" for a, v in zip(body.args[1:], inits))
        text += f" iter_args({pairs})"
        if any(a.type != v.type for a, v in zip(body.args[1:], inits)):
            text += " : (" + ", ".join(format_type(a.type) for a in body.args[1:]) + ")"
    if op.results:
        text += " -> (" + ", ".join(format_type(r.type) for r in op.results) + ")"
    p._emit(depth, text + " {", op.results)
    p.block_body(body, depth + 1)
    p.lines.append(p.indent * depth + "}" + p._loc(op.loc))
    return True


def _print_if(p: Printer, op: Op, depth: int) -> bool:
    if len(op.regions) != 2 or set(op.attrs) != {"result_types"}:
        return False
    if list(op.result_types) != [r.type for r in op.results]:
        return False
    then, other = op.regions
    if len(then.blocks) != 1 or then.blocks[0].args or len(other.blocks) > 1 or \
            (other.blocks and other.blocks[0].args):
        return False
    text = f"{p._results(op)}scf.if {p.name(op.cond)}"
    if op.results:
        text += " -> (" + ", ".join(format_type(r.type) for r in op.results) + ")"
    p._emit(depth, text + " {", op.results)
    p.block_body(then.blocks[0], depth + 1)
    close = p.indent * depth + "}"
    if other.blocks:
        p.lines.append(close + " else {")
        p.block_body(other.blocks[0], depth + 1)
    p.lines.append(close + p._loc(op.loc))
    return True


def _print_while(p: Printer, op: Op, depth: int) -> bool:
    if len(op.regions) != 2 or set(op.attrs) != {"result_types"}:
        return False
    if list(op.result_types) != [r.type for r in op.results]:
        return False
    before, after = (_single_block(r) for r in op.regions)
    inits = op.slots.get("inits") or []
    if before is None or after is None or len(before.args) != len(inits):
        return False
    pairs = ", ".join(f"{p.name(a)} = {p.name(v)}" for a, v in zip(before.args, inits))
    text = f"{p._results(op)}scf.while ({pairs})"
    if any(a.type != v.type for a, v in zip(before.args, inits)):
        text += " : (" + ", ".join(format_type(a.type) for a in before.args) + ")"
    text += " -> (" + ", ".join(format_type(r.type) for r in op.results) + ")"
    p._emit(depth, text + " {", op.results)
    p.block_body(before, depth + 1)
    args = ", ".join(f"{p.name(a)}: {format_type(a.type)}" for a in after.args)
    p.lines.append(p.indent * depth + f"}} do ({args}) {{")
    p.block_body(after, depth + 1)
    p.lines.append(p.indent * depth + "}" + p._loc(op.loc))
    return True


_CUSTOM = {"arith.constant": _print_constant, "scf.for": _print_for, "scf.if": _print_if,
           "scf.while": _print_while}


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def print_function(func: Function, locs: bool = True,
                   annotate: Callable[[Value], str | None] | None = None) -> str:
    """The text of ``func``.  ``locs=False`` hides source locations; ``annotate(value)``
    may return a string printed as a ``// ...`` comment next to each value's definition
    (op results on the op's line; block arguments on a comment line at the block start)."""
    return Printer(func, locs=locs, annotate=annotate).function(func)


def print_op(op: Op, func: Function | None = None, locs: bool = True) -> str:
    """One op (with its regions) on its own.  Values are named as in ``func`` when it is
    given; otherwise operands from outside the op are numbered first."""
    if func is not None:
        p = Printer(func, locs=locs)
    else:
        p = Printer(None, locs=locs)
        inner = list(_op_values(op))
        inner_ids = {id(v) for v in inner}
        outside = []
        for o in op.walk():
            outside.extend(v for v in o.operands if id(v) not in inner_ids and v not in outside)
        p.name._assign(outside + inner)
    p.op(op, 0)
    return "\n".join(p.lines)


def describe(op: Op) -> str:
    """``'arith.add' at file:line:col`` for error messages."""
    loc = "unknown location" if op.loc == UNKNOWN_LOC else str(op.loc)
    return f"'{op.name}' at {loc}"
