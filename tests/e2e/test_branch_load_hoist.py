"""Loads of an ``scf.if`` branch issued before the branch when the same addresses are
stored after it (CUDA: tilejit/backends/cuda/hoist_loads.py), on every backend against
numpy: read-modify-write of a row chosen by a loaded flag, the branch's load moved or
(a store before it in the branch, a store through another mask after) kept in place.
On CUDA the results must also match the lowering with the loads left in their branch."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import cuda_tuning


@tilejit.jit
def branch_rmw(Flag, Acc, Src, Seen, N, BLOCK: tl.constexpr, CASE: tl.constexpr, TAG: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    v = tl.load(Src + pid * N + cols, mask=m, other=0.0) * 2.0
    f = tl.load(Flag + pid)
    if f == 0:
        tl.store(Seen + pid, 1)
    else:
        if CASE == 1:      # a store in the branch before the load: the load stays
            tl.store(Acc + pid * N + cols, v * 0.0 + 1.0, mask=m)
        v += tl.load(Acc + pid * N + cols, mask=m, other=0.0)
        tl.store(Seen + pid, 2)
    if CASE == 2:          # the store after the branch covers fewer addresses: the load stays
        tl.store(Acc + pid * N + cols, v, mask=m & (cols % 2 == 0))
    else:
        tl.store(Acc + pid * N + cols, v, mask=m)


def _ref(flag, acc, src, case):
    acc = acc.astype(np.float64).copy()
    seen = np.where(flag == 0, 1, 2)
    add = np.where(flag[:, None] == 0, 0.0, 1.0 if case == 1 else acc)
    v = src.astype(np.float64) * 2.0 + add
    if case == 2:
        acc[:, ::2] = v[:, ::2]
    else:
        acc = v
    return acc, seen


@pytest.mark.parametrize("case", [0, 1, 2])
@pytest.mark.parametrize("M,N,block", [(6, 100, 128), (3, 1024, 1024)])
def test_branch_read_modify_write(backend, rng, case, M, N, block):
    flag = (rng.random(M) < 0.5).astype(np.int32)
    flag[0], flag[-1] = 0, 1
    src = rng.standard_normal((M, N)).astype(np.float32)
    acc0 = rng.standard_normal((M, N)).astype(np.float32)

    def run(tag):
        acc = acc0.copy()
        seen = np.zeros(M, np.int32)
        branch_rmw[(M,)](flag, acc, src, seen, N, BLOCK=block, CASE=case, TAG=tag)
        return acc, seen
    acc, seen = run(0)
    ref, ref_seen = _ref(flag, acc0, src, case)
    np.testing.assert_allclose(acc, ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(seen, ref_seen)
    if backend == "cuda":
        with cuda_tuning(hoist_branch_loads=False):
            off, off_seen = run(1)
        np.testing.assert_array_equal(acc.view(np.uint32), off.view(np.uint32))
        np.testing.assert_array_equal(seen, off_seen)
