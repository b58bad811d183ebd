"""``triton.runtime.interpreter``.

Triton's ``TRITON_INTERPRET=1`` wraps kernels in ``InterpretedFunction`` and runs
their Python on numpy.  tilejit's interpreter runs the kernel's IR instead
(``TILEJIT_INTERPRET=1``), so ``@jit`` always returns a ``JITFunction`` and no
kernel is an ``InterpretedFunction``: code asking ``isinstance(fn,
InterpretedFunction)`` (Inductor does) takes its compiled-kernel path, which is
right for tilejit in both modes.
"""
from __future__ import annotations


class InterpretedFunction:
    """A kernel under Triton's Python-level interpreter (never made by tilejit)."""

    def __init__(self, fn, **kwargs):
        from ...compat import UnsupportedTritonFeature
        raise UnsupportedTritonFeature(
            "tilejit does not support `triton.runtime.interpreter.InterpretedFunction` "
            "(missing feature: tilejit interprets a kernel's IR; use @triton.jit with "
            "TILEJIT_INTERPRET=1)")
