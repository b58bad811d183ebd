"""tilejit's entry points and the errors they hand to the user.

A mistake in the user's kernel or setup (a :class:`UserError`: a CompilationError, a
missing optional dependency) is re-raised at the entry point the user called -- the
launch lane, ``kernel.run``/``warmup``, ``@jit``, ``tilejit.compile``,
autotune/heuristics -- without tilejit's own frames: the message already names the
kernel's file:line:col or what to install.  ``TILEJIT_TRACEBACK=1``
(``Options.traceback``) keeps them, and chains the original internal error.
"""
from __future__ import annotations

import functools

from .options import get_options

TRACEBACK_HINT = "TILEJIT_TRACEBACK=1 shows tilejit's own frames"


class UserError(Exception):
    """Base of the errors about the user's kernel or setup (see the module docstring)."""


class MissingDependencyError(UserError, ImportError):
    """An optional dependency a launch needs is not installed; the message says what to
    install (cuda-bindings for CUDA arrays: ``pip install "tilejit[cuda]"``)."""


USER_ERRORS = UserError


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
    from ..frontend.errors import CompilationError, cause_of
    if not isinstance(exc, CompilationError):
        return None
    cause = cause_of(exc)
    if cause is not None:
        cause.__cause__, cause.__suppress_context__ = None, True
    return cause


def user_error(exc: BaseException) -> BaseException:
    """``exc`` as an entry point re-raises it, per ``Options.traceback``."""
    return for_user(exc, get_options().traceback)


def user_entry(fn):
    """Decorator for an entry point: user errors raised below it end here."""
    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UserError as e:
            raise user_error(e)  # the error is in your kernel or setup: see below (TILEJIT_TRACEBACK=1 shows tilejit's own frames)
    return entry
