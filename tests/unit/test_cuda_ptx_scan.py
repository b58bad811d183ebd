"""A long ``tl.cumsum`` axis compiles for sm_80/sm_90 within the shared memory one block
may use (an n x n masked tile of n = 1024 needed 8 MiB), and ptxas assembles it.
Values on every backend: tests/e2e/test_scans.py::test_cumsum_long_axis."""
import pytest

import tilejit
from tilejit.backends.cuda import target as tgt
from tilejit.backends.cuda.backend import MAX_SHARED

from tests.e2e import test_scans as S


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("shape,axis,dt", [((2, 1024), 1, "fp32"), ((1024, 2), 0, "i32"),
                                           ((1, 1024), 1, "bf16")])
def test_long_cumsum_fits_shared_memory(arch, shape, axis, dt):
    k = tilejit.compile(S.cumsum_kernel, signature={0: f"*{dt}", 1: f"*{dt}"}, num_warps=16,
                        constexprs=dict(R=shape[0], C=shape[1], AXIS=axis, REVERSE=False),
                        target=f"cuda:{arch}")
    assert k.shared <= MAX_SHARED[arch] // 4, k.shared
    tgt.ptxas(k.asm["ptx"], arch)
