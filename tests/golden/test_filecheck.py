"""The FileCheck runner itself: each directive passes and fails where it should."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from filecheck import FileCheckError, filecheck, parse_checks  # noqa: E402

OUT = """\
tt.func @a(%x: i32) {
  %0 = arith.add %x, %x : i32
  %1 = arith.mul %0, %x : i32
  tt.return
}
tt.func @b(%y: i32) {
  %0 = arith.sub %y, %y : i32
  tt.return
}
"""


def ok(checks):
    assert filecheck(OUT, checks) > 0


def bad(checks, needle=""):
    with pytest.raises(FileCheckError) as info:
        filecheck(OUT, checks)
    assert needle in str(info.value)


def test_plain_next_same_not():
    ok("// CHECK: arith.add\n// CHECK-NEXT: arith.mul %0\n// CHECK-SAME: : i32\n"
       "// CHECK-NOT: arith.sub\n// CHECK: tt.return")
    bad("// CHECK: arith.mul\n// CHECK: arith.add", "no match")          # order matters
    bad("// CHECK: arith.add\n// CHECK-NEXT: tt.return", "no match")     # not the next line
    bad("// CHECK: arith.add\n// CHECK-SAME: arith.mul", "no match")
    bad("// CHECK: arith.add\n// CHECK-NOT: arith.mul\n// CHECK: tt.return", "excluded pattern")
    bad("# CHECK-NOT: arith.div\n# CHECK-NOT: tt.func @c", "no CHECK")


def test_zero_checks_fail():
    bad("", "no CHECK")
    bad("// CHECKX: foo\n// XCHECK: foo", "no CHECK")
    assert len(parse_checks("// CHECK: a\n// CHECK-NEXT: b\n// OTHER: c")) == 2


def test_regex_and_variables():
    ok("// CHECK: %[[V:[0-9]+]] = arith.add\n// CHECK: arith.mul %[[V]], %x")
    ok("// CHECK: arith.{{(add|sub)}} %x")
    bad("// CHECK: %[[V:[0-9]+]] = arith.add\n// CHECK-NEXT: arith.mul %x, %[[V]]", "no match")
    bad("// CHECK: arith.mul %[[NOPE]]", "undefined variable")


def test_whitespace_runs_are_flexible_and_text_is_literal():
    ok("// CHECK: arith.add    %x,   %x")
    bad("// CHECK: arith.add %x.%x", "no match")        # '.' is not a regex wildcard


def test_labels_split_sections():
    ok("// CHECK-LABEL: @a\n// CHECK: tt.return\n// CHECK-LABEL: @b\n// CHECK: arith.sub")
    # arith.sub exists only after @b: it must not be found in @a's section
    bad("// CHECK-LABEL: @a\n// CHECK: arith.sub\n// CHECK-LABEL: @b", "no match")
    bad("// CHECK-LABEL: @a\n// CHECK-NOT: arith.sub\n// CHECK-LABEL: @c", "label not found")
    ok("// CHECK-LABEL: @a\n// CHECK-NOT: arith.sub\n// CHECK-LABEL: @b")


def test_custom_prefix():
    assert filecheck(OUT, "// OPT: arith.sub\n// CHECK: nothing-like-this", prefix="OPT") == 1


def test_runner_fails_a_golden_file_without_checks(tmp_path):
    import runner
    ir = "tt.func @f() {\n  tt.return\n}\n"
    empty = tmp_path / "empty.tir"
    empty.write_text("// RUN: print\n" + ir)
    with pytest.raises(FileCheckError, match="no CHECK"):
        runner.check_file(str(empty))
    wrong_prefix = tmp_path / "prefix.tir"
    wrong_prefix.write_text("// RUN: print --check-prefix=OPT\n// CHECK: tt.func @f\n" + ir)
    with pytest.raises(FileCheckError, match="no OPT"):
        runner.check_file(str(wrong_prefix))
    good = tmp_path / "good.tir"
    good.write_text("// RUN: passes=dce\n// CHECK: tt.func @f()\n// CHECK-NEXT: tt.return\n" + ir)
    assert runner.check_file(str(good)) == 2
    bad_mode = tmp_path / "mode.tir"
    bad_mode.write_text("// RUN: nosuchmode\n// CHECK: x\n" + ir)
    with pytest.raises(ValueError, match="unknown mode"):
        runner.check_file(str(bad_mode))


def test_runner_argument_directives():
    import runner
    from tilejit.ir import PointerType, float32, int32
    types, spec = runner.parse_args_directive("x=*fp32:16 n=i32 one=i32:eq1 m=i32:16:eq1")
    assert types == {"x": PointerType(float32), "n": int32, "one": int32, "m": int32}
    assert spec == {"x": (16, False), "one": (1, True), "m": (16, True)}
    run = runner.parse_run("analysis --grid=4,1,1 --locs --kernel=k --check-prefix=A")
    assert (run.mode, run.locs, run.kernel, run.prefix, run.extra) == \
        ("analysis", True, "k", "A", {"grid": "4,1,1"})
