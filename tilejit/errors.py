"""The base of the errors tilejit raises about a kernel (Triton's ``triton.TritonError``).

Compile errors (:class:`tilejit.frontend.errors.CompilationError` and its subclasses,
``CompileTimeAssertionFailure``...), interpreter errors
(:class:`tilejit.interpreter.errors.InterpreterError`: out-of-bounds accesses, device
asserts), resource limits (``OutOfResources``) and backend lowering errors derive from
:class:`TritonError`, so that ``except triton.TritonError`` catches each of them as it
does under Triton.
"""


class TritonError(Exception):
    """Base class of the errors raised about a kernel (compile, run, resources)."""
