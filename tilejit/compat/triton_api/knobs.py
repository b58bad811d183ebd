"""``triton.knobs``: the process-wide hooks and settings Triton code reads.

Honoured by tilejit: ``runtime.launch_enter_hook`` / ``runtime.launch_exit_hook``
(called around every launch of a kernel from ``triton.compile``, with its launch
metadata) and ``runtime.jit_post_compile_hook`` (which Inductor calls itself).
``cache.dir`` is tilejit's cache directory (``TILEJIT_CACHE_DIR``); assigning it
moves the cache (the process-wide options' ``cache_dir``) for later compiles.  A group's
``scope()`` (``with knobs.cache.scope(), knobs.runtime.scope():``) restores the group's
settings, and the cache directory, on exit.  ``cache.manager_class`` (or
``$TRITON_CACHE_MANAGER``) is the class ``triton.runtime.cache.get_cache_manager`` makes.
``nvidia.libdevice_path``
is stored for Inductor, which sets it, and not read: tilejit lowers libdevice
calls itself instead of linking NVIDIA's bitcode.  ``nvidia.ptxas.path`` / ``.version``
name the ``ptxas`` found on this machine (Triton's test helpers read the version).  Any other knob is unsupported
and its name is reported at the point of use.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import re
import subprocess

from ...compat import UnsupportedTritonFeature


class _Knobs:
    """A group of knobs; reading an unknown one names it as unsupported."""

    _group = "?"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedTritonFeature(
            f"tilejit does not support `triton.knobs.{self._group}.{name}` (missing feature: "
            "not implemented by tilejit)")

    @contextlib.contextmanager
    def scope(self):
        """The group's settings as they are now, restored when the ``with`` ends."""
        saved = dict(self.__dict__)
        try:
            yield self
        finally:
            self.__dict__.clear()
            self.__dict__.update(saved)


class RuntimeKnobs(_Knobs):
    _group = "runtime"

    def __init__(self):
        self.launch_enter_hook = None       # f(launch_metadata) before each launch
        self.launch_exit_hook = None        # f(launch_metadata) after each launch
        self.jit_post_compile_hook = None   # f(key=, repr=, fn=, compile=, ...) (Inductor calls it)
        self.jit_cache_hook = None          # accepted for Triton code; tilejit never calls it


class CacheKnobs(_Knobs):
    _group = "cache"

    @property
    def dir(self) -> str:
        """tilejit's compiled-kernel cache directory."""
        from ...runtime.cache import default_cache_dir
        return default_cache_dir()

    @dir.setter
    def dir(self, path: str) -> None:
        from ...runtime.options import get_options, set_options
        set_options(get_options().with_(cache_dir=str(path)))

    @property
    def manager_class(self):
        """The class ``triton.runtime.cache.get_cache_manager`` instantiates: the one
        assigned here, else ``$TRITON_CACHE_MANAGER`` (``module:Class``), else None
        (``FileCacheManager``)."""
        if self.__dict__.get("_manager_class") is not None:
            return self.__dict__["_manager_class"]
        spec = os.environ.get("TRITON_CACHE_MANAGER")
        if not spec:
            return None
        module, sep, name = spec.partition(":")
        if not sep:
            raise ValueError(f"TRITON_CACHE_MANAGER={spec!r}: expected 'module.path:ClassName'")
        return getattr(importlib.import_module(module), name)

    @manager_class.setter
    def manager_class(self, cls) -> None:
        self.__dict__["_manager_class"] = cls

    @contextlib.contextmanager
    def scope(self):
        """As ``_Knobs.scope``; the cache directory is restored too."""
        saved = self.dir
        try:
            with super().scope():
                yield self
        finally:
            self.dir = saved


class NvidiaTool:
    """A CUDA tool found on ``PATH`` or in /usr/local/cuda/bin."""

    def __init__(self, name: str):
        self.name = name

    @property
    def path(self) -> str:
        from ...backends.cuda.target import find_ptxas
        found = find_ptxas() if self.name == "ptxas" else None
        if found is None:
            raise RuntimeError(f"{self.name} not found (install the CUDA toolkit or put it on PATH)")
        return found

    @property
    def version(self) -> str:
        """``'12.8'`` from ``<tool> --version``."""
        out = subprocess.run([self.path, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"release (\d+\.\d+)", out)
        if m is None:
            raise RuntimeError(f"cannot read the version of {self.path}: {out!r}")
        return m.group(1)


class NvidiaKnobs(_Knobs):
    _group = "nvidia"
    ptxas = NvidiaTool("ptxas")             # the ptxas tilejit's PTX checks use

    def __init__(self):
        self.libdevice_path = None          # stored, not read (see the module docstring)


runtime = RuntimeKnobs()
cache = CacheKnobs()
nvidia = NvidiaKnobs()
