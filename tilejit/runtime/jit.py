"""``@tilejit.jit``: the kernel object, its launch syntax and argument binding.

``JITFunction`` holds the Python function, its source and its parameters; the
frontend reads ``fn``, ``src``, ``params`` and ``__globals__``.  ``kernel[grid](*args,
**meta)`` binds arguments by Triton's rules, finds or compiles the specialization
and launches it on the selected backend.
"""
from __future__ import annotations

import functools
import inspect
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelParam:
    """One parameter of a kernel."""
    name: str
    index: int
    is_constexpr: bool
    annotation: object = None
    default: object = inspect.Parameter.empty
    do_not_specialize: bool = False


def _is_constexpr_annotation(ann) -> bool:
    from ..language import constexpr
    if ann is constexpr:
        return True
    return isinstance(ann, str) and ann.split(".")[-1] == "constexpr"


def _kernel_source(fn) -> str:
    """The kernel's source text; a kernel typed at a prompt or built by ``exec`` has
    none to compile, which is a CompilationError naming it instead of an OSError."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError) as e:
        from ..frontend.errors import CompilationError
        code = getattr(fn, "__code__", None)
        raise CompilationError(
            "the kernel's source code cannot be read (defined at an interactive prompt, "
            "through exec, or in a file that is gone); define it in a .py file",
            kernel=getattr(fn, "__name__", "?"), file=getattr(code, "co_filename", ""),
            line=getattr(code, "co_firstlineno", 0), error=e) from None


class KernelInterface:
    """``kernel[grid](...)`` sugar shared by JITFunction, Autotuner and Heuristics."""

    def __getitem__(self, grid):
        return functools.partial(self.run, grid=grid)


class JITFunction(KernelInterface):
    def __init__(self, fn, *, do_not_specialize=(), debug=None, noinline=False, repr=None,
                 launch_metadata=None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.__globals__ = fn.__globals__
        self.src = textwrap.dedent(_kernel_source(fn))
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        self.first_line = fn.__code__.co_firstlineno
        self.debug = debug
        self.noinline = noinline
        sig = inspect.signature(fn)
        dns = set()
        for d in do_not_specialize:
            dns.add(list(sig.parameters)[d] if isinstance(d, int) else d)
        self.params = [KernelParam(p.name, i, _is_constexpr_annotation(p.annotation),
                                   p.annotation, p.default, p.name in dns)
                       for i, p in enumerate(sig.parameters.values())]
        self.arg_names = [p.name for p in self.params]
        self.constexpr_names = [p.name for p in self.params if p.is_constexpr]
        self._launcher = None
        self._last_launch = None       # the last kernel[grid] (see __getitem__)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self.__name__} is a @tilejit.jit kernel: launch it as {self.__name__}[grid](...), "
            "or call it from inside another kernel")

    def __getitem__(self, grid):
        """``kernel[grid]``: a launcher calling straight into the express lane (the
        last one is reused while the grid is the same object, e.g. a literal)."""
        last = self._last_launch
        if last is not None and last.args[0] is grid:
            return last
        launcher = self._launcher
        if launcher is None:
            from .launcher import Launcher
            launcher = self._launcher = Launcher(self)
        last = self._last_launch = functools.partial(launcher.go, grid)   # go(grid, *args, **kwargs)
        return last

    def run(self, *args, grid, **kwargs):
        """Bind arguments, compile (cached) and launch over ``grid``."""
        launcher = self._launcher
        if launcher is None:
            from .launcher import Launcher
            launcher = self._launcher = Launcher(self)
        return launcher(args, kwargs, grid)

    def warmup(self, *args, grid=None, **kwargs):
        """Bind and compile (cached) without launching; returns the compiled kernel."""
        from .launch import launch
        return launch(self, args, kwargs, grid, warmup=True)

    def _unsafe_update_src(self, new_src: str):
        """Compile ``new_src`` instead of the function's own source from now on (Triton's
        hook, used by its tests to patch a kernel's text).  The signature must stay the
        same; compiled kernels of the old text are dropped (the cache key holds the text)."""
        self.src = textwrap.dedent(new_src)
        self._launcher = None
        self._last_launch = None

    @property
    def cache(self) -> dict:
        """Compiled kernels of this function, by launch key (in memory)."""
        launcher = self.__dict__.get("_launcher")
        return {} if launcher is None else launcher.cache

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__qualname__})"


def jit(fn=None, *, do_not_specialize=(), debug=None, noinline=False, **kwargs):
    """Decorator: compile a function written in the Triton language.

    Usable bare (``@jit``) or with options (``@jit(do_not_specialize=["n"])``).
    """
    def decorate(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, debug=debug, noinline=noinline)
    return decorate(fn) if fn is not None else decorate
