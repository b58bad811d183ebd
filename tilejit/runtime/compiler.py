"""Ahead-of-time compilation: ``tilejit.compile(fn, signature=..., target=...)``.

Works without a GPU: ``target="cuda:90"`` gives PTX text, ``target="cpu"`` the CPU
backend's output.  The result is the backend's compiled kernel; its ``asm`` maps
each stage's name ('ttir', the canonicalised 'ttir_opt' where passes exist,
'llir', 'ptx', ...) to text.
"""
from __future__ import annotations

from collections import ChainMap

from ..ir.types import dtype_from_name
from .entry import user_entry
from ..analysis.explain import print_explanation


def _by_name(keys, all_names, what):
    """Map indices (positions among all parameters) or names to parameter names."""
    out = set()
    for k in keys or ():
        if isinstance(k, int):
            if not 0 <= k < len(all_names):
                raise ValueError(f"{what}: parameter index {k} out of range")
            out.add(all_names[k])
        else:
            out.add(str(k))
    return out


def _arg_types(fn, signature):
    all_names = [p.name for p in fn.params]
    out = {}
    for k, ty in (signature or {}).items():
        name = all_names[k] if isinstance(k, int) else k
        out[name] = ty if not isinstance(ty, str) else dtype_from_name(ty)
    return out


def build(fn, signature=None, constexprs=None, divisible_by_16=(), equal_to_1=(), options=None,
          launch_options=None):
    """Build the canonicalised tile IR for ``fn`` specialised as given (``launch_options``:
    ``num_warps``... as the frontend sees them).  Returns (func, stages) where stages
    maps stage names to text."""
    from ..frontend import build_ir
    all_names = [p.name for p in fn.params]
    constexprs = {(all_names[k] if isinstance(k, int) else k): v for k, v in (constexprs or {}).items()}
    arg_types = _arg_types(fn, signature)
    div16 = _by_name(divisible_by_16, all_names, "divisible_by_16")
    eq1 = _by_name(equal_to_1, all_names, "equal_to_1")
    spec = {n: (16 if n in div16 else 1, n in eq1) for n in arg_types}
    from ..transforms import run_pipeline
    from .options import get_options
    options = options or get_options()
    func = build_ir(fn, arg_types, constexprs, spec, launch_options, keep_frames=options.traceback)
    stages = {"ttir": _print(func)}
    func = run_pipeline(func, options)
    stages["ttir_opt"] = _print(func)
    return func, stages


def _print(func) -> str:
    from ..ir.printer import print_function
    return print_function(func)


@user_entry
def compile(fn, signature=None, constexprs=None, divisible_by_16=(), equal_to_1=(),
            target="cpu", num_warps=4, num_stages=None, options=None):
    """Compile ``fn`` (a ``@tilejit.jit`` function or an ``ir.Function``) for ``target``
    ('cpu', 'cuda', 'cuda:80', 'cuda:90', 'interpreter') without launching it.

    ``signature`` maps each runtime parameter (name or index) to a type name such as
    '*fp32' or 'i32'; ``constexprs`` gives the constexpr values; ``divisible_by_16``
    and ``equal_to_1`` name (or index) the specialised parameters, as Triton's
    ``instance_descriptor`` does.  Returns the backend's compiled kernel; ``.asm``
    maps stage names to text ('ptx' for CUDA targets).
    """
    from ..backends import get_backend
    from ..ir.core import Function
    from .options import get_options
    if isinstance(fn, Function):
        func, stages = fn, {"ttir": _print(fn)}
    else:
        func, stages = build(fn, signature, constexprs, divisible_by_16, equal_to_1, options,
                             {"num_warps": int(num_warps)})
    kind, _, arch = str(target).partition(":")
    if kind == "cuda":
        func.attrs["target"] = f"cuda:{arch}" if arch else "cuda"
        func.attrs["num_warps"] = int(num_warps)
        if num_stages is not None:
            func.attrs["num_stages"] = int(num_stages)
    options = options or get_options()
    kernel = get_backend(kind).compile(func, options)
    if options.explain:                                   # TILEJIT_EXPLAIN=1
        print_explanation(kernel, func)
    # the backend's stages win over the frontend's; nothing is forced (the CPU
    # backend's 'asm' costs a second code generation and is made on first access)
    kernel.asm = ChainMap({}, getattr(kernel, "asm", None) or {}, stages)
    return kernel
