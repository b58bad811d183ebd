"""``tl.pi32_t`` (Triton's ``pointer_type(int32)``): int64 values cast to pointers, chosen by
``tl.where`` and stored back as int64 keep their addresses (Triton 3.6's
test_where[*int32], which failed on the missing name).  Every backend, against numpy."""
import numpy as np

import tilejit
import tilejit.language as tl


@tilejit.jit
def select_pointers_kernel(C, A, B, Z, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(A + offs).to(tl.pi32_t)
    b = tl.load(B + offs).to(tl.pi32_t)
    tl.store(Z + offs, tl.where(tl.load(C + offs) != 0, a, b))


def test_pi32_t_is_a_pointer_to_int32():
    assert tl.pi32_t == tl.pointer_type(tl.int32)


def test_where_on_pointer_values(backend):
    rng = np.random.default_rng(3)
    n = 64
    cond = rng.integers(0, 2, n).astype(np.int8)
    a = rng.integers(1, 2**40, n, dtype=np.int64) * 4
    b = rng.integers(1, 2**40, n, dtype=np.int64) * 4
    z = np.zeros(n, np.int64)
    select_pointers_kernel[(1,)](cond, a, b, z, N=n)
    np.testing.assert_array_equal(z, np.where(cond != 0, a, b))
