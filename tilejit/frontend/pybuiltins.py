"""Python builtins as seen inside kernels.

On compile-time values they behave as in Python; on tensors ``min``/``max``/``abs``
map to ``tl.minimum``/``tl.maximum``/``tl.abs`` and ``print`` to ``tl.device_print``.
``range`` is ``tl.range`` (a loop with runtime bounds).
"""
from __future__ import annotations

import builtins as _py

from ..language import semantic as sem
from ..language import semantic_tile as st
from ..language import standard
from ..language.core import builtin, tensor


def _has_tensor(values) -> bool:
    for v in values:
        if isinstance(v, tensor):
            return True
        if isinstance(v, (tuple, list)) and _has_tensor(v):
            return True
    return False


def _fold(fn, args, name):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    if not args:
        raise TypeError(f"{name} expected at least 1 argument, got 0")
    acc = args[0]
    for a in args[1:]:
        acc = fn(acc, a)
    return acc


@builtin
def py_min(*args, **kwargs):
    """``min``: Python's on compile-time values, ``tl.minimum`` folded over tensors."""
    if _has_tensor(args):
        if kwargs:
            raise TypeError("min() over tensors takes no keyword arguments")
        return _fold(sem.minimum, args, "min")
    return _py.min(*args, **kwargs)


@builtin
def py_max(*args, **kwargs):
    """``max``: Python's on compile-time values, ``tl.maximum`` folded over tensors."""
    if _has_tensor(args):
        if kwargs:
            raise TypeError("max() over tensors takes no keyword arguments")
        return _fold(sem.maximum, args, "max")
    return _py.max(*args, **kwargs)


@builtin
def py_abs(x):
    """``abs``: Python's on compile-time values, ``tl.abs`` on tensors."""
    return st.abs(x) if isinstance(x, tensor) else _py.abs(x)


def _no_tensor(name, hint):
    def fn(*args, **kwargs):
        if _has_tensor(args) or _has_tensor(kwargs.values()):
            raise TypeError(f"{name}() of a runtime tensor is not a compile-time value; {hint}")
        return getattr(_py, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"Python's ``{name}`` on compile-time values."
    return builtin(fn)


py_int = _no_tensor("int", "use x.to(tl.int32)")
py_float = _no_tensor("float", "use x.to(tl.float32)")
py_bool = _no_tensor("bool", "compare it instead (x != 0)")


@builtin
def py_len(x):
    """``len``: the first dimension of a tensor, or Python's len."""
    if isinstance(x, tensor):
        if not x.shape:
            raise TypeError("len() of a scalar tensor")
        return x.shape[0]
    return _py.len(x)


@builtin
def py_print(*args, sep=" ", end="\n", **kwargs):
    """``print``: ``tl.device_print`` (printed by every program at run time), as in
    Triton: a leading string is the prefix, then numbers or tensors
    (``tl.static_print`` prints at compile time)."""
    prefix = ""
    values = list(args)
    if values and isinstance(values[0], str):
        prefix = values.pop(0)
    if any(not isinstance(v, tensor) and not isinstance(v, (int, float, bool)) for v in values):
        raise TypeError("print() in a kernel accepts a leading string and then numbers or tensors "
                        "(tl.static_print prints at compile time)")
    st.device_print(prefix, values)
    return None


PY_BUILTINS = {
    "min": py_min, "max": py_max, "abs": py_abs, "int": py_int, "float": py_float, "bool": py_bool,
    "len": py_len, "print": py_print, "range": standard.range,
    "isinstance": _py.isinstance, "issubclass": _py.issubclass, "getattr": _py.getattr,
    "hasattr": _py.hasattr, "tuple": _py.tuple, "list": _py.list, "enumerate": _py.enumerate,
    "zip": _py.zip, "str": _py.str, "repr": _py.repr, "round": _py.round, "pow": _py.pow,
    "divmod": _py.divmod, "sum": _py.sum, "any": _py.any, "all": _py.all, "type": _py.type,
    "reversed": _py.reversed, "sorted": _py.sorted, "slice": _py.slice, "None": None,
    "True": True, "False": False, "ValueError": ValueError, "TypeError": TypeError,
    "AssertionError": AssertionError, "RuntimeError": RuntimeError, "NotImplementedError": NotImplementedError,
}
