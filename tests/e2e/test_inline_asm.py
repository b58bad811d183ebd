"""tl.inline_asm_elementwise: PTX on the cuda backend (assembled by ptxas here; run
where a GPU is present); the interpreter and the CPU backend report it clearly."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def shl3_kernel(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    lo, hi = tl.inline_asm_elementwise("mov.b64 {$0, $1}, $2;", "=r,=r,l", [x.to(tl.int64) * 4294967296 + 5],
                                       dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)
    tl.store(z_ptr + offs, hi - lo)


def test_inline_asm(backend, rng):
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    y, z = np.zeros(64, np.int32), np.zeros(64, np.int32)
    if backend != "cuda":
        with pytest.raises(Exception, match="elementwise_inline_asm"):
            shl3_kernel[(1,)](x, y, z, BLOCK=64)
        return
    shl3_kernel[(1,)](x, y, z, BLOCK=64)
    np.testing.assert_array_equal(y, x << 3)
    np.testing.assert_array_equal(z, x - 5)


@pytest.mark.parametrize("arch", [80, 90])
def test_inline_asm_ptx_assembles(arch):
    ker = tilejit.compile(shl3_kernel, signature={0: "*i32", 1: "*i32", 2: "*i32"}, constexprs={"BLOCK": 64},
                          target=f"cuda:{arch}")
    ptx = ker.asm["ptx"]
    assert "shl.b32" in ptx and "mov.b64" in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)
