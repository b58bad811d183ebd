"""triton-lang/triton #741: an argument reassigned inside the kernel (``xnumel =
2000``) must not change results; the scattered store must land bit-exactly."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def kernel_plain(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000*tmp0) + (196000*x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


@tilejit.jit
def kernel_reassigned(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 2000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000*tmp0) + (196000*x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


@tilejit.jit
def kernel_reassigned_1000(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000*tmp0) + (196000*x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


def _inputs(kind, rng):
    if kind == "arange":
        idx = (np.arange(2000, dtype=np.int64) % 196).reshape(2, 1, 1000)
    else:
        idx = rng.integers(0, 196, size=(2, 1, 1000), dtype=np.int64)
    vals = np.arange(1, 2001, dtype=np.float32).reshape(2, 1000)
    return idx, vals


def _reference(idx, vals, limit=2000):
    buf = np.zeros((2, 196, 1000), np.float32)
    i = np.arange(limit)
    buf[i // 1000, idx.reshape(-1)[:limit], i % 1000] = vals.reshape(-1)[:limit]
    return buf


@pytest.mark.parametrize("block", [64, 128, 256, 512, 1024, 2048])
@pytest.mark.parametrize("kind", ["arange", "random"])
@pytest.mark.parametrize("kern", [kernel_plain, kernel_reassigned], ids=["plain", "xnumel=2000"])
def test_issue741_bit_exact(backend, kern, kind, block, rng):
    idx, vals = _inputs(kind, rng)
    out = np.zeros((2, 196, 1000), np.float32)
    kern[(tilejit.cdiv(2000, block),)](idx, vals, out, 2000, XBLOCK=block)
    ref = _reference(idx, vals)
    np.testing.assert_array_equal(out, ref)
    assert out.sum() == 2001000.0
    if kind == "arange":
        assert out[0].max(-1)[:10].tolist() == [981.0 + i for i in range(10)]


@pytest.mark.parametrize("block", [64, 1024])
def test_issue741_reassigned_to_other_constant(backend, block, rng):
    """``xnumel = 1000`` inside the kernel: later uses see 1000, not the 2000 passed."""
    idx, vals = _inputs("random", rng)
    out = np.zeros((2, 196, 1000), np.float32)
    kernel_reassigned_1000[(tilejit.cdiv(2000, block),)](idx, vals, out, 2000, XBLOCK=block)
    np.testing.assert_array_equal(out, _reference(idx, vals, limit=1000))
    assert not out[1].any()


def test_issue741_grid_callable(backend, rng):
    idx, vals = _inputs("arange", rng)
    out = np.zeros((2, 196, 1000), np.float32)
    kernel_reassigned[lambda meta: (tilejit.cdiv(meta["xnumel"], meta["XBLOCK"]),)](
        idx, vals, out, 2000, XBLOCK=256)
    np.testing.assert_array_equal(out, _reference(idx, vals))
