"""PTX of a reduction whose other axes have size 1 (a [1, R] tile over R, Inductor's
persistent reductions at XBLOCK=1): the full-reduction path -- per-thread combines, warp
shuffles, one exchange across warps -- not a walk of the whole row through shared memory
by every thread.  No GPU needed; results: tests/e2e/test_reduce_single_row.py."""
import re

import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def row_sum(X, Out, R: tl.constexpr, ROW: tl.constexpr):
    offs = tl.arange(0, R)[None, :] if ROW else tl.arange(0, R)[:, None]
    s = tl.sum(tl.load(X + offs), 1 if ROW else 0)
    tl.store(Out + tl.arange(0, 1), s)


def _backward_branches(ptx):
    """Branches to a label defined above them (loops)."""
    seen, back = set(), 0
    for line in ptx.splitlines():
        m = re.match(r"^(\$L__BB\d+_\d+):", line)
        if m:
            seen.add(m.group(1))
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
        back += bool(m and m.group(1) in seen)
    return back


@pytest.mark.parametrize("row", [True, False])
def test_single_row_sum_shuffles(row):
    k = tilejit.compile(row_sum, signature={"X": "*fp32", "Out": "*fp32"},
                        constexprs={"R": 4096, "ROW": row}, divisible_by_16=("X", "Out"),
                        target="cuda:90", num_warps=8)
    ptx = k.asm["ptx"]
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) == 5          # one butterfly
    assert _backward_branches(ptx) == 0                            # no walk of the row


@tilejit.jit
def rows_sum(X, Out, XB: tl.constexpr, R: tl.constexpr):
    rows = tl.arange(0, XB)[:, None]
    s = tl.sum(tl.load(X + rows * R + tl.arange(0, R)[None, :]), 1)
    tl.store(Out + tl.arange(0, XB), s)


def test_rows_of_whole_warps_shuffle():
    """[4, 1024] fp32 in 8 warps: a row is 256 lanes (8 warps' worth over 4 reps): each
    rep's chunk sums, a butterfly per warp (4 x 5 shuffles), no loop over the row."""
    k = tilejit.compile(rows_sum, signature={"X": "*fp32", "Out": "*fp32"},
                        constexprs={"XB": 4, "R": 1024}, divisible_by_16=("X", "Out"),
                        target="cuda:90", num_warps=8)
    ptx = k.asm["ptx"]
    assert len(re.findall(r"shfl\.sync\.bfly", ptx)) == 4 * 5
    assert _backward_branches(ptx) == 0
