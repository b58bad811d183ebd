"""``tensor_descriptor.atomic_max/min`` on fp16/bf16 (Triton's test_tensor_descriptor_reduce):
the cuda backend on sm_90 (Triton's native TMA reduction) runs them, a compare-and-swap
loop per element; the interpreter, the CPU backend and sm_80 reject them at compile time
with Triton's CompilationError, as Triton's fallback lowering does."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tilejit.errors import CompilationError


@tilejit.jit
def desc_minmax(out_ptr, a_ptr, M, N, MB: tl.constexpr, NB: tl.constexpr, KIND: tl.constexpr):
    mo = tl.program_id(0) * MB
    no = tl.program_id(1) * NB
    val = tl.load(a_ptr + (mo + tl.arange(0, MB)[:, None]) * N + no + tl.arange(0, NB)[None, :])
    desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB])
    if KIND == "max":
        desc.atomic_max([mo, no], val)
    else:
        desc.atomic_min([mo, no], val)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_descriptor_minmax_fp16(backend, rng, kind):
    MB, NB = 8, 32
    M, N = 2 * MB, 2 * NB
    a = rng.standard_normal((M, N)).astype(np.float16)
    out = rng.standard_normal((M, N)).astype(np.float16)
    want = (np.maximum if kind == "max" else np.minimum)(a, out)
    if backend != "cuda":
        with pytest.raises(CompilationError, match="TMA reduction"):
            desc_minmax[(2, 2)](out, a, M, N, MB=MB, NB=NB, KIND=kind)
        return
    desc_minmax[(2, 2)](out, a, M, N, MB=MB, NB=NB, KIND=kind)     # the H200: sm_90
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_descriptor_minmax_ptx(dt):
    sig = {0: f"*{dt}", 1: f"*{dt}", 2: "i32", 3: "i32"}
    cx = dict(MB=8, NB=32, KIND="max")
    ptx = tilejit.compile(desc_minmax, signature=sig, constexprs=cx, target="cuda:90").asm["ptx"]
    assert "cas.b32" in ptx or "cas.b16" in ptx
    assert ("max.f16" if dt == "fp16" else "max.bf16") in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, 90)
    with pytest.raises(CompilationError, match="sm_80 has none"):
        tilejit.compile(desc_minmax, signature=sig, constexprs=cx, target="cuda:80")


def test_plain_atomic_max_fp16_still_rejected():
    """Only descriptors take 16-bit float max/min (Triton's rule for tl.atomic_max)."""
    @tilejit.jit
    def k(p):
        tl.atomic_max(p, tl.full((), 1.0, tl.float16))
    with pytest.raises(Exception, match="does not support fp16"):
        tilejit.compile(k, signature={0: "*fp16"}, target="cuda:90")
