"""``triton.runtime.cache``: the compiler's identity key, hash encodings, and Triton's
file cache managers (``get_cache_manager``) over tilejit's cache directory."""
from __future__ import annotations

import abc
import base64
import functools
import json
import os
import uuid


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


class CacheManager(abc.ABC):
    """Triton's interface of a store of files under a key (``get_cache_manager(key)``)."""

    def __init__(self, key, override=False, dump=False):
        pass

    @abc.abstractmethod
    def get_file(self, filename) -> str | None:
        """The path of ``filename`` stored under this key, or None."""

    @abc.abstractmethod
    def put(self, data, filename, binary=True) -> str:
        """Store ``data`` (bytes, or anything else as its ``str``) as ``filename``; its path."""

    @abc.abstractmethod
    def get_group(self, filename: str) -> dict[str, str] | None:
        """The files of a group stored by ``put_group`` that still exist, or None."""

    @abc.abstractmethod
    def put_group(self, filename: str, group: dict[str, str]):
        """Record ``group`` (name -> path) under ``filename``."""


class FileCacheManager(CacheManager):
    """Files stored under ``<tilejit's cache dir>/triton_files/<key>`` (``knobs.cache.dir``
    is tilejit's ``TILEJIT_CACHE_DIR``); each ``put`` is written to a temporary folder and
    moved into place (atomic on POSIX).  tilejit's compiler keeps its kernels in its own
    store (``tilejit.runtime.cache``), not through this class: it is for code that stores
    its own files through Triton's API.  ``override`` / ``dump`` managers (Triton's
    ``TRITON_OVERRIDE_DIR`` / ``TRITON_DUMP_DIR``, compiler stages) are not supported."""

    def __init__(self, key, override=False, dump=False):
        if override or dump:
            from ...compat import UnsupportedTritonFeature
            raise UnsupportedTritonFeature(
                "tilejit does not support Triton's override/dump cache managers (missing "
                "feature: tilejit neither reads overridden kernels nor dumps through them; use "
                "TILEJIT_DUMP_DIR to see every stage)")
        from .knobs import cache
        self.key = key
        self.cache_dir = os.path.join(cache.dir, "triton_files", key)
        self.lock_path = os.path.join(self.cache_dir, "lock")
        os.makedirs(self.cache_dir, exist_ok=True)

    def _make_path(self, filename) -> str:
        return os.path.join(self.cache_dir, filename)

    def has_file(self, filename) -> bool:
        return os.path.exists(self._make_path(filename))

    def get_file(self, filename) -> str | None:
        return self._make_path(filename) if self.has_file(filename) else None

    def get_group(self, filename: str) -> dict[str, str] | None:
        path = self.get_file(f"__grp__{filename}")
        if path is None:
            return None
        with open(path) as f:
            children = json.load(f).get("child_paths")
        if children is None:
            return None
        return {c: p for c, p in children.items() if os.path.exists(p)}

    def put_group(self, filename: str, group: dict[str, str]) -> str:
        return self.put(json.dumps({"child_paths": group}), f"__grp__{filename}", binary=False)

    def put(self, data, filename, binary=True) -> str:
        binary = isinstance(data, bytes)
        if not binary:
            data = str(data)
        path = self._make_path(filename)
        tmp = os.path.join(self.cache_dir, f"tmp.pid_{os.getpid()}_{uuid.uuid4()}")
        os.makedirs(tmp, exist_ok=True)
        with open(os.path.join(tmp, filename), "wb" if binary else "w") as f:
            f.write(data)
        os.replace(os.path.join(tmp, filename), path)
        os.removedirs(tmp)
        return path


def get_cache_manager(key: str) -> CacheManager:
    """A manager of the files stored under ``key`` (a hex digest): an instance of
    ``knobs.cache.manager_class`` (``$TRITON_CACHE_MANAGER``) or ``FileCacheManager``."""
    from .knobs import cache
    return (cache.manager_class or FileCacheManager)(_base32(key))
