"""Loops that carry a block and sum it once after the loop (``acc += x`` ... ``tl.sum(acc)``),
which the CPU backend carries as a few partial sums per row (backends/cpu/partial_acc.py),
on every backend against numpy: 1-D and 2-D accumulators, masked tails, a loop that runs
no iteration, a non-zero start, fp32 / fp64 / int32, and accumulators used some other way
too (kept whole).  On cpu: which accumulators are narrowed, read from the LLVM IR."""
import re

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.runtime.options import use_options


@tilejit.jit
def row_sums(X, Out, n_cols, stride, BLOCK: tl.constexpr, START: tl.constexpr, FLIP: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.full([BLOCK], START, X.dtype.element_ty)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + row * stride + cols, mask=cols < n_cols, other=0)
        if FLIP:
            acc = x + acc
        else:
            acc += x
    tl.store(Out + row, tl.sum(acc, axis=0))


@tilejit.jit
def block_row_sums(X, Out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM, BN], tl.float32)
    for off in range(0, N, BN):
        cols = off + tl.arange(0, BN)
        m = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(X + rows[:, None] * N + cols[None, :], mask=m, other=0.0) * 2.0
    total = tl.sum(acc, axis=1)
    tl.store(Out + rows, total + tl.sum(acc, axis=1), mask=rows < M)


@tilejit.jit
def inductor_sums(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr,
                  INVERT: tl.constexpr):
    """Inductor's looped reduction (tests/triton_scripts/inductor_reductions.py); INVERT
    writes the where the other way round (kept whole)."""
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
        tmp0 = tl.load(in_ptr0 + (r1 + (rnumel * x0)), rmask & xmask, other=0)
        if INVERT:
            _tmp1 = tl.where(~(rmask & xmask), _tmp1, _tmp1 + tmp0)
        else:
            _tmp1 = tl.where(rmask & xmask, _tmp1 + tmp0, _tmp1)
    tmp1 = tl.sum(_tmp1, 1)[:, None]
    tl.store(out_ptr0 + x0 + tl.zeros([XBLOCK, 1], tl.int32), tmp1, xmask)


@tilejit.jit
def sum_and_keep(X, Out, Whole, n_cols, BLOCK: tl.constexpr):
    """The accumulator is also stored after the loop: carried whole."""
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(Out + row, tl.sum(acc, axis=0))
    tl.store(Whole + row * BLOCK + tl.arange(0, BLOCK), acc)


@tilejit.jit
def column_sums(X, Out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Reduced along axis 0, not the last: carried whole."""
    cols = tl.arange(0, BN)
    acc = tl.zeros([BM, BN], tl.float32)
    for off in range(0, M, BM):
        rows = off + tl.arange(0, BM)
        acc += tl.load(X + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M, other=0.0)
    tl.store(Out + cols, tl.sum(acc, axis=0))


def _ref_sum(x, start, block):
    if x.dtype.kind == "i":
        return (x.astype(np.int64).sum(1) + start * block).astype(np.int32)    # wraps as int32 does
    return x.astype(np.float64).sum(1) + start * block


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("n_cols,block", [(1000, 256), (4096, 1024), (0, 64), (5, 64), (96, 32), (24, 8)])
def test_row_sums(backend, rng, dtype, n_cols, block):
    R = 5
    if dtype == np.int32:
        x = rng.integers(-2 ** 31, 2 ** 31 - 1, (R, n_cols), dtype=np.int64).astype(np.int32)
    else:
        x = rng.standard_normal((R, n_cols)).astype(dtype)
    for start, flip in ((0, False), (3, True)):
        out = np.full(R, 7, dtype)
        row_sums[(R,)](x, out, n_cols, n_cols, BLOCK=block, START=start, FLIP=flip)
        want = _ref_sum(x, start, block)
        if dtype == np.int32:
            np.testing.assert_array_equal(out, want)
        else:
            np.testing.assert_allclose(out, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)


@pytest.mark.parametrize("M,N,BM,BN", [(37, 300, 16, 128), (8, 64, 8, 64)])
def test_block_row_sums(backend, rng, M, N, BM, BN):
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros(M, np.float32)
    block_row_sums[(triton_cdiv(M, BM),)](x, out, M, N, BM=BM, BN=BN)
    np.testing.assert_allclose(out, 4 * x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("invert", [False, True])
def test_inductor_masked_sums(backend, rng, invert):
    x = rng.standard_normal((50, 999)).astype(np.float32)
    out = np.zeros(50, np.float32)
    inductor_sums[(triton_cdiv(50, 8),)](x, out, 50, 999, XBLOCK=8, RBLOCK=128, INVERT=invert)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3)


def test_whole_accumulators(backend, rng):
    R, n, B = 3, 300, 128
    x = rng.standard_normal((R, n)).astype(np.float32)
    out, whole = np.zeros(R, np.float32), np.zeros((R, B), np.float32)
    sum_and_keep[(R,)](x, out, whole, n, BLOCK=B)
    pad = np.zeros((R, 3 * B), np.float64)
    pad[:, :n] = x
    np.testing.assert_allclose(whole, pad.reshape(R, 3, B).sum(1), rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    M, N = 70, 32
    y = rng.standard_normal((M, N)).astype(np.float32)
    cs = np.zeros(N, np.float32)
    column_sums[(1,)](y, cs, M, N, BM=16, BN=N)
    np.testing.assert_allclose(cs, y.astype(np.float64).sum(0), rtol=1e-5, atol=1e-4)


def triton_cdiv(a, b):
    return (a + b - 1) // b


def _llir(fn, sig, constexprs):
    with use_options(backend="cpu"):
        return tilejit.compile(fn, signature=sig, constexprs=constexprs, target="cpu").asm["llir"]


@pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")
def test_which_accumulators_are_narrowed():
    allocas = lambda ir: sorted(int(n) for n in re.findall(r"alloca float, i64 (\d+)", ir))  # noqa: E731
    rows = _llir(row_sums, {"X": "*fp32", "Out": "*fp32", "n_cols": "i32", "stride": "i32"},
                 {"BLOCK": 1024, "START": 0, "FLIP": False})
    # 64 partial sums, not two 1024-float buffers (one copy of a masked-off tail block)
    assert 64 in allocas(rows) and allocas(rows).count(1024) <= 1
    blocks = _llir(block_row_sums, {"X": "*fp32", "Out": "*fp32", "M": "i32", "N": "i32"}, {"BM": 16, "BN": 128})
    assert 16 * 64 in allocas(blocks) and allocas(blocks).count(16 * 128) <= 1
    keep = _llir(sum_and_keep, {"X": "*fp32", "Out": "*fp32", "Whole": "*fp32", "n_cols": "i32"}, {"BLOCK": 128})
    assert allocas(keep).count(128) >= 2         # double-buffered whole
    ind = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "rnumel": "i32"}
    narrow = allocas(_llir(inductor_sums, ind, {"XBLOCK": 8, "RBLOCK": 128, "INVERT": False}))
    assert 8 * 64 in narrow and narrow.count(8 * 128) <= 1
    assert allocas(_llir(inductor_sums, ind, {"XBLOCK": 8, "RBLOCK": 128, "INVERT": True})).count(8 * 128) >= 2
    cols = _llir(column_sums, {"X": "*fp32", "Out": "*fp32", "M": "i32", "N": "i32"}, {"BM": 16, "BN": 32})
    assert allocas(cols).count(16 * 32) >= 2
