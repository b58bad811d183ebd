"""Launch checks of accesses bounded by the grid and the integer arguments (n, strides),
masks included (tilejit/runtime/arg_bounds.py): kernels in bounds run and give numpy's
result; a lane certainly outside every array raises before anything runs (compiled
backends; the interpreter reports the access itself) and writes nothing."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@tilejit.jit
def shifted(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs - 1, mask=m), mask=m)


@tilejit.jit
def rows(x, out, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x + row * stride + cols, mask=m)
    tl.store(out + row * n_cols + cols, v * 2, mask=m)


@tilejit.jit
def tile2d(x, out, M, N, sm, sn, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x + rm[:, None] * sm + rn[None, :] * sn, mask=m)
    tl.store(out + rm[:, None] * N + rn[None, :], v + 1, mask=m)


@tilejit.jit
def crossed(x, out, B: tl.constexpr):
    v = tl.arange(0, B)
    m = (v[:, None] < 1) & (v[None, :] >= 0)       # row 0 only; the offsets run along columns
    o = v[None, :] + v[:, None] * 0
    tl.store(out + o, tl.load(x + o, mask=m), mask=m)


@tilejit.jit
def halves(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs * 2 < n                                 # the bound does not narrow offs itself
    tl.store(out + offs, tl.load(x + offs, mask=m, other=0), mask=m)


def _compiled(backend):
    return backend != "interpreter"


def test_masked_elementwise_in_bounds_runs_and_past_n_raises(backend):
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    for _ in range(3):                               # plain launches, the express lane warm
        out = np.zeros(100, np.float32)
        add[(4,)](x, y, out, 100, BLOCK=32)
        np.testing.assert_array_equal(out, x + 1)
    guard = np.full(200, -1.0, np.float32)
    out = guard[:100]
    with pytest.raises(IndexError, match="add") as e:
        add[(4,)](x, y, out, 101, BLOCK=32)          # n one too large
    if _compiled(backend):
        assert "argument 'x'" in str(e.value) and "refused before the launch" in str(e.value)
        assert "test_arg_bounds.py:16" in str(e.value) and "n=101" in str(e.value)
        assert e.value.program_id == (3, 0, 0) and e.value.lane == 4
        assert (guard == -1).all()                   # nothing ran
    out = np.zeros(100, np.float32)
    add[(4,)](x, y, out, 100, BLOCK=32)              # in bounds again
    np.testing.assert_array_equal(out, x + 1)


def test_negative_offset_raises(backend):
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with pytest.raises(IndexError, match="shifted") as e:
        shifted[(2,)](x, out, 64, BLOCK=32)
    if _compiled(backend):
        assert "before its start" in str(e.value) and e.value.lane == 0
        assert not out.any()


def test_row_stride_argument(backend):
    n_rows, n_cols, stride = 5, 37, 40
    x = np.arange(n_rows * stride, dtype=np.float32)
    out = np.zeros(n_rows * n_cols, np.float32)
    rows[(n_rows,)](x, out, n_cols, stride, BLOCK=64)
    np.testing.assert_array_equal(out.reshape(n_rows, n_cols),
                                  2 * x.reshape(n_rows, stride)[:, :n_cols])
    out[:] = 0
    with pytest.raises(IndexError, match="rows"):
        rows[(n_rows,)](x, out, n_cols, stride + 1, BLOCK=64)    # a wrong stride
    if _compiled(backend):
        assert not out.any()


def test_2d_masks_in_bounds_strided_view_and_out(backend):
    M, N = 37, 45
    base = np.arange(M * 2 * N, dtype=np.float32).reshape(M, 2 * N)
    for x, sm, sn in ((base[:, :N].copy(), N, 1), (base[:, ::2], 2 * N, 2)):
        out = np.zeros(M * N, np.float32)
        tile2d[(3, 3)](x, out, M, N, sm, sn, BM=16, BN=16)
        np.testing.assert_array_equal(out.reshape(M, N), np.asarray(x) + 1)
    x = base[:, :N].copy()
    out = np.zeros((M + 1) * N, np.float32)
    with pytest.raises(IndexError, match="tile2d") as e:
        tile2d[(3, 3)](x, out, M + 1, N, N, 1, BM=16, BN=16)    # one row too many
    if _compiled(backend):
        assert "argument 'x'" in str(e.value) and not out.any()


def test_mask_on_other_dimension_does_not_narrow_offsets(backend):
    """The mask tests rows, the offsets run along columns: row 0's lanes reach
    column 3 of a 2-element array."""
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    crossed[(1,)](x, out, B=4)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(IndexError, match="crossed"):
        crossed[(1,)](x[:2].copy(), out, B=4)


def test_loose_bound_without_witness_runs(backend):
    """The bound of x + offs is the whole grid (longer than x), but the mask keeps every
    active lane inside: no error, the right result."""
    x = np.arange(50, dtype=np.float32)
    out = np.full(128, -1, np.float32)
    for _ in range(2):
        halves[(4,)](x, out, 100, BLOCK=32)
        np.testing.assert_array_equal(out[:50], x)
        assert (out[50:] == -1).all()


def test_torch_tensors_are_checked(backend):
    torch = pytest.importorskip("torch", reason="needs torch")
    x = torch.arange(100, dtype=torch.float32)
    y = torch.ones(100)
    out = torch.zeros(100)
    add[(4,)](x, y, out, 100, BLOCK=32)
    assert torch.equal(out, x + 1)
    out.zero_()
    with pytest.raises(IndexError, match="add"):
        add[(4,)](x, y, out, 128, BLOCK=32)
    if _compiled(backend):
        assert not out.any()


@tilejit.jit
def row_sums(x, out, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):               # the induction variable bounds the offsets
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(out + row, tl.sum(acc, axis=0))


def test_loop_over_columns(backend):
    rows_, n = 3, 100
    x = np.arange(rows_ * n, dtype=np.float32)
    out = np.zeros(rows_, np.float32)
    for _ in range(2):
        row_sums[(rows_,)](x, out, n, n, BLOCK=32)
        np.testing.assert_array_equal(out, x.reshape(rows_, n).sum(1))
    out[:] = 0
    with pytest.raises(IndexError, match="row_sums") as e:
        row_sums[(rows_,)](x, out, n + 1, n, BLOCK=32)   # the last row reads x[300]
    if _compiled(backend):
        assert "argument 'x'" in str(e.value) and "off = 96" in str(e.value)
        assert e.value.program_id == (2, 0, 0) and not out.any()
