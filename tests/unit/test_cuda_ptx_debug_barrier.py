"""``tl.debug_barrier()`` is a CTA barrier in the PTX, between the loop's tile stores
and the scalar store after it (it was dropped: Liger-Kernel's cross entropy then raced
on the H200); the interpreter and the CPU need none (tests/e2e/test_debug_barrier.py)."""
import pytest

import tilejit
from tilejit.backends.cuda import target as tgt

from tests.e2e import test_debug_barrier as D


@pytest.mark.parametrize("arch", [80, 90])
def test_barrier_between_the_tile_stores_and_the_scalar_store(arch):
    k = tilejit.compile(D.overwrite_one, signature={0: "*fp32", 1: "*i64", 2: "i32"}, num_warps=4,
                        constexprs=dict(BLOCK=256), target=f"cuda:{arch}")
    ptx = k.asm["ptx"]
    last_tile_store = ptx.rindex("st.global.v4") if "st.global.v4" in ptx else ptx.index("st.global")
    scalar_store = ptx.rindex("st.global")
    assert last_tile_store < ptx.rindex("bar.sync") < scalar_store
    if tgt.find_ptxas() is not None:
        tgt.ptxas(ptx, arch)
