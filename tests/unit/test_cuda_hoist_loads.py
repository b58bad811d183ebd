"""Branch loads issued before the branch (tilejit/backends/cuda/hoist_loads.py), no GPU
needed: in tutorial 05's dx kernel the loads of the partial DW/DB rows leave the
``count != 0`` branch and follow the lock's loop, beside the load of ``Count``; a store
in the branch before the load, a store after the branch through another mask, a loop
or an atomic between the branch and the store keep the load where it was."""
from __future__ import annotations

import os
import re
import sys

import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import cuda_tuning

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from test_branch_load_hoist import branch_rmw  # noqa: E402
from test_layer_norm_memory_bound import ln_bwd_dx  # noqa: E402

LN_SIG = {"DX": "*fp16", "DY": "*fp16", "DW": "*fp16", "DB": "*fp16", "X": "*fp16", "W": "*fp16",
          "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"}
RMW_SIG = {"Flag": "*i32", "Acc": "*fp32", "Src": "*fp32", "Seen": "*i32", "N": "i32"}


def _asm(fn, sig, warps=4, **cex):
    return tilejit.compile(fn, signature=sig, constexprs=cex, divisible_by_16=tuple(sig),
                           target="cuda:90", num_warps=warps).asm


def _top_level(ttir):
    """Lines of the kernel's top-level block (two-space indent), region bodies dropped."""
    return [l.strip() for l in ttir.splitlines() if re.match(r"  \S", l)]


def _before_if(ttir):
    top = _top_level(ttir)
    return top[:next(i for i, l in enumerate(top) if "scf.if" in l)]


@pytest.fixture
def hoist_on():
    with cuda_tuning(hoist_branch_loads=True):
        yield


def test_layer_norm_partials_are_loaded_beside_count(hoist_on):
    top = _before_if(_asm(ln_bwd_dx, LN_SIG, 8, GROUP_SIZE_M=96, BLOCK_SIZE_N=8192)["ttir"])
    loop = next(i for i, l in enumerate(top) if l.startswith("scf.while"))
    count = next(i for i, l in enumerate(top) if l.startswith("%count = tt.load"))
    loads = [i for i, l in enumerate(top) if re.match(r"%\w+ = tt.load %D[WB]\.1, mask = %mask", l)]
    assert len(loads) == 2 and all(loop < i < count for i in loads)


def test_switch_off_keeps_the_loads_in_the_branch():
    with cuda_tuning(hoist_branch_loads=False):
        top = _before_if(_asm(ln_bwd_dx, LN_SIG, 8, GROUP_SIZE_M=96, BLOCK_SIZE_N=8192)["ttir"])
    assert not any(re.search(r"tt.load %D[WB]", l) for l in top)


@pytest.mark.parametrize("case,moved", [(0, True), (1, False), (2, False)])
def test_store_after_the_branch_decides(hoist_on, case, moved):
    """case 0: Acc's row is stored after the branch through the same mask (the pointer
    made again by the same ops): the branch's load and its pointer ops move; case 1: the
    branch stores Acc first; case 2: the store after covers half the columns."""
    ttir = _asm(branch_rmw, RMW_SIG, BLOCK=128, CASE=case, TAG=0)["ttir"]
    before = _before_if(ttir)
    assert sum("tt.load" in l for l in before) == (3 if moved else 2)      # Src, Flag (+ Acc)


@tilejit.jit
def atomic_between(Flag, Acc, Cnt, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    m = cols < N
    v = tl.zeros([BLOCK], dtype=tl.float32)
    if tl.load(Flag) != 0:
        v += tl.load(Acc + cols, mask=m, other=0.0)
    tl.atomic_add(Cnt, 1)
    tl.store(Acc + cols, v + 1.0, mask=m)


def test_an_atomic_between_branch_and_store_keeps_the_load(hoist_on):
    ttir = _asm(atomic_between, {"Flag": "*i32", "Acc": "*fp32", "Cnt": "*i32", "N": "i32"}, BLOCK=128)["ttir"]
    assert sum("tt.load" in l for l in _before_if(ttir)) == 1               # Flag only
