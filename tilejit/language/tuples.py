"""``tl.tuple``: Triton's tuple of kernel values.

In tilejit a tuple in a kernel is a Python tuple of values (tensors, constants, nested
tuples): indexing with a constant, ``len``, unpacking, ``==`` and ``+`` are Python's.
``tl.tuple(iterable)`` makes one, as Triton's constructor does.
"""
import builtins


class tuple(builtins.tuple):  # noqa: A001,N801 - Triton's name
    """A tuple of kernel values (Triton's ``tl.tuple``): ``tl.tuple([a, b])``.

    Behaves as a Python tuple: ``t[i]`` (a constant index), ``len(t)``, ``a, b = t``,
    ``t == (1, 2)`` (elementwise, a compile-time bool for constants) and ``t + (3,)``."""

    def __repr__(self):
        return f"tl.tuple({builtins.tuple(self)!r})"
