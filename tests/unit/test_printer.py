"""The IR printer: exact text of small functions, names, attributes, locations, notes."""
import os
import sys

import numpy as np
import pytest

from tilejit.ir import Builder, Function, Loc, PointerType, TileType, float32, int1, int32, ops
from tilejit.ir import bfloat16, float16, float64, int8, int64, uint8, uint64
from tilejit.ir.printer import (Opaque, format_attr, format_loc, format_type, print_function,
                                print_op)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "golden"))
import irsamples  # noqa: E402


def _scale_kernel():
    f = Function("scale", Loc("k.py", 1, 0))
    b = Builder(f)
    x = f.add_argument("x_ptr", TileType(PointerType(float32)), divisibility=16)
    n = f.add_argument("n", TileType(int32))
    with b.location(Loc("k.py", 3, 8)):
        pid = b.value(ops.ProgramIdOp, axis=0)
        pid.name_hint = "pid"
        r = b.value(ops.ArangeOp, start=0, end=4)
        offs = b.value(ops.AddOp, lhs=b.value(ops.SplatOp, src=pid, shape=(4,)), rhs=r)
        offs.name_hint = "offs"
        m = b.value(ops.CmpOp, lhs=offs, rhs=b.value(ops.SplatOp, src=n, shape=(4,)), pred="lt")
        p = b.value(ops.AddPtrOp, ptr=b.value(ops.SplatOp, src=x, shape=(4,)), offset=offs)
        v = b.value(ops.LoadOp, ptr=p, mask=m)
        two = b.constant(2.5, TileType(float32, (4,)))
        b.create(ops.StoreOp, ptr=p, value=b.value(ops.MulOp, lhs=v, rhs=two), mask=m)
        b.create(ops.ReturnOp)
    return f


EXPECTED_SCALE = """\
tt.func @scale(%x_ptr: *fp32 {tt.divisibility = 16}, %n: i32) {
  %pid = tt.get_program_id {axis = 0} : i32
  %0 = tt.make_range {start = 0, end = 4} : <4xi32>
  %1 = tt.splat %pid {shape = (4,)} : <4xi32>
  %offs = arith.add %1, %0 : <4xi32>
  %2 = tt.splat %n {shape = (4,)} : <4xi32>
  %3 = arith.cmp %offs, %2 {pred = "lt"} : <4xi1>
  %4 = tt.splat %x_ptr {shape = (4,)} : <4x*fp32>
  %5 = tt.addptr %4, %offs : <4x*fp32>
  %6 = tt.load %5, mask = %3 : <4xfp32>
  %7 = arith.constant 2.5 : <4xfp32>
  %8 = arith.mul %6, %7 : <4xfp32>
  tt.store %5, %8, mask = %3
  tt.return
}
"""


def test_exact_text_without_locations():
    assert print_function(_scale_kernel(), locs=False) == EXPECTED_SCALE


def test_locations_on_every_op_and_the_function():
    text = print_function(_scale_kernel())
    lines = text.splitlines()
    assert all(line.endswith('loc("k.py":3:8)') for line in lines[1:-1])
    assert lines[-1] == '} loc("k.py":1:0)'


def test_duplicate_hints_get_suffixes_and_missing_hints_numbers():
    f = Function("names")
    b = Builder(f)
    n = f.add_argument("n", TileType(int32))
    one = b.constant(1, TileType(int32))
    a1 = b.value(ops.AddOp, lhs=n, rhs=one)
    a1.name_hint = "n"            # reassigning an argument: same hint, new value
    a2 = b.value(ops.AddOp, lhs=a1, rhs=one)
    a2.name_hint = "n"
    weird = b.value(ops.MulOp, lhs=a2, rhs=one)
    weird.name_hint = "3 bad-name"
    b.create(ops.ReturnOp)
    text = print_function(f, locs=False)
    assert "%n.1 = arith.add %n, %0 : i32" in text
    assert "%n.2 = arith.add %n.1, %0 : i32" in text
    assert "%v3_bad_name = arith.mul %n.2, %0 : i32" in text


@pytest.mark.parametrize("value, text", [
    (0, "0"), (-7, "-7"), (2 ** 70, str(2 ** 70)), (True, "true"), (False, "false"),
    (None, "none"), (1.5, "1.5"), (-0.0, "-0.0"), (1e-300, "1e-300"),
    (float("inf"), "inf"), (float("-inf"), "-inf"), (float("nan"), "nan"),
    ("a\"b\n", '"a\\"b\\n"'), ((), "()"), ((3,), "(3,)"), ((1, 2), "(1, 2)"),
    ([1, [2]], "[1, [2]]"), ({"k": 1, "odd key": "v"}, '{k = 1, "odd key" = "v"}'),
    (float32, "fp32"), (int1, "i1"), (uint8, "u8"), (bfloat16, "bf16"),
    (PointerType(float16), "*fp16"), (PointerType(int8, 0), "*i8@0"),
    (TileType(int32), "<i32>"), (TileType(float64, (2, 3)), "<2x3xfp64>"),
    (np.int64(5), "5"), (np.float32(0.5), "0.5"), (np.bool_(True), "true"),
    (Opaque("<fn>"), '#opaque<"<fn>">'), (_scale_kernel, f'#opaque<"{__name__}._scale_kernel">'),
    (object(), '#opaque<"<object object>">'),
])
def test_attribute_values(value, text):
    assert format_attr(value) == text


def test_types_and_locations():
    assert format_type(TileType(uint64)) == "u64"
    assert format_type(TileType(PointerType(PointerType(float32)), (8,))) == "<8x**fp32>"
    assert format_loc(Loc("a b.py", 3, 0, "helper")) == 'loc("a b.py":3:0 in "helper")'


def test_default_attributes_are_omitted_but_not_equal_looking_values():
    f = irsamples.build_tiles_2d()
    text = print_function(f, locs=False)
    assert 'tt.load %8, other = %9 {cache = ".ca", eviction = "evict_last"}' in text
    # max_num_imprecise_acc=None is the default: not printed
    assert "max_num_imprecise_acc" not in text


def test_annotations_for_results_and_block_arguments():
    f = irsamples.build_loop_sum()

    def note(v):
        return f"t={v.type}" if v.type.is_scalar else None

    text = print_function(f, locs=False, annotate=note)
    assert "  // %n: t=int32" in text
    assert "// %i: t=int32" in text                      # loop induction variable
    assert "%total = tt.reduce %acc {kind = \"sum\", axis = 0} : fp32  // t=fp32" in text
    assert "%acc, %4 = scf.for" in text and "// %acc: " not in text.split("scf.for")[1].split("\n")[0]
    # values without a note carry no comment
    assert "%x = tt.load %12 : <16xfp32>\n" in text


def test_constant_with_odd_attributes_uses_the_quoted_generic_form():
    f = Function("g")
    b = Builder(f)
    b.create(ops.ConstantOp, value=3, type=TileType(int32), result_types=[TileType(int64)])
    b.create(ops.ReturnOp)
    text = print_function(f, locs=False)
    assert '%0 = "arith.constant" {value = 3, type = <i32>} : i64' in text


def test_print_op_names_outside_operands():
    f = _scale_kernel()
    store = [op for op in f.walk() if op.name == "tt.store"][0]
    assert print_op(store, func=f, locs=False) == "tt.store %5, %8, mask = %3"
    assert print_op(store, locs=False) == "tt.store %0, %1, mask = %2"


def test_printing_is_deterministic_across_rebuilds():
    for build in irsamples.SAMPLES.values():
        assert print_function(build()) == print_function(build())
