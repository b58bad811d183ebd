"""CPU tier: ``tl.load(..., eviction_policy=...)`` on the cuda backend carries the hint
as Triton's loads do (an L1 eviction priority and an L2 cache policy from
``createpolicy``); loads without it are plain; ptxas (when installed) assembles both.
The hint changes no result: the e2e tests run such loads on every backend."""
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def _two_pass(x_ptr, out_ptr, n, BLOCK: tl.constexpr, POLICY: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0, eviction_policy=POLICY)
    tl.store(out_ptr + offs, acc)


def _ptx(policy, arch):
    k = tilejit.compile(_two_pass, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                        constexprs={"BLOCK": 512, "POLICY": policy}, divisible_by_16=("x_ptr", "out_ptr", "n"),
                        target=f"cuda:{arch}", num_warps=4)
    ptx = k.asm["ptx"]
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)
    return ptx


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("policy", ["evict_first", "evict_last"])
def test_eviction_policy_reaches_the_load(policy, arch):
    ptx = _ptx(policy, arch)
    assert f"createpolicy.fractional.L2::{policy}.b64" in ptx
    assert f"ld.global.L1::{policy}.L2::cache_hint.v4.b32" in ptx


@pytest.mark.parametrize("policy", ["", "evict_normal"])
def test_no_hint_without_a_policy(policy):
    ptx = _ptx(policy, 90)
    assert "createpolicy" not in ptx and "cache_hint" not in ptx
    assert "ld.global.v4.b32" in ptx
