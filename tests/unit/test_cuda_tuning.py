"""The CUDA backend's strategy switches (``CudaTuning``, ``Options.cuda``): read from
``TILEJIT_CUDA_TUNING`` once, unknown names and values rejected, part of the compile key,
and read by the lowering from the options it is given (no module state).  No GPU needed."""
from __future__ import annotations

from dataclasses import fields, replace

import pytest

import tilejit
import tilejit.language as tl
from tilejit.runtime.options import CudaTuning, Options, get_options, use_options


def test_environment_sets_fields():
    o = Options.from_env({"TILEJIT_CUDA_TUNING": "index_tiles=0, fuse_siblings=off,remat_min_saving=4"})
    assert o.cuda == replace(CudaTuning(), index_tiles=False, fuse_siblings=False, remat_min_saving=4)
    assert Options.from_env({}).cuda == CudaTuning()


@pytest.mark.parametrize("text,says", [("index_tile=1", "unknown field 'index_tile'"),
                                       ("index_tiles", "write index_tiles=1 or index_tiles=0"),
                                       ("ring_wgmma=2", "write ring_wgmma=1"),
                                       ("remat_min_saving=many", "remat_min_saving=<a count>")])
def test_bad_settings_are_errors(text, says):
    with pytest.raises(ValueError, match="TILEJIT_CUDA_TUNING") as e:
        Options.from_env({"TILEJIT_CUDA_TUNING": text})
    assert says in str(e.value)


def test_pipeline_knobs_are_fields_not_function_attributes():
    """The ring's issue point and in-flight group, and range versioning, are options (in
    the compile key, settable from the environment), not ``func.attrs`` string keys."""
    o = Options.from_env({"TILEJIT_CUDA_TUNING": "wgmma_inflight=0,ring_late_issue=0",
                          "TILEJIT_ALIGN_VERSION": "0"})
    assert (o.cuda.wgmma_inflight, o.cuda.ring_late_issue, o.align_version) == (False, False, False)
    d = Options.from_env({})
    assert (d.cuda.wgmma_inflight, d.cuda.ring_late_issue, d.align_version) == (True, True, True)
    assert o != d


def test_every_field_documented_and_typed():
    import inspect
    src = inspect.getsource(CudaTuning)
    for f in fields(CudaTuning):
        line = next(ln for ln in src.splitlines() if ln.strip().startswith(f.name + ":"))
        assert "#" in line, f"CudaTuning.{f.name} has no comment"
        assert f.type in ("bool", "int"), f.name


def test_every_strategy_ships_on():
    """A strategy is measured on an H200 and then ON, or deleted with its code: none ships
    OFF (issue 19).  The deleted ones are unknown names now."""
    off = [f.name for f in fields(CudaTuning) if f.type == "bool" and not getattr(CudaTuning(), f.name)]
    assert off == []
    for gone in ("prestage_b", "arange_leaves", "ring_rotate_under_cap", "transposed_access"):
        with pytest.raises(ValueError, match=f"unknown field '{gone}'"):
            CudaTuning.parse(f"{gone}=1")


@tilejit.jit
def _lock(Lock, X):
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.store(X, tl.load(X) + 1.0)
    tl.atomic_xchg(Lock, 0)


def _ptx():
    return tilejit.compile(_lock, signature={"Lock": "*i32", "X": "*fp32"}, target="cuda:90").asm["ptx"]


def test_lowering_reads_the_options():
    """The same kernel under two tunings: the ordered PTX atom, or LLVM atomics + fences."""
    shipped = _ptx()
    assert "atom.global.acq_rel.gpu.cas.b32" in shipped
    with use_options(cuda=replace(get_options().cuda, ordered_atom_asm=False)):
        plain = _ptx()
    assert "atom.global.acq_rel" not in plain and "atom.acq_rel" not in plain and "fence.acq_rel.gpu" in plain
    assert _ptx() == shipped
