"""Accesses of 2-D tiles contiguous along dim 0 only (rules_memory.transposed_width, planned in plan.py): the
access plan along dim 0 (analysis/access.plan_access(dim=0)) decides the vector width;
the CUDA backend then loads or stores in vectors along dim 0 in the transposed tile's
layout.  No GPU needed; the values are checked by tests/e2e/test_transposed_access.py."""
from __future__ import annotations

import os
import re
import sys

import pytest

import tilejit
from tilejit.analysis.access import plan_access
from tilejit.backends.cuda import target as tgt
from tilejit.backends.cuda.rules_memory import CUDA_ACCESS
from tilejit.ir import ops
from tilejit.runtime.compiler import build
from tilejit.runtime.options import get_options, use_options

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from test_transposed_access import copy2d  # noqa: E402

SIG = {"X": "*fp32", "sxm": "i32", "sxn": "i32", "Y": "*fp32", "sym": "i32", "syn": "i32",
       "M": "i32", "N": "i32"}


def _spec(col_x, col_y, masked_div16=False):
    eq1 = ["sxm" if col_x else "sxn", "sym" if col_y else "syn"]
    d16 = ["X", "Y", "sxn" if col_x else "sxm", "syn" if col_y else "sym"]
    return eq1, d16 + (["M", "N"] if masked_div16 else [])


def _accesses(ptx):
    return sorted(set(re.findall(r"(?:ld|st)\.global[\w.]*", ptx)))


def test_access_plan_along_dim_0():
    """A column-major tile: no vectors along the last dim, 4 fp32 along dim 0; the
    runtime mask ``m < M`` (M a multiple of 16) keeps them; a row-major one: the reverse."""
    from tilejit.analysis import analyze
    eq1, d16 = _spec(True, False, masked_div16=True)
    func, _ = build(copy2d, SIG, dict(BM=64, BN=32, MASKED=True), d16, eq1)
    facts = analyze(func)
    load = next(o for o in func.walk() if isinstance(o, ops.LoadOp))
    store = next(o for o in func.walk() if isinstance(o, ops.StoreOp))
    assert plan_access(facts, load.ptr, load.mask, CUDA_ACCESS).width == 1
    assert plan_access(facts, load.ptr, load.mask, CUDA_ACCESS, dim=0).width == 4
    assert plan_access(facts, store.ptr, store.mask, CUDA_ACCESS).width == 4
    assert plan_access(facts, store.ptr, None, CUDA_ACCESS, dim=0).width == 1


@pytest.mark.parametrize("col_x,col_y", [(True, False), (False, True), (True, True)])
def test_column_major_tiles_move_in_16_byte_vectors(col_x, col_y):
    eq1, d16 = _spec(col_x, col_y)
    k = tilejit.compile(copy2d, signature=SIG, constexprs=dict(BM=64, BN=32, MASKED=False),
                        divisible_by_16=d16, equal_to_1=eq1, target="cuda:90")
    assert _accesses(k.asm["ptx"]) == ["ld.global.v4.b32", "st.global.v4.b32"]
    if tgt.find_ptxas():
        tgt.ptxas(k.asm["ptx"], 90)


def test_transposed_access_is_a_tuning_choice_and_needs_the_facts():
    from dataclasses import replace
    eq1, d16 = _spec(True, True)
    with use_options(cuda=replace(get_options().cuda, transposed_access=False)):
        k = tilejit.compile(copy2d, signature=SIG, constexprs=dict(BM=64, BN=32, MASKED=False),
                            divisible_by_16=d16, equal_to_1=eq1, target="cuda:90")
    assert _accesses(k.asm["ptx"]) == ["ld.global.b32", "st.global.b32"]
    # a runtime stride along dim 0 (not specialised to 1): nothing is proved contiguous
    k = tilejit.compile(copy2d, signature=SIG, constexprs=dict(BM=64, BN=32, MASKED=False),
                        divisible_by_16=d16, target="cuda:90")
    assert _accesses(k.asm["ptx"]) == ["ld.global.b32", "st.global.b32"]


def test_masked_column_major_load():
    """The mask ``m < M`` (M a multiple of 16) is constant over 4 rows: the load goes in
    vectors along dim 0; the store's mask ``m != 3`` is not, so it stays per element."""
    eq1, d16 = _spec(True, True, masked_div16=True)
    k = tilejit.compile(copy2d, signature=SIG, constexprs=dict(BM=64, BN=32, MASKED=True),
                        divisible_by_16=d16, equal_to_1=eq1, target="cuda:90")
    assert _accesses(k.asm["ptx"]) == ["ld.global.v4.b32", "st.global.b32"]


def test_explain_names_the_access_along_dim_0():
    from tilejit.analysis import analyze
    from tilejit.analysis.explain import _access
    eq1, d16 = _spec(True, False)
    func, _ = build(copy2d, SIG, dict(BM=64, BN=32, MASKED=False), d16, eq1)
    facts = analyze(func)
    load = next(o for o in func.walk() if isinstance(o, ops.LoadOp))
    text = _access(facts, load, "tl.load")
    assert "contiguous along dim 0: on cuda (outside loops) 4 lanes x 4 B per access along dim 0" in text
