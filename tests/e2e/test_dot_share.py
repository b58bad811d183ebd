"""Dot operand tiles shared by the programs of a chunk (backends/cpu/dot_share.py) on
every backend, against float64 numpy, one thread so that one chunk runs the whole
grid: a batched matmul on a 3-D grid (the keys carry the third axis), and kernels
whose operand pointers depend on the other program id through a loop-carried step or
a branch, which must not be shared."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.runtime.options import use_options


@tilejit.jit
def bmm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The tutorial loop per batch (program id 2): A[z] (M x K) @ B[z] (K x N)."""
    z = tl.program_id(2)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + z * M * K + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + z * K * N + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c_ptr + z * M * N + rm[:, None] * N + rn[None, :], acc)


@tilejit.jit
def mm_drift(a_ptr, b_ptr, c_ptr, K, LDB, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """B's tile moves right by ``pid_m % 2`` columns per step (through the carried
    pointer's step), A's down by ``pid_n % 2`` rows in a branch: both depend on
    both program ids."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    if pid_n % 2 == 1:
        a_ptrs += K
    b_ptrs = b_ptr + rk[:, None] * LDB + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * LDB + pid_m % 2
    tl.store(c_ptr + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :], acc)


def _close(c, want, K):
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=4e-4 * np.sqrt(K))


# fused factors 4 (BK=16: K=80 is one group of 4 and one step left), 2 (one left) and 1;
# row blocks of 6 and tails of 4 (BM=16, 32, 64)
@pytest.mark.parametrize("M,N,K,BM,BN,BK,Z", [(96, 64, 80, 32, 32, 16, 3), (64, 96, 128, 32, 32, 64, 2),
                                              (128, 64, 96, 64, 32, 32, 2), (48, 32, 64, 16, 16, 16, 1)])
def test_batched_3d_grid(backend, M, N, K, BM, BN, BK, Z):
    rng = np.random.default_rng(M + K + Z)
    a = rng.standard_normal((Z, M, K)).astype(np.float32)
    b = rng.standard_normal((Z, K, N)).astype(np.float32)
    c = np.full((Z, M, N), np.nan, np.float32)
    with use_options(num_threads=1):
        bmm[(M // BM, N // BN, Z)](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK)
    _close(c, a.astype(np.float64) @ b.astype(np.float64), K)


@pytest.mark.parametrize("BK", [16, 64])
def test_operands_depending_on_both_ids(backend, BK):
    BM, BN, GM, GN, K = 32, 32, 3, 4, 128
    M, N, steps = BM * GM, BN * GN, K // BK
    LDB = N + steps
    rng = np.random.default_rng(BK)
    a = rng.standard_normal((M + 1, K)).astype(np.float32)       # + 1: A's shifted rows
    b = rng.standard_normal((K, LDB)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    with use_options(num_threads=1):
        mm_drift[(GM, GN)](a.ravel(), b.ravel(), c, K, LDB, BM=BM, BN=BN, BK=BK)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = np.zeros((M, N))
    for pm in range(GM):
        for pn in range(GN):
            rows = slice(pm * BM + pn % 2, pm * BM + pn % 2 + BM)
            for s in range(steps):
                c0 = pn * BN + s * (pm % 2)
                want[pm * BM:(pm + 1) * BM, pn * BN:(pn + 1) * BN] += \
                    a64[rows, s * BK:(s + 1) * BK] @ b64[s * BK:(s + 1) * BK, c0:c0 + BN]
    _close(c, want, K)


@pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")
def test_cpu_shares_only_independent_operands(monkeypatch):
    """The tutorial-shaped ``bmm`` shares A (depends on ids 0 and 2) and B (ids 1 and
    2); ``mm_drift`` shares neither."""
    from tilejit.backends.cpu import dot_share
    seen = []
    real = dot_share.plan
    monkeypatch.setattr(dot_share, "plan", lambda ctx, loop, load, n: seen.append(
        (ctx.func.name, real(ctx, loop, load, n))) or seen[-1][1])
    a = np.ones((2, 64, 64), np.float32)
    with use_options(backend="cpu", sanitize=False, num_threads=1):
        tilejit.jit(bmm.fn)[(2, 2, 2)](a, a, np.empty_like(a), 64, 64, 64, BM=32, BN=32, BK=64)
        tilejit.jit(mm_drift.fn)[(2, 2)](a, a, np.empty_like(a), 32, 64, BM=32, BN=32, BK=32)
    deps = [(name, site.dep if site else None) for name, site in seen]
    assert deps[:2] == [("bmm", (0, 2)), ("bmm", (1, 2))]
    assert set(deps[2:]) == {("mm_drift", None)}                    # both fused loops of BK=32


@tilejit.jit
def mm_store_first(a_ptr, b_ptr, c_ptr, n_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   ATOMIC: tl.constexpr):
    """The tutorial loop after a store (or with an atomic after it): not shared."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if not ATOMIC:
        tl.store(n_ptr + tl.program_id(0), 1)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * (BN * tl.num_programs(1)) + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * BN * tl.num_programs(1)
    if ATOMIC:
        tl.atomic_add(n_ptr + tl.program_id(0), 1)
    tl.store(c_ptr + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :], acc)


@pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")
@pytest.mark.parametrize("atomic", [False, True])
def test_cpu_no_sharing_after_writes_or_with_atomics(monkeypatch, atomic):
    from tilejit.backends.cpu import dot_share
    seen = []
    real = dot_share.loop_may_share
    monkeypatch.setattr(dot_share, "loop_may_share", lambda ctx, loop: seen.append(real(ctx, loop)) or seen[-1])
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    c, n = np.empty_like(a), np.zeros(2, np.int32)
    with use_options(backend="cpu", sanitize=False, num_threads=1):
        tilejit.jit(mm_store_first.fn)[(2, 2)](a, a, c, n, 64, BM=32, BN=32, BK=64, ATOMIC=atomic)
    assert seen and not any(seen)
    _close(c, a.astype(np.float64) @ a.astype(np.float64), 64)
    assert list(n) == ([2, 2] if atomic else [1, 1])
