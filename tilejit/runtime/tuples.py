"""Tuple arguments: ``kernel[grid]((x_ptr, y_ptr), x.shape, x.stride(), Point(...))``.

A tuple (or a namedtuple, or a ``torch.Size``) argument is flattened: each element that
is an array, an int, a float or a bool becomes one kernel argument, specialised as a
plain argument of its type is (an int equal to 1 is the constant 1, divisibility by 16,
pointer alignment); ``None``, ``tl.constexpr`` values, strings, dtypes and ``@jit``
functions are compile-time constants held in the key; nested tuples recurse.  The
kernel sees a tuple of the same shape (a namedtuple of the same class).
"""
from __future__ import annotations

from .launch import binder_for

TUPLE = "tuple"


def _is_constant(x) -> bool:
    from ..ir.types import DType, PointerType
    from ..language.jit_callable import JITCallable
    return (x is None or type(x).__name__ == "constexpr"
            or isinstance(x, (str, DType, PointerType, JITCallable)))


def _const_key(x):
    from .launcher import _constexpr_key
    return ("const", _constexpr_key(x))


def _cls_key(v):
    tp = type(v)
    return tp if hasattr(tp, "_fields") else None       # namedtuples keep their class


def bind_tuple(v, spec):
    """(key, flat launch values, [(path, ArrayInfo)]) of a tuple argument."""
    elems, values, infos = [], [], []
    for i, x in enumerate(v):
        if isinstance(x, tuple):
            k, lvs, sub = bind_tuple(x, spec)
            values.extend(lvs)
            infos.extend(((i,) + p, info) for p, info in sub)
        elif _is_constant(x):
            k = _const_key(x)
        else:
            b = binder_for(type(x))
            if b is None:
                raise TypeError(f"tuple element {i} has unsupported type "
                                f"{type(x).__module__}.{type(x).__qualname__}")
            k, lv, info = b(x, spec)
            values.append(lv)
            if info is not None:
                infos.append(((i,), info))
        elems.append(k)
    return (TUPLE, _cls_key(v), tuple(elems)), values, infos


def is_tuple_key(key) -> bool:
    return key[0] == TUPLE


class tuple_arg:  # noqa: N801
    """How a tuple argument enters the IR: one argument per runtime element
    (``<name>_<i>[_<j>...]``), the constants in place; ``build`` returns the tuple
    the kernel sees.  Made from the launcher's key and the argument's value."""

    def __init__(self, key, value):
        self.cls = key[1]
        self.items = []
        for k, x in zip(key[2], value):
            if k[0] == "const":
                self.items.append(("const", x))
            elif is_tuple_key(k):
                self.items.append(("tuple", tuple_arg(k, x)))
            else:
                self.items.append(("arg", k))

    def build(self, name, add_argument):
        """``add_argument(name, type name, (divisibility, equal_to_1))`` per element."""
        from ..language.core import constexpr
        out = []
        for i, (kind, item) in enumerate(self.items):
            if kind == "const":
                out.append(item.value if isinstance(item, constexpr) else item)
            elif kind == "tuple":
                out.append(item.build(f"{name}_{i}", add_argument))
            else:
                spec = item[1] if len(item) > 1 else 0
                out.append(add_argument(f"{name}_{i}", item[0], (16 if spec == 16 else 1, spec == 1)))
        return self.cls(*out) if self.cls is not None else tuple(out)
