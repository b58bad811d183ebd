"""``tl.debug_barrier()`` orders a program's accesses across the threads that run it:
the pattern of Liger-Kernel's cross entropy (a tile stored in place, then one element of
it overwritten by a scalar store after the barrier) gives the scalar's value on every
backend.  On CUDA the tile element and the scalar are written by different threads; the
barrier is a CTA barrier (PTX checked in tests/unit/test_cuda_ptx_debug_barrier.py)."""
import numpy as np

import tilejit
import tilejit.language as tl


@tilejit.jit
def overwrite_one(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    y = tl.load(y_ptr + row)
    x_ptr += row * n_cols
    for i in range(0, n_cols, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        xb = tl.load(x_ptr + offs, mask=offs < n_cols)
        tl.store(x_ptr + offs, xb * 2.0, mask=offs < n_cols)
    tl.debug_barrier()
    tl.store(x_ptr + y, -1.0)


def test_scalar_store_after_the_barrier_wins(backend, rng):
    rows, cols = 64, 1000
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = rng.integers(0, cols, rows).astype(np.int64)
    want = x * 2.0
    want[np.arange(rows), y] = -1.0
    overwrite_one[(rows,)](x, y, cols, BLOCK=256)
    np.testing.assert_array_equal(x, want)
