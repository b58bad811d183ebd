"""``@tilejit.jit``: the kernel object, its launch syntax and argument binding.

``JITFunction`` is a :class:`~tilejit.language.jit_callable.JITCallable` (the Python
function, its source and its parameters, which the frontend reads) that launches:
``kernel[grid](*args, **meta)`` binds arguments by Triton's rules, finds or compiles
the specialization and launches it on the selected backend.
"""
from __future__ import annotations

import functools

from ..language.jit_callable import JITCallable, KernelParam  # noqa: F401  (Triton's runtime.jit names)
from .entry import USER_ERRORS, user_entry, user_error
from .arrays import TensorWrapper, reinterpret  # noqa: F401  (Triton's triton.runtime.jit names)

# Triton's spellings of a type -> its signature names (``tl.str_to_ty`` reads these)
type_canonicalisation_dict = {
    "bool": "u1", "int1": "u1", "uint1": "u1", "i1": "u1",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15",
    "float8_e4m3fn": "fp8e4nv", "float8e4b8": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8",
    "float8_e5m2": "fp8e5", "float8e5b16": "fp8e5b16", "float8_e5m2fnuz": "fp8e5b16",
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32", "float32": "fp32",
    "double": "fp64", "float64": "fp64",
    "int8": "i8", "int16": "i16", "int": "i32", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "void": "void",
}
for _v in list(type_canonicalisation_dict.values()):
    type_canonicalisation_dict[_v] = _v


class KernelInterface:
    """``kernel[grid](...)`` sugar shared by JITFunction, Autotuner and Heuristics."""

    def __getitem__(self, grid):
        return functools.partial(self.run, grid=grid)


class JITFunction(JITCallable, KernelInterface):
    """A ``@tilejit.jit`` kernel: ``kernel[grid](*args, **meta)`` launches it,
    ``kernel.run(*args, grid=..., **meta)`` is the same call, ``kernel.warmup(...)``
    compiles without launching; called from another kernel it is inlined.  ``fn`` is the
    Python function, ``src`` its source, ``params`` its parameters."""

    def __init__(self, fn, *, do_not_specialize=(), debug=None, noinline=False, repr=None,
                 launch_metadata=None):
        super().__init__(fn, do_not_specialize=do_not_specialize, debug=debug,
                         noinline=noinline, repr=repr)
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

    def _unsafe_update_src(self, new_src: str) -> None:
        """Replace the kernel's source text (Triton's ``JITFunction._unsafe_update_src``,
        used to patch a template kernel): later launches compile ``new_src``; the
        specializations compiled from the old text are dropped.  The parameters must
        stay those of ``fn``."""
        super()._unsafe_update_src(new_src)
        self._launcher = None
        self._last_launch = None

    @property
    def cache(self) -> dict:
        """Compiled kernels of this function, by launch key (in memory)."""
        launcher = self.__dict__.get("_launcher")
        return {} if launcher is None else launcher.cache

    def __repr__(self) -> str:
        return f"JITFunction({self.__module__}:{self.__qualname__})"


# Triton's @jit keyword arguments that change nothing here (accepted so Triton code runs
# unchanged; ``repr`` names the compiled kernels): version and launch_metadata (profiler hooks), and
# do_not_specialize_on_alignment (tilejit specializes on alignment only for speed; the
# compiled code is correct either way).
_ACCEPTED_JIT_KWARGS = ("version", "repr", "launch_metadata", "do_not_specialize_on_alignment")
def must_use_result(x, s=True):
    """Decorator for a ``@jit`` helper whose result a kernel must use: a call to it as a
    statement is a compile error (Triton's ``triton.must_use_result``).
    ``@must_use_result("why")`` adds ``why`` to the error message."""
    if isinstance(x, str):
        return lambda fn: must_use_result(fn, x)
    x._must_use_result = s
    return x


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

    ``repr``: ``f(specialization)`` naming each compiled kernel from its
    ``specialization.signature`` (parameter -> type name such as ``'i32'``,
    ``'constexpr'``) and ``.constants`` (constexpr values and the arguments specialised
    to 1), as in Triton.  Triton's ``version``, ``launch_metadata`` and
    ``do_not_specialize_on_alignment`` are accepted and change nothing; any other
    keyword is an error.
    """
    unknown = [k for k in kwargs if k not in _ACCEPTED_JIT_KWARGS]
    if unknown:
        raise TypeError(_unknown_kwarg_message(unknown[0]))

    @user_entry
    def decorate(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, debug=debug, noinline=noinline,
                           repr=kwargs.get("repr"))
    return decorate(fn) if fn is not None else decorate


def _unknown_kwarg_message(name: str) -> str:
    import difflib
    known = ("do_not_specialize", "debug", "noinline") + _ACCEPTED_JIT_KWARGS
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else f"; it accepts {', '.join(known)}"
    return f"jit() got an unexpected keyword argument '{name}'{hint}"
