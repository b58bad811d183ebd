"""The package's layers, checked on its import graph: every ``import`` statement of every
module (in-function imports too), resolved to the tilejit package it names.

    errors  <-  ir  <-  language  <-  frontend  <-  ... runtime

``tilejit.errors`` is the root (it imports nothing of tilejit); the IR, the language and
the frontend never import the runtime, a backend or the compat layer (the runtime fills
what they need: ``JITFunction`` derives from the language's ``JITCallable``); the passes
read the options they are given."""
import ast
import pathlib

import pytest

import tilejit

ROOT = pathlib.Path(tilejit.__file__).parent

# package -> the tilejit packages its modules may import (besides its own)
ALLOWED = {
    "errors": set(),
    "ir": {"errors"},
    "language": {"errors", "ir"},
    "frontend": {"errors", "ir", "language"},
    "analysis": {"errors", "ir"},
    "transforms": {"errors", "ir", "analysis"},
}


def imported_packages(text: str, module: str) -> dict:
    """{tilejit package imported: first line} for the source ``text`` of ``module``
    (dotted, e.g. 'tilejit.frontend.codegen'; a package's ``__init__`` included)."""
    package = module.split(".")[:-1]          # the package a relative import starts from
    found = {}
    for node in ast.walk(ast.parse(text, module)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            if node.module:
                names = [".".join(base + [node.module])]
            else:
                names = [".".join(base + [a.name]) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        for name in names:
            bits = name.split(".")
            if bits[0] == "tilejit":
                found.setdefault(bits[1] if len(bits) > 1 else "tilejit", node.lineno)
    return found


def _modules(layer):
    single = ROOT / f"{layer}.py"
    return [single] if single.exists() else sorted((ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_the_layers_below(layer):
    bad = []
    for path in _modules(layer):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        for pkg, line in imported_packages(path.read_text(), module).items():
            if pkg != layer and pkg not in ALLOWED[layer]:
                bad.append(f"{path.relative_to(ROOT.parent)}:{line} imports tilejit.{pkg}")
    assert not bad, f"tilejit.{layer} may import only {sorted(ALLOWED[layer])}:\n" + "\n".join(bad)


def test_the_checker_sees_relative_and_in_function_imports():
    """The check can fail: a module of the frontend importing the runtime, at module
    level or inside a function, relative or absolute, is found."""
    text = ("from ..runtime.jit import JITFunction\n"
            "def f():\n    from ..backends import cpu\n    import tilejit.compat.driver\n"
            "from . import codegen\nfrom .. import errors\n")
    found = imported_packages(text, "tilejit.frontend.probe")
    assert found == {"runtime": 1, "backends": 3, "compat": 4, "frontend": 5, "errors": 6}
    init = imported_packages("from .core import x\nfrom ..ir import ops\n", "tilejit.language.__init__")
    assert set(init) == {"language", "ir"}


def test_every_error_class_lives_in_the_root_module():
    """No layer defines its own exception class for the user to catch: the errors tilejit
    raises about a kernel are defined in tilejit/errors.py."""
    import tilejit.errors as E
    for name in ("CompilationError", "InterpreterError", "OutOfBoundsError", "DeviceAssertError",
                 "DeviceAssertionError", "LoweringError", "AnalysisError", "OutOfResources",
                 "LaunchOptionError", "MissingDependencyError", "UserError", "TritonError"):
        assert getattr(E, name).__module__ == "tilejit.errors", name
    assert issubclass(E.CompilationError, E.TritonError) and issubclass(E.CompilationError, E.UserError)
    assert issubclass(E.AnalysisError, E.TritonError)


def test_no_exception_class_outside_the_root_module():
    """Every exception class in tilejit's own modules is defined in tilejit/errors.py (the
    modules that raise one import it from there; the old names stay importable)."""
    import importlib
    import pkgutil
    import tilejit
    found = []
    for m in pkgutil.walk_packages(tilejit.__path__, "tilejit."):
        if m.name == "tilejit.errors":
            continue
        try:
            mod = importlib.import_module(m.name)
        except ImportError as e:        # a module over an optional dependency (torch) absent here
            assert not (e.name or "tilejit").startswith("tilejit"), e
            continue
        found += [f"{m.name}.{n}" for n, v in vars(mod).items()
                  if isinstance(v, type) and issubclass(v, BaseException) and v.__module__ == m.name
                  and not n.startswith("_")]       # private control-flow signals (interpreter's _Return)
    assert found == []
