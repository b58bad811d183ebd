"""The part of ``triton.knobs`` tilejit can answer truthfully: the CUDA tools it uses.

``triton.knobs.nvidia.ptxas.path`` / ``.version`` name the ``ptxas`` found on this
machine (tilejit assembles PTX with it in checks); Triton's test helpers read the
version to decide whether TMA tests apply.  Every other knob is missing under the alias
(``UnsupportedTritonFeature``): tilejit's settings are its frozen options object.
"""
from __future__ import annotations

import re
import subprocess


class NvidiaTool:
    """A CUDA tool found on ``PATH`` or in /usr/local/cuda/bin."""

    def __init__(self, name: str):
        self.name = name

    @property
    def path(self) -> str:
        from ..backends.cuda.target import find_ptxas
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


class _Nvidia:
    ptxas = NvidiaTool("ptxas")


nvidia = _Nvidia()
