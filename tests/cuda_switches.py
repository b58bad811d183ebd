"""The CUDA backend's strategy switches (``CudaTuning`` fields: ``kmajor_b``,
``imm_offsets``, ...; tilejit/runtime/options.py) set for one test through the options,
which are part of the compile key.

Tests parametrise over a table ``{name: {"field": value}}`` plus "default" (as
shipped).  A switched case runs on the cuda backend, and on the cpu backend where the
suite's PTX check is on (no GPU here): the CPU result is checked as usual and each
kernel is compiled for sm_80/sm_90 with the switches set and assembled by ptxas, so the
switched CUDA lowering is covered without a GPU.  Elsewhere it is skipped."""
from __future__ import annotations

import contextlib
from dataclasses import replace

import pytest

from tilejit.runtime.options import get_options, use_options


@contextlib.contextmanager
def cuda_tuning(**fields):
    """The process options with ``fields`` of their ``CudaTuning`` changed, while open."""
    with use_options(cuda=replace(get_options().cuda, **fields)) as options:
        yield options


def switched(param: str, table: dict, backend: str):
    """Generator body of a ``switches`` fixture: ``yield from switched(request.param,
    TABLE, backend)``."""
    if param == "default":
        yield
        return
    if backend != "cuda" and not (backend == "cpu" and get_options().ptx_check):
        pytest.skip("the switches only change CUDA code")
    with cuda_tuning(**table[param]):
        yield
