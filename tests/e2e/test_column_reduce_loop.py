"""Looped reductions over a non-last dim as TorchInductor writes them (``x.mean(0)``:
``tl.load(in_ptr0 + (x0 + 256*r0_1))``, an ``[XBLOCK, R0_BLOCK]`` accumulator carried
through ``for r0_offset in range(...)`` and summed over axis 1 after the loop).  The
loads run along axis 0, so the cpu backend lays the carried accumulators out with
axis 0 innermost (``lower_cf.carried_order``).  The partial accumulators are stored as
they are and checked bit for bit against the same fp32 additions in numpy; tails
(xnumel and rnumel not multiples of the blocks) and 20,000-long reductions included."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def col_reduce(in_ptr, part_ptr, sum_ptr, max_ptr, xnumel: tl.constexpr, rnumel: tl.constexpr,
               XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):   # sizes constant, as Inductor writes
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    acc = tl.full([XBLOCK, RBLOCK], 0, tl.float32)
    mx = tl.full([XBLOCK, RBLOCK], float("-inf"), tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        t = tl.load(in_ptr + (xindex + xnumel * rindex), rmask & xmask, other=0.0)
        acc = tl.where(rmask & xmask, acc + t, acc)
        mx = tl.where(rmask & xmask, tl.maximum(mx, t), mx)
    tl.store(part_ptr + (rbase + RBLOCK * xindex), acc, xmask)
    tl.store(sum_ptr + xindex, tl.sum(acc, 1)[:, None], xmask)
    tl.store(max_ptr + xindex, tl.max(mx, 1)[:, None], xmask)


def _partials(x, rblock):
    """acc[:, j] = x[j] + x[j + R] + ... in fp32, in that order (as the kernel adds)."""
    rn, xn = x.shape
    acc = np.zeros((xn, rblock), np.float32)
    for r0 in range(0, rn, rblock):
        blk = np.zeros((rblock, xn), np.float32)
        blk[:min(rblock, rn - r0)] = x[r0:r0 + rblock]
        acc = acc + blk.T
    return acc


@pytest.mark.parametrize("rn,xn,xblock,rblock", [(4096, 256, 64, 4), (1000, 100, 64, 8),
                                                 (20000, 24, 32, 16)])
def test_column_reduce_loop(backend, rng, rn, xn, xblock, rblock):
    if backend == "interpreter" and rn > 5000:
        rn = 3000                               # the interpreter steps each iteration
    x = rng.standard_normal((rn, xn)).astype(np.float32)
    part = np.zeros((xn, rblock), np.float32)
    s = np.zeros(xn, np.float32)
    m = np.zeros(xn, np.float32)
    col_reduce[(tilejit.cdiv(xn, xblock),)](x, part, s, m, xn, rn, XBLOCK=xblock, RBLOCK=rblock)
    np.testing.assert_array_equal(part, _partials(x, rblock))
    np.testing.assert_array_equal(m, x.max(0))
    np.testing.assert_allclose(s, x.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3)
