"""The reference interpreter: runs the tile IR with numpy, one program at a time.

``run(func, grid, launch_args, options=None, observer=None)``; rules live in
``rules.py`` (constants, ids, elementwise) and ``rules_tile.py`` (shapes, memory,
reductions, dot, debugging), ``rules_atomic.py`` and ``rules_combine.py``
(``tt.combine_reduce``: the reference order of a reduction with a combine region),
registered in ``rules.RULES``.
"""
from ..errors import DeviceAssertError, InterpreterError, OutOfBoundsError
from .driver import run

__all__ = ["run", "InterpreterError", "OutOfBoundsError", "DeviceAssertError"]
