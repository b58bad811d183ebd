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

from .entry import USER_ERRORS, user_entry, user_error


@dataclass(frozen=True)
class KernelParam:
    """One parameter of a kernel."""
    name: str
    index: int
    is_constexpr: bool
    annotation: object = None
    default: object = inspect.Parameter.empty
    do_not_specialize: bool = False

    @property
    def num(self) -> int:
        """The parameter's position (Triton's name for ``index``)."""
        return self.index


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
    """A ``@tilejit.jit`` kernel: ``kernel[grid](*args, **meta)`` launches it,
    ``kernel.run(*args, grid=..., **meta)`` is the same call, ``kernel.warmup(...)``
    compiles without launching; called from another kernel it is inlined.  ``fn`` is the
    Python function, ``src`` its source, ``params`` its parameters."""

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
        try:
            return launcher(args, kwargs, grid)
        except USER_ERRORS as e:
            raise user_error(e)  # the error is in your kernel or setup: see below (TILEJIT_TRACEBACK=1 shows tilejit's own frames)

    @user_entry
    def warmup(self, *args, grid=None, **kwargs):
        """Bind and compile (cached) without launching; returns the compiled kernel."""
        from .launch import launch
        return launch(self, args, kwargs, grid, warmup=True)

    @property
    def cache(self) -> dict:
        """Compiled kernels of this function, by launch key (in memory)."""
        launcher = self.__dict__.get("_launcher")
        return {} if launcher is None else launcher.cache

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__qualname__})"


# Triton's @jit keyword arguments that change nothing here (accepted so Triton code runs
# unchanged): version, repr and launch_metadata (profiler hooks), and
# do_not_specialize_on_alignment (tilejit specializes on alignment only for speed; the
# compiled code is correct either way).
_ACCEPTED_JIT_KWARGS = ("version", "repr", "launch_metadata", "do_not_specialize_on_alignment")


def jit(fn=None, *, do_not_specialize=(), debug=None, noinline=False, **kwargs):
    """Decorator: compile a function written in the Triton language.

    Usable bare (``@jit``) or with options (``@jit(do_not_specialize=["n"])``)::

        @tilejit.jit
        def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

        add[(tilejit.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

    A kernel is launched as ``kernel[grid](*args, **meta)``: ``grid`` is a tuple of 1 to 3
    ints or a callable taking the meta-parameters.  Arrays (numpy, torch CPU or CUDA
    tensors, CuPy, ``__cuda_array_interface__``/DLPack objects) are passed as pointers,
    Python/numpy scalars as ``i32``/``i64``/``fp32`` values; parameters annotated
    ``tl.constexpr`` are compile-time constants (block shapes must be).  Each new
    combination of argument types, constexpr values and specializations (an int equal to
    1, divisible by 16; an array 16-byte aligned) compiles once and is cached in memory
    and on disk.  A @jit function called from another kernel is inlined.

    Args:
        do_not_specialize: parameter names or indices not specialized on their value
            (== 1, divisible by 16), to avoid a compilation per value.
        debug: accepted for Triton compatibility (use ``TILEJIT_SANITIZE=1`` or
            ``TILEJIT_INTERPRET=1`` to debug a kernel).
        noinline: accepted for Triton compatibility (helpers are always inlined).

    Triton's ``version``, ``repr``, ``launch_metadata`` and
    ``do_not_specialize_on_alignment`` are accepted and change nothing; any other
    keyword is an error.
    """
    unknown = [k for k in kwargs if k not in _ACCEPTED_JIT_KWARGS]
    if unknown:
        raise TypeError(_unknown_kwarg_message(unknown[0]))

    @user_entry
    def decorate(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, debug=debug, noinline=noinline)
    return decorate(fn) if fn is not None else decorate


def _unknown_kwarg_message(name: str) -> str:
    import difflib
    known = ("do_not_specialize", "debug", "noinline") + _ACCEPTED_JIT_KWARGS
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else f"; it accepts {', '.join(known)}"
    return f"jit() got an unexpected keyword argument '{name}'{hint}"
