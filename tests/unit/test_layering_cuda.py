"""The cuda backend's import graph (issue 19): its modules' module-level imports of one
another form no cycle, the modules listed in CLEAN import no sibling inside a function,
and the backend as a whole has at most IN_FUNCTION_BUDGET such imports (lower it when
you remove some; an in-function import hides a cycle the module-level graph would show).
The rules set on the ``Lowering`` (``lw``) only the fields its class declares.
The remaining ones and where they are: docs/architecture.md, "Status of issue 19"."""
import ast
import pathlib

import tilejit

CUDA = pathlib.Path(tilejit.__file__).parent / "backends" / "cuda"

# modules with no in-function import of a sibling (keep them so; add the ones you clean)
CLEAN = {"backend", "hoist_loads", "kernel", "lowering", "native_launch", "plan", "rules_atomic", "rules_combine_reduce",
         "rules_control", "rules_elementwise", "rules_inline_asm", "rules_tiles", "scatter",
         "target", "types"}
IN_FUNCTION_BUDGET = 73      # 104 at 4da33bb


def _siblings(node, names):
    """The sibling modules (of ``names``) an import statement names."""
    if isinstance(node, ast.ImportFrom) and node.level == 1:
        found = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tilejit.backends.cuda."):
        found = [node.module.split(".")[3]]
    else:
        found = []
    return [m for m in found if m in names]


def import_graph(sources: dict) -> tuple:
    """``(module level, in function)`` for ``sources`` {module: text}: {module: set of
    siblings imported at module level} and {module: [(sibling, line)] imported in a function}."""
    top, inner = {}, {}
    for name, text in sources.items():
        tree = ast.parse(text)
        top[name] = {m for node in tree.body for m in _siblings(node, sources)}
        inner[name] = [(m, node.lineno) for fn in ast.walk(tree)
                       if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                       for node in ast.walk(fn) for m in _siblings(node, sources)]
    return top, inner


def find_cycle(graph: dict) -> list:
    """One cycle of ``graph`` as a path [a, b, ..., a], or []."""
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m, path + [m])
                if found:
                    return found
        state[n] = 2
        return []

    for n in sorted(graph):
        if n not in state:
            found = visit(n, [n])
            if found:
                return found
    return []


def _sources():
    return {p.stem: p.read_text() for p in sorted(CUDA.glob("*.py"))}


def test_no_module_level_import_cycle():
    top, _ = import_graph(_sources())
    assert find_cycle(top) == []


def test_clean_modules_import_no_sibling_inside_a_function():
    _, inner = import_graph(_sources())
    bad = {m: inner[m] for m in sorted(CLEAN) if inner.get(m)}
    assert not bad, f"in-function imports of siblings (import them at the top): {bad}"


def test_in_function_imports_do_not_grow():
    _, inner = import_graph(_sources())
    n = sum(len(v) for v in inner.values())
    assert n <= IN_FUNCTION_BUDGET, (
        f"{n} in-function imports of sibling modules in backends/cuda, more than the "
        f"{IN_FUNCTION_BUDGET} allowed: import at module level (no cycle: see the test above)")


def test_the_checker_finds_in_function_imports_and_cycles():
    src = {"a": "from .b import f\n", "b": "from . import c\ndef g():\n    from .a import h\n",
           "c": "from tilejit.backends.cuda.a import x\nimport os\n"}
    top, inner = import_graph(src)
    assert top == {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert inner == {"a": [], "b": [("a", 3)], "c": []}
    assert find_cycle(top) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def lowering_fields(text: str) -> set:
    """The attributes ``Lowering`` declares: every ``self.X = ...`` in the class and its
    methods' names."""
    fields = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == "Lowering":
            fields |= {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            fields |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
                       and isinstance(n.value, ast.Name) and n.value.id == "self"
                       and isinstance(n.ctx, ast.Store)}
    return fields


def grown_fields(sources: dict, fields: set) -> list:
    """``(module, line, what)`` for each ``lw.X = ...`` of an undeclared X and each
    ``getattr``/``setattr``/``hasattr`` of ``lw`` naming an undeclared field (state grown
    at run time)."""
    bad = []
    for name, text in sources.items():
        for n in ast.walk(ast.parse(text)):
            if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "lw"
                    and isinstance(n.ctx, ast.Store) and n.attr not in fields):
                bad.append((name, n.lineno, n.attr))
            if (isinstance(n, ast.Call) and getattr(n.func, "id", None) in ("getattr", "setattr", "hasattr")
                    and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == "lw"
                    and not (len(n.args) > 1 and isinstance(n.args[1], ast.Constant) and n.args[1].value in fields)):
                bad.append((name, n.lineno, n.func.id))
    return bad


def test_rules_set_only_declared_lowering_fields():
    src = _sources()
    assert grown_fields(src, lowering_fields(src["lowering"])) == []


def test_the_field_checker_finds_grown_state():
    cls = "class Lowering:\n    def __init__(self):\n        self.values = {}\n    def get(self):\n        pass\n"
    assert lowering_fields(cls) == {"__init__", "get", "values"}
    rule = ("def r(lw, op):\n    lw.values[op] = 1\n    lw.cache = {}\n"
            "    x = getattr(lw, 'y', None)\n    lw.get()\n    z = getattr(lw, 'values', None)\n")
    assert grown_fields({"rules_x": rule}, {"values", "get"}) == [("rules_x", 3, "cache"), ("rules_x", 4, "getattr")]
