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

from ..errors import UserError, for_user
from .options import get_options

TRACEBACK_HINT = "TILEJIT_TRACEBACK=1 shows tilejit's own frames"

USER_ERRORS = UserError


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
