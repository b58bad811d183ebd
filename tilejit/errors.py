"""Every error tilejit raises about a kernel, in one module (the root of the package's
layers: it imports nothing from tilejit, and every layer imports its errors from here).

- :class:`TritonError`: the base (Triton's ``triton.TritonError``), so that ``except
  triton.TritonError`` catches each of the errors below as it does under Triton.
- :class:`UserError`: a mistake in the user's kernel or setup; the entry points
  (``tilejit.runtime.entry``) re-raise it without tilejit's own frames.
- Compile errors, shown against the kernel's source: :class:`CompilationError` names the
  kernel, the location ``file:line:col``, shows the source line with a caret under the
  column, then the cause.  When the cause was a ``TypeError``/``ValueError``/``NameError``...,
  the raised object is an instance of both ``CompilationError`` and that class
  (``CompilationTypeError`` etc.), and the original exception is kept in ``.error``.
- Interpreter errors (:class:`InterpreterError`: out-of-bounds accesses, device asserts),
  each naming the kernel, the source location of the op that failed and the program id.
- Backend errors (:class:`LoweringError`), resource limits (:class:`OutOfResources`,
  :class:`PTXASError`), launch options Triton rejects (:class:`LaunchOptionError`).
"""
from __future__ import annotations

import linecache


class TritonError(Exception):
    """Base class of the errors raised about a kernel (compile, run, resources)."""


class UserError(Exception):
    """Base of the errors about the user's kernel or setup: an entry point re-raises them
    without tilejit's frames (``TILEJIT_TRACEBACK=1`` keeps them)."""


class MissingDependencyError(UserError, ImportError):
    """An optional dependency a launch needs is not installed; the message says what to
    install (cuda-bindings for CUDA arrays: ``pip install "tilejit[cuda]"``)."""


# ----------------------------------------------------------------- compile errors
class CompilationError(UserError, TritonError):
    """A mistake in a kernel, located in its source."""

    def __init__(self, message: str = "", *, kernel: str = "", file: str = "", line: int = 0,
                 col: int = 0, source_line: str | None = None, error: BaseException | None = None,
                 internal: bool = False, rel: tuple | None = None):
        self.kernel = kernel
        self.rel = rel                # (line from the `def` line = 1, column), Triton's "at L:C:"
        self.file = file
        self.line = line
        self.col = col
        self.error = error
        self.cause_message = message
        self.internal = internal      # raised inside tilejit's own language library
        self.callee = None            # set while it leaves a @jit function for its call site
        if source_line is None and file and line:
            source_line = linecache.getline(file, line).rstrip("\n") or None
        self.source_line = source_line
        super().__init__(self._format())

    def _format(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: error in kernel '{self.kernel}'"
        if self.rel is not None:
            head += f" at {self.rel[0]}:{self.rel[1]}:"
        out = [head]
        if self.source_line:
            text = self.source_line.rstrip()
            stripped = text.lstrip()
            shift = len(text) - len(stripped)
            out.append("    " + stripped)
            out.append("    " + " " * max(0, self.col - shift) + "^")
        cause = self.cause_message
        if self.error is not None:
            name = type(self.error).__name__
            cause = f"{name}: {cause}" if cause else name
        out.append(cause)
        return "\n".join(out)

    @property
    def error_message(self) -> str:
        """The cause alone, without the location (Triton's ``CompilationError.error_message``)."""
        return getattr(self, "cause_message", None) or str(self)

    def __reduce__(self):
        # dynamic subclasses (see error_class_for) pickle as their nearest static class
        cls = type(self) if type(self) in _STATIC else _static_class_for(self)
        return (_rebuild, (cls, self.args[0]))


def _rebuild(cls, text):
    err = Exception.__new__(cls)
    Exception.__init__(err, text)
    return err


class CompilationTypeError(CompilationError, TypeError):
    """A type mistake in a kernel (also a ``TypeError``)."""


class CompilationValueError(CompilationError, ValueError):
    """A value or shape mistake in a kernel (also a ``ValueError``)."""


class CompilationNameError(CompilationError, NameError):
    """An unknown name in a kernel (also a ``NameError``)."""


class CompilationAttributeError(CompilationError, AttributeError):
    """An unknown attribute in a kernel (also an ``AttributeError``)."""


class CompileTimeAssertionFailure(CompilationError, AssertionError):
    """A ``tl.static_assert`` that failed."""


class KernelError(TritonError):
    """Raised inside the frontend with a complete message: it becomes a plain
    CompilationError (no exception type prefixed to the message)."""


class UnsupportedLanguageConstruct(KernelError):
    """A Python construct tilejit kernels do not support (raised by the frontend)."""


_BY_CAUSE = ((TypeError, CompilationTypeError), (ValueError, CompilationValueError),
             (NameError, CompilationNameError), (AttributeError, CompilationAttributeError),
             (AssertionError, CompileTimeAssertionFailure))


_STATIC = {CompilationError} | {cls for _, cls in _BY_CAUSE}
_EXACT = {base: cls for base, cls in _BY_CAUSE}
_DYNAMIC: dict = {}


def _static_class_for(exc) -> type:
    for base, cls in _BY_CAUSE:
        if isinstance(exc, base):
            return cls
    return CompilationError


def error_class_for(exc: BaseException) -> type:
    """The CompilationError subclass that also is an instance of ``exc``'s class (so
    ``except ZeroDivisionError`` or a caller's own exception class still catches it)."""
    kind = type(exc)
    if kind in _EXACT:
        return _EXACT[kind]
    cls = _DYNAMIC.get(kind)
    if cls is None:
        try:
            cls = type(f"Compilation{kind.__name__}", (CompilationError, kind), {"__module__": __name__})
        except TypeError:             # an exception class that cannot be combined
            cls = _static_class_for(exc)
        _DYNAMIC[kind] = cls
    return cls


def make_error(exc: BaseException, *, kernel, file, line, col, internal=False,
               rel=None) -> CompilationError:
    """Wrap ``exc`` raised at ``file:line:col`` of ``kernel`` (``rel``: the position in
    the kernel's source, Triton's "at L:C:")."""
    where = dict(kernel=kernel, file=file, line=line, col=col, internal=internal, rel=rel)
    if isinstance(exc, KernelError):
        return CompilationError(str(exc), **where)
    msg = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        msg = str(exc.args[0])
    try:
        return error_class_for(exc)(msg, error=exc, **where)
    except Exception:  # noqa: BLE001  -- an exception class with an unusual constructor
        return _static_class_for(exc)(msg, error=exc, **where)


def called_from(inner: CompilationError, *, kernel, file, line, col, rel) -> CompilationError:
    """``inner``, raised inside a ``@jit`` function, seen at the call site: the same class,
    located at the call, showing ``inner`` and keeping it as its cause (Triton chains a
    callee's error the same way)."""
    outer = type(inner)(f"in the @jit function '{inner.callee}' called here:\n{inner}",
                        kernel=kernel, file=file, line=line, col=col, rel=rel)
    outer.error = inner
    inner.callee = None
    return outer


def cause_of(err: CompilationError):
    """The exception a CompilationError reports (its ``__cause__``, as Triton chains it),
    without the compiler's frames; None for a failed ``tl.static_assert``."""
    if isinstance(err, CompileTimeAssertionFailure) or err.error is None:
        return None
    return err.error.with_traceback(None)


def for_user(exc: BaseException, keep_frames: bool) -> BaseException:
    """``exc`` ready to re-raise at an entry point: tilejit's frames dropped (its direct
    cause, the plain error Triton's ``CompilationError.__cause__`` holds, is kept
    without frames), or, with ``keep_frames``, kept with the original error
    (``exc.error``) chained as the cause."""
    if keep_frames:
        inner = getattr(exc, "error", None)
        if inner is not None and exc.__cause__ is None and inner is not exc:
            exc.__cause__ = inner
        return exc
    exc.__cause__ = _frameless_cause(exc)
    exc.__suppress_context__ = True
    return exc.with_traceback(None)


def _frameless_cause(exc):
    """The error a CompilationError reports, as Triton chains it (``e.__cause__``), or
    None; without tilejit's frames."""
    if not isinstance(exc, CompilationError):
        return None
    cause = cause_of(exc)
    if cause is not None:
        cause.__cause__, cause.__suppress_context__ = None, True
    return cause

# ----------------------------------------------------------------- interpreter errors
def _source_line(loc) -> str:
    if loc is None or not getattr(loc, "line", 0):
        return ""
    return linecache.getline(loc.file, loc.line).strip()


class InterpreterError(TritonError, RuntimeError):
    """An op failed while the interpreter ran a kernel."""

    def __init__(self, message: str, *, kernel: str = "", loc=None, program_id=None):
        self.kernel = kernel
        self.loc = loc
        self.program_id = program_id
        self.detail = message
        where = f"{loc.file}:{loc.line}" if loc is not None else "<unknown>"
        text = f"{kernel}: {where}: program {tuple(program_id or ())}: {message}"
        src = _source_line(loc)
        if src:
            text += f"\n    {src}"
        super().__init__(text)


class OutOfBoundsError(InterpreterError, IndexError):
    """A masked-in lane addressed memory outside every buffer passed to the kernel
    (or an address misaligned for the element type)."""

    def __init__(self, message: str, *, kernel: str = "", loc=None, program_id=None,
                 lane=None, address=None):
        self.lane = lane
        self.address = address
        super().__init__(message, kernel=kernel, loc=loc, program_id=program_id)


class DeviceAssertError(InterpreterError, AssertionError):
    """``tl.device_assert`` failed in some lane."""


class OffsetOverflowError(OutOfBoundsError, OverflowError):
    """Sanitize mode: int32 arithmetic feeding an address wrapped past 2**31
    (raised by the checks of ``tilejit.transforms.sanitize``)."""



class DeviceAssertionError(DeviceAssertError):
    """A ``tl.device_assert`` failed in a compiled kernel (same class family and
    message format as the interpreter's DeviceAssertError)."""


# ----------------------------------------------------------------- backends and launches
class AnalysisClaimError(InterpreterError, AssertionError):
    """An analysis claim that a concrete value contradicts (a would-be miscompile;
    ``TILEJIT_CHECK_ANALYSIS=1``, analysis/checker.py).  An ``InterpreterError`` so that
    the interpreter passes it through unwrapped."""

    def __init__(self, op, result_index: int, claim: str, example: str, program_id=None,
                 kernel: str = ""):
        self.op = op
        self.result_index = result_index
        self.claim = claim
        self.example = example
        self.program_id = program_id
        loc = op.loc
        src = linecache.getline(loc.file, loc.line).strip() if loc.line else ""
        where = f"{loc}" + (f": {src}" if src else "")
        origin = " (a user hint)" if "hint" in getattr(op, "TRAITS", ()) else ""
        super().__init__(
            f"analysis claim violated by {op.name}{origin} at {where}\n"
            f"  result #{result_index} of type {op.results[result_index].type}: claims {claim}\n"
            f"  counter-example in program {program_id}: {example}",
            kernel=kernel, loc=loc, program_id=program_id)


class ReturnTypeError(TypeError):
    """A function whose paths return different types (reported at its ``def``, as Triton
    does; frontend/control.py)."""


class ParseError(ValueError):
    """Tile-IR text that does not parse (ir/parser.py)."""


class VerificationError(ValueError):
    """Tile IR that breaks an invariant (ir/verifier.py), naming the op."""


class IntegerArgumentOverflow(OverflowError, ValueError):
    """An integer argument outside int64 and uint64 (Triton raises ``OverflowError``;
    a ``ValueError`` too, a bad argument value; runtime/launch.py)."""


class UnsupportedTritonFeature(AttributeError):
    """A Triton name tilejit does not implement (compat/)."""


class UnsupportedTritonModule(ModuleNotFoundError):
    """A Triton module tilejit has no counterpart for (compat/)."""


class LoweringError(TritonError):
    """A backend could not lower an op (names the op and its source location)."""


class AnalysisError(TritonError, RuntimeError):
    """The analysis failed on a kernel: a bug in tilejit, not in the kernel.  The
    message names the kernel and its definition; the failure is kept as ``__cause__``."""

    def __init__(self, func, error: BaseException):
        loc = getattr(func, "loc", None)
        where = f"{getattr(loc, 'file', '') or '<unknown>'}:{getattr(loc, 'line', 0)}"
        self.kernel, self.error = func.name, error
        super().__init__(f"{where}: the value analysis failed on kernel '{func.name}' "
                         f"({type(error).__name__}: {error}); this is a bug in tilejit, please "
                         "report it with the kernel; TILEJIT_VECTORIZE=0 compiles the kernel "
                         "without the analysis (scalar memory accesses)")


class LaunchOptionError(ValueError, AssertionError):
    """A launch option Triton rejects (``num_warps=3``); an ``AssertionError`` too, as
    Triton raises one."""


class PtxCheckError(RuntimeError):
    """A kernel's CUDA lowering failed, or ptxas rejected its PTX (``TILEJIT_PTX_CHECK``)."""


class OutOfResources(TritonError):
    """A configuration needs more of a resource than the target has (autotuners skip it)."""

    def __init__(self, required=None, limit=None, name="resources"):
        super().__init__(required, limit, name)
        self.required, self.limit, self.name = required, limit, name

    def __str__(self) -> str:
        return (f"out of resource: {self.name}, Required: {self.required}, Hardware limit: "
                f"{self.limit}. Reducing block sizes or `num_stages` may help.")

    def __reduce__(self):
        return (type(self), (self.required, self.limit, self.name))


class PTXASError(TritonError):
    """ptxas rejected the PTX of a kernel."""

    def __init__(self, error_message: str | None = None):
        super().__init__(error_message)
        self.error_message = error_message

    def __str__(self) -> str:
        return f"PTXAS error: {self.error_message or ''}"
