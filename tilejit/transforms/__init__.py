"""Passes over the tile IR and the pass manager.

``PIPELINE`` is the one ordered list of named stages ``run_pipeline`` runs; each pass is
``pass_fn(func) -> func`` (in place).  With ``options.debug`` the verifier runs before
the first and after every stage, and the input and the output must round-trip through
the printer and parser (so every kernel compiled in debug mode checks the text form);
``dump(stage_name, text)`` is called after each stage.
"""
from __future__ import annotations

from typing import Callable

from ..ir.core import Function
from .canonicalize import canonicalize
from .cse import cse
from .dce import dce
from .fold import fold_constants

PIPELINE: list[tuple[str, Callable[[Function], Function]]] = [
    ("fold", fold_constants),
    ("canonicalize", canonicalize),
    ("cse", cse),
    ("canonicalize-after-cse", canonicalize),
    ("dce", dce),
]


def run_pipeline(func: Function, options=None, dump: Callable[[str, str], None] | None = None,
                 pipeline=None) -> Function:
    """Run every stage of ``pipeline`` (default ``PIPELINE``) on ``func`` in place and
    return it.  ``options`` (the runtime passes its ``Options``): ``debug`` verifies the IR
    after each pass, ``sanitize`` adds the int32 offset checks; None is neither."""
    from ..ir.parser import roundtrip_check
    from ..ir.printer import print_function
    from ..ir.verifier import verify_function
    debug = bool(getattr(options, "debug", False))
    if debug:
        verify_function(func, where="pipeline input")
        roundtrip_check(func, verify=False)
    for name, pass_fn in (PIPELINE if pipeline is None else pipeline):
        result = pass_fn(func)
        func = func if result is None else result
        if debug:
            verify_function(func, where=f"after pass {name!r}")
        if dump is not None:
            dump(name, print_function(func))
    if getattr(options, "sanitize", False) and pipeline is None:   # int32 offset overflow checks
        from .sanitize import instrument_offsets
        func = instrument_offsets(func)
        if dump is not None:
            dump("sanitize-offsets", print_function(func))
    if debug:
        roundtrip_check(func, verify=False)
    return func


def dir_dump(directory: str, prefix: str) -> Callable[[str, str], None]:
    """A ``dump`` callback writing ``<directory>/<prefix>.<NN>-<stage>.tir`` files."""
    import os
    counter = [0]

    def dump(stage: str, text: str) -> None:
        os.makedirs(directory, exist_ok=True)
        counter[0] += 1
        path = os.path.join(directory, f"{prefix}.{counter[0]:02d}-{stage}.tir")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return dump


__all__ = ["PIPELINE", "run_pipeline", "dir_dump", "canonicalize", "cse", "dce", "fold_constants"]
