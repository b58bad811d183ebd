"""The frontend's AST visitor: Python statements and expressions -> tile IR.

Compile-time values (ints, floats, bools, None, dtypes, tuples, modules, functions)
are Python objects and fold; runtime values are ``tl.tensor`` objects wrapping IR
values.  A name is a name: assignment rebinds it in ``self.scope`` and nothing keeps
the old value.  Control flow lives in ``control.py``.  Every exception raised while
visiting a node is turned into a :class:`CompilationError` in :meth:`visit`, the one
place that catches.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import operator
import types

from ..ir import ops
from ..ir.core import Block, Loc
from ..ir.types import DType, PointerType, TileType
from ..language import standard
from ..language import scan as lang_scan
from ..language import semantic as sem
from ..language.core import (TypeView, constexpr, constexpr_type, is_builtin, tensor, typed_float, typed_int,
                             typed_literal)
from ..language.jit_callable import JITCallable
from .astutil import is_internal_file, parse_function
from .control import ControlFlowMixin, ReturnTypeError
from .elementwise import ElementwiseMixin
from ..errors import (CompilationError, KernelError, UnsupportedLanguageConstruct, called_from,
                     make_error)
from .pybuiltins import PY_BUILTINS
from .reduce import reduce_region

MAX_INLINE_DEPTH = 48

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
           ast.MatMult: operator.matmul}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_UNSUPPORTED = {
    "Lambda": "lambda expressions", "ListComp": "list comprehensions", "DictComp": "dict comprehensions",
    "SetComp": "set comprehensions", "GeneratorExp": "generator expressions", "Try": "try statements",
    "TryStar": "try statements", "With": "with statements", "AsyncWith": "async with",
    "Break": "break", "Continue": "continue", "Raise": "raise statements", "Delete": "del statements",
    "Global": "global declarations", "Nonlocal": "nonlocal declarations", "Import": "imports",
    "ImportFrom": "imports", "ClassDef": "class definitions", "FunctionDef": "nested function definitions",
    "AsyncFunctionDef": "nested function definitions", "Yield": "yield", "YieldFrom": "yield",
    "Await": "await", "NamedExpr": "assignment expressions (:=)", "Dict": "dict literals",
    "Set": "set literals", "Match": "match statements", "AsyncFor": "async for",
}


def norm(value):
    """Compile-time values are kept unwrapped inside the frontend."""
    return value.value if isinstance(value, constexpr) else value


def _has_tensor(values) -> bool:
    for v in values:
        if isinstance(v, tensor) or (isinstance(v, (tuple, list)) and _has_tensor(v)):
            return True
    return False


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float))


def _allowed_global(v) -> bool:
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, DType, PointerType,
                                   types.ModuleType, type, JITCallable)):
        return True
    if isinstance(v, tuple):
        return all(_allowed_global(x) for x in v)
    return callable(v) and not hasattr(v, "__array__") and not hasattr(v, "__len__")


class CodeGenerator(ControlFlowMixin, ElementwiseMixin, ast.NodeVisitor):
    """Visits one function (the kernel, or an inlined ``@jit`` callee).  ``elementwise``:
    the function runs under ``tl.map_elementwise`` (an ``if`` on a tile is predicated)."""

    def __init__(self, jitfn, builder, scope: dict, depth: int = 0, elementwise: bool = False):
        self.jitfn = jitfn
        self.builder = builder
        self.scope = dict(scope)
        self.globals = jitfn.__globals__
        self.cells = getattr(jitfn, "closure_cells", None) or {}
        self.file = jitfn.file
        self.first_line = getattr(jitfn, "src_line", jitfn.first_line)   # the file's line of src's line 1
        self.name = jitfn.__name__
        self.internal = is_internal_file(self.file)
        first = linecache.getline(self.file, self.first_line)
        self.col_base = len(first) - len(first.lstrip()) if first.strip() else 0
        self.depth = depth
        self.is_kernel = depth == 0
        self.elementwise = elementwise
        self.loop_depth = 0
        self.def_line = 1            # the `def` line in jitfn.src (set by generate)
        self.returned = False
        self.ret_value = None

    # ------------------------------------------------------------------ driver
    def loc(self, node) -> Loc:
        return Loc(self.file, self.first_line + node.lineno - 1, node.col_offset + self.col_base, self.name)

    def generate(self):
        """Visit the function body; returns the value of its ``return`` (None if none)."""
        fndef = parse_function(self.jitfn)
        self.def_line = fndef.lineno
        a = fndef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.error(fndef, UnsupportedLanguageConstruct(
                "kernels and @jit helpers take plain positional parameters only "
                "(no *args, **kwargs, keyword-only or positional-only parameters)"))
        for p in getattr(self.jitfn, "params", ()) if self.is_kernel else ():
            if p.is_constexpr and p.do_not_specialize:
                raise self.error(fndef, KernelError(
                    f"{p.name} marked as constexpr and listed in do_not_specialize: a constexpr "
                    "is always specialized; drop one of the two"))
        try:
            self.visit_body(fndef.body)
        except CompilationError as e:
            if isinstance(e.error, ReturnTypeError) and not isinstance(e.error, CompilationError):
                raise self.error(fndef, e.error) from None
            raise
        return self.ret_value

    def error(self, node, exc) -> CompilationError:
        loc = self.loc(node)
        rel = (node.lineno - self.def_line + 1, node.col_offset)
        return make_error(exc, kernel=self.name, file=loc.file, line=loc.line, col=loc.col,
                          internal=self.internal, rel=rel)

    def visit(self, node):
        """Visit ``node``; the single place where exceptions become CompilationErrors."""
        located = hasattr(node, "lineno")
        saved = self.builder.loc
        if located and not self.internal:
            self.builder.loc = self.loc(node)
        try:
            return super().visit(node)
        except CompilationError as e:
            if e.internal and not self.internal and located:
                cause = e.error if e.error is not None else UnsupportedLanguageConstruct(e.cause_message)
                raise self.error(node, cause) from None
            if getattr(e, "callee", None) is not None and located and not self.internal:
                loc = self.loc(node)                  # the call site, the callee's error its cause
                raise called_from(e, kernel=self.name, file=loc.file, line=loc.line, col=loc.col,
                                  rel=(node.lineno - self.def_line + 1, node.col_offset)) from None
            raise
        except Exception as e:  # noqa: BLE001  -- the one place that converts errors
            if not located:
                raise
            raise self.error(node, e) from None
        finally:
            self.builder.loc = saved

    def generic_visit(self, node):
        what = _UNSUPPORTED.get(type(node).__name__, f"'{type(node).__name__}' nodes")
        raise UnsupportedLanguageConstruct(f"unsupported Python construct in a kernel: {what}")

    def visit_body(self, stmts):
        for stmt in stmts:
            if self.returned:
                break
            self.visit(stmt)

    # ------------------------------------------------------------------ names
    def lookup(self, name):
        """Python's scoping: a local, then a variable of an enclosing function, then a
        global, then a builtin."""
        if name in self.scope:
            return self.scope[name]
        if name in self.cells:
            try:
                value = self.cells[name].cell_contents
            except ValueError:
                raise NameError(f"free variable '{name}' referenced before assignment in "
                                "the enclosing function") from None
            return self._outer_value(name, value, "variable of the enclosing function")
        if name in self.globals:
            return self._outer_value(name, self.globals[name], "global variable")
        if name in PY_BUILTINS:
            return PY_BUILTINS[name]
        raise NameError(f"name '{name}' is not defined")

    @staticmethod
    def _outer_value(name, value, what):
        """A global's or closure variable's value as the kernel sees it (folded in)."""
        if isinstance(value, constexpr):
            return value.value
        if not _allowed_global(value):
            raise TypeError(
                f"cannot use {what} '{name}' of type {type(value).__name__} in a kernel: "
                "it must be a compile-time constant (int, float, bool, dtype, tl.constexpr), "
                "a module or a function")
        return value

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load):
            raise UnsupportedLanguageConstruct("unexpected name context")
        return self.lookup(node.id)

    def assign(self, target, value, literal=False):
        """Bind ``target``; ``literal``: an assignment statement, where a Python number
        becomes a typed literal (Triton's scalar tensor; see ``core.typed_int``)."""
        value = norm(value)
        if isinstance(target, ast.Name):
            if literal:
                value = typed_literal(value)
            if isinstance(value, tensor) and not value.handle.name_hint:
                value.handle.name_hint = target.id
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, tensor) or not isinstance(value, (tuple, list)):
                raise TypeError(f"cannot unpack a value of type {_describe(value)} into {len(target.elts)} names")
            if any(isinstance(t, ast.Starred) for t in target.elts):
                raise UnsupportedLanguageConstruct("starred assignment targets are not supported")
            if len(value) != len(target.elts):
                raise ValueError(f"cannot unpack {len(value)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v, literal)
        elif isinstance(target, ast.Subscript):
            raise TypeError("tensors are immutable: item assignment is not supported (build a new tensor, "
                            "e.g. with tl.where)")
        elif isinstance(target, ast.Attribute):
            raise TypeError("attribute assignment is not supported in kernels")
        else:
            raise UnsupportedLanguageConstruct(f"unsupported assignment target {type(target).__name__}")

    # ------------------------------------------------------------------ statements
    def visit_Assign(self, node):
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value, literal=True)

    def visit_AnnAssign(self, node):
        if node.value is None:
            return
        value = self.visit(node.value)
        ann = self._annotation(node.annotation)
        if ann is constexpr and isinstance(value, tensor):
            raise TypeError(f"cannot bind a runtime tensor to a tl.constexpr name")
        self.assign(node.target, value, literal=ann is not constexpr)

    def _annotation(self, node):
        try:
            return self.visit(node)
        except CompilationError:
            return None

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise TypeError("augmented assignment is only supported on names (tensors are immutable)")
        current = self.lookup(node.target.id)
        value = self.visit(node.value)
        self.assign(node.target, self.binop(node.op, current, value), literal=True)

    def visit_Expr(self, node):
        call = node.value
        if not isinstance(call, ast.Call):
            self.visit(call)
            return
        fn = self.visit(call.func)
        must = getattr(fn, "_must_use_result", False)
        if must:
            extra = f" {must}" if isinstance(must, str) else ""
            raise KernelError(f"The result of {getattr(fn, '__name__', 'this function')} is "
                              f"not being used.{extra}")
        self.call_node(call, fn)

    def visit_Pass(self, node):
        return None

    def visit_Return(self, node):
        if self.loop_depth:
            raise UnsupportedLanguageConstruct(
                "return inside a loop is not supported (Cannot have `return` statements inside `while` or "
                "`for` statements in triton); set a flag and return after the loop")
        value = norm(self.visit(node.value)) if node.value is not None else None
        if self.is_kernel and value is not None:
            raise TypeError("a kernel cannot return a value")
        self.ret_value = value
        self.returned = True

    def visit_Assert(self, node):
        test = self.visit(node.test)
        msg = self.visit(node.msg) if node.msg is not None else ""
        if not isinstance(msg, str):
            msg = str(msg)
        if not msg:
            msg = f"assert {ast.unparse(node.test)}"
        if not isinstance(test, tensor):
            if test:
                return
            test = sem.to_tensor(False)
        from ..language import semantic_tile as st
        st.device_assert(test, msg)

    # ------------------------------------------------------------------ expressions
    def visit_Constant(self, node):
        return node.value

    def visit_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def visit_List(self, node):
        return list(self._elements(node.elts))

    def visit_ListComp(self, node):
        """``[f(v) for v in values if c]`` over a compile-time tuple, list or range:
        unrolled (as Triton does); the loop variables do not leak."""
        out = []
        self._comprehend(node.generators, lambda: out.append(self.visit(node.elt)))
        return out

    visit_GeneratorExp = visit_ListComp

    def _comprehend(self, generators, emit):
        gen, rest = generators[0], generators[1:]
        it = norm(self.visit(gen.iter))
        if isinstance(it, (standard.range, standard.static_range)) and all(
                type(b) is int for b in (it.start, it.end, it.step)):
            it = range(it.start, it.end, it.step)      # constant bounds: unrolled
        if not isinstance(it, (tuple, list, range)):
            raise UnsupportedLanguageConstruct(
                "a comprehension in a kernel must iterate over a compile-time tuple, list or "
                f"range, not {type(it).__name__}")
        names = [n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)]
        saved = {n: self.scope[n] for n in names if n in self.scope}
        try:
            for x in it:
                self.assign(gen.target, x)
                conds = [norm(self.visit(c)) for c in gen.ifs]
                if any(isinstance(c, tensor) for c in conds):
                    raise UnsupportedLanguageConstruct(
                        "a comprehension's `if` must be a compile-time condition")
                if all(conds):
                    self._comprehend(rest, emit) if rest else emit()
        finally:
            for n in names:
                self.scope.pop(n, None)
            self.scope.update(saved)

    def _elements(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.visit(e.value)
                if not isinstance(v, (tuple, list)):
                    raise TypeError(f"cannot unpack {_describe(v)} with *")
                out.extend(v)
            else:
                out.append(norm(self.visit(e)))
        return out

    def visit_Slice(self, node):
        parts = [self.visit(x) if x is not None else None for x in (node.lower, node.upper, node.step)]
        if _has_tensor(parts):
            raise TypeError("slice bounds must be compile-time values")
        return slice(*parts)

    def visit_Subscript(self, node):
        base = self.visit(node.value)
        index = norm(self.visit(node.slice))
        if isinstance(base, tensor):
            return base[index]
        if _has_tensor([index]):
            raise TypeError(f"cannot index {_describe(base)} with a runtime tensor")
        return norm(base[index])

    def visit_Attribute(self, node):
        base = self.visit(node.value)
        if node.attr == "type" and isinstance(base, (bool, int, float, tuple)) \
                and not isinstance(base, (typed_int, typed_float)):
            return constexpr_type(base)         # a compile-time value's type, as Triton's constexpr
        if _is_number(base) and not hasattr(base, node.attr):
            base = sem.to_tensor(base)          # a Python number is Triton's typed scalar: `a = 5; a.dtype`
        if isinstance(base, tensor) and node.attr == "type":
            return TypeView(base.type)          # Triton's view: x.type.element_ty, x.type.scalar
        return norm(getattr(base, node.attr))

    def visit_JoinedStr(self, node):
        return "".join(str(self.visit(v)) for v in node.values)

    def visit_FormattedValue(self, node):
        value = self.visit(node.value)
        if isinstance(value, tensor):           # as Triton: f-strings format compile-time values
            raise UnsupportedLanguageConstruct(
                f"an f-string cannot format the runtime value '{ast.unparse(node.value)}' (a "
                f"{value.type}); use tl.device_print(\"{ast.unparse(node.value)}\", "
                f"{ast.unparse(node.value)}) to print it at run time, or tl.static_print for "
                "compile-time values")
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion == ord("s"):
            value = str(value)
        elif node.conversion == ord("a"):
            value = ascii(value)
        spec = self.visit(node.format_spec) if node.format_spec is not None else ""
        return format(value, spec)

    def binop(self, op, lhs, rhs):
        fn = _BINOPS.get(type(op))
        if fn is None:
            raise UnsupportedLanguageConstruct(f"unsupported operator {type(op).__name__}")
        return norm(fn(norm(lhs), norm(rhs)))

    def visit_BinOp(self, node):
        return self.binop(node.op, self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        value = norm(self.visit(node.operand))
        if isinstance(node.op, ast.Not):
            return sem.not_(value) if isinstance(value, tensor) else not value
        fn = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)]
        return norm(fn(value))

    def visit_Compare(self, node):
        left = norm(self.visit(node.left))
        result = None
        for op, comparator in zip(node.ops, node.comparators):
            right = norm(self.visit(comparator))
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) and _has_tensor([left, right]) \
                    and isinstance(op, (ast.In, ast.NotIn)):
                raise TypeError("'in' is not supported on tensors")
            r = norm(_compare(op, left, right))
            result = r if result is None else self.logical(ast.And(), result, r)
            if not isinstance(result, tensor) and not result:
                return result
            left = right
        return result

    def logical(self, op, lhs, rhs):
        if isinstance(op, ast.And):
            return sem.logical_and(lhs, rhs)
        return sem.logical_or(lhs, rhs)

    def visit_BoolOp(self, node):
        value = norm(self.visit(node.values[0]))
        for expr in node.values[1:]:
            if not isinstance(value, tensor):
                # Python short-circuit on a compile-time left operand
                if isinstance(node.op, ast.And) and not value:
                    return value
                if isinstance(node.op, ast.Or) and value:
                    return value
                value = norm(self.visit(expr))
                continue
            rhs = norm(self.visit(expr))
            value = self.logical(node.op, value, rhs)
        return value

    # ------------------------------------------------------------------ calls
    def visit_Call(self, node):
        return self.call_node(node, self.visit(node.func))

    def call_node(self, node, fn):
        """The call ``node`` of the already evaluated callee ``fn``."""
        args = self._elements(node.args)
        kwargs = {}
        for kw in node.keywords:
            value = norm(self.visit(kw.value))
            if kw.arg is None:
                if not isinstance(value, dict):
                    raise TypeError("** arguments must be compile-time dicts")
                kwargs.update(value)
            else:
                kwargs[kw.arg] = value
        return self.call(fn, args, kwargs)

    def call(self, fn, args, kwargs):
        fn = norm(fn)
        if isinstance(fn, JITCallable):
            return self.call_jit(fn, args, kwargs)
        if getattr(fn, "__func__", fn) is standard.reduce:
            if getattr(fn, "__self__", None) is not None:
                args = [fn.__self__, *args]
            return self.call_reduce(*args, **kwargs)
        if fn is standard.map_elementwise:
            return self.call_map_elementwise(*args, **kwargs)
        if getattr(fn, "__func__", fn) is lang_scan.associative_scan:
            if getattr(fn, "__self__", None) is not None:
                args = [fn.__self__, *args]
            return self.call_scan(*args, **kwargs)
        if is_builtin(fn) or isinstance(getattr(fn, "__self__", None), tensor):
            return norm(fn(*args, **kwargs))
        if not callable(fn):
            raise TypeError(f"{_describe(fn)} is not callable")
        if _has_tensor(args) or _has_tensor(kwargs.values()):
            if not (isinstance(fn, type) and fn.__module__.startswith("tilejit.language")
                    or _is_namedtuple_class(fn)          # Point(x=..., y=...) holds the values
                    or any(fn is f for f in (isinstance, issubclass, hasattr, getattr, type))):  # introspection
                name = getattr(fn, "__name__", repr(fn))
                raise TypeError(f"cannot call Python function '{name}' with tensor arguments inside a kernel; "
                                "decorate it with @tilejit.jit to call it from a kernel")
        return norm(fn(*args, **kwargs))

    def call_reduce(self, input, axis, combine_fn, keep_dims=False):
        """``tl.reduce``: a combine function computing a + b, a ^ b, max or min becomes a
        ``tt.reduce`` (a compare-and-select max/min too, NaN-propagating on floats: see
        ``scan.extremum_kind``); any other (and tuple inputs) one ``tt.combine_reduce`` with the
        function inlined in its region (``frontend/reduce.py``)."""
        if not isinstance(combine_fn, JITCallable):
            raise TypeError("tl.reduce's combine_fn must be a @tilejit.jit function")
        from ..language import semantic_tile as st
        if isinstance(input, (tuple, list)):
            return reduce_region(tuple(input), axis, self._combiner(combine_fn), keep_dims)
        input = sem.to_tensor(input)
        kind = self._known_combine(input, combine_fn)
        if kind in ("nanmax", "nanmin"):
            return lang_scan.nan_extremum(input, axis, kind, keep_dims)
        if kind is not None:
            return st.reduce(input, axis, kind, keep_dims)
        return reduce_region((input,), axis, self._combiner(combine_fn), keep_dims)[0]

    def _known_combine(self, input, combine_fn):
        """The tt.reduce kind ``combine_fn`` computes on two scalars of input's dtype, or None."""
        scratch = Block([TileType(input.dtype), TileType(input.dtype)])
        a, b = (tensor(v) for v in scratch.args)
        try:
            with self.builder.at_end(scratch):
                r = norm(self.call_jit(combine_fn, [a, b], {}))
        except CompilationError:
            return None
        op = r.handle.op if isinstance(r, tensor) else None
        if isinstance(op, ops.SelectOp) and op.parent is scratch and r.type == TileType(input.dtype):
            return lang_scan.extremum_kind(r.handle, a.handle, b.handle)
        kinds = {ops.AddOp: "sum", ops.XorOp: "xor_sum", ops.MaxOp: "max", ops.MinOp: "min"}
        kind = kinds.get(type(op))
        if kind is None or op.parent is not scratch or len(scratch.ops) != 1 \
                or {id(v) for v in op.operands} != {id(a.handle), id(b.handle)} or r.type != TileType(input.dtype):
            return None
        return kind

    def _combiner(self, combine_fn):
        """``combine(a: tuple, b: tuple) -> tuple`` inlining the @jit ``combine_fn``."""
        def combine(a, b):
            r = norm(self.call_jit(combine_fn, [*a, *b], {}))
            return tuple(norm(x) for x in r) if isinstance(r, (tuple, list)) else (r,)
        return combine

    def call_scan(self, input, axis, combine_fn, reverse=False):
        """``tl.associative_scan`` with a user @jit combine function (tuples too)."""
        if not isinstance(combine_fn, JITCallable):
            raise TypeError("tl.associative_scan's combine_fn must be a @tilejit.jit function")
        if isinstance(input, (tuple, list)):
            return lang_scan.scan(tuple(input), axis, self._combiner(combine_fn), bool(norm(reverse)))
        return lang_scan.scan((input,), axis, self._combiner(combine_fn), bool(norm(reverse)))[0]

    def call_jit(self, fn, args, kwargs, elementwise=False):
        """Inline a call to another ``@jit`` function: its body is visited with the
        arguments bound to its parameters (``elementwise``: under tl.map_elementwise)."""
        if self.depth >= MAX_INLINE_DEPTH:
            raise RecursionError(f"calls nested deeper than {MAX_INLINE_DEPTH} (recursive @jit function?)")
        params = fn.params
        names = [p.name for p in params]
        if len(args) > len(params):
            raise TypeError(f"{fn.__name__}() takes {len(params)} positional arguments but {len(args)} were given")
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument '{key}'")
            if key in bound:
                raise TypeError(f"{fn.__name__}() got multiple values for argument '{key}'")
            bound[key] = value
        for p in params:
            if p.name not in bound:
                if p.default is inspect.Parameter.empty:
                    raise TypeError(f"{fn.__name__}() missing required argument '{p.name}'")
                bound[p.name] = norm(p.default)
            # a tensor for a helper's tl.constexpr parameter is accepted (the annotation is
            # ignored, as Triton 3.0's attention tutorial relies on)
            bound[p.name] = norm(bound[p.name])
        callee = CodeGenerator(fn, self.builder, bound, depth=self.depth + 1,
                               elementwise=self.elementwise or elementwise)
        try:
            return callee.generate()
        except CompilationError as e:
            if not (e.internal or callee.internal):
                e.callee = fn.__name__            # the caller's visit adds the call site
            raise


def _as_tuple(v):
    """Lists and tuples compare as one kind of sequence (Triton's ``tl.tuple`` equality)."""
    if isinstance(v, (tuple, list)):
        return tuple(_as_tuple(x) for x in v)
    return v


def _compare(op, left, right):
    """``left <op> right``; compile-time sequences compare by content, so ``x.shape == [1, N]``
    and ``desc.block_shape == [M, N]`` hold as in Triton, where a shape is a ``tl.tuple``."""
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, (tuple, list)) \
            and isinstance(right, (tuple, list)) and not _has_tensor([left, right]):
        left, right = _as_tuple(left), _as_tuple(right)
    return _CMPOPS[type(op)](left, right)


def _is_namedtuple_class(fn) -> bool:
    return isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields")


def _describe(v) -> str:
    if isinstance(v, tensor):
        return f"a tensor of type {v.type}"
    return f"{type(v).__name__} {v!r}"
