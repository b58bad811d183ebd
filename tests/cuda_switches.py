"""The CUDA backend's module switches (``mma_rows.KMAJOR_B``, ``rules_wgmma.IMM_OFFSETS``,
...) set for one test.  They are not part of the compile cache key, so they are set
under a private ``cache_dir`` (which also gives the launches new in-memory cache keys).

Tests parametrise over a table ``{name: {"module.SWITCH": value}}`` plus "default"
(as shipped).  A switched case runs on the cuda backend, and on the cpu backend where
the suite's PTX check is on (no GPU here): the CPU result is checked as usual and each
kernel is compiled for sm_80/sm_90 with the switches set and assembled by ptxas, so the
switched CUDA lowering is covered without a GPU.  Elsewhere it is skipped."""
from __future__ import annotations

import contextlib
import importlib

import pytest

from tilejit.runtime.options import get_options, use_options


@contextlib.contextmanager
def cuda_switches(settings: dict, cache_dir: str):
    """Set ``settings`` ({"module.NAME": value} under tilejit.backends.cuda) and restore them."""
    sets = []
    for key, value in settings.items():
        module, name = key.split(".")
        sets.append((importlib.import_module(f"tilejit.backends.cuda.{module}"), name, value))
    saved = [(m, name, getattr(m, name)) for m, name, _ in sets]
    for m, name, value in sets:
        setattr(m, name, value)
    try:
        with use_options(cache_dir=str(cache_dir)):
            yield
    finally:
        for m, name, value in saved:
            setattr(m, name, value)


def switched(param: str, table: dict, backend: str, cache_dir):
    """Generator body of a ``switches`` fixture: ``yield from switched(request.param,
    TABLE, backend, tmp_path)``."""
    if param == "default":
        yield
        return
    if backend != "cuda" and not (backend == "cpu" and get_options().ptx_check):
        pytest.skip("the switches only change CUDA code")
    with cuda_switches(table[param], cache_dir):
        yield
