"""Compiler and runtime options, read from the environment once.

The options object is frozen and part of every compilation cache key; nothing deep
in the compiler reads the environment.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace


def _flag(env, name) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Options:
    interpret: bool = False          # TILEJIT_INTERPRET=1: run on the reference interpreter
    backend: str = ""                # TILEJIT_BACKEND=cpu|interpreter|cuda (overrides the default)
    check_analysis: bool = False     # TILEJIT_CHECK_ANALYSIS=1: interpreter checks analysis claims
    sanitize: bool = False           # TILEJIT_SANITIZE=1: bounds-checked compiled code
    debug: bool = False              # TILEJIT_DEBUG=1: verify the IR after every pass
    dump_dir: str = ""               # TILEJIT_DUMP_DIR=dir: write every stage's text
    num_threads: int = 0             # TILEJIT_NUM_THREADS (0: all cores)
    cache_dir: str = ""              # TILEJIT_CACHE_DIR (default ~/.cache/tilejit)
    vectorize: bool = True           # TILEJIT_VECTORIZE=0 disables analysis-driven vector access
    native_call: bool = True         # TILEJIT_NATIVE_CALL=0: launches pack with struct + ctypes
    ptx_check: str = ""              # TILEJIT_PTX_CHECK=80,90: also compile host kernels for CUDA
    explain: bool = False            # TILEJIT_EXPLAIN=1: print each compiled kernel's paths (stderr)

    @classmethod
    def from_env(cls, env=None) -> "Options":
        env = os.environ if env is None else env
        return cls(
            interpret=_flag(env, "TILEJIT_INTERPRET"),
            backend=env.get("TILEJIT_BACKEND", "").strip(),
            check_analysis=_flag(env, "TILEJIT_CHECK_ANALYSIS"),
            sanitize=_flag(env, "TILEJIT_SANITIZE"),
            debug=_flag(env, "TILEJIT_DEBUG"),
            dump_dir=env.get("TILEJIT_DUMP_DIR", ""),
            num_threads=int(env.get("TILEJIT_NUM_THREADS", "0") or 0),
            cache_dir=env.get("TILEJIT_CACHE_DIR", ""),
            vectorize=env.get("TILEJIT_VECTORIZE", "1").strip() != "0",
            native_call=env.get("TILEJIT_NATIVE_CALL", "1").strip() != "0",
            ptx_check=env.get("TILEJIT_PTX_CHECK", "").strip(),
            explain=_flag(env, "TILEJIT_EXPLAIN"),
        )

    def with_(self, **changes) -> "Options":
        return replace(self, **changes)


_current: Options | None = None


def get_options() -> Options:
    """The process-wide options, read from the environment on first use."""
    global _current
    if _current is None:
        _current = Options.from_env()
    return _current


def set_options(options: Options | None) -> None:
    """Replace the process-wide options (tests; None re-reads the environment)."""
    global _current
    _current = options


class use_options:
    """Context manager: ``with use_options(backend="cpu"): ...`` temporarily
    replaces fields of the process-wide options (used by tests and benchmarks)."""

    def __init__(self, **changes):
        self.changes = changes
        self.saved = None

    def __enter__(self):
        self.saved = _current
        set_options(get_options().with_(**self.changes))
        return get_options()

    def __exit__(self, *exc):
        set_options(self.saved)
        return False
