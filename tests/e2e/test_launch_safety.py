"""Faults injected through a launch's arguments: integers outside 64 bits, read-only
arrays for arguments a kernel writes, arrays past 2**31 elements with int32 offsets.
Each ends in a correct result or an error naming the kernel and the argument."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit import OffsetOverflowError


@tilejit.jit
def put_scalar(out, v):
    tl.store(out, v)


@tilejit.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(out + o, tl.load(x + o, mask=m) + tl.load(y + o, mask=m), mask=m)


@tilejit.jit
def count(ctr, x, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.atomic_add(ctr + o * 0, tl.load(x + o, mask=o < n), mask=o < n)


def test_integers_outside_64_bits_are_refused(backend):
    out = np.zeros(1, np.int64)
    put_scalar[(1,)](out, -2 ** 63)
    assert out[0] == -2 ** 63
    for bad in (-2 ** 63 - 1, -2 ** 70, 2 ** 64):
        with pytest.raises(ValueError, match=r"put_scalar: argument 'v'.*does not fit in 64 bits"):
            put_scalar[(1,)](out, bad)
        assert out[0] == -2 ** 63
    u = np.zeros(1, np.uint64)
    put_scalar[(1,)](u, 2 ** 64 - 1)
    assert u[0] == 2 ** 64 - 1


def _arrays():
    x = np.arange(16, dtype=np.float32)
    return x, np.ones(16, np.float32), np.zeros(16, np.float32)


def test_read_only_output_is_refused_before_launch(backend):
    x, y, out = _arrays()
    for _ in range(3):                       # the express lane is warm
        add[(1,)](x, y, out, 16, BLOCK=16)
    frozen = bytes(64)
    ro = np.frombuffer(frozen, np.float32)
    with pytest.raises(ValueError, match=r"add: argument 'out' is a read-only array.*stores"):
        add[(1,)](x, y, ro, 16, BLOCK=16)
    assert frozen == bytes(64)
    locked = np.zeros(16, np.float32)
    locked.flags.writeable = False
    for call in (lambda: add[(1,)](x, y, locked, 16, BLOCK=16),
                 lambda: add[(1,)](x, y, out=locked, n=16, BLOCK=16),
                 lambda: add.run(x, y, locked, 16, BLOCK=16, grid=(1,))):
        with pytest.raises(ValueError, match="argument 'out' is a read-only array"):
            call()
    assert not locked.any()


def test_read_only_inputs_are_fine(backend):
    x, y, out = _arrays()
    x.flags.writeable = False
    yb = np.frombuffer(np.ones(16, np.float32).tobytes(), np.float32)
    for _ in range(3):
        out[:] = 0
        add[(1,)](x, yb, out, 16, BLOCK=16)
        np.testing.assert_array_equal(out, x + 1)


def test_read_only_atomic_target_is_refused(backend):
    ctr = np.zeros(1, np.float32)
    x = np.ones(8, np.float32)
    count[(1,)](ctr, x, 8, BLOCK=8)
    assert ctr[0] == 8
    ctr.flags.writeable = False
    with pytest.raises(ValueError, match=r"count: argument 'ctr' is a read-only array.*atomics"):
        count[(1,)](ctr, x, 8, BLOCK=8)
    assert ctr[0] == 8


@tilejit.jit
def poke32(x, first, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) + first) * BLOCK + tl.arange(0, BLOCK)     # int32: wraps
    tl.store(x + offs, tl.load(x + offs) + 1)


@tilejit.jit
def poke64(x, first, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) + first).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) + 1)


@pytest.mark.parametrize("kernel", [poke32, poke64])
def test_offsets_past_int32_never_touch_wild_memory(backend, kernel):
    """2**31 + 64 one-byte elements (pages allocated lazily: a few are touched)."""
    if backend == "cuda":
        pytest.skip("host array of 2 GiB")
    big = np.zeros(2 ** 31 + 64, np.int8)
    first = 2 ** 31 // 32                           # element 2**31: past int32
    small = np.zeros(64, np.int8)
    kernel[(2,)](small, 0, BLOCK=32)                # an ordinary launch first
    assert (small == 1).all()
    if kernel is poke32:
        with pytest.raises((OffsetOverflowError, IndexError), match="poke32") as e:
            kernel[(2,)](big, first, BLOCK=32)
        if backend == "cpu":
            assert isinstance(e.value, OffsetOverflowError) and "'*'" in str(e.value)
        assert not big[-64:].any()
    else:
        for _ in range(2):
            kernel[(2,)](big, first, BLOCK=32)
        assert (big[2 ** 31:] == 2).all() and not big[:2 ** 31:2 ** 20].any()
    kernel[(2,)](small, 0, BLOCK=32)                # small arrays: the plain kernel again
    assert (small == 2).all()


@tilejit.jit
def desc_copy(xd, yd, B: tl.constexpr):
    yd.store([tl.program_id(0) * B], xd.load([tl.program_id(0) * B]))


def test_read_only_descriptor_target_is_refused(backend):
    from tilejit.tools.tensor_descriptor import TensorDescriptor
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    x.flags.writeable = False                  # read through: fine
    desc_copy[(2,)](TensorDescriptor.from_tensor(x, [8]), TensorDescriptor.from_tensor(y, [8]), B=8)
    np.testing.assert_array_equal(y, x)
    y2 = np.zeros(16, np.float32)
    y2.flags.writeable = False
    with pytest.raises(ValueError, match="desc_copy: argument 'yd' is a read-only array"):
        desc_copy[(2,)](TensorDescriptor.from_tensor(x, [8]), TensorDescriptor.from_tensor(y2, [8]), B=8)
    assert not y2.any()


@tilejit.jit
def fill_rows(src, dst, ROWS: tl.constexpr, B: tl.constexpr):
    o = tl.arange(0, B)
    p = dst                                     # a pointer carried through the loop
    for r in range(ROWS):
        q = tl.where(r % 2 == 0, p, p)          # and through a select
        tl.store(q + o, tl.load(src + o) + r)
        p += B


def test_written_arguments_are_traced_through_loops_and_selects(backend):
    src = np.arange(8, dtype=np.float32)
    src.flags.writeable = False
    dst = np.zeros(24, np.float32)
    fill_rows[(1,)](src, dst, ROWS=3, B=8)
    np.testing.assert_array_equal(dst, np.concatenate([src, src + 1, src + 2]))
    dst.flags.writeable = False
    with pytest.raises(ValueError, match="fill_rows: argument 'dst' is a read-only array"):
        fill_rows[(1,)](src, dst, ROWS=3, B=8)


@tilejit.jit
def unmasked_copy(x, out, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out + o, tl.load(x + o) * 2)


def test_unmasked_access_past_the_array_is_caught_before_it_happens(backend):
    """No mask: offsets bounded by the grid.  An array too short for the grid runs the
    checked variant (the first bad access raises before it happens); the rest run plain."""
    x = np.arange(64, dtype=np.float32)
    for _ in range(3):                           # plain launches, express lane warm
        out = np.zeros(64, np.float32)
        unmasked_copy[(4,)](x, out, B=16)
        np.testing.assert_array_equal(out, 2 * x)
    guard = np.full(80, -1.0, np.float32)
    short = guard[:48]                           # 3 blocks long: grid 4 writes past it
    with pytest.raises(IndexError, match="unmasked_copy") as e:
        unmasked_copy[(4,)](x, short, B=16)
    assert "out" in str(e.value)
    assert (guard[48:] == -1).all()              # nothing written past the array
    out = np.zeros(64, np.float32)
    unmasked_copy[(4,)](x, out, B=16)            # and the plain kernel again
    np.testing.assert_array_equal(out, 2 * x)
    if backend == "cpu":
        assert not any(getattr(k, "sanitize", False) for k in [unmasked_copy.warmup(
            x, out, B=16, grid=(4,))])


def test_unmasked_access_through_a_reversed_view_is_caught(backend):
    """Element 0 of a reversed view is its last byte: ascending offsets leave it."""
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    for _ in range(2):
        unmasked_copy[(4,)](x, out, B=16)
    guard = np.full(160, -1.0, np.float32)
    rev = guard[16:80][::-1]                     # 64 elements, element 0 at guard[79]
    with pytest.raises(IndexError, match="unmasked_copy"):
        unmasked_copy[(4,)](x, rev, B=16)
    assert (guard[80:] == -1).all() and (guard[:16] == -1).all()


@tilejit.jit
def poke_cols(x, row, stride, cstride, BLOCK: tl.constexpr):
    cols = tl.program_id(1) * cstride + tl.arange(0, BLOCK)    # int32
    p = x + row.to(tl.int64) * stride + cols
    tl.store(p, tl.load(p) + 1)


def test_int32_offsets_proved_for_the_launch_run_the_plain_kernel(backend):
    """Offsets whose int32 part the analysis bounds only with the grid and the
    arguments known: on an array past 2**31 elements the launch proves them in range
    and runs the plain kernel (no checked variant), host arrays and CUDA tensors
    alike; where they wrap, the checked variant reports it."""
    if backend == "interpreter":
        pytest.skip("2 GiB through the interpreter")
    n = 2 ** 31 + 64
    if backend == "cuda":
        torch = pytest.importorskip("torch", reason="needs torch")
        big = torch.zeros(n, dtype=torch.int8, device="cuda")
    else:
        big = np.zeros(n, np.int8)
    for _ in range(2):
        poke_cols[(1, 2)](big, 2 ** 25, 64, 32, BLOCK=32)      # row 2**25 * 64 = 2**31
    last = big[2 ** 31:2 ** 31 + 64]
    assert (last.cpu().numpy() if backend == "cuda" else last).tolist() == [2] * 64
    kernels = list(poke_cols._launcher.cache.values())
    assert kernels and not any(getattr(k, "sanitize", False) for k in kernels)
    with pytest.raises((OffsetOverflowError, IndexError), match="poke_cols") as e:
        poke_cols[(1, 3)](big, 0, 0, 2 ** 30, BLOCK=32)        # program 2: 2 * 2**30 wraps
    if backend == "cpu":
        assert isinstance(e.value, OffsetOverflowError) and "'*'" in str(e.value)
