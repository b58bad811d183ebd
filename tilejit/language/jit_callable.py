"""A Python function written in the Triton language, as the frontend reads it.

:class:`JITCallable` holds the function, its source, its file and first line and its
parameters -- everything the frontend needs to inline or compile it, and nothing about
launching it.  ``tilejit.runtime.jit.JITFunction`` (``@tilejit.jit``) derives from it
and adds launches, caches and argument binding; the language's own library functions
(``tl.randint``, ``tl.swizzle2d``...) are plain ``JITCallable`` objects made by
:func:`jit_helper`, so that neither the language nor the frontend imports the runtime
(Triton 3.5 has the same split: ``JITCallable`` under ``JITFunction``).
"""
from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass

from ..errors import CompilationError


@dataclass(frozen=True)
class KernelParam:
    """One parameter of a kernel."""
    name: str
    index: int
    is_constexpr: bool
    annotation: object = None
    default: object = inspect.Parameter.empty
    do_not_specialize: bool = False

    @property
    def num(self) -> int:
        """The parameter's position (Triton's name for ``index``)."""
        return self.index


def _is_constexpr_annotation(ann) -> bool:
    from .core import constexpr
    if ann is constexpr:
        return True
    return isinstance(ann, str) and ann.split(".")[-1] == "constexpr"


def _kernel_source(fn) -> str:
    """The kernel's source text; a kernel typed at a prompt or built by ``exec`` has
    none to compile, which is a CompilationError naming it instead of an OSError."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError) as e:
        code = getattr(fn, "__code__", None)
        raise CompilationError(
            "the kernel's source code cannot be read (defined at an interactive prompt, "
            "through exec, or in a file that is gone); define it in a .py file",
            kernel=getattr(fn, "__name__", "?"), file=getattr(code, "co_filename", ""),
            line=getattr(code, "co_firstlineno", 0), error=e) from None


def _without_decorators(src: str):
    """``(src from its ``def`` line, lines skipped)``: Triton's ``JITFunction.src`` starts
    at ``def`` (tools that read it, such as torch.compile's handling of user kernels,
    parse it as a function definition); a source without a ``def`` line is kept whole."""
    m = re.search(r"^def\s+\w+\s*\(", src, re.MULTILINE)
    if m is None or m.start() == 0:
        return src, 0
    return src[m.start():], src.count("\n", 0, m.start())


class JITCallable:
    """A function in the Triton language: ``fn`` is the Python function, ``src`` its
    source from the ``def`` line (decorators left out, as Triton's), ``params`` its
    parameters; called from a kernel it is inlined."""

    def __init__(self, fn, *, do_not_specialize=(), debug=None, noinline=False, repr=None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.__globals__ = fn.__globals__
        self.src, skipped = _without_decorators(textwrap.dedent(_kernel_source(fn)))
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        self.first_line = fn.__code__.co_firstlineno     # the first decorator's line
        self.src_line = self.first_line + skipped        # the file's line of ``src``'s first
        self.debug = debug
        self.repr = repr               # f(specialization) -> the compiled kernel's name
        self.noinline = noinline
        sig = inspect.signature(fn)
        dns = set()
        for d in do_not_specialize:
            dns.add(list(sig.parameters)[d] if isinstance(d, int) else d)
        self.params = [KernelParam(p.name, i, _is_constexpr_annotation(p.annotation),
                                   p.annotation, p.default, p.name in dns)
                       for i, p in enumerate(sig.parameters.values())]
        self.arg_names = [p.name for p in self.params]
        self.constexpr_names = [p.name for p in self.params if p.is_constexpr]

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self.__name__} is a function in the Triton language: call it "
                           "from inside a kernel")

    @property
    def closure_cells(self) -> dict:
        """name -> cell of each variable ``fn`` reads from an enclosing function (Python
        resolves a name in a kernel as a local, then one of these, then a global)."""
        code = getattr(self.fn, "__code__", None)
        cells = getattr(self.fn, "__closure__", None) or ()
        return dict(zip(code.co_freevars, cells)) if code is not None else {}

    def _unsafe_update_src(self, new_src: str) -> None:
        """Replace the function's source text (Triton's ``_unsafe_update_src``, used to
        patch a template kernel).  The parameters must stay those of ``fn``."""
        self.src = _without_decorators(textwrap.dedent(new_src))[0]

    def __repr__(self) -> str:
        return f"JITCallable({self.__module__}:{self.__qualname__})"


def jit_helper(fn) -> JITCallable:
    """Decorator for the language's library functions written in the language itself
    (inlined into the kernels that call them, like a user's ``@jit`` helper)."""
    return JITCallable(fn)
