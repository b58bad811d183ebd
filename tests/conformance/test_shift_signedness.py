"""``x >> y`` as Triton computes it (Triton 3.6's test_shift_op[1-int8-uint16->>], a wrong
result on the H200 and cpu): the operands are promoted (int8 with uint16 gives uint16)
but the shift is arithmetic when ``x`` itself is signed (``tensor.__rshift__`` decides
by ``x``'s type before promotion).  Every backend, against numpy."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def shr_kernel(Z, X, Y, N: tl.constexpr):
    off = tl.arange(0, N)
    tl.store(Z + off, tl.load(X + off) >> tl.load(Y + off))


def _shr_ref(x, y, z_dtype):
    """numpy's shift in the promoted type, arithmetic iff ``x`` is signed."""
    bits = np.dtype(z_dtype).itemsize * 8
    wide = np.dtype(f"int{bits}") if np.issubdtype(x.dtype, np.signedinteger) else np.dtype(z_dtype)
    return (x.astype(wide) >> y.astype(wide)).astype(z_dtype)


@pytest.mark.parametrize("dx,dy,dz", [("int8", "uint16", "uint16"), ("int8", "uint8", "uint8"),
                                      ("int16", "uint32", "uint32"), ("int32", "uint32", "uint32"),
                                      ("uint8", "int16", "int16"), ("int8", "int16", "int16")])
def test_shr_signedness_of_left_operand(backend, dx, dy, dz):
    rng = np.random.default_rng(17)
    n = 128
    info = np.iinfo(dx)
    x = rng.integers(info.min, info.max, n, endpoint=True).astype(dx)
    y = rng.integers(0, np.dtype(dz).itemsize * 8, n).astype(dy)
    z = np.zeros(n, dz)
    shr_kernel[(1,)](z, x, y, N=n)
    np.testing.assert_array_equal(z, _shr_ref(x, y, dz))

