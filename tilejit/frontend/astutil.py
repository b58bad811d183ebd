"""AST helpers of the frontend: parsing (cached), early-return rewriting, name scans."""
from __future__ import annotations

import ast
import copy
import os
import weakref

_PARSED = weakref.WeakKeyDictionary()
_TILEJIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_internal_file(path: str) -> bool:
    """True for files of tilejit itself (the language library written in the language)."""
    try:
        return os.path.abspath(path).startswith(_TILEJIT_DIR)
    except (TypeError, ValueError):
        return False


def parse_function(jitfn) -> ast.FunctionDef:
    """The FunctionDef of a JITFunction, with early returns rewritten (cached)."""
    cached = _PARSED.get(jitfn)
    if cached is not None and cached[0] == jitfn.src:
        return cached[1]
    module = ast.parse(jitfn.src)
    fndef = next((n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fndef is None:
        raise ValueError(f"no function definition found in the source of {jitfn.__name__}")
    fndef.body = rewrite_returns(fndef.body)     # a fresh tree: ast.parse made it (no copy needed)
    try:
        _PARSED[jitfn] = (jitfn.src, fndef)
    except TypeError:
        pass
    return fndef


# ---------------------------------------------------------------------------
# early returns
# ---------------------------------------------------------------------------


def _children_lists(stmt):
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    return []


def contains_return(stmts) -> bool:
    """A ``return`` somewhere in ``stmts`` outside loops and nested definitions."""
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and (contains_return(s.body) or contains_return(s.orelse)):
            return True
    return False


def always_returns(stmts) -> bool:
    """Every path through ``stmts`` ends in a ``return``."""
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and always_returns(s.body) and always_returns(s.orelse):
            return True
    return False


def rewrite_returns(stmts: list) -> list:
    """Move the statements following an ``if`` that returns into its branches, so a
    return always ends the function: ``if c: return a`` + rest becomes
    ``if c: return a`` / ``else: rest``."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            out.append(s)
            return out
        if isinstance(s, ast.If) and (contains_return(s.body) or contains_return(s.orelse)):
            rest = stmts[i + 1:]
            new = ast.If(test=s.test, body=s.body, orelse=s.orelse)
            ast.copy_location(new, s)
            new.body = rewrite_returns(s.body + ([] if always_returns(s.body) else copy.deepcopy(rest)))
            new.orelse = rewrite_returns(s.orelse + ([] if always_returns(s.orelse) else copy.deepcopy(rest)))
            out.append(new)
            return out
        out.append(s)
    return out


# ---------------------------------------------------------------------------
# scans
# ---------------------------------------------------------------------------


def assigned_names(stmts) -> list:
    """Names stored to anywhere in ``stmts`` (in first-assignment order)."""
    seen = {}
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                seen.setdefault(node.id, None)
    return list(seen)


# ---------------------------------------------------------------------------
# value trees (tuples of leaves)
# ---------------------------------------------------------------------------


def flatten(value):
    """(leaves, treedef) of a value built from tuples."""
    if isinstance(value, tuple):
        leaves, defs = [], []
        for v in value:
            sub_leaves, sub_def = flatten(v)
            leaves.extend(sub_leaves)
            defs.append(sub_def)
        return leaves, ("tuple", tuple(defs))
    split = getattr(value, "_tj_flatten", None)
    if split is not None:          # aggregates such as block pointers: (static key, children)
        key, children = split()
        leaves, defs = flatten(tuple(children))
        return leaves, (("obj", type(value), key), defs[1])
    return [value], None


def unflatten(treedef, leaves):
    it = iter(leaves)

    def build(d):
        if d is None:
            return next(it)
        children = tuple(build(x) for x in d[1])
        if d[0] != "tuple":
            return d[0][1]._tj_unflatten(d[0][2], children)
        return children
    return build(treedef)
