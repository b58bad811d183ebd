"""tilejit: a compiler for kernels written in the Triton language.

Native x86-64 code on any machine (the default) and PTX for NVIDIA GPUs,
through LLVM.  ``import tilejit as triton`` and ``import tilejit.language as tl``.
"""
__version__ = "0.1.0"

from .runtime.jit import JITFunction, KernelInterface, jit  # noqa: E402
from . import language  # noqa: E402


def cdiv(x, y):
    """Ceiling division ``(x + y - 1) // y`` on Python ints."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """Smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def __getattr__(name):
    # Lazily imported parts (they pull in optional machinery).
    import importlib
    lazy = {"CompilationError": ("tilejit.errors", "CompilationError"),
            "MissingDependencyError": ("tilejit.errors", "MissingDependencyError"),
            "OutOfBoundsError": ("tilejit.errors", "OutOfBoundsError"),
            "OffsetOverflowError": ("tilejit.errors", "OffsetOverflowError"),
            "autotune": ("tilejit.runtime.autotuner", "autotune"),
            "heuristics": ("tilejit.runtime.autotuner", "heuristics"),
            "Config": ("tilejit.runtime.autotuner", "Config"),
            "compile": ("tilejit.runtime.compiler", "compile"),
            "TritonError": ("tilejit.errors", "TritonError"),
            "OutOfResources": ("tilejit.compat.driver", "OutOfResources"),
            "InterpreterError": ("tilejit.errors", "InterpreterError"),
            "must_use_result": ("tilejit.runtime.jit", "must_use_result"),
            "TensorWrapper": ("tilejit.runtime.arrays", "TensorWrapper"),
            "reinterpret": ("tilejit.runtime.arrays", "reinterpret"),
            "testing": ("tilejit.testing", None)}
    if name in lazy:
        module, attr = lazy[name]
        mod = importlib.import_module(module)
        return mod if attr is None else getattr(mod, attr)
    raise AttributeError(f"module 'tilejit' has no attribute {name!r}")
