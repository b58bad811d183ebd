"""Passes on hand-written IR: exact output text for canonicalize, fold, CSE, DCE and the
pass manager."""
import textwrap

import pytest

from tilejit.ir.parser import parse_function
from tilejit.ir.printer import print_function
from tilejit.ir.verifier import verify_function
from tilejit.runtime.options import Options
from tilejit.transforms import PIPELINE, canonicalize, cse, dce, fold_constants, run_pipeline


def _body(text):
    """Indent the body by two spaces, removing the first line's indentation from every
    line that has it (so indented triple-quoted text and ``keep`` lines mix)."""
    lines = text.rstrip().strip("\n").split("\n")
    first = len(lines[0]) - len(lines[0].lstrip())
    out = [ln[first:] if ln[:first].isspace() else ln for ln in lines]
    return textwrap.indent("\n".join(out), "  ") + "\n"


def func(args, body):
    return f"tt.func @t({args}) {{\n" + _body(body) + "  tt.return\n}\n"


def check(pass_fn, args, before, after):
    f = parse_function(func(args, before))
    verify_function(f)
    pass_fn(f)
    verify_function(f)
    assert print_function(f, locs=False) == func(args, after)


def keep(*values):
    """Body lines storing ``values`` so DCE-free tests keep them alive."""
    return "".join(f"tt.print {v} {{prefix = \"\"}}\n" for v in values)


# ---- canonicalize --------------------------------------------------------------------
@pytest.mark.parametrize("expr, result", [
    ("arith.add %x, %zero", "%x"), ("arith.add %zero, %x", "%x"),
    ("arith.sub %x, %zero", "%x"), ("arith.mul %x, %one", "%x"), ("arith.mul %one, %x", "%x"),
    ("arith.idiv %x, %one", "%x"), ("arith.shl %x, %zero", "%x"), ("arith.shr %x, %zero", "%x"),
    ("arith.or %x, %zero", "%x"), ("arith.xor %zero, %x", "%x"), ("arith.and %x, %ones", "%x"),
    ("arith.and %x, %x", "%x"), ("arith.or %x, %x", "%x"), ("arith.min %x, %x", "%x"),
    ("arith.max %x, %x", "%x"),
])
def test_integer_identities(expr, result):
    consts = ("%zero = arith.constant 0 : i32\n%one = arith.constant 1 : i32\n"
              "%ones = arith.constant -1 : i32\n")
    check(canonicalize, "%x: i32", consts + f"%r = {expr} : i32\n" + keep("%r"),
          consts + keep(result))


@pytest.mark.parametrize("expr, const", [
    ("arith.mul %x, %zero", "0 : i32"), ("arith.sub %x, %x", "0 : i32"),
    ("arith.xor %x, %x", "0 : i32"), ("arith.rem %x, %one", "0 : i32"),
    ("arith.and %zero, %x", "0 : i32"),
])
def test_integer_identities_to_constants(expr, const):
    consts = "%zero = arith.constant 0 : i32\n%one = arith.constant 1 : i32\n"
    check(canonicalize, "%x: i32", consts + f"%r = {expr} : i32\n" + keep("%r"),
          consts + f"%r = arith.constant {const}\n" + keep("%r"))


def test_float_identities_are_only_the_exact_ones():
    body = """\
    %z = arith.constant 0.0 : fp32
    %one = arith.constant 1.0 : fp32
    %a = arith.add %x, %z : fp32
    %m = arith.mul %x, %z : fp32
    %s = arith.sub %x, %x : fp32
    %k = arith.mul %x, %one : fp32
    """
    after = """\
    %z = arith.constant 0.0 : fp32
    %one = arith.constant 1.0 : fp32
    %a = arith.add %x, %z : fp32
    %m = arith.mul %x, %z : fp32
    %s = arith.sub %x, %x : fp32
    """
    check(canonicalize, "%x: fp32", body + keep("%a", "%m", "%s", "%k"),
          after + keep("%a", "%m", "%s", "%x"))


def test_shape_op_chains():
    body = """\
    %s = tt.splat %x {shape = (4, 1)} : <4x1xi32>
    %b = tt.broadcast %s {shape = (4, 8)} : <4x8xi32>
    %e = tt.expand_dims %s {axis = 0} : <1x4x1xi32>
    %r1 = tt.reshape %t {shape = (32,)} : <32xi32>
    %r2 = tt.reshape %r1 {shape = (2, 16)} : <2x16xi32>
    %r3 = tt.reshape %r1 {shape = (8, 4)} : <8x4xi32>
    %t1 = tt.trans %t {perm = (1, 0)} : <4x8xi32>
    %t2 = tt.trans %t1 {perm = (1, 0)} : <8x4xi32>
    %u = tt.trans %t {perm = (0, 1)} : <8x4xi32>
    %bb = tt.broadcast %v {shape = (8, 4)} : <8x4xi32>
    %bb2 = tt.broadcast %bb {shape = (8, 4)} : <8x4xi32>
    %c = tt.cast %t {to = i32} : <8x4xi32>
    """
    after = """\
    %b = tt.splat %x {shape = (4, 8)} : <4x8xi32>
    %e = tt.splat %x {shape = (1, 4, 1)} : <1x4x1xi32>
    %r2 = tt.reshape %t {shape = (2, 16)} : <2x16xi32>
    %bb = tt.broadcast %v {shape = (8, 4)} : <8x4xi32>
    """
    check(lambda f: dce(canonicalize(f)), "%x: i32, %t: <8x4xi32>, %v: <8x1xi32>",
          body + keep("%b", "%e", "%r2", "%r3", "%t2", "%u", "%bb2", "%c"),
          after + keep("%b", "%e", "%r2", "%t", "%t", "%t", "%bb", "%t"))


def test_trans_of_trans_composes():
    body = """\
    %a = tt.trans %t {perm = (1, 2, 0)} : <3x4x2xi32>
    %b = tt.trans %a {perm = (1, 2, 0)} : <4x2x3xi32>
    """
    after = "%b = tt.trans %t {perm = (2, 0, 1)} : <4x2x3xi32>\n"
    check(lambda f: dce(canonicalize(f)), "%t: <2x3x4xi32>", body + keep("%b"), after + keep("%b"))


def test_select_and_compare_of_same_operands():
    body = """\
    %t = arith.constant true : <4xi1>
    %s1 = arith.select %t, %a, %b : <4xfp32>
    %s2 = arith.select %m, %b, %b : <4xfp32>
    %c1 = arith.cmp %i, %i {pred = "le"} : <4xi1>
    %c2 = arith.cmp %i, %i {pred = "ne"} : <4xi1>
    %c3 = arith.cmp %a, %a {pred = "eq"} : <4xi1>
    """
    after = """\
    %c1 = arith.constant true : <4xi1>
    %c2 = arith.constant false : <4xi1>
    %c3 = arith.cmp %a, %a {pred = "eq"} : <4xi1>
    """
    check(lambda f: dce(canonicalize(f)), "%a: <4xfp32>, %b: <4xfp32>, %m: <4xi1>, %i: <4xi32>",
          body + keep("%s1", "%s2", "%c1", "%c2", "%c3"),
          after + keep("%a", "%b", "%c1", "%c2", "%c3"))


def test_if_on_constant_condition_is_inlined_and_empty_loops_vanish():
    body = """\
    %t = arith.constant true : i1
    %r = scf.if %t -> (i32) {
      %y = arith.mul %x, %x : i32
      scf.yield %y
    } else {
      scf.yield %x
    }
    %z = arith.constant 5 : i32
    %one = arith.constant 1 : i32
    %l = scf.for %i = %z to %z step %one iter_args(%acc = %r) -> (i32) {
      %n = arith.add %acc, %i : i32
      scf.yield %n
    }
    """
    after = "%y = arith.mul %x, %x : i32\n"
    check(lambda f: dce(canonicalize(f)), "%x: i32", body + keep("%l"), after + keep("%y"))


def test_if_yielding_the_same_outer_values_on_both_paths_is_those_values():
    body = """\
    %c = arith.cmp %x, %y {pred = "lt"} : i1
    %r = scf.if %c -> (i32) {
      %t = arith.mul %x, %x : i32
      scf.yield %y
    } else {
      scf.yield %y
    }
    %s = scf.if %c -> (i32) {
      tt.print %x {prefix = ""}
      scf.yield %y
    } else {
      scf.yield %y
    }
    %u = scf.if %c -> (i32) {
      scf.yield %x
    } else {
      scf.yield %y
    }
    """
    after = """\
    %c = arith.cmp %x, %y {pred = "lt"} : i1
    %s = scf.if %c -> (i32) {
      tt.print %x {prefix = ""}
      scf.yield %y
    } else {
      scf.yield %y
    }
    %u = scf.if %c -> (i32) {
      scf.yield %x
    } else {
      scf.yield %y
    }
    """
    check(lambda f: dce(canonicalize(f)), "%x: i32, %y: i32", body + keep("%r", "%s", "%u"),
          after + keep("%y", "%s", "%u"))


# ---- folding -----------------------------------------------------------------------------
@pytest.mark.parametrize("ty, a, op, b, result", [
    ("i32", -7, "arith.idiv", 2, "-3"), ("i32", -7, "arith.rem", 2, "-1"),
    ("i32", 7, "arith.rem", -2, "1"), ("i32", 2147483647, "arith.add", 1, "-2147483648"),
    ("i8", 100, "arith.mul", 3, "44"), ("u8", 0, "arith.sub", 1, "255"),
    ("i32", -16, "arith.shr", 2, "-4"), ("u32", 4294967280, "arith.shr", 2, "1073741820"),
    ("i16", 1, "arith.shl", 15, "-32768"), ("u32", 4294967295, "arith.umulhi", 4294967295, "4294967294"),
    ("i32", -1, "arith.umulhi", 2, "1"), ("u16", 3, "arith.min", 65535, "3"),
    ("i64", -9223372036854775807, "arith.sub", 2, "9223372036854775807"),
])
def test_integer_folds(ty, a, op, b, result):
    body = f"%a = arith.constant {a} : {ty}\n%b = arith.constant {b} : {ty}\n%r = {op} %a, %b : {ty}\n"
    check(lambda f: dce(fold_constants(f)), "", body + keep("%r"),
          f"%r = arith.constant {result} : {ty}\n" + keep("%r"))


@pytest.mark.parametrize("ty, a, op, b", [
    ("i32", 5, "arith.idiv", 0), ("i32", 5, "arith.rem", 0), ("u8", 5, "arith.idiv", 0),
    ("i32", -2147483648, "arith.idiv", -1), ("i32", -2147483648, "arith.rem", -1),
    ("i32", 1, "arith.shl", 32), ("i32", 1, "arith.shr", -1), ("u8", 1, "arith.shl", 8),
    ("i32", 4294967295, "arith.add", 0),          # stored value outside the type's range
    ("fp16", 1.0, "arith.add", 2.0),               # half precision: left to the backends
])
def test_undefined_or_doubtful_operations_are_not_folded(ty, a, op, b):
    body = f"%a = arith.constant {a} : {ty}\n%b = arith.constant {b} : {ty}\n%r = {op} %a, %b : {ty}\n"
    f = parse_function(func("", body + keep("%r")))
    fold_constants(f)
    assert op in print_function(f)


def test_float_and_cast_folds():
    body = """\
    %a = arith.constant 0.1 : fp32
    %b = arith.constant 0.2 : fp32
    %s = arith.add %a, %b : fp32
    %d = arith.truediv %a, %b : fp64
    %i = tt.cast %s {to = i32} : i32
    %big = arith.constant 3000000000.0 : fp32
    %no = tt.cast %big {to = i32} : i32
    %m = arith.constant -1 : i8
    %u = tt.cast %m {to = u32} : u32
    %bl = tt.cast %m {to = i1} : i1
    %f = tt.cast %m {to = fp32} : fp32
    %z = arith.constant 0.0 : fp32
    %nan = arith.truediv %z, %z : fp32
    %ne = arith.cmp %nan, %nan {pred = "ne"} : i1
    %eq = arith.cmp %nan, %nan {pred = "eq"} : i1
    """.replace("%d = arith.truediv %a, %b : fp64\n", "")
    after = """\
    %s = arith.constant 0.30000001192092896 : fp32
    %i = arith.constant 0 : i32
    %big = arith.constant 3000000000.0 : fp32
    %no = tt.cast %big {to = i32} : i32
    %u = arith.constant 4294967295 : u32
    %bl = arith.constant true : i1
    %f = arith.constant -1.0 : fp32
    %nan = arith.constant nan : fp32
    %ne = arith.constant true : i1
    %eq = arith.constant false : i1
    """
    check(lambda f: dce(fold_constants(f)), "",
          body + keep("%s", "%i", "%no", "%u", "%bl", "%f", "%nan", "%ne", "%eq"),
          after + keep("%s", "%i", "%no", "%u", "%bl", "%f", "%nan", "%ne", "%eq"))


def test_folding_tiles_of_constants():
    body = """\
    %c = arith.constant 3 : i32
    %s = tt.splat %c {shape = (4,)} : <4xi32>
    %t = arith.constant 5 : <4xi32>
    %r = arith.mul %s, %t : <4xi32>
    %e = tt.expand_dims %r {axis = 0} : <1x4xi32>
    %b = tt.broadcast %e {shape = (2, 4)} : <2x4xi32>
    """
    check(lambda f: dce(fold_constants(f)), "", body + keep("%b"),
          "%b = arith.constant 15 : <2x4xi32>\n" + keep("%b"))


# ---- CSE ---------------------------------------------------------------------------------
def test_cse_merges_pure_ops_but_not_loads_and_respects_regions():
    body = """\
    %a = arith.add %x, %x : i32
    %b = arith.add %x, %x : i32
    %l1 = tt.load %p : fp32
    %l2 = tt.load %p : fp32
    %c = arith.cmp %a, %x {pred = "lt"} : i1
    %d = arith.cmp %a, %x {pred = "le"} : i1
    %r = scf.if %c -> (i32) {
      %in1 = arith.add %x, %x : i32
      %in2 = arith.mul %x, %x : i32
      scf.yield %in2
    } else {
      %in3 = arith.mul %x, %x : i32
      scf.yield %in3
    }
    %after = arith.mul %x, %x : i32
    """
    after = """\
    %a = arith.add %x, %x : i32
    %l1 = tt.load %p : fp32
    %l2 = tt.load %p : fp32
    %c = arith.cmp %a, %x {pred = "lt"} : i1
    %d = arith.cmp %a, %x {pred = "le"} : i1
    %r = scf.if %c -> (i32) {
      %in2 = arith.mul %x, %x : i32
      scf.yield %in2
    } else {
      %in3 = arith.mul %x, %x : i32
      scf.yield %in3
    }
    %after = arith.mul %x, %x : i32
    """
    check(cse, "%x: i32, %p: *fp32", body + keep("%b", "%l1", "%l2", "%d", "%r", "%after"),
          after + keep("%a", "%l1", "%l2", "%d", "%r", "%after"))


def test_cse_tells_constants_apart_by_type_and_value():
    body = """\
    %a = arith.constant 0 : i32
    %b = arith.constant 0.0 : fp32
    %c = arith.constant -0.0 : fp32
    %d = arith.constant 0 : i32
    %e = arith.constant false : i1
    %f = arith.constant 0 : i1
    """
    after = """\
    %a = arith.constant 0 : i32
    %b = arith.constant 0.0 : fp32
    %c = arith.constant -0.0 : fp32
    %e = arith.constant false : i1
    %f = arith.constant 0 : i1
    """
    check(cse, "", body + keep("%a", "%b", "%c", "%d", "%e", "%f"),
          after + keep("%a", "%b", "%c", "%a", "%e", "%f"))


# ---- DCE -----------------------------------------------------------------------------------
def test_dce_keeps_effects_and_drops_the_rest():
    body = """\
    %dead = arith.add %x, %x : i32
    %l = tt.load %p : fp32
    %v = tt.load %p {volatile = true} : fp32
    %t = arith.constant true : i1
    tt.assert %t {msg = "m"}
    %one = arith.constant 1 : i32
    %r = scf.for %i = %x to %x step %one iter_args(%a = %x) -> (i32) {
      %n = arith.add %a, %i : i32
      scf.yield %n
    }
    scf.for %j = %x to %x step %one {
      tt.store %p, %l
      scf.yield
    }
    %w = scf.while (%k = %x) -> (i32) {
      %c = arith.cmp %k, %x {pred = "lt"} : i1
      scf.condition %c, %k
    } do (%k2: i32) {
      scf.yield %k2
    }
    """
    after = """\
    %l = tt.load %p : fp32
    %v = tt.load %p {volatile = true} : fp32
    %t = arith.constant true : i1
    tt.assert %t {msg = "m"}
    %one = arith.constant 1 : i32
    scf.for %j = %x to %x step %one {
      tt.store %p, %l
      scf.yield
    }
    %w = scf.while (%k = %x) -> (i32) {
      %c = arith.cmp %k, %x {pred = "lt"} : i1
      scf.condition %c, %k
    } do (%k2: i32) {
      scf.yield %k2
    }
    """
    check(dce, "%x: i32, %p: *fp32", body, after)


def test_dce_prunes_dead_loop_carried_values_and_if_results():
    body = """\
    %one = arith.constant 1 : i32
    %r, %cnt = scf.for %i = %x to %x step %one iter_args(%a = %x, %c = %x) -> (i32, i32) {
      %n = arith.add %a, %i : i32
      %c2 = arith.add %c, %one : i32
      %c3 = arith.mul %c2, %c2 : i32
      scf.yield %n, %c3
    }
    %b = arith.cmp %r, %x {pred = "lt"} : i1
    %u, %v = scf.if %b -> (i32, i32) {
      %e = arith.mul %r, %r : i32
      scf.yield %r, %e
    } else {
      scf.yield %x, %x
    }
    """
    after = """\
    %one = arith.constant 1 : i32
    %r = scf.for %i = %x to %x step %one iter_args(%a = %x) -> (i32) {
      %n = arith.add %a, %i : i32
      scf.yield %n
    }
    %b = arith.cmp %r, %x {pred = "lt"} : i1
    %u = scf.if %b -> (i32) {
      scf.yield %r
    } else {
      scf.yield %x
    }
    """
    check(dce, "%x: i32", body + keep("%u"), after + keep("%u"))


def test_carried_value_feeding_another_one_is_kept():
    body = """\
    %one = arith.constant 1 : i32
    %r, %cnt = scf.for %i = %x to %x step %one iter_args(%a = %x, %c = %x) -> (i32, i32) {
      %n = arith.add %a, %c : i32
      scf.yield %n, %c
    }
    """
    check(dce, "%x: i32", body + keep("%r"), body + keep("%r"))


# ---- pass manager ---------------------------------------------------------------------------
def test_pipeline_dumps_every_stage_in_order_and_verifies_in_debug():
    f = parse_function(func("%x: i32", "%z = arith.constant 0 : i32\n%r = arith.add %x, %z : i32\n"
                                      + keep("%r")))
    seen = []
    out = run_pipeline(f, Options(debug=True), dump=lambda name, text: seen.append((name, text)))
    assert [n for n, _ in seen] == [n for n, _ in PIPELINE]
    assert seen[-1][1] == print_function(out)
    assert print_function(out, locs=False) == func("%x: i32", keep("%x"))


def test_debug_mode_names_the_pass_that_broke_the_ir():
    def broken(f):
        f.block.ops.pop()       # drops tt.return
        return f

    f = parse_function(func("", ""))
    with pytest.raises(ValueError, match="after pass 'oops'.*must end with tt.return"):
        run_pipeline(f, Options(debug=True), pipeline=[("oops", broken)])
    f = parse_function(func("", ""))
    run_pipeline(f, Options(debug=False), pipeline=[("oops", broken)])   # not checked
