"""Golden-file runner: build a Function from a golden file, run a mode, FileCheck the text.

A golden file is either

* ``*.tir``: IR text (read by ``tilejit.ir.parser``) with ``// RUN:`` and ``// CHECK:``
  comment lines, or
* ``*.py``: a Python module with ``@tilejit.jit`` kernels and ``#`` comment directives:

      # RUN: pipeline
      # KERNEL: add_kernel                    (optional when the module has one kernel)
      # ARGS: x_ptr=*fp32:16 n=i32 one=i32:eq1   (type[:divisibility][:eq1])
      # CONSTEXPRS: BLOCK=1024 DTYPE=fp16      (Python literals, or dtype names)
      # CHECK-LABEL: tt.func @add_kernel

``RUN:`` lines are ``mode [--locs] [--check-prefix=P] [--kernel=NAME]``; each is checked
against the directives with its prefix (default ``CHECK``).  Modes are registered with
:func:`register_mode` as ``fn(func, run) -> str``; built in: ``print``, ``roundtrip``,
``pipeline`` and ``passes=a,b`` (stages of ``tilejit.transforms.PIPELINE`` by name).
Modules named ``modes_*.py`` next to this file are imported first so other parts can
add modes (e.g. an analysis printer).

    python tests/golden/runner.py FILE [--run N]   # print a mode's output (to write checks)
"""
from __future__ import annotations

import ast
import glob
import importlib.util
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from filecheck import FileCheckError, filecheck  # noqa: E402

MODES: dict[str, Callable] = {}


def register_mode(name: str):
    """Decorator: ``@register_mode("analysis") def mode(func, run) -> str``."""
    def deco(fn):
        MODES[name] = fn
        return fn
    return deco


@dataclass
class Run:
    mode: str
    arg: str = ""
    locs: bool = False
    prefix: str = "CHECK"
    kernel: str = ""
    extra: dict = field(default_factory=dict)


def parse_run(text: str) -> Run:
    words = shlex.split(text)
    if not words:
        raise ValueError("empty RUN line")
    mode, _, arg = words[0].partition("=")
    run = Run(mode, arg)
    for w in words[1:]:
        key, _, value = w.lstrip("-").partition("=")
        if key == "locs":
            run.locs = True
        elif key == "check-prefix":
            run.prefix = value
        elif key == "kernel":
            run.kernel = value
        else:
            run.extra[key] = value or True
    return run


def directives(text: str, name: str) -> list[str]:
    out = []
    for line in text.splitlines():
        s = line.strip()
        for lead in ("//", "#"):
            if s.startswith(lead) and s[len(lead):].lstrip().startswith(name + ":"):
                out.append(s[len(lead):].lstrip()[len(name) + 1:].strip())
    return out


_SUPPORT = ("runner.py", "filecheck.py", "irsamples.py", "conftest.py", "__init__.py")


def is_golden_file(path: str) -> bool:
    if path.endswith(".tir"):
        return True
    base = os.path.basename(path)
    if not path.endswith(".py") or base.startswith(("test_", "modes_")) or base in _SUPPORT:
        return False
    with open(path) as f:
        return bool(directives(f.read(), "RUN"))


def golden_files(root: str = HERE) -> list[str]:
    paths = glob.glob(os.path.join(root, "**", "*.tir"), recursive=True)
    paths += [p for p in glob.glob(os.path.join(root, "**", "*.py"), recursive=True)
              if is_golden_file(p)]
    return sorted(paths)


# --------------------------------------------------------------------------
# building the input Function
# --------------------------------------------------------------------------
def _load_module(path: str):
    name = "golden_" + os.path.splitext(os.path.relpath(path, HERE))[0].replace(os.sep, "_")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _value(text: str):
    from tilejit.ir import dtype_from_name
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return dtype_from_name(text)


def parse_args_directive(text: str):
    """``x=*fp32:16 n=i32:eq1`` -> (arg_types, specialization)."""
    from tilejit.ir import dtype_from_name
    types, spec = {}, {}
    for item in text.split():
        name, _, rest = item.partition("=")
        ty, *flags = rest.split(":")
        types[name] = dtype_from_name(ty)
        div = next((int(f) for f in flags if f.isdigit()), 1)
        eq1 = "eq1" in flags
        if div != 1 or eq1:
            spec[name] = (div, eq1)
    return types, spec


def build_from_python(path: str, text: str, kernel: str = ""):
    from tilejit.frontend import build_ir
    from tilejit.runtime.jit import JITFunction
    mod = _load_module(path)
    kernel = kernel or next(iter(directives(text, "KERNEL")), "")
    if kernel:
        jitfn = getattr(mod, kernel)
    else:
        kernels = [v for v in vars(mod).values() if isinstance(v, JITFunction)
                   and v.__module__ == mod.__name__]
        if len(kernels) != 1:
            raise ValueError(f"{path}: {len(kernels)} kernels; name one with '# KERNEL: name'")
        jitfn = kernels[0]
    types, spec = parse_args_directive(" ".join(directives(text, "ARGS")))
    constexprs = {}
    for item in " ".join(directives(text, "CONSTEXPRS")).split():
        name, _, value = item.partition("=")
        constexprs[name] = _value(value)
    return build_ir(jitfn, types, constexprs, spec or None)


def build_function(path: str, text: str, run: Run):
    if path.endswith(".tir"):
        from tilejit.ir.parser import parse_function
        from tilejit.ir.verifier import verify_function
        return verify_function(parse_function(text))
    return build_from_python(path, text, run.kernel)


# --------------------------------------------------------------------------
# built-in modes
# --------------------------------------------------------------------------
def _print(func, run: Run) -> str:
    from tilejit.ir.printer import print_function
    return print_function(func, locs=run.locs)


@register_mode("print")
def mode_print(func, run: Run) -> str:
    return _print(func, run)


@register_mode("roundtrip")
def mode_roundtrip(func, run: Run) -> str:
    from tilejit.ir.parser import roundtrip_check
    return _print(roundtrip_check(func), run)


@register_mode("pipeline")
def mode_pipeline(func, run: Run) -> str:
    from tilejit.runtime.options import Options
    from tilejit.transforms import run_pipeline
    return _print(run_pipeline(func, Options(debug=True)), run)


@register_mode("passes")
def mode_passes(func, run: Run) -> str:
    from tilejit.runtime.options import Options
    from tilejit.transforms import PIPELINE, run_pipeline
    stages = dict(PIPELINE)
    names = [n for n in run.arg.split(",") if n]
    unknown = [n for n in names if n not in stages]
    if unknown or not names:
        raise ValueError(f"passes={run.arg}: unknown stage(s) {unknown}; known: {list(stages)}")
    pipeline = [(n, stages[n]) for n in names]
    return _print(run_pipeline(func, Options(debug=True), pipeline=pipeline), run)


def load_extra_modes() -> None:
    for path in sorted(glob.glob(os.path.join(HERE, "modes_*.py"))):
        name = "golden_" + os.path.splitext(os.path.basename(path))[0]
        if name not in sys.modules:
            _load_module(path)


# --------------------------------------------------------------------------
# running a golden file
# --------------------------------------------------------------------------
def produce(path: str, run: Run, text: str | None = None) -> str:
    load_extra_modes()
    if text is None:
        with open(path) as f:
            text = f.read()
    if run.mode not in MODES:
        raise ValueError(f"{path}: unknown mode {run.mode!r}; known: {sorted(MODES)}")
    func = build_function(path, text, run)
    return MODES[run.mode](func, run)


def check_file(path: str) -> int:
    """Run every RUN line of ``path`` and FileCheck it; returns the directives checked."""
    with open(path) as f:
        text = f.read()
    runs = directives(text, "RUN")
    if not runs:
        raise FileCheckError(f"{path}: no RUN: line")
    total = 0
    for line in runs:
        run = parse_run(line)
        output = produce(path, run, text)
        total += filecheck(output, text, run.prefix, name=os.path.relpath(path, HERE))
    return total


def main(argv=None) -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--run", type=int, default=0, help="which RUN line (0-based)")
    ap.add_argument("--check", action="store_true", help="run the checks too")
    ns = ap.parse_args(argv)
    with open(ns.file) as f:
        text = f.read()
    runs = directives(text, "RUN") or ["print"]
    print(produce(ns.file, parse_run(runs[ns.run]), text), end="")
    if ns.check:
        print(f"// {check_file(ns.file)} directives passed", file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    sys.modules.setdefault("runner", sys.modules["__main__"])   # one MODES table for modes_*.py
    main()
