"""Backend registry and the contract every backend implements.

A backend turns a (canonicalized) ``ir.Function`` into a :class:`CompiledKernel`
whose ``launch`` runs the grid over bound arguments.

Bound arguments (:class:`LaunchArgs`) hold one Python value per IR argument, in
order: pointers as integer addresses (``int``), integer scalars as ``int``, floats
as ``float``, int1 as ``bool``; plus the :class:`Buffer` list of every array passed,
which the interpreter and the checking modes use to validate addresses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Buffer:
    """An array argument's memory: [address, address + nbytes)."""
    name: str
    address: int
    nbytes: int
    itemsize: int = 1


class LaunchArgs:
    """Bound arguments of one launch.

    ``buffers`` may be given as ``Buffer`` objects or, on the fast launch path, as
    raw ``(name, address, nbytes, itemsize)`` tuples that become ``Buffer`` objects
    only when a backend asks (the interpreter and the checking modes do; the
    compiled fast path does not).
    """

    __slots__ = ("values", "_buffers", "_raw", "keepalive")

    def __init__(self, values, buffers=None, keepalive=None, raw_buffers=None):
        self.values = values
        self._buffers = buffers
        self._raw = raw_buffers
        self.keepalive = keepalive if keepalive is not None else []   # owners of the memory

    @property
    def buffers(self) -> list:
        if self._buffers is None:
            self._buffers = [Buffer(*r) for r in (self._raw or ())]
        return self._buffers

    @buffers.setter
    def buffers(self, value) -> None:
        self._buffers = value


class CompiledKernel:
    """Result of ``Backend.compile``.  ``asm`` maps stage name -> text."""

    def __init__(self, name: str, func, asm: dict | None = None):
        self.name = name
        self.func = func
        self.asm = dict(asm or {})

    def launch(self, grid: tuple, args: LaunchArgs, **launch_options) -> None:
        raise NotImplementedError


class Backend:
    name = "?"

    def is_available(self) -> bool:
        return True

    def compile(self, func, options) -> CompiledKernel:
        raise NotImplementedError


def reject_16bit_float_minmax(func, target: str) -> None:
    """An atomic max/min on fp16/bf16 (only ``tensor_descriptor.atomic_max/min`` make
    one) needs a TMA reduction (CUDA sm_90+); on ``target`` it is Triton's compilation
    error, naming the kernel and line."""
    from ..ir import ops
    for op in func.walk():
        if isinstance(op, ops.AtomicRMWOp) and op.kind in ("max", "min"):
            el = op.result.type.element
            if el.is_floating() and el.bits == 16:
                from ..errors import CompilationValueError
                raise CompilationValueError(
                    f"tensor_descriptor.atomic_{op.kind} on {el} needs a TMA reduction (CUDA sm_90 or "
                    f"newer); {target} has none: use fp32 values or the cuda backend on sm_90",
                    kernel=func.name, file=op.loc.file, line=op.loc.line, col=op.loc.col)


_FACTORIES: dict[str, Callable[[], Backend]] = {}
_INSTANCES: dict[str, Backend] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    _FACTORIES[name] = factory


def get_backend(name: str) -> Backend:
    if name not in _INSTANCES:
        _load_builtin_backends((name,) if name in _BUILTIN else None)
        if name not in _FACTORIES:
            raise ValueError(f"unknown backend {name!r}; known: {sorted(_FACTORIES)}")
        _INSTANCES[name] = _FACTORIES[name]()
    return _INSTANCES[name]


def available_backends(names=None) -> list[str]:
    """The backends (of ``names``, default: every registered one) that can run here."""
    _load_builtin_backends(names)
    out = []
    for name in (_FACTORIES if names is None else [n for n in names if n in _FACTORIES]):
        try:
            if get_backend(name).is_available():
                out.append(name)
        except Exception:  # a backend whose optional dependency is missing
            pass
    return out


_BUILTIN = {"interpreter": "tilejit.interpreter.backend",
            "cpu": "tilejit.backends.cpu.backend",
            "cuda": "tilejit.backends.cuda.backend"}


def _load_builtin_backends(names=None) -> None:
    """Import the builtin backends of ``names`` (default: all); each registers itself.
    Only the asked ones: a cpu run does not import the cuda backend."""
    import importlib
    for name, module in _BUILTIN.items():
        if name not in _FACTORIES and (names is None or name in names):
            importlib.import_module(module)   # registers itself
