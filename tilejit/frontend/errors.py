"""Compilation errors shown against the kernel's source.

A :class:`CompilationError` names the kernel, the location ``file:line:col``, shows
the source line with a caret under the column, then the cause.  When the cause was
a ``TypeError``/``ValueError``/``NameError``..., the raised object is an instance of
both ``CompilationError`` and that class (``CompilationTypeError`` etc.), and the
original exception is kept in ``.error``.
"""
from __future__ import annotations

import linecache


class CompilationError(Exception):
    """A mistake in a kernel, located in its source."""

    def __init__(self, message: str = "", *, kernel: str = "", file: str = "", line: int = 0,
                 col: int = 0, source_line: str | None = None, error: BaseException | None = None,
                 internal: bool = False):
        self.kernel = kernel
        self.file = file
        self.line = line
        self.col = col
        self.error = error
        self.cause_message = message
        self.internal = internal      # raised inside tilejit's own language library
        if source_line is None and file and line:
            source_line = linecache.getline(file, line).rstrip("\n") or None
        self.source_line = source_line
        super().__init__(self._format())

    def _format(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: error in kernel '{self.kernel}'"
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

    def __reduce__(self):
        return (_rebuild, (type(self), self.args[0]))


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


class UnsupportedLanguageConstruct(Exception):
    """A Python construct tilejit kernels do not support (raised by the frontend)."""


_BY_CAUSE = ((TypeError, CompilationTypeError), (ValueError, CompilationValueError),
             (NameError, CompilationNameError), (AttributeError, CompilationAttributeError),
             (AssertionError, CompileTimeAssertionFailure))


def error_class_for(exc: BaseException) -> type:
    """The CompilationError subclass that also is ``exc``'s kind."""
    for base, cls in _BY_CAUSE:
        if isinstance(exc, base):
            return cls
    return CompilationError


def make_error(exc: BaseException, *, kernel, file, line, col, internal=False) -> CompilationError:
    """Wrap ``exc`` raised at ``file:line:col`` of ``kernel``."""
    if isinstance(exc, UnsupportedLanguageConstruct):
        return CompilationError(str(exc), kernel=kernel, file=file, line=line, col=col, internal=internal)
    msg = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        msg = str(exc.args[0])
    cls = error_class_for(exc)
    return cls(msg, kernel=kernel, file=file, line=line, col=col, error=exc, internal=internal)
