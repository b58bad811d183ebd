"""Compilation errors shown against the kernel's source.

A :class:`CompilationError` names the kernel, the location ``file:line:col``, shows
the source line with a caret under the column, then the cause.  When the cause was
a ``TypeError``/``ValueError``/``NameError``..., the raised object is an instance of
both ``CompilationError`` and that class (``CompilationTypeError`` etc.), and the
original exception is kept in ``.error``.
"""
from __future__ import annotations

import linecache

from ..errors import TritonError
from ..runtime.entry import UserError


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
