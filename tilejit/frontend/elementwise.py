"""``tl.map_elementwise``: a ``@jit`` function written for one element, applied to
every element of its (broadcast) tensor arguments.

The function is inlined once with whole tiles as arguments.  An ``if`` (or a
conditional expression) whose condition depends on the element is *predicated*: both
branches are computed for every element and the values that differ between them --
names assigned and the returned value -- are selected per element with ``tl.where``.
That is exactly the per-element result as long as the branches only compute (integer
division by zero is defined and never traps); a branch that loads, stores, performs an
atomic, prints or asserts would touch memory or report for elements that did not take
it, so it is a compilation error.  A loop whose condition depends on the element is
an error too.  ``pack=k`` hands the function ``k`` consecutive elements of each input
(along the last dimension) per call, as Triton does.
"""
from __future__ import annotations

from ..ir import ops
from ..language import semantic as sem
from ..language import semantic_tile as st
from ..language.core import tensor
from ..language.jit_callable import JITCallable
from .astutil import flatten, unflatten
from .control import _MISMATCH, _same_static, materialize, unify_types

_SIDE_EFFECTS = (ops.LoadOp, ops.StoreOp, ops.AtomicRMWOp, ops.AtomicCASOp, ops.DeviceAssertOp,
                 ops.DevicePrintOp, ops.DebugBarrierOp)


class ElementwiseMixin:
    """``tl.map_elementwise`` and predicated ``if`` for :class:`CodeGenerator`."""

    def call_map_elementwise(self, scalar_fn, *args, pack=1):
        if not isinstance(scalar_fn, JITCallable):
            raise TypeError("tl.map_elementwise's scalar_fn must be a @jit function")
        if not args:
            raise TypeError("tl.map_elementwise needs at least one tensor argument")
        if isinstance(pack, bool) or not isinstance(pack, int) or pack < 1 or pack & (pack - 1):
            raise ValueError(f"tl.map_elementwise's pack must be a power of two >= 1, got {pack!r}")
        inputs = [sem.to_tensor(a) for a in args]
        shape = ()
        for t in inputs:
            shape = sem.broadcast_shapes(shape, t.shape)
        inputs = [st.broadcast_impl_shape(t, shape) for t in inputs]
        if pack > 1 and (not shape or shape[-1] % pack):
            raise ValueError(f"tl.map_elementwise with pack={pack} needs a last dimension divisible by {pack}, "
                             f"got shape {list(shape)}")
        fn_args = [col for t in inputs for col in _columns(t, pack)]
        sub_shape = fn_args[0].shape
        result = self.call_jit(scalar_fn, fn_args, {}, elementwise=True)
        results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if any(r is None for r in results):
            raise TypeError(f"the function given to tl.map_elementwise ({scalar_fn.__name__}) must return values")
        results = [st.broadcast_impl_shape(sem.to_tensor(r), sub_shape) for r in results]
        if len(results) % pack:
            raise ValueError(f"with pack={pack} the function must return a multiple of {pack} values, "
                             f"got {len(results)}")
        outs = []
        for k in range(0, len(results), pack):
            group = results[k:k + pack]
            if any(r.dtype != group[0].dtype for r in group):
                raise TypeError("type mismatch in unpacked results: the packed values of one result must "
                                "have one dtype")
            outs.append(_uncolumns(group, shape))
        return outs[0] if len(outs) == 1 else tuple(outs)

    # ------------------------------------------------------------------ predicated if
    def predicated_if(self, cond, body, orelse):
        """An ``if`` on an element-dependent condition inside map_elementwise."""
        before = self.scope
        then_block, then_scope, then_ret = self._branch(body, before)
        else_block, else_scope, else_ret = self._branch(orelse, before)
        self.scope = dict(before)
        self.splice_pure(then_block)
        self.splice_pure(else_block)
        if then_ret[0] or else_ret[0]:
            self.ret_value = self.select(cond, then_ret[1], else_ret[1], "the returned value")
            self.returned = True
            return
        names = [n for n in then_scope if n in else_scope
                 and not (then_scope[n] is before.get(n) and else_scope[n] is before.get(n))]
        values = self.select(cond, tuple(then_scope[n] for n in names), tuple(else_scope[n] for n in names),
                             names)
        for name, value in zip(names, values):
            self.scope[name] = value

    def splice_pure(self, block):
        """Move a branch's ops (computations only) to the current block."""
        _check_pure(block)
        for op in list(block.ops):
            self.builder.block.append(op)

    def select(self, cond, then_value, else_value, names):
        """Per-element choice between the two branches' values (tuples leaf by leaf)."""
        t_leaves, t_def = flatten(then_value)
        e_leaves, e_def = flatten(else_value)
        label = names if isinstance(names, str) else None
        if t_def != e_def:
            raise TypeError(f"{label or 'a value'} has a different tuple structure in the two branches")
        out = []
        for i, (a, b) in enumerate(zip(t_leaves, e_leaves)):
            if _same_static(a, b):
                out.append(a)
                continue
            leaf = label or _name_of(names, i)
            mismatch = _MISMATCH.get(label) if label else _MISMATCH[None].replace("{name}", leaf)
            ty = unify_types(a, b, label or f"'{leaf}'", mismatch)
            out.append(st.where(cond, materialize(a, ty), materialize(b, ty)))
        return unflatten(t_def, out)


def _name_of(names, i):
    return names[i] if isinstance(names, (list, tuple)) and i < len(names) else "value"


def _check_pure(block):
    for op in block.walk():
        if isinstance(op, _SIDE_EFFECTS):
            raise TypeError(f"inside tl.map_elementwise, a branch taken by some elements only cannot use "
                            f"{op.name} (it would run for every element); compute values there and move "
                            "loads, stores, atomics and prints out of the branch")


def _columns(x, k):
    """``k`` tiles of shape ``[..., N/k]``: tile ``j`` holds elements ``j, j+k, ...`` of
    the last dimension of ``x`` (each call of a packed function sees ``k`` neighbours)."""
    if k == 1:
        return [x]
    pairs = st.reshape(x, x.shape[:-1] + (x.shape[-1] // 2, 2))
    even, odd = st.split(pairs)
    evens, odds = _columns(even, k // 2), _columns(odd, k // 2)
    return [evens[j // 2] if j % 2 == 0 else odds[j // 2] for j in range(k)]


def _uncolumns(cols, shape):
    """The inverse of :func:`_columns`: interleave ``cols`` back into ``shape``."""
    k = len(cols)
    if k == 1:
        return st.reshape(cols[0], shape)
    half = tuple(shape[:-1]) + (shape[-1] // 2,)
    even, odd = _uncolumns(cols[0::2], half), _uncolumns(cols[1::2], half)
    return st.reshape(st.join(even, odd), shape)


def is_elementwise_condition(gen, cond) -> bool:
    """True when ``cond`` (inside map_elementwise) differs between elements."""
    return getattr(gen, "elementwise", False) and isinstance(cond, tensor) and bool(cond.shape)
