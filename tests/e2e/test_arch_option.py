"""The ``arch=`` launch keyword (Triton's ``kernel.warmup(..., arch="sm80")``): the CUDA
architecture a cuda compile is for; ``num_ctas > 1`` needs sm_90 there, as in Triton.
Host backends compile for the host and ignore it."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import get_backend
from tilejit.backends.cuda import target as tgt
from tilejit.runtime.compiler import build


@tilejit.jit
def copy_kernel(src, dst, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(dst + offs, tl.load(src + offs) * 2)


def test_arch_keyword_launch(backend, rng):
    x = rng.standard_normal(64).astype(np.float32)
    y = np.zeros(64, np.float32)
    copy_kernel[(1,)](x, y, N=64, arch="sm80")
    np.testing.assert_array_equal(y, x * 2)
    if backend == "cuda":
        with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+ \(Hopper\)"):
            copy_kernel.warmup(x, y, N=64, grid=(1,), num_ctas=2, arch="sm80")


@pytest.mark.parametrize("arch,ok", [("sm80", False), ("sm_90", True), ("sm90", True)])
def test_arch_attr_cuda_compile(arch, ok):
    """No GPU needed: the cuda backend compiles for the ``arch`` attribute a launch sets."""
    func, _ = build(copy_kernel, {0: "*fp32", 1: "*fp32"}, {"N": 64})
    func.attrs.update(arch=arch, num_ctas=2)
    if not ok:
        with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+"):
            get_backend("cuda").compile(func)
        return
    ptx = get_backend("cuda").compile(func).asm["ptx"]
    assert ".target sm_90" in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, 90)
