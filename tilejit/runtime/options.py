"""Compiler and runtime options, read from the environment once.

The options object is frozen and part of every compilation cache key; nothing deep
in the compiler reads the environment.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace


def _flag(env, name) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _xdg_cache_dir(env) -> str:
    """``$XDG_CACHE_HOME/tilejit`` when XDG_CACHE_HOME is an absolute path (the XDG
    base-directory rule: relative values are ignored), else ''."""
    base = env.get("XDG_CACHE_HOME", "").strip()
    return os.path.join(base, "tilejit") if os.path.isabs(base) else ""


_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size(env, name, default: int) -> int:
    """A count from the environment: digits with an optional K/M/G/T suffix (``500M``)."""
    text = env.get(name, "").strip().upper().removesuffix("B").removesuffix("I")
    if not text:
        return default
    num, suffix = (text[:-1], text[-1]) if text[-1] in _SUFFIX else (text, "")
    try:
        return max(0, int(float(num) * _SUFFIX[suffix]))
    except ValueError:
        raise ValueError(f"{name}={env.get(name)!r}: expected a number with an optional "
                         "K/M/G suffix, e.g. 500M") from None


@dataclass(frozen=True)
class Options:
    interpret: bool = False          # TILEJIT_INTERPRET=1: run on the reference interpreter
    backend: str = ""                # TILEJIT_BACKEND=cpu|interpreter|cuda (overrides the default)
    check_analysis: bool = False     # TILEJIT_CHECK_ANALYSIS=1: interpreter checks analysis claims
    sanitize: bool = False           # TILEJIT_SANITIZE=1: bounds-checked compiled code
    debug: bool = False              # TILEJIT_DEBUG=1: verify the IR after every pass
    dump_dir: str = ""               # TILEJIT_DUMP_DIR=dir: write every stage's text
    num_threads: int = 0             # TILEJIT_NUM_THREADS (0: all cores)
    cache_dir: str = ""              # TILEJIT_CACHE_DIR, else $XDG_CACHE_HOME/tilejit (default ~/.cache/tilejit)
    cache_max_bytes: int = 1 << 30   # TILEJIT_CACHE_SIZE=500M: disk cache cap, oldest dropped (0: no cap)
    kernel_cache_size: int = 1024    # TILEJIT_KERNEL_CACHE_SIZE: compiled kernels kept in memory per kernel (LRU)
    vectorize: bool = True           # TILEJIT_VECTORIZE=0 disables analysis-driven vector access
    native_call: bool = True         # TILEJIT_NATIVE_CALL=0: launches pack with struct + ctypes
    ptx_check: str = ""              # TILEJIT_PTX_CHECK=80,90: also compile host kernels for CUDA
    traceback: bool = False          # TILEJIT_TRACEBACK=1: compile errors keep tilejit's own frames
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
            cache_dir=env.get("TILEJIT_CACHE_DIR", "") or _xdg_cache_dir(env),
            cache_max_bytes=_size(env, "TILEJIT_CACHE_SIZE", 1 << 30),
            kernel_cache_size=_size(env, "TILEJIT_KERNEL_CACHE_SIZE", 1024),
            vectorize=env.get("TILEJIT_VECTORIZE", "1").strip() != "0",
            native_call=env.get("TILEJIT_NATIVE_CALL", "1").strip() != "0",
            ptx_check=env.get("TILEJIT_PTX_CHECK", "").strip(),
            traceback=_flag(env, "TILEJIT_TRACEBACK"),
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

