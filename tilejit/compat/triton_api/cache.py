"""``triton.runtime.cache``: the compiler's identity key and hash encodings."""
from __future__ import annotations

import base64
import functools


@functools.lru_cache(None)
def triton_key() -> str:
    """Changes whenever the compiler could emit different code: tilejit's version and a
    hash of its sources, and llvmlite's version (Inductor keys its caches on it)."""
    import llvmlite
    from ... import __version__
    from ...runtime.cache import compiler_fingerprint
    return f"tilejit-{__version__}-{compiler_fingerprint()}-llvmlite-{llvmlite.__version__}"


def _base32(key: str) -> str:
    """A hex digest as unpadded base32 (Triton's cache path encoding)."""
    return base64.b32encode(bytes.fromhex(key)).decode("utf-8").rstrip("=")
