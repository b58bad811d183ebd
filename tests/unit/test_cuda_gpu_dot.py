"""GPU tier of the pipelined tensor-core dot (cuda backend): cp.async ring + wgmma
(sm_90a) and cp.async ring + ldmatrix/mma.sync (sm_80 PTX, which also runs on sm_90),
compared with a float64 torch reference on fresh random inputs.  Skipped without a GPU."""
from __future__ import annotations

import pytest

from tilejit.backends import LaunchArgs, get_backend
from tilejit.runtime.options import CudaTuning, Options

import test_cuda_ptx as K

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not get_backend("cuda").is_available(), reason="no CUDA GPU")]


def _run(BM, BN, BK, warps, stages, arch, M, N, Kd, dtype="fp16", **tuning):
    """``tuning``: CudaTuning fields changed (``wgmma_inflight=False``)."""
    func = K.matmul_kernel(BM, BN, BK, dtype)
    func.attrs.update(num_warps=warps, num_stages=stages, target=f"cuda:{arch}")
    kern = get_backend("cuda").compile(func, Options(cuda=CudaTuning(**tuning)))
    tdt = torch.float16 if dtype == "fp16" else torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(BM * 7 + BN * 3 + BK + warps + stages + Kd)
    a = torch.randn(M, Kd, device="cuda", generator=g).to(tdt)
    b = torch.randn(Kd, N, device="cuda", generator=g).to(tdt)
    c = torch.full((M, N), float("nan"), device="cuda")
    la = LaunchArgs([a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, Kd], [], [a, b, c, M, N, Kd])
    kern.launch((M // BM, N // BN, 1), la)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    assert not torch.isnan(c).any(), "unwritten or NaN outputs"
    err = ((c.double() - ref).norm() / max(ref.norm().item(), 1e-30)).item()
    return kern, err


CONFIGS = [  # BM, BN, BK, warps, stages, arch
    (128, 128, 64, 8, 3, 90), (128, 128, 64, 8, 4, 90), (128, 256, 64, 8, 3, 90),
    (64, 128, 64, 4, 4, 90), (64, 64, 64, 4, 2, 90), (128, 128, 128, 8, 2, 90),
    (128, 128, 64, 8, 3, 80), (64, 128, 64, 4, 4, 80), (128, 128, 64, 4, 3, 80),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "x".join(map(str, c)))
@pytest.mark.parametrize("Kd", [64, 320, 1024])
def test_pipelined_dot_matches_fp64(cfg, Kd):
    BM, BN, BK, warps, stages, arch = cfg
    if Kd % BK:
        pytest.skip("K must be a multiple of BK (unmasked loads)")
    kern, err = _run(BM, BN, BK, warps, stages, arch, 2 * BM, 2 * BN, Kd)
    ptx = kern.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx
    assert ("wgmma.mma_async" in ptx) == (arch == 90 and BM == 16 * warps)
    assert err < 1e-3, err


@pytest.mark.parametrize("arch", [80, 90])
def test_pipelined_dot_bf16_and_wait_all(arch):
    _, err = _run(128, 128, 64, 8, 4, arch, 256, 384, 512, "bf16")
    assert err < 1e-2, err
    _, err = _run(128, 128, 64, 8, 3, arch, 256, 256, 256, wgmma_inflight=False)
    assert err < 1e-3, err
    _, err = _run(128, 128, 64, 8, 4, arch, 256, 256, 640, ring_late_issue=False)
    assert err < 1e-3, err


def test_zero_trip_loop_stores_zeros():
    func = K.matmul_kernel(128, 128, 64, "fp16")
    func.attrs.update(num_warps=8, num_stages=3, target="cuda:90")
    kern = get_backend("cuda").compile(func, None)
    a = torch.zeros(128, 64, device="cuda", dtype=torch.float16)
    c = torch.full((128, 128), float("nan"), device="cuda")
    kern.launch((1, 1, 1), LaunchArgs([a.data_ptr(), a.data_ptr(), c.data_ptr(), 128, 128, 0], [],
                                      [a, a, c, 128, 128, 0]))
    torch.cuda.synchronize()
    assert torch.equal(c, torch.zeros_like(c))


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("Kd", [16, 192, 208, 464])
@pytest.mark.parametrize("fold", [False, True])
def test_masked_k_tail_is_zero_filled(arch, Kd, fold):
    """The tutorial's K mask (``offs_k < K - k*BK``, other=0): the ring copies with
    src-size 0 where the mask is off; rows of B past K are never read."""
    import tilejit
    from test_cuda_ptx_pipeline import SIG, jit_mm
    k = tilejit.compile(jit_mm, signature=SIG, constexprs=dict(BM=128, BN=128, BK=64, MASKED=True, FOLD=fold),
                        divisible_by_16=tuple(SIG), target=f"cuda:{arch}", num_warps=8, num_stages=4)
    assert "cp.async.cg.shared.global" in k.asm["ptx"]
    M = N = 256
    a = torch.randn(M, Kd, device="cuda").half()
    b = torch.randn(Kd, N, device="cuda").half()
    c = torch.full((M, N), float("nan"), device="cuda")
    args = [a, b, c, Kd, Kd, N, N]
    k.launch((M // 128, N // 128, 1), LaunchArgs([x.data_ptr() if hasattr(x, "data_ptr") else x for x in args],
                                                 [], args))
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = ((c.double() - ref).norm() / ref.norm()).item()
    assert err < 1e-3, err
