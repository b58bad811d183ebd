"""The verifier: accepts every sample, rejects each kind of broken IR with a clear message."""
import os
import sys

import pytest

from tilejit.ir import Loc, TileType, int32, int64, ops
from tilejit.ir.parser import parse_function
from tilejit.ir.verifier import VerificationError, verify_function

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import irsamples  # noqa: E402


@pytest.mark.parametrize("name", sorted(irsamples.SAMPLES))
def test_samples_verify(name):
    verify_function(irsamples.SAMPLES[name]())


def _rejects(func, *needles):
    with pytest.raises(ValueError) as info:
        verify_function(func)
    assert isinstance(info.value, VerificationError)
    for n in needles:
        assert n in str(info.value), str(info.value)
    return str(info.value)


IF = """\
tt.func @k(%n: i32) {
  %0 = arith.constant 0 : i32
  %c = arith.cmp %n, %0 {pred = "gt"} : i1
  %r = scf.if %c -> (i32) {
    scf.yield %n
  } else {
    scf.yield %0
  }
  tt.return
}
"""

LOOP = """\
tt.func @k(%n: i32) {
  %0 = arith.constant 0 : i32
  %1 = arith.constant 1 : i32
  %s = scf.for %i = %0 to %n step %1 iter_args(%acc = %0) -> (i32) {
    %t = arith.add %acc, %i : i32 loc("k.py":5:8)
    scf.yield %t
  }
  tt.return
}
"""


def test_loop_text_verifies():
    verify_function(parse_function(LOOP))


@pytest.mark.parametrize("old, new, needles", [
    ("    scf.yield %t\n", "", ["scf.for body must end with scf.yield, ends with arith.add"]),
    ("scf.yield %t", "scf.yield %t, %t", ["scf.yield types (i32, i32) do not match (i32)"]),
    ("  tt.return\n", "", ["must end with tt.return"]),
    ("%1 = arith.constant 1 : i32", "%1 = arith.constant 1 : i64", ["bounds must be scalar integers of one type"]),
    ("    scf.yield %t\n", "    scf.yield %t\n    tt.return\n", ["terminator in the middle"]),
    ("    %t = arith.add", "    tt.return\n    %t = arith.add", ["terminator in the middle"]),
])
def test_structural_errors(old, new, needles):
    assert old in LOOP
    _rejects(parse_function(LOOP.replace(old, new)), *needles)


def test_return_inside_a_region_is_rejected():
    f = parse_function(LOOP.replace("    scf.yield %t\n", "    tt.return\n"))
    _rejects(f, "'tt.return'", "outside the function body")


def test_use_before_definition_names_the_op_and_location():
    f = parse_function(IF.replace('{pred = "gt"} : i1', '{pred = "gt"} : i1 loc("k.py":3:9)'))
    verify_function(f)
    f.block.ops[0], f.block.ops[1] = f.block.ops[1], f.block.ops[0]
    _rejects(f, "'arith.cmp' at k.py:3:9: operand %0 (i32) does not dominate this use")


def test_value_from_inside_a_region_used_outside():
    f = parse_function(LOOP)
    loop = f.block.ops[2]
    t = loop.regions[0].blocks[0].ops[0].result
    ret = f.block.ops[-1]
    f.block.ops.insert(len(f.block.ops) - 1, ops.DevicePrintOp({"args": [t]}, {"prefix": "", "hex": False}, [], Loc("k.py", 9, 4)))
    f.block.ops[-2].parent = f.block
    _rejects(f, "'tt.print' at k.py:9:4", "operand %t (i32) does not dominate this use")
    assert ret is f.block.ops[-1]


def test_undefined_operand():
    f = parse_function(LOOP)
    from tilejit.ir import Value
    stray = Value(TileType(int32))
    add = f.block.ops[2].regions[0].blocks[0].ops[0]
    add.slots["rhs"] = stray
    _rejects(f, "'arith.add' at k.py:5:8", "is not defined")


def test_result_type_must_match_inference():
    f = parse_function(LOOP)
    add = f.block.ops[2].regions[0].blocks[0].ops[0]
    add.results[0].type = TileType(int64)
    _rejects(f, "'arith.add'", "differ from the inferred i32")


def test_op_verify_is_called():
    f = parse_function(LOOP)
    add = f.block.ops[2].regions[0].blocks[0].ops[0]
    add.slots["lhs"] = f.block.args[0]
    verify_function(f)
    add.slots["rhs"] = f.block.ops[0].result
    verify_function(f)
    f.block.ops[0].results[0].type = TileType(int64)
    _rejects(f, "arith.constant")


def test_slot_and_attribute_declarations():
    f = parse_function(LOOP)
    add = f.block.ops[2].regions[0].blocks[0].ops[0]
    add.attrs["bogus"] = 1
    _rejects(f, "unknown attribute(s) ['bogus']")
    del add.attrs["bogus"]
    add.slots["lhs"] = None
    _rejects(f, "missing operand 'lhs'")


def test_iter_arg_count_and_types():
    f = parse_function(LOOP)
    loop = f.block.ops[2]
    loop.regions[0].blocks[0].add_arg(TileType(int32))
    _rejects(f, "body has 3 arguments, expected 1 + 1 iter_args")




def test_if_rules():
    verify_function(parse_function(IF))
    _rejects(parse_function(IF.replace("  } else {\n    scf.yield %0\n", "")),
             "scf.if else region must have exactly one block")
    _rejects(parse_function(IF.replace("scf.if %c", "scf.if %n")),
             "condition must be a scalar i1")
    _rejects(parse_function(IF.replace("scf.yield %0", "scf.yield")),
             "scf.yield in the else block types () do not match (i32)")


WHILE = """\
tt.func @k(%n: i32) {
  %w = scf.while (%a = %n) -> (i32) {
    %c = arith.cmp %a, %a {pred = "lt"} : i1
    scf.condition %c, %a
  } do (%b: i32) {
    scf.yield %b
  }
  tt.return
}
"""


def test_while_rules():
    verify_function(parse_function(WHILE))
    _rejects(parse_function(WHILE.replace("scf.condition %c, %a", "scf.yield %a")),
             "must end with scf.condition")
    _rejects(parse_function(WHILE.replace("do (%b: i32)", "do (%b: i32, %e: i32)")),
             "after-block arguments types")
    _rejects(parse_function(WHILE.replace("    scf.yield %b\n", "    scf.yield\n")),
             "scf.yield in the after block")
