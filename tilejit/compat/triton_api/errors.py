"""``triton.runtime.errors``: the exceptions Triton's runtime raises (same names,
same constructor arguments and messages, so code catching them works unchanged)."""
from __future__ import annotations


class TritonError(Exception):
    """Base class of Triton's runtime errors."""


class InterpreterError(TritonError):
    """An error raised while interpreting a kernel."""

    def __init__(self, error_message: str | None = None):
        super().__init__(error_message)
        self.error_message = error_message

    def __str__(self) -> str:
        return self.error_message or ""


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
