"""``triton.runtime.errors``: the exceptions Triton's runtime raises (same names,
same constructor arguments and messages, so code catching them works unchanged);
defined in :mod:`tilejit.errors`."""
from __future__ import annotations


from ...errors import InterpreterError, OutOfResources, PTXASError, TritonError  # noqa: F401

__all__ = ["InterpreterError", "OutOfResources", "PTXASError", "TritonError"]
