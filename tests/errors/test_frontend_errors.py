"""Mistakes in kernels: a CompilationError with file:line:col, the source line and a
caret, the cause, and nothing of the compiler's internals."""
import traceback

import pytest

import tilejit
import tilejit.language as tl
from tilejit.frontend import build_ir
from tilejit.errors import CompilationError
from tilejit.ir.types import PointerType, float32, int32

GLOBAL_LIST = [1, 2, 3]
GLOBAL_BLOCK = 16
GLOBAL_CX = tl.constexpr(32)
TYPES = {"x_ptr": PointerType(float32), "n": int32}


def compile_error(kernel, types=None, constexprs=None):
    with pytest.raises(CompilationError) as info:
        build_ir(kernel, TYPES if types is None else types, constexprs or {})
    return info.value


def check_message(err, kernel, needle, line_offset, snippet):
    """The message names the kernel, the line (relative to the def), a caret under the
    failing expression, and contains ``needle``; it shows no compiler file."""
    text = str(err)
    line = kernel.first_line + line_offset
    assert f"{kernel.file}:{line}:" in text, text
    assert f"'{kernel.__name__}'" in text
    assert needle in text, text
    assert "tilejit/" not in text.replace(kernel.file, ""), text
    lines = text.splitlines()
    src_idx = next(i for i, ln in enumerate(lines) if snippet in ln)
    caret = lines[src_idx + 1]
    assert caret.strip() == "^"
    assert lines[src_idx][caret.index("^"):].startswith(snippet), (lines[src_idx], caret)
    assert err.line == line
    frames = "".join(traceback.format_exception(err))
    for internal in ("frontend/codegen.py", "frontend/control.py", "language/semantic"):
        assert internal not in frames, frames
    return text


def test_unknown_name():
    @tilejit.jit
    def k(x_ptr, n):
        y = undefined_thing + 1  # noqa: F821
        tl.store(x_ptr, y)
    err = compile_error(k)
    assert isinstance(err, NameError)
    check_message(err, k, "name 'undefined_thing' is not defined", 2, "undefined_thing")


def test_arange_needs_constexpr():
    @tilejit.jit
    def k(x_ptr, n):
        offs = tl.arange(0, n)
        tl.store(x_ptr + offs, 1.0)
    err = compile_error(k)
    assert isinstance(err, ValueError) and isinstance(err.error, ValueError)
    check_message(err, k, "arange's arguments must be of type tl.constexpr", 2, "tl.arange(0, n)")


def test_shape_mismatch():
    @tilejit.jit
    def k(x_ptr, n):
        a = tl.arange(0, 16)
        b = tl.arange(0, 32)
        tl.store(x_ptr + a, a + b)
    err = compile_error(k)
    assert isinstance(err, ValueError)
    check_message(err, k, "16 and 32", 4, "a + b")


def test_wrong_type_load_of_int():
    @tilejit.jit
    def k(x_ptr, n):
        v = tl.load(n)
        tl.store(x_ptr, v)
    err = compile_error(k)
    assert isinstance(err, TypeError)
    check_message(err, k, "Unsupported ptr type int32", 2, "tl.load(n)")


def test_float_pointer_offset():
    @tilejit.jit
    def k(x_ptr, n):
        tl.store(x_ptr + 1.5, 0.0)
    err = compile_error(k)
    check_message(err, k, "invalid operands", 2, "x_ptr + 1.5")


def test_static_range_needs_constexpr():
    @tilejit.jit
    def k(x_ptr, n):
        for i in tl.static_range(n):
            tl.store(x_ptr + i, 0.0)
    err = compile_error(k)
    check_message(err, k, "static_range end must be a tl.constexpr int", 2, "tl.static_range(n)")


def test_reshape_needs_constexpr_shape():
    @tilejit.jit
    def k(x_ptr, n):
        a = tl.reshape(tl.arange(0, 16), [n])
        tl.store(x_ptr + a, 0.0)
    err = compile_error(k)
    check_message(err, k, "must be a tl.constexpr int", 2, "tl.reshape")


@pytest.mark.parametrize("body,needle,snippet", [
    ("f = lambda v: v", "lambda", "lambda"),
    ("ys = [v for v in range(n)]", "must iterate over a compile-time tuple", "[v for v"),
    ("for i in range(n):\n        break", "break", "break"),
    ("for i in range(n):\n        continue", "continue", "continue"),
    ("with open('f') as fh:\n        pass", "with statements", "with open"),
    ("try:\n        pass\n    except Exception:\n        pass", "try statements", "try:"),
])
def test_unsupported_constructs(tmp_path, body, needle, snippet):
    src = f"import tilejit\nimport tilejit.language as tl\n\n@tilejit.jit\ndef k(x_ptr, n):\n    {body}\n"
    path = tmp_path / f"kern_{abs(hash(body))}.py"
    path.write_text(src)
    ns = {}
    import importlib.util
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    k = mod.k
    err = compile_error(k)
    text = str(err)
    assert needle in text and "unsupported" in text
    assert f"{path}:" in text and "^" in text
    assert snippet in text
    del ns


@tilejit.jit
def two_args(a, b):
    return a + b


def test_wrong_number_of_args_to_jit_callee():
    @tilejit.jit
    def k(x_ptr, n):
        tl.store(x_ptr, two_args(n, n, n))
    err = compile_error(k)
    check_message(err, k, "two_args() takes 2 positional arguments but 3 were given", 2, "two_args(n, n, n)")

    @tilejit.jit
    def k2(x_ptr, n):
        tl.store(x_ptr, two_args(n, c=1))
    check_message(compile_error(k2), k2, "unexpected keyword argument 'c'", 2, "two_args(n, c=1)")

    @tilejit.jit
    def k3(x_ptr, n):
        tl.store(x_ptr, two_args(n))
    check_message(compile_error(k3), k3, "missing required argument 'b'", 2, "two_args(n)")


@tilejit.jit
def bad_helper(v):
    w = v + 1
    return tl.arange(0, w)


def test_error_inside_user_helper_points_into_helper():
    """As Triton chains it: the error at the call site, the helper's error (at its own
    line) as the cause, and both shown in the message."""
    @tilejit.jit
    def k(x_ptr, n):
        tl.store(x_ptr, bad_helper(n))
    err = compile_error(k)
    assert err.line == k.first_line + 2 and isinstance(err, ValueError)
    inner = err.__cause__
    assert isinstance(inner, CompilationError) and inner.line == bad_helper.first_line + 3
    assert "tl.arange(0, w)" in str(inner) and "at 3:11:" in str(inner)
    assert "bad_helper(n)" in str(err) and "tl.arange(0, w)" in str(err)
    assert "in the @jit function 'bad_helper' called here" in str(err)


def test_error_inside_library_points_at_call_site():
    @tilejit.jit
    def k(x_ptr, n):
        r = tl.rand(1.5, tl.arange(0, 16))
        tl.store(x_ptr + tl.arange(0, 16), r)
    err = compile_error(k)
    check_message(err, k, "seed must be an integer", 2, "tl.rand(1.5")


def test_global_list_is_rejected_but_constants_work():
    @tilejit.jit
    def k(x_ptr, n):
        tl.store(x_ptr + GLOBAL_LIST, 0.0)
    check_message(compile_error(k), k, "global variable 'GLOBAL_LIST' of type list", 2, "GLOBAL_LIST")

    @tilejit.jit
    def ok(x_ptr, n):
        offs = tl.arange(0, GLOBAL_BLOCK) + tl.arange(0, GLOBAL_CX // 2)
        tl.store(x_ptr + offs, 0.0)
    build_ir(ok, TYPES, {})


def test_static_assert_failure():
    @tilejit.jit
    def k(x_ptr, n, B: tl.constexpr):
        tl.static_assert(B % 16 == 0, "B must be a multiple of 16")
        tl.store(x_ptr, 0.0)
    err = compile_error(k, constexprs={"B": 10})
    assert isinstance(err, AssertionError)
    check_message(err, k, "B must be a multiple of 16", 2, "tl.static_assert")
    build_ir(k, TYPES, {"B": 32})


def test_loop_carried_type_change():
    @tilejit.jit
    def k(x_ptr, n):
        acc = tl.zeros([16], tl.float32)
        for i in range(n):
            acc = acc.to(tl.int32)
        tl.store(x_ptr + tl.arange(0, 16), acc)
    err = compile_error(k)
    check_message(err, k, "loop-carried variable 'acc' has type <16xfp32>", 3, "for i in range(n)")


def test_if_on_block_condition():
    @tilejit.jit
    def k(x_ptr, n):
        a = tl.arange(0, 16)
        if a > 3:
            n = 1
        tl.store(x_ptr, n)
    check_message(compile_error(k), k, "use tl.where", 3, "if a > 3")


def test_kernel_returning_a_value():
    @tilejit.jit
    def k(x_ptr, n):
        return n
    check_message(compile_error(k), k, "a kernel cannot return a value", 2, "return n")


def test_item_assignment():
    @tilejit.jit
    def k(x_ptr, n):
        a = tl.arange(0, 16)
        a[0] = 1
    check_message(compile_error(k), k, "tensors are immutable", 3, "a[0] = 1")


def test_name_defined_in_one_branch_only():
    @tilejit.jit
    def k(x_ptr, n):
        if n > 0:
            y = 1.0
        tl.store(x_ptr, y)
    check_message(compile_error(k), k, "name 'y' is not defined", 4, "y)")


def test_branch_type_mismatch():
    @tilejit.jit
    def k(x_ptr, n):
        if n > 0:
            y = tl.zeros([16], tl.float32)
        else:
            y = tl.zeros([32], tl.float32)
        tl.store(x_ptr, y)
    check_message(compile_error(k), k, "Mismatched type for y between then block (<16xfp32>) and else block (<32xfp32>)",
                  2, "if n > 0")


def test_dot_shape_mismatch():
    @tilejit.jit
    def k(x_ptr, n):
        a = tl.zeros([16, 32], tl.float32)
        b = tl.zeros([16, 16], tl.float32)
        c = tl.dot(a, b)
        tl.store(x_ptr, c)
    check_message(compile_error(k), k, "not compatible", 4, "tl.dot(a, b)")


def test_launch_reports_compilation_error():
    @tilejit.jit
    def k(x_ptr, n):
        tl.store(x_ptr + tl.arange(0, n), 0.0)
    import numpy as np
    from tilejit.runtime.options import use_options
    with use_options(backend="interpreter", interpret=True):
        with pytest.raises(tilejit.CompilationError) as info:
            k[(1,)](np.zeros(4, np.float32), 4)
    assert "arange's arguments must be of type tl.constexpr" in str(info.value)
    assert "tilejit/" not in str(info.value).replace(k.file, "")


@tilejit.jit
def _pair_combine(a, b):
    return a * b + 1, a


def test_reduce_with_combine_returning_too_many_values():
    @tilejit.jit
    def k(x_ptr, n):
        x = tl.load(x_ptr + tl.arange(0, 16))
        tl.store(x_ptr, tl.reduce(x, 0, _pair_combine))
    check_message(compile_error(k), k, "the combine function returned 2 values for 1 inputs", 3, "tl.reduce(")


def test_error_keeps_the_original_exception_class():
    @tilejit.jit
    def k(x_ptr, n, D: tl.constexpr):
        tl.store(x_ptr, 1 // D)
    with pytest.raises(ZeroDivisionError) as info:
        build_ir(k, TYPES, {"D": 0})
    err = info.value
    assert isinstance(err, CompilationError) and isinstance(err.error, ZeroDivisionError)
    assert "ZeroDivisionError" in str(err) and "1 // D" in str(err)
    import pickle
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, CompilationError) and str(again) == str(err)


def test_unsupported_triton_name_is_reported_at_its_use():
    @tilejit.jit
    def k(x_ptr, n):
        p = tl.bitonic_merge(x_ptr)
        tl.store(x_ptr, p)
    err = compile_error(k)
    assert isinstance(err, AttributeError)
    check_message(err, k, "bitonic_merge", 2, "tl.bitonic_merge")


def test_merged_constant_out_of_range():
    @tilejit.jit
    def k(x_ptr, n):
        if n > 0:
            y = n
        else:
            y = 2 ** 40
        tl.store(x_ptr, y)
    check_message(compile_error(k), k, "does not fit in int32", 2, "if n > 0")


def test_kernel_without_source_is_a_compilation_error_naming_it():
    ns = {}
    exec(compile("def typed_at_a_prompt(x_ptr):\n    pass\n", "<stdin>", "exec"), ns)
    with pytest.raises(CompilationError) as info:
        tilejit.jit(ns["typed_at_a_prompt"])
    text = str(info.value)
    assert "typed_at_a_prompt" in text and "<stdin>:1" in text and ".py file" in text


@tilejit.jit
def returns_by_flag(n):
    if n == 0:
        return tl.arange(0, 4)
    else:
        return tl.arange(0, 8)


def test_return_type_mismatch_points_at_the_def():
    @tilejit.jit
    def k(x_ptr, n):
        returns_by_flag(n)
    err = compile_error(k)
    assert err.line == k.first_line + 2
    assert err.__cause__.line == returns_by_flag.first_line + 1
    assert "at 1:0:" in str(err.__cause__) and "Return type mismatch" in str(err.__cause__)
