"""``triton.knobs``: the process-wide hooks and settings Triton code reads.

Honoured by tilejit: ``runtime.launch_enter_hook`` / ``runtime.launch_exit_hook``
(called around every launch of a kernel from ``triton.compile``, with its launch
metadata) and ``runtime.jit_post_compile_hook`` (which Inductor calls itself).
``cache.dir`` reports tilejit's cache directory (``TILEJIT_CACHE_DIR``; read-only:
tilejit's options are read once from the environment).  ``nvidia.libdevice_path``
is stored for Inductor, which sets it, and not read: tilejit lowers libdevice
calls itself instead of linking NVIDIA's bitcode.  Any other knob is unsupported
and its name is reported at the point of use.
"""
from __future__ import annotations

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


class NvidiaKnobs(_Knobs):
    _group = "nvidia"

    def __init__(self):
        self.libdevice_path = None          # stored, not read (see the module docstring)


runtime = RuntimeKnobs()
cache = CacheKnobs()
nvidia = NvidiaKnobs()
