"""The IR parser: round trips, attribute values, and errors with line and caret."""
import math
import os
import sys

import pytest
from hypothesis import given, settings, strategies as st

from tilejit.ir import Loc, PointerType, TileType, UNKNOWN_LOC, float32, int1, int32, ops
from tilejit.ir import ALL_DTYPES
from tilejit.ir.parser import ParseError, Parser, parse_function, roundtrip_check
from tilejit.ir.printer import format_attr, print_function

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import irsamples  # noqa: E402


@pytest.mark.parametrize("name", sorted(irsamples.SAMPLES))
def test_samples_round_trip(name):
    f = irsamples.SAMPLES[name]()
    g = roundtrip_check(f)
    assert print_function(g) == print_function(f)
    assert [op.name for op in g.walk()] == [op.name for op in f.walk()]
    assert [op.loc for op in g.walk()] == [op.loc for op in f.walk()]


def test_parsed_function_keeps_arguments_constexprs_and_locations():
    f = irsamples.build_vector_add()
    f.constexprs = {"BLOCK": 128, "DT": float32, "FLAG": True, "S": "x", "EPS": 1e-5,
                    "NONE": None, "T": (1, 2)}
    f.attrs = {"noinline": False}
    g = parse_function(print_function(f))
    assert [(a.name, a.divisibility, a.equal_to_1, a.value.type) for a in g.arguments] == \
        [(a.name, a.divisibility, a.equal_to_1, a.value.type) for a in f.arguments]
    assert g.constexprs == f.constexprs and type(g.constexprs["T"]) is tuple
    assert g.attrs == {"noinline": False}
    assert g.loc == Loc(irsamples.FILE, 1, 0)
    assert g.block.args[0].name_hint == "x_ptr"


TEXT = """\
tt.func @k(%p: *fp32, %n: i32 {tt.equal_to_1 = true}) {
  // a comment line
  %c = arith.constant -inf : fp32 loc("k.py":2:4 in "helper")
  %b = arith.constant true : <4xi1>
  %0 = tt.make_range {start = 0, end = 4} : <4xi32>  // trailing comment
  %1 = tt.splat %p {shape = (4,)} : <4x*fp32>
  %2 = tt.addptr %1, %0 : <4x*fp32>
  %3 = tt.splat %c {shape = (4,)} : <4xfp32>
  tt.store %2, %3, mask = %b {cache = "", eviction = "evict_last"}
  tt.return
}
"""


def test_parse_handwritten_text_fills_defaults_and_values():
    f = parse_function(TEXT)
    const = next(op for op in f.walk() if isinstance(op, ops.ConstantOp))
    assert const.value == -math.inf and const.type == TileType(float32)
    assert const.loc == Loc("k.py", 2, 4, "helper")
    store = next(op for op in f.walk() if isinstance(op, ops.StoreOp))
    assert store.eviction == "evict_last" and store.cache == ""
    assert store.mask.type == TileType(int1, (4,))
    assert f.block.ops[-1].loc == UNKNOWN_LOC
    assert f.arguments[1].equal_to_1


ATTRS = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=True)
    | st.text(max_size=8) | st.sampled_from(ALL_DTYPES)
    | st.builds(lambda d, s: TileType(d, tuple(s)), st.sampled_from(ALL_DTYPES),
                st.lists(st.integers(1, 64), max_size=3))
    | st.builds(PointerType, st.sampled_from(ALL_DTYPES), st.sampled_from([0, 1, 3])),
    lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.text(min_size=1, max_size=5), inner, max_size=3),
    max_leaves=8)


def _same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b and (not isinstance(a, float) or
                                              math.copysign(1, a) == math.copysign(1, b))


@settings(max_examples=100, deadline=None)
@given(ATTRS)
def test_attribute_values_round_trip(value):
    text = format_attr(value)
    p = Parser(text)
    back = p.parse_attr()
    assert p.tok.kind == "nl", text
    assert _same(value, back), (value, text, back)


def _errors(text):
    with pytest.raises(ParseError) as info:
        parse_function(text)
    return str(info.value)


def test_errors_name_line_column_and_show_a_caret():
    msg = _errors(TEXT.replace("tt.addptr %1, %0", "tt.addptr %1, %9"))
    assert msg.startswith("line 7:")
    assert "use of undefined value %9" in msg
    assert msg.splitlines()[-1].index("^") == msg.splitlines()[-2].index("%9")


@pytest.mark.parametrize("old, new, needle", [
    ("tt.make_range", "tt.make_rang", "unknown op 'tt.make_rang'"),
    (": <4x*fp32>\n  %2", ": <4x*fp16>\n  %2", "do not match the inferred"),
    ("{start = 0, end = 4}", "{start = 0, end = 4, step = 1}", "unknown attribute(s) ['step']"),
    ("{start = 0, end = 4}", "{start = 0}", "missing attribute(s) ['end']"),
    ("%b = arith.constant", "%c = arith.constant", "defined twice"),
    ("mask = %b", "maks = %b", "unknown operand slot(s) ['maks']"),
    ("tt.addptr %1, %0", "tt.addptr %1", "missing operand 'offset'"),
    (": <4xi1>", ": <4xint99>", "unknown dtype name"),
    ("  tt.return\n}", "  tt.return\n", "missing '}'"),
])
def test_parse_errors(old, new, needle):
    assert old in TEXT
    assert needle in _errors(TEXT.replace(old, new))


def test_op_verify_errors_are_parse_errors():
    bad = TEXT.replace("%1 = tt.splat %p {shape = (4,)} : <4x*fp32>\n  %2 = tt.addptr %1, %0",
                       "%1 = tt.splat %p {shape = (4,)} : <4x*fp32>\n  %2 = tt.addptr %0, %0")
    assert "tt.addptr" in _errors(bad.replace(": <4x*fp32>\n  %3", ": <4xi32>\n  %3"))


def test_values_of_a_region_are_not_visible_after_it():
    text = print_function(irsamples.build_loop_sum(), locs=False)
    bad = text.replace("tt.reduce %acc ", "tt.reduce %acc.2 ")
    assert "use of undefined value %acc.2" in _errors(bad)


def test_while_if_and_generic_region_forms_parse():
    f = irsamples.build_branches()
    g = roundtrip_check(f)
    w = next(op for op in g.walk() if isinstance(op, ops.WhileOp))
    assert [a.name_hint for a in w.regions[1].blocks[0].args] == ["u"]
    ifs = [op for op in g.walk() if isinstance(op, ops.IfOp)]
    assert [len(op.regions[1].blocks) for op in ifs] == [1, 0]


def test_generic_region_form_round_trips_even_for_invalid_ir():
    """Ops whose custom form does not fit print generically (quoted name, ^bb blocks)."""
    from tilejit.ir import Block, Builder, Function
    f = Function("g")
    b = Builder(f)
    zero = b.constant(0, TileType(int32))
    loop = ops.ForOp({"lb": zero, "ub": zero, "step": zero, "inits": []}, {}, [])
    f.block.append(loop)
    first = loop.regions[0].add_block(Block([TileType(int32), TileType(int32)], ["i", "j"]))
    with b.at_end(first):
        b.create(ops.YieldOp, values=[])
    loop.regions[0].add_block(Block())
    b.create(ops.ReturnOp)
    text = print_function(f, locs=False)
    assert '"scf.for" %0, %0, %0 (' in text and "^bb0(%i: i32, %j: i32):" in text
    assert print_function(parse_function(text), locs=False) == text


def test_odd_function_and_argument_names_round_trip():
    from tilejit.ir import Builder, Function
    f = Function("<lambda>.k")
    a = f.add_argument("x", TileType(int32))
    b_arg = f.add_argument("x", TileType(int32))          # a repeated name
    c = f.add_argument("2nd", TileType(int32))
    a.name_hint = ""                                        # hint differs from the name
    Builder(f).create(ops.ReturnOp)
    text = print_function(f, locs=False)
    assert text.startswith('tt.func @"<lambda>.k"(%0: i32 {tt.name = "x"}, %x: i32, '
                           '%v2nd: i32 {tt.name = "2nd"})')
    g = roundtrip_check(f)
    assert g.name == "<lambda>.k"
    assert [x.name for x in g.arguments] == ["x", "x", "2nd"]
    assert b_arg.type == g.arguments[1].value.type
