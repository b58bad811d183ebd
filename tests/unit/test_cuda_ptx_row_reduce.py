"""PTX of last-axis reductions of 2-D blocks (Inductor's ``[XBLOCK, R0_BLOCK]`` tiles), no
GPU needed: with one row per block (``XBLOCK = 1``) and with rows spanning whole warps, the
row is reduced in registers, by warp butterflies and one exchange of per-warp partials
(argmax/argmin on (value, index) pairs) -- no loop over the row's elements in shared
memory (the general path: every thread walks ``R0_BLOCK`` staged elements)."""
from __future__ import annotations

import os
import re
import sys

import tilejit
from tests.cuda_switches import cuda_tuning

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from test_row_block_reductions import row_block_reduce  # noqa: E402

SIG = {"X": "*fp32", "K": "*i32", "Out": "*fp32", "Idx": "*i32", "M": "i32", "N": "i32"}


def _ptx(xblock, rblock, warps):
    return tilejit.compile(row_block_reduce, signature=SIG,
                           constexprs={"XBLOCK": xblock, "R0_BLOCK": rblock},
                           divisible_by_16=tuple(SIG), target="cuda:90", num_warps=warps).asm["ptx"]


def _loops(ptx):
    """Backward branches (loops): a label defined before a branch to it."""
    seen, n = set(), 0
    for line in ptx.splitlines():
        m = re.match(r"^(\$\w+):", line.strip())
        if m:
            seen.add(m.group(1))
        b = re.search(r"bra(?:\.uni)?\s+(\$\w+);", line)
        if b and b.group(1) in seen:
            n += 1
    return n


def test_one_row_block_reduces_without_loops():
    ptx = _ptx(1, 2048, 16)
    assert _loops(ptx) == 0
    # seven reductions (two of them arg pairs): five butterflies each, on one or two values
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) >= 9 * 5


def test_wide_rows_reduce_without_loops():
    ptx = _ptx(2, 1024, 8)      # rows of 256 lanes: 8 warps hold both rows in 2 repetitions
    # per row, five butterflies for each of the five reductions and two (value, index) pairs
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) >= 2 * 9 * 5
    assert _loops(ptx) == 0


def test_rows_over_repetitions_combine_in_registers():
    # rows of 1024 lanes over 4 warps: each thread combines its 8 chunks of a row first
    ptx = _ptx(2, 4096, 4)
    assert _loops(ptx) == 0
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) == 2 * 9 * 5


def test_switch_off_walks_the_staged_rows():
    with cuda_tuning(row_butterflies=False):
        ptx = _ptx(1, 2048, 16)
    assert _loops(ptx) >= 7          # one shared-memory walk per reduction


# Each reduction's strategy (whole block, wide rows, general) and the siblings fused into one
# exchange across warps are the planning stage's decisions: tests/golden/cuda_plan/row_block_reductions.py.
