"""Errors raised by the reference interpreter.

Every error names the kernel, the source location of the op that failed and the
program id (a 3-tuple) it failed in.
"""
from __future__ import annotations

from ..errors import TritonError


def _source_line(loc) -> str:
    if loc is None or not getattr(loc, "line", 0):
        return ""
    import linecache
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
