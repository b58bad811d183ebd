"""Load Triton 3.6's own language tests, verbatim, through tilejit's ``triton`` alias.

Harness work only (nothing here implements a Triton API):

* the upstream files live outside the project (``../shared/conformance/triton-3.6``, or
  ``$TILEJIT_CONFORMANCE_DIR``) and are read, never copied or edited;
* a test file is loaded from its source after two load-time rewrites: a hard-coded
  ``device='cuda'`` (keyword, parameter default, ``device = "cuda"``) becomes the device
  under test, and a module-level ``from triton... import a, b`` whose name tilejit lacks
  binds a :class:`MissingName` that raises the alias's own error where the name is used,
  so a missing API fails the tests that use it instead of the whole file;
* ``triton._internal_testing`` is the upstream helper file loaded the same way.
"""
from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import os
import re
import sys
import types
import zlib
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
TEST_SUBDIR = "language"


def upstream_dir() -> Path:
    """Where the verbatim upstream files are (``$TILEJIT_CONFORMANCE_DIR`` overrides)."""
    env = os.environ.get("TILEJIT_CONFORMANCE_DIR")
    if env:
        return Path(env).resolve()
    for base in PROJECT.parents:               # ../shared from the project root (or above)
        cand = base / "shared" / "conformance" / "triton-3.6"
        if cand.is_dir():
            return cand.resolve()
    raise FileNotFoundError("Triton's upstream tests not found: set TILEJIT_CONFORMANCE_DIR "
                            "to the folder holding _internal_testing.py and language/")


class MissingName:
    """A name a test file imports that the ``triton`` alias lacks; using it raises the
    import's error (the alias's ``UnsupportedTritonFeature`` naming the feature)."""

    def __init__(self, name, error):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_error", error)

    def _raise(self, *_a, **_k):
        err = object.__getattribute__(self, "_error")
        raise type(err)(*err.args) from err

    __call__ = __getitem__ = __iter__ = __instancecheck__ = __subclasscheck__ = _raise
    __mro_entries__ = __enter__ = __add__ = __radd__ = __mul__ = __rmul__ = _raise

    def __getattr__(self, attr):
        if attr.startswith("__"):        # typing's and copy's probes (Union[missing, ...])
            raise AttributeError(attr)
        self._raise()

    def __repr__(self):
        return f"<missing {object.__getattribute__(self, '_name')}>"


def _import_name(module, name, level, globals_):
    """``from module import name``, or a :class:`MissingName` when that fails."""
    try:
        mod = __import__(module or "", globals_, None, [name], level)
        return getattr(mod, name)
    except (ImportError, AttributeError) as e:
        return MissingName(f"{module}.{name}", e)


def _get_attr(obj, attr):
    """``obj.attr`` evaluated at module level: a :class:`MissingName` when tilejit lacks it
    (a parametrisation list naming ``tl.float8e4b15`` fails only the cases using it)."""
    if isinstance(obj, MissingName):
        return obj
    try:
        return getattr(obj, attr)
    except AttributeError as e:
        return MissingName(f"{getattr(obj, '__name__', obj)}.{attr}", e)


def _decorate(fn, decorators):
    """Apply a test's decorators (innermost last in the list, as Python does); when
    evaluating them raises, the test becomes one test failing with that error."""
    try:
        decos = decorators()
    except Exception as e:            # noqa: BLE001 - reported as the test's failure
        err = e

        def failing():
            raise err
        failing.__name__ = failing.__qualname__ = fn.__name__
        failing.__module__ = fn.__module__
        return failing
    for d in reversed(decos):
        fn = d(fn)
    return fn


_TRITON_ROOTS = ("tl", "triton")


def _rooted_in_triton(node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in _TRITON_ROOTS


class _Rewriter(ast.NodeTransformer):
    """The load-time rewrites (see the module docstring)."""

    def __init__(self, device):
        self.device = device
        self.depth = 0

    def visit_Attribute(self, node):
        rooted = _rooted_in_triton(node)
        self.generic_visit(node)
        if self.depth or not isinstance(node.ctx, ast.Load) or not rooted:
            return node
        call = ast.Call(ast.Name("__tj_get_attr__", ast.Load()),
                        [node.value, ast.Constant(node.attr)], [])
        return ast.copy_location(call, node)

    def _dev(self, node):
        if self.device != "cuda" and isinstance(node, ast.Constant) and node.value == "cuda":
            return ast.copy_location(ast.Constant(self.device), node)
        return node

    def visit_keyword(self, node):
        self.generic_visit(node)
        if node.arg == "device":
            node.value = self._dev(node.value)
        return node

    def visit_arguments(self, node):
        self.generic_visit(node)
        pos = node.posonlyargs + node.args
        for arg, default in zip(pos[len(pos) - len(node.defaults):], node.defaults):
            if arg.arg == "device":
                node.defaults[node.defaults.index(default)] = self._dev(default)
        for i, (arg, default) in enumerate(zip(node.kwonlyargs, node.kw_defaults)):
            if arg.arg == "device" and default is not None:
                node.kw_defaults[i] = self._dev(default)
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        if any(isinstance(t, ast.Name) and t.id == "device" for t in node.targets):
            node.value = self._dev(node.value)
        return node

    def visit_ImportFrom(self, node):
        top = self.depth == 0
        mod = node.module or ""
        if not top or node.level or not mod.startswith("triton") or node.names[0].name == "*":
            return node
        out = []
        for alias in node.names:
            call = ast.Call(ast.Name("__tj_import_name__", ast.Load()),
                            [ast.Constant(mod), ast.Constant(alias.name), ast.Constant(0),
                             ast.Call(ast.Name("globals", ast.Load()), [], [])], [])
            out.append(ast.copy_location(
                ast.Assign([ast.Name(alias.asname or alias.name, ast.Store())], call), node))
        return out

    def _function(self, node):
        # decorators, defaults and annotations run at definition time; the body later
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        if node.returns is not None:
            node.returns = self.visit(node.returns)
        self.depth += 1
        node.body = [r for st in node.body for r in _as_list(self.visit(st))]
        self.depth -= 1
        if self.depth or not node.name.startswith("test") or not node.decorator_list:
            return node
        # test = __tj_decorate__(test, lambda: [decorators]): a decorator that fails
        # (a parametrisation built from a missing API) makes one failing test
        decos = ast.Lambda(ast.arguments([], [], None, [], [], None, []),
                           ast.List(node.decorator_list, ast.Load()))
        node.decorator_list = []
        call = ast.Call(ast.Name("__tj_decorate__", ast.Load()),
                        [ast.Name(node.name, ast.Load()), decos], [])
        assign = ast.Assign([ast.Name(node.name, ast.Store())], call)
        return [node, ast.copy_location(assign, node)]

    visit_FunctionDef = visit_AsyncFunctionDef = _function


def _as_list(r):
    return r if isinstance(r, list) else [r]


def load_module(path: Path, name: str, device: str, config=None) -> types.ModuleType:
    """Load the upstream file ``path`` as module ``name`` with the load-time rewrites
    (and pytest's assertion rewriting when ``config`` is given)."""
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    try:
        _exec_rewritten(path, mod, device, config)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def _exec_rewritten(path: Path, mod, device, config):
    source = path.read_bytes()
    tree = _Rewriter(device).visit(ast.parse(source, filename=str(path)))
    ast.fix_missing_locations(tree)
    if config is not None:
        from _pytest.assertion.rewrite import rewrite_asserts
        rewrite_asserts(tree, source, str(path), config)
    mod.__file__ = str(path)
    mod.__dict__["__tj_import_name__"] = _import_name
    mod.__dict__["__tj_get_attr__"] = _get_attr
    mod.__dict__["__tj_decorate__"] = _decorate
    # dont_inherit: this file's `from __future__ import annotations` must not turn the
    # test files' annotations (tl.constexpr) into strings
    exec(compile(tree, str(path), "exec", dont_inherit=True), mod.__dict__)


class _SiblingFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``from test_core import ...`` in an upstream file: its sibling, loaded the same way."""

    def __init__(self, folder: Path, device: str, config):
        self.folder, self.device, self.config = folder, device, config

    def find_spec(self, fullname, path=None, target=None):
        if "." not in fullname and (self.folder / f"{fullname}.py").is_file():
            return importlib.machinery.ModuleSpec(fullname, self,
                                                  origin=str(self.folder / f"{fullname}.py"))
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        path = self.folder / f"{module.__name__}.py"
        _exec_rewritten(path, module, self.device, self.config)


def import_test_module(stem: str):
    """An upstream test file by name (``test_core``), through :class:`_SiblingFinder`."""
    return importlib.import_module(stem)


def install(device: str, use_alias: bool = True, config=None) -> None:
    """Alias ``triton`` to tilejit (unless ``use_alias`` is False: the real Triton) and
    provide ``triton._internal_testing`` from the upstream helper file."""
    if use_alias:
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    import triton
    if "triton._internal_testing" in sys.modules and not use_alias:
        return
    mod = load_module(upstream_dir() / "_internal_testing.py", "triton._internal_testing",
                      device, config)
    triton.__dict__["_internal_testing"] = mod
    sys.meta_path.append(_SiblingFinder(upstream_dir() / TEST_SUBDIR, device, config))


def load_conftest(device: str) -> types.ModuleType:
    """The upstream ``python/test/conftest.py`` (fixtures ``device``, ``fresh_knobs``...)."""
    return load_module(upstream_dir() / "conftest_upstream.py", "_tj_conftest_upstream", device)


def read_not_applicable(path: Path) -> dict[str, str]:
    """``not_applicable.txt``: ``file::test[param-id] | reason`` per line (``#`` comments);
    an entry without ``[..]`` covers every parametrisation of that test."""
    out = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip() if raw.lstrip().startswith("#") else raw.strip()
        if not line:
            continue
        key, sep, reason = line.partition("|")
        if not sep or not reason.strip():
            raise ValueError(f"{path}: entry without a reason: {raw!r}")
        out[key.strip()] = reason.strip()
    return out


def in_part(test_id: str, part: str) -> bool:
    """Whether ``test_id`` belongs to part ``I/N`` of a selection split in N: by the CRC-32
    of the id, so the split does not depend on collection order, backend or machine and
    the N parts' results can be merged (``scripts/conformance.py --shard I/N``)."""
    i, n = (int(x) for x in part.split("/"))
    if not 0 <= i < n:
        raise ValueError(f"part {part!r}: expected I/N with 0 <= I < N")
    return zlib.crc32(test_id.encode()) % n == i


def not_applicable_reason(test_id: str, table: dict[str, str]) -> str | None:
    """The reason ``test_id`` (``file::name[params]``) is not applicable, or None."""
    base = test_id.split("[", 1)[0]
    for key in (test_id, base, base.split("::", 1)[0]):
        if key in table:
            return table[key]
    return None


# the start of a compiled kernel's text: PTX, LLVM IR, MLIR (TTIR/TTGIR), AMDGCN, x86 asm
_CODE_TEXT = re.compile(r"Generated by LLVM NVPTX|^\s*\.version \d+\.\d+|\.target sm_\d|"
                        r"target triple|^\s*define |module attributes|tt\.func|"
                        r"\.amdgcn_target|^\s*\.text\b|^\s*\.globl", re.M)


def is_code_text(text) -> bool:
    """Whether ``text`` (a value, or an assertion message quoting values) holds a compiled
    kernel's code: an assertion on it checks the code's shape (``'ld.global.v4' in ptx``),
    not the numbers the kernel computes."""
    return isinstance(text, str) and _CODE_TEXT.search(text) is not None
