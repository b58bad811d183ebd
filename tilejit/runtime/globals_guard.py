"""Module-level values a kernel reads, so that changing one recompiles it.

A kernel may read plain globals (``BLOCK = 128`` at module level, a ``tl.constexpr``
global, a dtype): the frontend folds their values into the compiled code.  The
guard lists, for the kernel and every ``@jit`` function it reaches, the bare names
its source loads that are not parameters, locals or builtins and that hold (or do
not yet hold) such a value, or a ``@jit`` function (a helper redefined after the kernel
compiled -- a notebook cell run again -- is a new object: the kernel compiles again);
modules, plain functions and classes are left out, but ``lib.attr`` read from a user
module (not tilejit's, Triton's, torch's or numpy's) is guarded like a global.  Names read from an enclosing
function (closure cells) are guarded the same way.  :func:`values_key` puts the values
in the disk-cache key; :class:`GlobalsGuard` lets the launcher notice a change between
launches (Triton raises there; tilejit compiles again).
"""
from __future__ import annotations

import ast
import builtins

_MISSING = object()


def _loaded_names(src: str) -> set:
    """Bare names loaded in ``src`` minus names it binds (parameters, assignments)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    loads, binds = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
        elif isinstance(node, ast.arg):
            binds.add(node.arg)
    return loads - binds - set(dir(builtins))


def _attribute_loads(src: str) -> set:
    """``(base, attr)`` of the ``name.attr`` loads in ``src`` (``lib.helper(x)``)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    return {(n.value.id, n.attr) for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and isinstance(n.ctx, ast.Load)}


# modules whose attributes a kernel reads are the language's own, not user code
_LIBRARY_ROOTS = frozenset({"tilejit", "triton", "torch", "numpy", "math", "builtins"})


def _user_module_attrs(src, view, g) -> list:
    """``[(vars(module), attr)]`` for ``module.attr`` loads of a user module (a helper
    library imported as a module: ``importlib.reload`` or assigning ``lib.helper``
    redefines the helper) whose attribute is a folded value or a ``@jit`` callee."""
    import types
    out = []
    for base, attr in sorted(_attribute_loads(src)):
        ns = view if base in view.cells else g
        m = ns.get(base, None)
        if not isinstance(m, types.ModuleType):
            continue
        if (getattr(m, "__name__", "") or "").split(".")[0] in _LIBRARY_ROOTS:
            continue
        d = vars(m)
        if attr in d and _is_value(d[attr]):
            out.append((d, attr))
    return out


def _is_value(v) -> bool:
    """A value the frontend folds into the code, a ``@jit`` callee (inlined), or a
    name not bound yet."""
    from ..ir.types import DType, PointerType
    from ..language.core import constexpr
    from ..language.jit_callable import JITCallable
    return v is _MISSING or isinstance(v, (type(None), bool, int, float, complex, str, bytes, tuple,
                                           DType, PointerType, constexpr, JITCallable))


def _reachable(jitfn) -> list:
    from .cache import _jit_callees
    seen, order, stack = set(), [], [jitfn]
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        order.append(f)
        stack.extend(_jit_callees(f))
    return order


class _Cells:
    """The closure variables of a kernel, read like a globals dict (``get``, ``in``)."""

    def __init__(self, cells: dict):
        self.cells = cells

    def __contains__(self, name) -> bool:
        return self.get(name, _MISSING) is not _MISSING

    def get(self, name, default=None):
        try:
            return self.cells[name].cell_contents
        except (KeyError, ValueError):
            return default


def value_globals(jitfn) -> list:
    """``[(namespace, name)]`` of the values the kernel and its callees read from
    enclosing functions (closure cells) and module globals."""
    out = []
    for f in _reachable(jitfn):
        g = getattr(f, "__globals__", None)
        src = getattr(f, "src", None)
        if g is None or src is None:
            continue
        cells = getattr(f, "closure_cells", None) or {}
        view = _Cells(cells)
        for name in sorted(_loaded_names(src)):
            ns = view if name in cells else g
            if _is_value(ns.get(name, _MISSING)):
                out.append((ns, name))
        out.extend(_user_module_attrs(src, view, g))
    return out


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b) and repr(a) == repr(b)
    except Exception:
        return False


class GlobalsGuard:
    """The value globals of one kernel and the values its kernels were compiled with."""

    def __init__(self, jitfn):
        self.jitfn = jitfn
        self.entries = value_globals(jitfn)
        self.values = self.current()

    def current(self) -> list:
        return [g.get(name, _MISSING) for g, name in self.entries]

    def changed(self) -> bool:
        """True once any value differs from the snapshot (then :meth:`refresh`)."""
        return any(not _same(g.get(name, _MISSING), v) for (g, name), v in zip(self.entries, self.values))

    def refresh(self) -> None:
        """Snapshot again; the names are found again too (a redefined helper may read
        other globals than the one it replaces)."""
        self.entries = value_globals(self.jitfn)
        self.values = self.current()


def values_key(jitfn) -> list:
    """``[(name, repr(value))]`` of the kernel's value globals, for cache keys."""
    return [(name, repr(g.get(name, _MISSING)) if name in g else "<unset>")
            for g, name in value_globals(jitfn)]
