"""Inductor-style generated code: a looped reduction and a persistent reduction (autotuned
over its XBLOCK configs), compiled through AsyncCompile, on numpy buffers."""
import numpy as np
from torchinductor.codecache import AsyncCompile
from torchinductor.triton_ops.autotune import grid

async_compile = AsyncCompile()

kernel0 = async_compile.triton('''
import triton
import triton.language as tl
from torchinductor.ir import ReductionHint
from torchinductor.triton_ops.autotune import reduction
from torchinductor.utils import instance_descriptor

@reduction(size_hints=[64, 1024], reduction_hint=ReductionHint.INNER, filename=__file__, meta={'signature': {0: '*fp32', 1: '*fp32', 2: 'i32', 3: 'i32'}, 'device': 0, 'constants': {}, 'mutated_arg_names': [], 'configs': [instance_descriptor(divisible_by_16=(0, 1), equal_to_1=())]})
@triton.jit
def kernel(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK : tl.constexpr, RBLOCK : tl.constexpr):
    xnumel = 50
    rnumel = 1000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    x0 = xindex
    _tmp1 = tl.zeros([XBLOCK, RBLOCK], tl.float32) + 0
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        r1 = rindex
        tmp0 = tl.load(in_ptr0 + (r1 + (1000*x0)), rmask & xmask, other=0)
        _tmp1 = tl.where(rmask & xmask, _tmp1 + tmp0, _tmp1)
    tmp1 = tl.sum(_tmp1, 1)[:, None]
    tl.store(out_ptr0 + x0 + tl.zeros([XBLOCK, 1], tl.int32), tmp1, xmask)
''')

kernel1 = async_compile.triton('''
import triton
import triton.language as tl
from torchinductor.ir import ReductionHint
from torchinductor.triton_ops.autotune import persistent_reduction
from torchinductor.utils import instance_descriptor

@persistent_reduction(size_hints=[64, 128], reduction_hint=ReductionHint.DEFAULT, filename=__file__, meta={'signature': {0: '*fp32', 1: '*fp32', 2: 'i32', 3: 'i32'}, 'device': 0, 'constants': {}, 'mutated_arg_names': [], 'configs': [instance_descriptor(divisible_by_16=(0, 1), equal_to_1=())]})
@triton.jit
def kernel(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK : tl.constexpr, RBLOCK : tl.constexpr):
    xnumel = 50
    rnumel = 100
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (rindex + (100*x0)), rmask & xmask, other=0)
    tmp1 = tl.where(rmask & xmask, tmp0, float("-inf"))
    tmp2 = tl.max(tmp1, 1)[:, None]
    tl.store(out_ptr0 + x0 + tl.zeros([XBLOCK, 1], tl.int32), tmp2, xmask)
''')
async_compile.wait(globals())
del async_compile

rng = np.random.default_rng(5)
a = rng.standard_normal((50, 1000)).astype(np.float32)
out0 = np.zeros(50, np.float32)
kernel0.run(a, out0, 50, 1000, grid=grid(50), stream=0)
np.testing.assert_allclose(out0, a.astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-3)

b = rng.standard_normal((50, 100)).astype(np.float32)
out1 = np.zeros(50, np.float32)
kernel1.run(b, out1, 50, 100, grid=grid(50), stream=0)
np.testing.assert_array_equal(out1, b.max(axis=1))
assert len(kernel1.configs) == 3 and kernel1.best_config.kwargs["XBLOCK"] in (1, 8, 32)
print("chosen:", kernel1.best_config)
print("PASS inductor_reductions")
