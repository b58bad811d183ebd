"""Launch-time helpers for the safety features: the per-launch ``sanitize=True``
option (``kernel[grid](..., sanitize=True)``) and block-shape limits.

``with_sanitize(options, flag)`` returns an :class:`Options` with ``sanitize`` set,
the same object for the same input (so the launcher's option token stays cheap to
look up and the sanitized variant has its own cache key).
"""
from __future__ import annotations

_DERIVED: dict = {}


def with_sanitize(options, flag) -> object:
    """``options`` with ``sanitize=bool(flag)`` (cached: identical objects per input)."""
    flag = bool(flag)
    if options.sanitize == flag:
        return options
    key = (options, flag)
    got = _DERIVED.get(key)
    if got is None:
        got = _DERIVED[key] = options.with_(sanitize=flag)
    return got
