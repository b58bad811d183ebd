"""Masked 16-byte accesses of 2-byte elements (8 halves per chunk).  A tile shaped
like a pipelined dot operand gets 8-element chunks, so a masked fp16 load or store of
that shape is one predicated 16-byte access: PTX vectors hold at most 4 registers,
so it must travel as 4 x b32 (``ld.global.v8.b16`` crashed ptxas).  Results against
numpy on every backend; the PTX is checked for cuda:90 and cuda:80 without a GPU."""
from __future__ import annotations

import re
import subprocess
import tempfile

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def dot_and_masked_copy(a_ptr, b_ptr, c_ptr, d_ptr, M, N, K, KV,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b + rowsum(a[:, :KV]); d = a[:, :BK] with the columns >= KV zeroed."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    first = tl.load(a_ptrs, mask=offs_k[None, :] < KV, other=0.0)
    if tl.program_id(1) == 0:
        tl.store(d_ptr + offs_m[:, None] * BK + offs_k[None, :], first, mask=offs_k[None, :] < KV)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * N
    acc += tl.sum(first.to(tl.float32), axis=1)[:, None]
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "d_ptr": "*fp16",
       "M": "i32", "N": "i32", "K": "i32", "KV": "i32"}


@pytest.mark.parametrize("kv", [64, 40, 0])
def test_masked_fp16_tiles_next_to_a_pipelined_dot(backend, rng, kv):
    M, N, K, BM, BN, BK = 128, 128, 128, 128, 128, 64
    a = (rng.standard_normal((M, K)) / 4).astype(np.float16)
    b = (rng.standard_normal((K, N)) / 4).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    d = np.full((M, BK), 7, np.float16)
    dot_and_masked_copy[(M // BM, N // BN)](a, b, c, d, M, N, K, kv, BM=BM, BN=BN, BK=BK,
                                            num_warps=8, num_stages=3)
    a64 = a.astype(np.float64)
    ref = a64 @ b.astype(np.float64) + a64[:, :kv].sum(axis=1)[:, None]
    np.testing.assert_allclose(c, ref, rtol=2e-2, atol=2e-2)
    want = np.full((M, BK), 7, np.float16)
    want[:, :kv] = a[:, :kv]
    np.testing.assert_array_equal(d, want)


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("arch", [90, 80])
def test_masked_16_byte_fp16_accesses_assemble(arch):
    k = tilejit.compile(dot_and_masked_copy, signature=SIG, constexprs=dict(BM=128, BN=128, BK=64),
                        divisible_by_16=tuple(SIG), target=f"cuda:{arch}", num_warps=8, num_stages=3)
    ptx = k.asm["ptx"]
    assert "cp.async" in ptx                                   # the loop took the ring
    assert not re.search(r"\.v8\.b16", ptx)
    assert re.search(r"@%p\d+ ld\.global\.v4\.b32", ptx) and re.search(r"@%p\d+ st\.global\.v4\.b32", ptx)
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        sm = "sm_90a" if arch == 90 else "sm_80"
        r = subprocess.run([tgt.find_ptxas(), f"-arch={sm}", f.name, "-o", "/dev/null"],
                           capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
