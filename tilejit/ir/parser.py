"""Parser for the text form written by :mod:`tilejit.ir.printer`.

    func = parse_function(text)          # -> ir.Function, ops verified as they are built
    roundtrip_check(func)                # print -> parse -> print must be identical

Op classes come from ``ops.OPS_BY_NAME``; result types are read from the text and must
equal the op's ``infer_types``.  Errors are :class:`ParseError` (a ``ValueError``) with
the line, column and a caret under the offending token.
"""
from __future__ import annotations

import difflib
import json
import re

from ..errors import ParseError
from . import ops as ops_mod
from .core import Block, Function, Loc, Op, Region, UNKNOWN_LOC, Value
from .printer import CUSTOM_FORMS, Opaque, format_type, print_function
from .types import PointerType, TileType, dtype_from_name


_TOKEN_RE = re.compile(r"""[ \t\r]*(?:
    (?P<nl>\n)
  | (?P<comment>//[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<opaque>\#opaque<"(?:[^"\\]|\\.)*">)
  | (?P<value>%[A-Za-z0-9_.?]+)
  | (?P<symbol>@(?:[A-Za-z_][A-Za-z0-9_.]*|"(?:[^"\\]|\\.)*"))
  | (?P<block>\^[A-Za-z0-9_]+)
  | (?P<tile><(?:\d+x)*\*{0,8}[A-Za-z0-9_]+(?:@\d+)?>)
  | (?P<ptr>\*{1,8}[A-Za-z0-9_]+(?:@\d+)?)
  | (?P<number>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)|-inf\b)
  | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<arrow>->)
  | (?P<punct>[(){}\[\],:=])
  | (?P<end>$))""", re.VERBOSE)


class Token:
    __slots__ = ("kind", "text", "line", "col")

    def __init__(self, kind, text, line, col):
        self.kind, self.text, self.line, self.col = kind, text, line, col

    def __repr__(self):
        return f"{self.kind}:{self.text!r}@{self.line}:{self.col}"


def tokenize(text: str) -> list[Token]:
    out, pos, line, line_start = [], 0, 1, 0
    match = _TOKEN_RE.match
    while pos < len(text):
        m = match(text, pos)
        kind = m.lastgroup if m is not None else None
        if kind is None:
            bad = len(text[pos:]) - len(text[pos:].lstrip(" \t\r")) + pos
            raise _error(text, line, bad - line_start, f"unexpected character {text[bad]!r}")
        start = m.start(kind)
        if kind == "nl":
            if out and out[-1].kind != "nl":
                out.append(Token("nl", "\n", line, start - line_start))
            line, line_start = line + 1, m.end()
        elif kind == "end":
            break
        elif kind != "comment":
            out.append(Token(kind, m.group(kind), line, start - line_start))
        pos = m.end()
    out.append(Token("nl", "\n", line, pos - line_start))
    out.append(Token("eof", "", line, pos - line_start))
    return out


def _error(text, line, col, msg) -> ParseError:
    lines = text.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    return ParseError(f"line {line}:{col + 1}: {msg}\n  {src}\n  {' ' * col}^")


def _parse_elem(text: str):
    if text.startswith("*"):
        inner, _, space = text[1:].partition("@")
        const = inner.startswith("k")
        return PointerType(_parse_elem(inner[1:] if const else inner), int(space) if space else 1, const)
    return dtype_from_name(text)


def _hint_of(name: str) -> str:
    base = name[1:]
    if base.isdigit():
        return ""
    head, dot, tail = base.rpartition(".")
    if dot and tail.isdigit():
        return head
    return base


class Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.scopes: list[dict[str, Value]] = [{}]

    # ---- token helpers ---------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k=1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def error(self, msg, tok=None) -> ParseError:
        tok = tok or self.tok
        return _error(self.text, tok.line, tok.col, msg)

    def next(self) -> Token:
        t = self.tok
        self.i += 1
        return t

    def at(self, text=None, kind=None) -> bool:
        t = self.tok
        return (text is None or t.text == text) and (kind is None or t.kind == kind)

    def accept(self, text=None, kind=None):
        if self.at(text, kind):
            return self.next()
        return None

    def expect(self, text=None, kind=None) -> Token:
        if not self.at(text, kind):
            want = repr(text) if text is not None else kind
            got = self.tok.text if self.tok.kind != "nl" else "end of line"
            raise self.error(f"expected {want}, found {got!r}")
        return self.next()

    def skip_nl(self):
        while self.tok.kind == "nl":
            self.i += 1

    def end_of_line(self):
        if self.tok.kind not in ("nl", "eof"):
            raise self.error(f"unexpected {self.tok.text!r}")
        self.skip_nl()

    # ---- values ----------------------------------------------------------
    def define(self, tok: Token, value: Value) -> None:
        for scope in self.scopes:
            if tok.text in scope:
                raise self.error(f"value {tok.text} defined twice", tok)
        value.name_hint = _hint_of(tok.text)
        self.scopes[-1][tok.text] = value

    def use(self) -> Value:
        tok = self.expect(kind="value")
        for scope in reversed(self.scopes):
            if tok.text in scope:
                return scope[tok.text]
        raise self.error(f"use of undefined value {tok.text}", tok)

    # ---- types and attributes --------------------------------------------
    def parse_type(self) -> TileType:
        t = self.tok
        if t.kind == "tile":
            return self._tile(self.next())
        if t.kind in ("ptr", "word"):
            self.next()
            try:
                return TileType(_parse_elem(t.text))
            except ValueError as e:
                raise self.error(str(e), t) from None
        raise self.error(f"expected a type, found {t.text!r}")

    def _tile(self, tok):
        text = tok.text[1:-1]
        m = re.fullmatch(r"((?:\d+x)*)(.+)", text)
        dims = [int(d) for d in m.group(1).split("x") if d]
        try:
            return TileType(_parse_elem(m.group(2)), tuple(dims))
        except ValueError as e:
            raise self.error(str(e), tok) from None

    def parse_types(self) -> list[TileType]:
        if self.accept("("):
            out = []
            while not self.accept(")"):
                out.append(self.parse_type())
                if not self.at(")"):
                    self.expect(",")
            return out
        return [self.parse_type()]

    def parse_attr(self):
        t = self.tok
        k = t.kind
        if k == "string":
            self.next()
            return json.loads(t.text)
        if k == "number":
            self.next()
            if t.text == "-inf":
                return float("-inf")
            return float(t.text) if any(c in t.text for c in ".eE") else int(t.text)
        if k == "opaque":
            self.next()
            return Opaque(json.loads(t.text[len("#opaque<"):-1]))
        if k == "tile":
            return self._tile(self.next())
        if k == "ptr":
            self.next()
            return _parse_elem(t.text)
        if k == "word":
            self.next()
            const = {"true": True, "false": False, "none": None,
                     "inf": float("inf"), "nan": float("nan")}
            if t.text in const:
                return const[t.text]
            try:
                return dtype_from_name(t.text)
            except ValueError:
                raise self.error(f"unknown attribute value {t.text!r}", t) from None
        if self.accept("("):
            return tuple(self._attr_seq(")"))
        if self.accept("["):
            return self._attr_seq("]")
        if self.at("{"):
            return self.parse_attr_dict()
        raise self.error(f"expected an attribute value, found {t.text!r}")

    def _attr_seq(self, close):
        items = []
        while not self.accept(close):
            items.append(self.parse_attr())
            if not self.at(close):
                self.expect(",")
        return items

    def parse_key(self) -> str:
        t = self.tok
        if t.kind == "word":
            self.next()
            return t.text
        if t.kind == "string":
            self.next()
            return json.loads(t.text)
        raise self.error(f"expected an attribute name, found {t.text!r}")

    def parse_attr_dict(self) -> dict:
        self.expect("{")
        out = {}
        while not self.accept("}"):
            key = self.parse_key()
            self.expect("=")
            out[key] = self.parse_attr()
            if not self.at("}"):
                self.expect(",")
        return out

    def parse_loc(self) -> Loc:
        if not self.accept("loc"):
            return UNKNOWN_LOC
        self.expect("(")
        if self.accept("unknown"):
            self.expect(")")
            return UNKNOWN_LOC
        file = json.loads(self.expect(kind="string").text)
        self.expect(":")
        line = int(self.expect(kind="number").text)
        self.expect(":")
        col = int(self.expect(kind="number").text)
        func = ""
        if self.accept("in"):
            func = json.loads(self.expect(kind="string").text)
        self.expect(")")
        return Loc(file, line, col, func)

    # ---- function ----------------------------------------------------------
    def parse_function(self) -> Function:
        self.skip_nl()
        self.expect("tt.func")
        sym = self.expect(kind="symbol").text[1:]
        name = json.loads(sym) if sym.startswith('"') else sym
        func = Function(name)
        self.expect("(")
        while not self.accept(")"):
            self._parse_argument(func)
            if not self.at(")"):
                self.expect(",")
        if self.accept("attributes"):
            attrs = self.parse_attr_dict()
            func.constexprs = dict(attrs.pop("constexprs", {}))
            func.attrs = attrs
        self.expect("{")
        self.end_of_line()
        self.parse_ops(func.block)
        self.expect("}")
        func.loc = self.parse_loc()
        self.end_of_line()
        if self.tok.kind != "eof":
            raise self.error("text after the end of the function")
        return func

    def _parse_argument(self, func: Function) -> None:
        tok = self.expect(kind="value")
        self.expect(":")
        ty = self.parse_type()
        attrs = self.parse_attr_dict() if self.at("{") else {}
        unknown = set(attrs) - {"tt.name", "tt.divisibility", "tt.equal_to_1"}
        if unknown:
            raise self.error(f"unknown argument attribute(s) {sorted(unknown)}", tok)
        hint = _hint_of(tok.text)
        v = func.add_argument(attrs.get("tt.name", hint), ty, attrs.get("tt.divisibility", 1),
                              attrs.get("tt.equal_to_1", False))
        self.define(tok, v)

    def parse_ops(self, block: Block) -> None:
        """Ops up to (not including) the closing ``}`` of the block."""
        while not self.at("}") and not self.tok.kind == "block":
            if self.tok.kind == "eof":
                raise self.error("unexpected end of text (missing '}')")
            block.append(self.parse_op())
            self.end_of_line()

    def parse_op(self) -> Op:
        results = []
        if self.at(kind="value"):
            results.append(self.next())
            while self.accept(","):
                results.append(self.expect(kind="value"))
            self.expect("=")
        name_tok = self.tok
        if name_tok.kind == "string":
            self.next()
            name, generic = json.loads(name_tok.text), True
        else:
            name, generic = self.expect(kind="word").text, False
        cls = ops_mod.OPS_BY_NAME.get(name)
        if cls is None:
            raise self.error(f"unknown op {name!r}", name_tok)
        if generic or name not in CUSTOM_FORMS:
            built = self.parse_generic(cls)
        else:
            built = _CUSTOM_PARSERS[name](self, cls)
        slots, attrs, types, regions, loc = built
        op = self.build(cls, name_tok, slots, attrs, types, regions, loc)
        if len(results) != len(op.results):
            raise self.error(f"{name} has {len(op.results)} result(s), {len(results)} named",
                             name_tok)
        for tok, v in zip(results, op.results):
            self.define(tok, v)
        return op

    def build(self, cls, name_tok, slots, attrs, types, regions, loc) -> Op:
        unknown = set(attrs) - set(cls.ATTRS)
        if unknown:
            raise self.error(f"{cls.name}: unknown attribute(s) {sorted(unknown)}", name_tok)
        missing = [a for a in cls.ATTRS if a not in attrs and a not in cls.ATTR_DEFAULTS]
        if missing:
            raise self.error(f"{cls.name}: missing attribute(s) {missing}", name_tok)
        full = {**cls.ATTR_DEFAULTS, **attrs}
        try:
            inferred = cls.infer_types(slots, full)
        except Exception as e:  # noqa: BLE001 - malformed operands show up here
            raise self.error(f"{cls.name}: cannot infer result types: {e}", name_tok) from None
        if list(inferred) != list(types):
            shown = ", ".join(map(format_type, inferred)) or "none"
            raise self.error(f"{cls.name}: result types {', '.join(map(format_type, types)) or 'none'} "
                             f"do not match the inferred {shown}", name_tok)
        op = cls(slots, attrs, list(types), loc, regions)
        try:
            op.verify()
        except (ValueError, TypeError, AttributeError) as e:
            msg = str(e) if str(e).startswith(cls.name) else f"{cls.name}: {e}"
            raise self.error(msg, name_tok) from None
        return op

    # ---- generic form ----------------------------------------------------------
    def parse_generic(self, cls):
        positional, named = [], {}
        while self.at(kind="value") or (self.at(kind="word") and self.peek().text == "="):
            if self.at(kind="word"):
                key = self.next().text
                self.expect("=")
                named[key] = self.use()
            else:
                positional.append(self.use())
            if not self.accept(","):
                break
        slots = self._assign_slots(cls, positional, named)
        attrs = self.parse_attr_dict() if self.at("{") else {}
        types = []
        if self.accept(":"):
            types = self.parse_types()
        regions = None
        if self.accept("("):
            regions = []
            self.skip_nl()
            while not self.accept(")"):
                regions.append(self.parse_region())
                self.accept(",")
                self.skip_nl()
        return slots, attrs, types, regions, self.parse_loc()

    def _assign_slots(self, cls, positional, named):
        slots, rest = {}, list(positional)
        spec = cls.slot_names()
        for name, optional, variadic in spec:
            if optional:
                slots[name] = named.pop(name, None)
            elif not variadic:
                if not rest:
                    raise self.error(f"{cls.name}: missing operand {name!r}")
                slots[name] = rest.pop(0)
        for name, _optional, variadic in spec:
            if variadic:
                slots[name], rest = rest, []
        if rest:
            raise self.error(f"{cls.name}: too many operands")
        if named:
            raise self.error(f"{cls.name}: unknown operand slot(s) {sorted(named)}")
        return slots

    def parse_region(self) -> Region:
        self.expect("{")
        self.skip_nl()
        region = Region()
        self.scopes.append({})
        if self.tok.kind != "block":
            block = region.add_block(Block())
            self.parse_ops(block)
        while self.tok.kind == "block":
            self.next()
            block = region.add_block(Block())
            self.expect("(")
            while not self.accept(")"):
                tok = self.expect(kind="value")
                self.expect(":")
                self.define(tok, block.add_arg(self.parse_type()))
                self.accept(",")
            self.expect(":")
            self.end_of_line()
            self.parse_ops(block)
        self.scopes.pop()
        self.expect("}")
        return region

    def parse_body(self, block: Block) -> Region:
        """``{`` ops ``}`` into ``block`` whose arguments are already defined."""
        self.expect("{")
        self.end_of_line()
        self.parse_ops(block)
        self.expect("}")
        return Region([block])

    def block_with_args(self, arg_toks, types) -> Block:
        block = Block()
        self.scopes.append({})
        for tok, t in zip(arg_toks, types):
            self.define(tok, block.add_arg(t))
        return block

    def typed_list(self):
        """Optional ``: (T, ...)`` overriding types."""
        if self.at(":") and self.peek().text == "(":
            self.next()
            return self.parse_types()
        return None


# ---- custom forms ---------------------------------------------------------------
def _parse_constant(p: Parser, cls):
    value = p.parse_attr()
    p.expect(":")
    ty = p.parse_type()
    return {}, {"value": value, "type": ty}, [ty], None, p.parse_loc()


def _parse_for(p: Parser, cls):
    iv_tok = p.expect(kind="value")
    p.expect("=")
    lb = p.use()
    p.expect("to")
    ub = p.use()
    p.expect("step")
    step = p.use()
    iv_type = lb.type
    if p.accept(":"):
        iv_type = p.parse_type()
    arg_toks, inits = [], []
    if p.accept("iter_args"):
        p.expect("(")
        while not p.accept(")"):
            arg_toks.append(p.expect(kind="value"))
            p.expect("=")
            inits.append(p.use())
            p.accept(",")
    arg_types = p.typed_list() or [v.type for v in inits]
    types = []
    if p.accept(kind="arrow"):
        types = p.parse_types()
    block = p.block_with_args([iv_tok] + arg_toks, [iv_type] + list(arg_types))
    region = p.parse_body(block)
    p.scopes.pop()
    slots = {"lb": lb, "ub": ub, "step": step, "inits": inits}
    return slots, {}, types, [region], p.parse_loc()


def _parse_if(p: Parser, cls):
    cond = p.use()
    types = []
    if p.accept(kind="arrow"):
        types = p.parse_types()
    p.scopes.append({})
    then = p.parse_body(Block())
    p.scopes[-1] = {}
    other = Region()
    if p.accept("else"):
        other = p.parse_body(Block())
    p.scopes.pop()
    return {"cond": cond}, {"result_types": list(types)}, types, [then, other], p.parse_loc()


def _parse_while(p: Parser, cls):
    p.expect("(")
    arg_toks, inits = [], []
    while not p.accept(")"):
        arg_toks.append(p.expect(kind="value"))
        p.expect("=")
        inits.append(p.use())
        p.accept(",")
    arg_types = p.typed_list() or [v.type for v in inits]
    p.expect(kind="arrow")
    types = p.parse_types()
    before = p.block_with_args(arg_toks, arg_types)
    before_region = p.parse_body(before)
    p.scopes.pop()
    p.expect("do")
    p.expect("(")
    toks, after_types = [], []
    while not p.accept(")"):
        toks.append(p.expect(kind="value"))
        p.expect(":")
        after_types.append(p.parse_type())
        p.accept(",")
    after = p.block_with_args(toks, after_types)
    after_region = p.parse_body(after)
    p.scopes.pop()
    return ({"inits": inits}, {"result_types": list(types)}, types,
            [before_region, after_region], p.parse_loc())


_CUSTOM_PARSERS = {"arith.constant": _parse_constant, "scf.for": _parse_for,
                   "scf.if": _parse_if, "scf.while": _parse_while}


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def parse_function(text: str) -> Function:
    """Parse the text of one ``tt.func`` (as printed by ``print_function``)."""
    return Parser(text).parse_function()


def roundtrip_check(func: Function, verify: bool = True) -> Function:
    """Print ``func`` (with locations), parse it back, print again and require identical
    text (AssertionError with a diff otherwise).  Verifies the parsed function when
    ``verify``.  Returns the parsed copy.  Call it on any Function in tests."""
    text = print_function(func)
    try:
        parsed = parse_function(text)
    except ParseError as e:
        raise AssertionError(f"printed IR does not parse: {e}\n--- text ---\n{text}") from None
    again = print_function(parsed)
    if again != text:
        diff = "\n".join(difflib.unified_diff(text.splitlines(), again.splitlines(),
                                              "printed", "reprinted", lineterm=""))
        raise AssertionError(f"IR text does not round-trip:\n{diff}")
    if verify:
        from .verifier import verify_function
        verify_function(parsed)
    return parsed
