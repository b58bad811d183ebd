"""Hostile-input fuzzing: random mutations of the tests/e2e kernels (deleted lines,
swapped names, wrong dtypes, bad shapes and constants), compiled through the
frontend, the pass pipeline and the CPU backend's lowering.

Each mutant must compile or fail with a ``CompilationError`` located in the mutated
kernel's file whose cause is a user-level kind (TypeError, ValueError, NameError,
AttributeError, AssertionError or an unsupported construct) — never another
exception, a compiler-internal error, or a hang.  The grammar-based generator of
well-formed kernels is tests/unit/test_frontend_fuzz.py; this file only mutates
existing kernels.  Longer runs: TILEJIT_FUZZ_EXAMPLES=500.
"""
import ast
import importlib.util
import itertools
import os
import pathlib
import re
import signal

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from tilejit.frontend import build_ir
from tilejit.errors import CompilationError, UnsupportedLanguageConstruct
from tilejit.ir.types import PointerType, float32, int32
from tilejit.runtime.jit import JITFunction
from tilejit.runtime.options import Options

EXAMPLES = int(os.environ.get("TILEJIT_FUZZ_EXAMPLES", "40"))
E2E = pathlib.Path(__file__).resolve().parents[1] / "e2e"
USER_CAUSES = (TypeError, ValueError, NameError, AttributeError, AssertionError,
               UnsupportedLanguageConstruct, NotImplementedError, SyntaxError)
INTERNAL_HINTS = ("object has no attribute '_", "unhashable type")
DTYPES = ("tl.float32", "tl.float16", "tl.int1", "tl.int8", "tl.int32", "tl.int64",
          "tl.uint32", "tl.float64", "tl.bfloat16")
CONSTANTS = ("0", "1", "-1", "3", "1.5", "2 ** 21", "True", "None", "(2, 3)", "'x'")


def _jit_kernels(path):
    """(name, first line, last line, params) of each @jit function in ``path``."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
                "jit" in ast.unparse(d) for d in node.decorator_list):
            params = [(a.arg, a.annotation is not None and "constexpr" in ast.unparse(a.annotation))
                      for a in node.args.args]
            yield node.name, node.body[0].lineno, node.end_lineno, params


def _signature(params, block):
    arg_types, consts = {}, {}
    for name, is_cx in params:
        if is_cx:
            consts[name] = block
        elif "ptr" in name.lower() or name.lower() in ("x", "y", "out", "a", "b", "c"):
            arg_types[name] = PointerType(float32)
        else:
            arg_types[name] = int32
    return arg_types, consts


_MODULES = itertools.count()


def _load(source, tmpdir, name):
    path = pathlib.Path(tmpdir) / f"tj_mutant_{next(_MODULES)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name), str(path)


def _compile(jitfn, arg_types, consts):
    func = build_ir(jitfn, arg_types, consts)
    from tilejit.transforms import run_pipeline
    func = run_pipeline(func, Options(debug=True, sanitize=True))
    from tilejit.backends.cpu.codegen import build_module
    build_module(func, Options())
    return func


def _kernels_only(text):
    """``text`` with everything but imports, assignments and undecorated or @jit
    functions blanked out (line numbers kept; no test functions or @given run)."""
    lines = text.split("\n")
    for node in ast.parse(text).body:
        keep = isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign))
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("test"):
            decos = [ast.unparse(d) for d in node.decorator_list]
            keep = all("jit" in d for d in decos)
        if not keep:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            for k in range(first - 1, node.end_lineno):
                lines[k] = ""
    return "\n".join(lines)


def _corpus(tmpdir):
    """Kernels of tests/e2e that compile with the guessed signature (BLOCK-like
    constexprs = 16, pointers by name, other scalars int32)."""
    out = []
    for path in sorted(E2E.glob("test_*.py")):
        text = _kernels_only(path.read_text())
        for name, lo, hi, params in _jit_kernels(path):
            arg_types, consts = _signature(params, 16)
            try:
                fn, _ = _load(text, tmpdir, name)
                if not isinstance(fn, JITFunction):
                    continue
                _compile(fn, arg_types, consts)
            except Exception:   # noqa: BLE001 -- the guess did not fit this kernel: skip it
                continue
            _TEXTS[path.name] = text
            out.append((path.name, name, lo, hi, params))
    return out


_CORPUS: list = []
_TEXTS: dict = {}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if not _CORPUS:
        _CORPUS.extend(_corpus(tmp_path_factory.mktemp("baseline")))
    assert len(_CORPUS) >= 10, "too few e2e kernels compile with the guessed signatures"
    return _CORPUS


def _names(lines):
    return sorted({m for ln in lines for m in re.findall(r"\b[a-z_][a-z_0-9]*\b", ln)
                   if m not in ("tl", "for", "in", "if", "else", "elif", "range", "return",
                                "and", "or", "not", "while", "is")})


def mutate(draw, lines):
    """One random mutation of the kernel body ``lines`` (a list of str); returns
    (kind, new lines)."""
    kind = draw(st.sampled_from(["delete", "swap", "dtype", "constant", "shape", "args"]))
    lines = list(lines)
    i = draw(st.integers(0, len(lines) - 1))
    ln = lines[i]
    if kind == "delete":
        indent = ln[: len(ln) - len(ln.lstrip())]
        lines[i] = indent + "pass"
    elif kind == "swap":
        names = _names(lines)
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        occurrences = [m.start() for m in re.finditer(rf"\b{a}\b", ln)] or [None]
        if occurrences[0] is not None:
            k = draw(st.sampled_from(occurrences))
            lines[i] = ln[:k] + b + ln[k + len(a):]
    elif kind == "dtype":
        new = draw(st.sampled_from(DTYPES))
        if re.search(r"tl\.(float|int|uint|bfloat)\d+", ln):
            lines[i] = re.sub(r"tl\.(float|int|uint|bfloat)\d+", new, ln, count=1)
        elif "tl.load(" in ln:
            lines[i] = ln.replace("tl.load(", f"tl.load(", 1).rstrip() + f"  # {new}"
            j = ln.rfind(")")
            lines[i] = ln[: j + 1] + f".to({new})" + ln[j + 1:]
    elif kind == "constant":
        nums = [m for m in re.finditer(r"(?<![\w.])\d+(\.\d+)?(?![\w.])", ln)]
        if nums:
            m = draw(st.sampled_from(nums))
            lines[i] = ln[: m.start()] + draw(st.sampled_from(CONSTANTS)) + ln[m.end():]
    elif kind == "shape":
        ln2 = re.sub(r"\[:, None\]", "[None, :]", ln, count=1)
        if ln2 == ln:
            ln2 = re.sub(r"\[None, :\]", "[:, None]", ln, count=1)
        if ln2 == ln:
            ln2 = re.sub(r"tl\.arange\(0, (\w+)\)", r"tl.arange(0, \1 + 1)", ln, count=1)
        if ln2 == ln:
            ln2 = re.sub(r"axis=(\d)", lambda m: f"axis={int(m.group(1)) + 1}", ln, count=1)
        lines[i] = ln2
    else:   # swap the first two arguments of a call
        m = re.search(r"tl\.\w+\(([^(),]+), ([^(),]+)", ln)
        if m:
            lines[i] = ln[: m.start(1)] + m.group(2) + ", " + m.group(1) + ln[m.end(2):]
    return kind, lines


def _run(func, body):
    """Run a compiled mutant on the interpreter (sanitize checks on, 1024-element
    buffers, scalars 16, two programs).  Allowed: completion, or an out-of-bounds /
    overflow / device-assert report located in the kernel.  An InterpreterError
    wrapping another exception means a verified IR the interpreter cannot run."""
    if any("while" in ln for ln in body):
        return "ok"                           # may spin forever by design (locks)
    import numpy as np
    from tilejit import interpreter
    from tilejit.backends import Buffer, LaunchArgs
    from tilejit.errors import DeviceAssertError, InterpreterError, OutOfBoundsError
    keep, values, buffers = [], [], []
    for a in func.arguments:
        el = a.value.type.element
        if el.is_ptr():
            arr = np.zeros(1024, np.float32)
            keep.append(arr)
            values.append(arr.ctypes.data)
            buffers.append(Buffer(a.name, arr.ctypes.data, arr.nbytes, 4))
        else:
            values.append(16)
    try:
        interpreter.run(func, (2, 1, 1), LaunchArgs(values, buffers))
        return "ran"
    except (OutOfBoundsError, DeviceAssertError) as e:
        assert e.loc is not None and e.loc.line, str(e)
        return "run-error"
    except InterpreterError as e:
        assert e.__cause__ is None, f"interpreter failed on verified IR:\n{e}\n--- mutant ---\n" + "\n".join(body)
        return "run-error"


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def check_mutant(path_text, name, lo, hi, params, body, block, tmpdir):
    """Compile one mutant; assert the outcome is a result or a located user error."""
    lines = path_text.split("\n")
    src = "\n".join(lines[: lo - 1] + body + lines[hi:])
    try:
        compile(src, "<mutant>", "exec")
    except SyntaxError:
        return "python-syntax"          # Python rejects it before tilejit sees it
    fn, file = _load(src, tmpdir, name)
    arg_types, consts = _signature(params, block)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        func = _compile(fn, arg_types, consts)
        return _run(func, body)
    except CompilationError as e:
        assert e.file == file and lo - 1 <= e.line <= hi, f"error not located in the kernel:\n{e}"
        assert e.error is None or isinstance(e.error, USER_CAUSES), \
            f"internal error kind {type(e.error).__name__}:\n{e}\n--- mutant ---\n" + "\n".join(body)
        assert not any(h in str(e) for h in INTERNAL_HINTS), f"compiler-internal message:\n{e}"
        assert not getattr(e, "internal", False) or e.line, str(e)
        return "error"
    except _Timeout:
        pytest.fail("compilation hung (> 20 s):\n" + "\n".join(body))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_e2e_kernels_fail_cleanly(corpus, tmp_path, data):
    path, name, lo, hi, params = corpus[data.draw(st.integers(0, len(corpus) - 1))]
    text = _TEXTS[path]
    body = text.split("\n")[lo - 1: hi]
    n = data.draw(st.integers(1, 3))
    for _ in range(n):
        _kind, body = mutate(data.draw, body)
    block = data.draw(st.sampled_from([16, 16, 16, 3, 0, 1, 2 ** 21, 8.0, "s", None]))
    event(check_mutant(text, name, lo, hi, params, body, block, tmp_path))


def test_the_checker_accepts_clean_kernels_and_catches_located_errors(corpus, tmp_path):
    path, name, lo, hi, params = corpus[0]
    text = _TEXTS[path]
    body = text.split("\n")[lo - 1: hi]
    assert check_mutant(text, name, lo, hi, params, body, 16, tmp_path) in ("ran", "ok")
    indent = body[0][: len(body[0]) - len(body[0].lstrip())]
    bad = [indent + "zz = undefined_name + 1"] + body
    assert check_mutant(text, name, lo, hi, params, bad, 16, tmp_path) == "error"
