"""The "interpreter" backend: CompiledKernel.launch runs the reference interpreter."""
from __future__ import annotations

from ..backends import Backend, CompiledKernel, register_backend
from .driver import run


class InterpretedKernel(CompiledKernel):
    def __init__(self, name, func, options):
        super().__init__(name, func, {})
        self.options = options

    def launch(self, grid, args, observer=None, **launch_options) -> None:
        if observer is None and getattr(self.options, "check_analysis", False):
            observer = _claim_checker(self.func, grid)
        run(self.func, grid, args, self.options, observer)


def _claim_checker(func, grid):
    """The analysis claim checker as an observer."""
    from ..analysis.checker import make_observer
    return make_observer(func, grid)


class InterpreterBackend(Backend):
    name = "interpreter"

    def compile(self, func, options) -> CompiledKernel:
        from ..backends import reject_16bit_float_minmax
        reject_16bit_float_minmax(func, "the interpreter")
        return InterpretedKernel(func.name, func, options)


register_backend("interpreter", InterpreterBackend)
