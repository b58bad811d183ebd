"""Control flow of the frontend: ``if`` / conditional expressions (scf.if), ``for``
(scf.for, or unrolled for ``tl.static_range`` and compile-time tuples) and ``while``
(scf.while).

Values that flow out of a branch or around a loop are *leaves* of the names'
values (tuples are flattened).  A leaf that is the same compile-time value on every
path stays compile-time; otherwise it is materialized as an IR value of one type.
"""
from __future__ import annotations

import ast

from ..errors import ReturnTypeError
from ..ir import ops
from ..ir.core import Block, Region
from ..ir.types import TileType, int1, int_range
from ..language import semantic as sem
from ..language import semantic_tile as st
from ..language import standard
from ..language.core import tensor, typed_float, typed_int
from .astutil import assigned_names, flatten, unflatten
from ..errors import UnsupportedLanguageConstruct


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float))


def _same_static(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, tensor) or isinstance(b, tensor) or _base_type(a) is not _base_type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _base_type(v):
    """``int`` for a typed literal too (``n = 4`` on one path, a constexpr 4 on the other)."""
    t = type(v)
    return int if t is typed_int else float if t is typed_float else t


def _type_of(v):
    if isinstance(v, tensor):
        return v.type
    if _is_number(v):
        return TileType(sem.to_tensor_type(v))
    return None


def unify_types(a, b, what: str, mismatch: str | None = None) -> TileType:
    """The one IR type that both values (tensors or Python numbers) can take.
    ``mismatch`` (a format string with ``{ta}`` and ``{tb}``) words the error when the
    types differ."""
    ta, tb = _type_of(a), _type_of(b)
    if ta is None or tb is None:
        bad = a if ta is None else b
        raise TypeError(f"{what} is a compile-time {type(bad).__name__} ({bad!r}) on one path and a different "
                        "value on another; only numbers and tensors can differ between paths")
    if ta == tb:
        return ta
    a_num, b_num = not isinstance(a, tensor), not isinstance(b, tensor)
    if a_num and b_num:
        dt = sem.computation_type_impl(ta.element, False, tb.element, False, False)
        return TileType(dt)
    if a_num or b_num:
        t, n = (tb, a) if a_num else (ta, b)
        dt = sem.computation_type_impl(t.element, False, _type_of(n).element, True, False)
        if dt == t.element:
            return t
    text = (mismatch or "{what} has type {ta} on one path and {tb} on another").format(what=what, ta=ta, tb=tb)
    kind = ReturnTypeError if what == "the returned value" else TypeError
    raise kind(f"{text}; make the types match (e.g. with .to(...))")


def widen_type(init: TileType, end: TileType, what: str) -> TileType:
    """Type of a loop-carried value whose initial type ``init`` differs from the type
    ``end`` it has after one iteration: the initial value is promoted when that is
    lossless (a scalar becoming a tile, or a dtype promoting to ``end``'s)."""
    try:
        shape = sem.broadcast_shapes(init.shape, end.shape)
        ok_dtype = init.element.is_ptr() == end.element.is_ptr() and (
            init.element == end.element or
            sem.computation_type_impl(init.element, False, end.element, False, False) == end.element)
    except (TypeError, ValueError):
        shape, ok_dtype = None, False
    if shape != end.shape or not ok_dtype:
        raise TypeError(f"loop-carried variable {what} has type {init} before the loop but {end} after an "
                        "iteration; make the types match (e.g. initialize it with tl.zeros(shape, dtype) or "
                        "convert with .to(...))")
    return end


def materialize(value, ty: TileType | None) -> tensor:
    """``value`` as a tensor of type ``ty`` (Python numbers become constants)."""
    if isinstance(value, tensor):
        if ty is None or value.type == ty:
            return value
        if value.shape != ty.shape:
            value = st.broadcast_impl_shape(value, ty.shape)
        return sem.cast(value, ty.element)
    if not _is_number(value):
        raise TypeError(f"cannot turn compile-time {type(value).__name__} {value!r} into a runtime value")
    if ty is None:
        return sem.to_tensor(value)
    el = ty.element
    if el.is_int() and not el.is_bool() and not isinstance(value, float):
        lo, hi = int_range(el)
        if not lo <= value <= hi:
            raise ValueError(f"{value} does not fit in {el}, the type this value has on the other path")
    return sem.scalar_constant(value, el, ty.shape)


def _raw_create(builder, op_cls, slots, attrs, result_types, regions):
    op = op_cls(slots, attrs, list(result_types), builder.loc, regions)
    op.verify()
    builder.block.append(op)
    return op


class ControlFlowMixin:
    """if / for / while for :class:`CodeGenerator`."""

    # ------------------------------------------------------------------ if
    def scalar_condition(self, cond, what):
        if cond.shape and cond.type.numel == 1:
            cond = st.unsplat(cond)          # a one-element tile, as Triton (which warns)
        if cond.shape and self.elementwise:
            raise TypeError(f"inside tl.map_elementwise, a {what} condition cannot depend on the element "
                            "(only `if` and conditional expressions can); compute it with tl.where")
        if cond.shape:
            raise TypeError(f"{what} condition must be a scalar, got a tensor of shape {list(cond.shape)}; "
                            "use tl.where for elementwise selection")
        return cond if cond.dtype == int1 else sem.cast(cond, int1)

    def visit_If(self, node):
        cond = self.visit(node.test)
        if not isinstance(cond, tensor):
            self.visit_body(node.body if cond else node.orelse)
            return
        if self.elementwise and cond.type.numel > 1:
            self.predicated_if(_as_bool(cond), node.body, node.orelse)
            return
        cond = self.scalar_condition(cond, "if")
        before = self.scope
        then_block, then_scope, then_ret = self._branch(node.body, before)
        else_block, else_scope, else_ret = self._branch(node.orelse, before)
        self.scope = dict(before)
        if then_ret[0] or else_ret[0]:
            result = self.merge(cond, then_block, else_block, then_ret[1], else_ret[1], "the returned value")
            self.ret_value, self.returned = result, True
            return
        names = [n for n in then_scope if n in else_scope
                 and not (then_scope[n] is before.get(n, _MISSING) and else_scope[n] is before.get(n, _MISSING))]
        values = self.merge(cond, then_block, else_block, tuple(then_scope[n] for n in names),
                            tuple(else_scope[n] for n in names), names)
        for name, value in zip(names, values):
            self.scope[name] = value
            if isinstance(value, tensor) and not value.handle.name_hint:
                value.handle.name_hint = name

    def _branch(self, stmts, before):
        block = Block()
        self.scope = dict(before)
        self.returned, self.ret_value = False, None
        with self.builder.at_end(block):
            self.visit_body(stmts)
        out = (block, self.scope, (self.returned, self.ret_value))
        self.returned, self.ret_value = False, None
        return out

    def merge(self, cond, then_block, else_block, then_value, else_value, names):
        """Emit ``scf.if`` yielding the values that differ between the branches."""
        t_leaves, t_def = flatten(then_value)
        e_leaves, e_def = flatten(else_value)
        label = names if isinstance(names, str) else None
        if t_def != e_def:
            raise TypeError(f"{label or 'a value'} has a different tuple structure in the two branches")
        out = list(t_leaves)
        dynamic = []
        for i, (a, b) in enumerate(zip(t_leaves, e_leaves)):
            if _same_static(a, b):
                continue
            leaf = label or _leaf_name(names, t_def, i)
            mismatch = _MISMATCH.get(label) if label else _MISMATCH[None].replace("{name}", leaf)
            dynamic.append((i, unify_types(a, b, label or f"'{leaf}'", mismatch)))
        with self.builder.at_end(then_block):
            t_vals = [materialize(t_leaves[i], ty).handle for i, ty in dynamic]
            self.builder.create(ops.YieldOp, values=t_vals)
        with self.builder.at_end(else_block):
            e_vals = [materialize(e_leaves[i], ty).handle for i, ty in dynamic]
            self.builder.create(ops.YieldOp, values=e_vals)
        result_types = [ty for _, ty in dynamic]
        if_op = _raw_create(self.builder, ops.IfOp, {"cond": cond.handle}, {"result_types": result_types},
                            result_types, [Region([then_block]), Region([else_block])])
        for k, (i, _) in enumerate(dynamic):
            out[i] = tensor(if_op.results[k])
        return unflatten(t_def, out)

    def visit_IfExp(self, node):
        cond = self.visit(node.test)
        if not isinstance(cond, tensor):
            return self.visit(node.body if cond else node.orelse)
        predicated = self.elementwise and cond.type.numel > 1
        cond = _as_bool(cond) if predicated else self.scalar_condition(cond, "conditional expression")
        then_block, else_block = Block(), Block()
        with self.builder.at_end(then_block):
            tv = self.visit(node.body)
        with self.builder.at_end(else_block):
            ev = self.visit(node.orelse)
        if predicated:
            self.splice_pure(then_block)
            self.splice_pure(else_block)
            return self.select(cond, tv, ev, "the conditional expression")
        return self.merge(cond, then_block, else_block, tv, ev, "the conditional expression")

    # ------------------------------------------------------------------ for
    def visit_For(self, node):
        if node.orelse:
            raise UnsupportedLanguageConstruct("for/else is not supported")
        it = self.visit(node.iter)
        if isinstance(it, standard.static_range) or isinstance(it, (tuple, list)):
            self._unrolled_for(node, list(it))
        elif isinstance(it, standard.range):
            self._scf_for(node, it)
        elif not isinstance(it, tensor) and hasattr(it, "__iter__") and not isinstance(it, (str, bytes, dict)):
            self._unrolled_for(node, list(it))       # enumerate(...), zip(...) of compile-time values
        else:
            raise TypeError("for loops in kernels must iterate over range(...), tl.range(...), "
                            "tl.static_range(...) or a compile-time tuple")

    def _unrolled_for(self, node, values):
        self.loop_depth += 1
        try:
            for v in values:
                self.assign(node.target, v)
                self.visit_body(node.body)
        finally:
            self.loop_depth -= 1

    def _scf_for(self, node, rng):
        if not isinstance(node.target, ast.Name):
            raise UnsupportedLanguageConstruct("the target of a range loop must be a single name")
        bounds = []
        for what, v in (("start", rng.start), ("end", rng.end), ("step", rng.step)):
            t = sem.to_tensor(v)
            if not t.dtype.is_int() or t.shape:
                raise TypeError(f"range {what} must be an integer scalar, got {t.type}")
            bounds.append(t)
        if not isinstance(rng.step, tensor) and rng.step == 0:
            raise ValueError("range step must not be zero")
        iv_ty = sem.integer_promote_impl(sem.integer_promote_impl(bounds[0].dtype, bounds[1].dtype),
                                         bounds[2].dtype)
        if iv_ty.is_bool():
            iv_ty = sem.int32
        lb, ub, step = (sem.cast(b, iv_ty) for b in bounds)
        target = node.target.id
        names = [n for n in assigned_names(node.body) if n in self.scope and n != target]

        def build(body, types, arg_names, bind):
            iv = tensor(body.add_arg(TileType(iv_ty), target))
            bind([body.add_arg(t) for t in types])
            self.scope[target] = iv
            self.visit_body(node.body)

        def finish(body, inits, result_types):
            regions = [Region([body])]
            return self.builder.create(ops.ForOp, lb=lb.handle, ub=ub.handle, step=step.handle,
                                       inits=inits, regions=regions).results

        saved_target = self.scope.get(target, _MISSING)
        self._carried_loop(names, build, finish)
        if saved_target is _MISSING:
            self.scope.pop(target, None)
        else:
            self.scope[target] = saved_target

    # ------------------------------------------------------------------ while
    def visit_While(self, node):
        if node.orelse:
            raise UnsupportedLanguageConstruct("while/else is not supported")
        names = [n for n in assigned_names(node.body) if n in self.scope]
        state = {}

        def build(after, types, arg_names, bind):
            before_block = state["before"] = Block(types)
            state.pop("static", None)
            bind(before_block.args)
            with self.builder.at_end(before_block):
                cond = self.visit(node.test)
                if isinstance(cond, standard.condition):     # while tl.condition(c, ...)
                    cond = cond.condition
                if not isinstance(cond, tensor):
                    state["static"] = bool(cond)
                    cond = sem.to_tensor(bool(cond))
                cond = self.scalar_condition(cond, "while")
                self.builder.create(ops.ConditionOp, cond=cond.handle, values=list(before_block.args))
            bind([after.add_arg(t) for t in types])
            self.visit_body(node.body)

        def finish(after, inits, result_types):
            regions = [Region([state["before"]]), Region([after])]
            op = _raw_create(self.builder, ops.WhileOp, {"inits": inits}, {"result_types": result_types},
                             result_types, regions)
            return op.results

        self._carried_loop(names, build, finish, while_state=state)

    # ------------------------------------------------------------------ loop-carried values
    def _carried_loop(self, names, build, finish, while_state=None):
        """Build a loop body until the types of the values carried around it are stable.

        ``build(body, types, names, bind)`` visits the body into ``body``; ``bind(values)``
        binds the carried names to IR values of ``types`` (static leaves keep their
        compile-time value).  ``finish(body, inits, types)`` creates the loop op."""
        before = dict(self.scope)
        trees = {n: flatten(before[n]) for n in names}
        leaves = [(n, v) for n in names for v in trees[n][0]]
        states = [v.type if isinstance(v, tensor) else None for (_, v) in leaves]
        for _attempt in range(len(leaves) + 3):
            self.scope = dict(before)
            types = [s for s in states if s is not None]
            arg_names = [n for (n, _), s in zip(leaves, states) if s is not None]
            inits = [materialize(v, s).handle for (_, v), s in zip(leaves, states) if s is not None]
            body = Block()

            def bind(values, states=states):
                self._bind_leaves(names, trees, leaves, states, values)

            self.loop_depth += 1
            try:
                with self.builder.at_end(body):
                    build(body, types, arg_names, bind)
                    new_states, ends = self._loop_end_states(names, trees, leaves, states)
            finally:
                self.loop_depth -= 1
            if new_states != states:
                states = new_states
                continue
            if while_state is not None and while_state.get("static") is False:
                self.scope = before          # `while False`: the body never runs
                return
            with self.builder.at_end(body):
                yields = [materialize(e, s).handle for e, s in zip(ends, states) if s is not None]
                self.builder.create(ops.YieldOp, values=yields)
            results = finish(body, inits, types)
            self.scope = dict(before)
            self._bind_leaves(names, trees, leaves, states, results)
            for n in names:
                value = self.scope[n]
                if isinstance(value, tensor) and not value.handle.name_hint:
                    value.handle.name_hint = n
            return
        raise TypeError("the types of the loop-carried variables "
                        f"{', '.join(repr(n) for n in names)} do not settle; make them consistent")

    def _bind_leaves(self, names, trees, leaves, states, values):
        it = iter(values)
        per_name = {}
        for (n, v), s in zip(leaves, states):
            per_name.setdefault(n, []).append(tensor(next(it)) if s is not None else v)
        for n in names:
            self.scope[n] = unflatten(trees[n][1], per_name.get(n, []))

    def _loop_end_states(self, names, trees, leaves, states):
        ends = []
        for n in names:
            if n not in self.scope:
                raise NameError(f"loop-carried variable '{n}' is not defined at the end of the loop body")
            end_leaves, end_def = flatten(self.scope[n])
            if end_def != trees[n][1]:
                raise TypeError(f"loop-carried variable '{n}' changes its tuple structure in the loop")
            ends.extend(end_leaves)
        new_states = []
        for (n, init), s, end in zip(leaves, states, ends):
            if s is None:
                new_states.append(None if _same_static(init, end) else unify_types(init, end, f"'{n}'"))
            elif isinstance(end, tensor) and end.type != s:
                new_states.append(widen_type(s, end.type, f"'{n}'"))
            else:
                if not isinstance(end, tensor):
                    _check_number(end, s, n)
                new_states.append(s)
        return new_states, ends


# Triton's wording of a type that differs between the two paths of a runtime condition
_MISMATCH = {
    "the returned value": "Return type mismatch: the returned value has type {ta} on one path and {tb} on another",
    "the conditional expression": "Ternary expression with dynamic condition has inconsistent type: {ta} and {tb}",
    None: "Mismatched type for {name} between then block ({ta}) and else block ({tb})",
}


def _as_bool(cond):
    return cond if cond.dtype == int1 else sem.cast(cond, int1)


class _Missing:
    pass


_MISSING = _Missing()


def _check_number(value, ty, name):
    if not _is_number(value):
        raise TypeError(f"loop-carried variable '{name}' becomes the compile-time {type(value).__name__} "
                        f"{value!r} inside the loop but is a {ty} value before it")
    dt = sem.computation_type_impl(ty.element, False, sem.to_tensor_type(value), True, False)
    if dt != ty.element:
        raise TypeError(f"loop-carried variable '{name}' has type {ty} but is assigned {value!r} in the loop")


def _leaf_name(names, treedef, i):
    """The name (of ``names``, one per top-level tuple entry) holding leaf ``i``."""
    if isinstance(names, (list, tuple)) and treedef is not None:
        count = 0
        for name, sub in zip(names, treedef[1]):
            count += _leaf_count(sub)
            if i < count:
                return name
    return "value"


def _leaf_count(d):
    if d is None:
        return 1
    return sum(_leaf_count(x) for x in d[1])
