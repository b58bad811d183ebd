"""A kernel whose shared memory cannot fit one block is a compile-time error naming the
kernel (no driver error at launch); the CPU tier needs no GPU."""
import re

import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import CompilationError


@tilejit.jit
def big_dot(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.dot(tl.load(a + om[:, None] * BK + ok[None, :]), tl.load(b + ok[:, None] * BN + on[None, :]))
    tl.store(c + om[:, None] * BN + on[None, :], acc)


SIG = {"a": "*fp16", "b": "*fp16", "c": "*fp32"}


def test_too_much_shared_memory_is_a_compile_error():
    with pytest.raises(CompilationError) as ei:
        tilejit.compile(big_dot, signature=SIG, constexprs={"BM": 256, "BN": 256, "BK": 64},
                        target="cuda:90", num_warps=8)
    msg = str(ei.value)
    assert "big_dot" in msg and "test_cuda_shared_limit.py" in msg
    need = int(re.search(r"needs (\d+) bytes of shared memory", msg).group(1))
    assert need >= 256 * 256 * 4 > 232448 and "sm_90 allows (232448)" in msg
    assert "Traceback" not in msg


def test_a_fitting_kernel_compiles():
    k = tilejit.compile(big_dot, signature=SIG, constexprs={"BM": 64, "BN": 256, "BK": 64},
                        target="cuda:90", num_warps=8)
    assert k.shared <= 232448 and "mma" in k.asm["ptx"]
