"""``python -m tilejit dump``: every compilation stage of a kernel in a file.

Stages, in pipeline order: ``source``, ``ir`` (frontend output), one entry per pass
(named by ``transforms.run_pipeline``), ``analysis`` (the optimized IR annotated with
value ranges and axis info), then whatever the backend records in
``CompiledKernel.asm`` (LLVM IR, optimized LLVM IR, assembly, PTX ...).
"""
from __future__ import annotations

import ast
import contextlib
import inspect
import hashlib
import importlib.util
import os
import sys


def load_kernel(path: str, name: str):
    """The ``@jit`` function ``name`` defined in the file ``path`` (autotune /
    heuristics / Inductor wrappers are unwrapped)."""
    from . import install_inductor_alias, install_triton_alias
    from ..runtime.jit import JITFunction
    install_triton_alias()
    install_inductor_alias()
    path = os.path.abspath(path)
    modname = "tilejit_dump_" + hashlib.sha256(path.encode()).hexdigest()[:16]
    mod = sys.modules.get(modname)
    if mod is None:
        spec = importlib.util.spec_from_file_location(modname, path)
        if spec is None:
            raise FileNotFoundError(path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        try:
            with contextlib.redirect_stdout(sys.stderr):   # keep stdout for the dump
                spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[modname]
            raise
    if not hasattr(mod, name):
        raise AttributeError(f"{path} defines no {name!r}")
    obj = getattr(mod, name)
    while not isinstance(obj, JITFunction) and hasattr(obj, "fn"):
        obj = obj.fn
    if not isinstance(obj, JITFunction):
        raise TypeError(f"{name} in {path} is not a @jit kernel")
    return obj


def parse_signature(jitfn, text: str) -> dict:
    """``'*fp32,*fp32,i32'`` (in order of the non-constexpr parameters) or
    ``'x=*fp32,n=i32'`` -> name -> type."""
    from ..ir.types import dtype_from_name
    names = [p.name for p in jitfn.params if not p.is_constexpr]
    items = [s.strip() for s in text.split(",") if s.strip()]
    if items and all("=" in s for s in items):
        pairs = [s.split("=", 1) for s in items]
        out = {k.strip(): dtype_from_name(v.strip()) for k, v in pairs}
        unknown = set(out) - set(names)
        if unknown:
            raise ValueError(f"not parameters of {jitfn.__name__}: {sorted(unknown)}")
    else:
        if len(items) != len(names):
            raise ValueError(f"{jitfn.__name__} has {len(names)} non-constexpr parameters "
                             f"({', '.join(names)}); the signature gives {len(items)} types")
        out = {n: dtype_from_name(t) for n, t in zip(names, items)}
    missing = [n for n in names if n not in out]
    if missing:
        raise ValueError(f"no type given for {', '.join(missing)}")
    return {n: out[n] for n in names}


def parse_constexprs(jitfn, items) -> dict:
    out = {}
    for item in items:
        k, _, v = item.partition("=")
        try:
            out[k.strip()] = ast.literal_eval(v.strip())
        except (ValueError, SyntaxError):
            out[k.strip()] = v.strip()
    for p in jitfn.params:
        if p.is_constexpr and p.name not in out:
            if p.default is not inspect.Parameter.empty:
                out[p.name] = p.default
            else:
                raise ValueError(f"constexpr {p.name} needs a value: -c {p.name}=...")
    return out


def parse_spec(types: dict, items) -> dict:
    """Default: pointers divisible by 16, integers unknown (1); ``n=16``, ``n=eq1``."""
    spec = {n: (16 if t.is_ptr() else 1, False) for n, t in types.items()}
    for item in items:
        k, _, v = item.partition("=")
        v = v.strip()
        spec[k.strip()] = (1, True) if v in ("eq1", "1:1") else (int(v), False)
    return spec


def dump_stages(path, kernel, signature, constexprs=(), target="cpu", spec=(), num_warps=4) -> dict:
    """Compile and return ``{stage name: text}`` in pipeline order."""
    from .. import frontend, transforms
    from ..backends import get_backend
    from ..ir.printer import print_function
    from ..runtime.options import get_options
    jitfn = load_kernel(path, kernel)
    types = parse_signature(jitfn, signature)
    cvals = parse_constexprs(jitfn, constexprs)
    stages = {"source": jitfn.src}
    func = frontend.build_ir(jitfn, types, cvals, parse_spec(types, spec),
                             keep_frames=get_options().traceback)
    stages["ir"] = print_function(func)
    kind, _, arch = str(target).partition(":")
    options = get_options().with_(backend=kind, interpret=(kind == "interpreter"))
    func = transforms.run_pipeline(func, options,
                                   dump=lambda name, text: stages.__setitem__(name, text))
    stages["analysis"] = _analysis_text(func, print_function)
    if kind == "cuda":     # as tilejit.compile does: the target arch and launch shape
        func.attrs["target"] = f"cuda:{arch}" if arch else "cuda"
        func.attrs["num_warps"] = int(num_warps)
    compiled = get_backend(kind).compile(func, options)
    for k, v in compiled.asm.items():
        stages[k] = v if isinstance(v, str) else repr(v)
    return stages



def _analysis_text(func, print_function) -> str:
    from ..analysis.printer import print_analysis
    return print_analysis(func, locs=True)
