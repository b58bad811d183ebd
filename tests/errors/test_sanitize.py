"""Sanitize mode: bounds-checked compiled code and int32 offset-overflow checks.

``kernel[grid](..., sanitize=True)`` (or ``TILEJIT_SANITIZE=1``) compiles a checked
variant: a masked-in access outside every argument buffer stops the program before
it touches memory and raises ``tilejit.OutOfBoundsError`` naming the kernel, the
source line, the program id, the lane, the address and the nearest buffer.
"""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.runtime.options import Options, use_options


@tilejit.jit
def shifted_copy(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs + shift, mask=mask)
    tl.store(y_ptr + offs, v, mask=mask)


@tilejit.jit
def store_past(x_ptr, y_ptr, n, extra, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, v, mask=offs < n + extra)


@tilejit.jit
def row_sum(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(v, axis=0))


@tilejit.jit
def gather_product(x_ptr, y_ptr, i, k, BLOCK: tl.constexpr):
    offs = i * k + tl.arange(0, BLOCK)
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + offs))


def _line(kernel, text):
    """Absolute line number of the first kernel line containing ``text``."""
    import inspect
    src, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, s in enumerate(src) if text in s)


def _cpu(**kw):
    return use_options(backend="cpu", interpret=False, **kw)


def test_read_one_past_the_end_is_caught_with_line_pid_lane():
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    with _cpu(), pytest.raises(tilejit.OutOfBoundsError) as ei:
        shifted_copy[(4,)](x, y, 100, 1, BLOCK=32, sanitize=True)   # x[100] read by program 3
    e = ei.value
    assert e.program_id == (3, 0, 0) and e.lane == 3
    assert e.address == x.ctypes.data + 400
    msg = str(e)
    assert f"test_sanitize.py:{_line(shifted_copy, 'tl.load')}" in msg
    assert "shifted_copy" in msg and "out-of-bounds load" in msg
    assert "nearest buffer 'x_ptr'" in msg and "0 bytes past its end" in msg


def test_negative_offset_is_caught_before_the_start():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    with _cpu(), pytest.raises(tilejit.OutOfBoundsError) as ei:
        shifted_copy[(2,)](x, y, 64, -1, BLOCK=32, sanitize=True)   # x[-1] by program 0 lane 0
    e = ei.value
    assert e.program_id == (0, 0, 0) and e.lane == 0
    assert e.address == x.ctypes.data - 4
    assert "nearest buffer 'x_ptr'" in str(e) and "4 bytes before its start" in str(e)


def test_write_past_the_end_writes_nothing_past_the_bound():
    big = np.full(128, -7.0, np.float32)
    y = big[:100]                      # the memory after y belongs to `big`: it must stay untouched
    x = np.arange(128, dtype=np.float32)
    with _cpu(num_threads=1), pytest.raises(tilejit.OutOfBoundsError) as ei:
        store_past[(1,)](x, y, 100, 20, BLOCK=128, sanitize=True)
    e = ei.value
    assert "out-of-bounds store" in str(e) and "'y_ptr'" in str(e)
    assert f"test_sanitize.py:{_line(store_past, 'tl.store')}" in str(e)
    assert e.program_id == (0, 0, 0) and e.lane == 100
    assert (big[100:] == -7.0).all()   # nothing written past y's end
    # without sanitize the launch checks (runtime/arg_bounds.py) find the same lane from
    # n, extra and the mask, and refuse the launch before anything runs
    big2 = np.full(128, -7.0, np.float32)
    with _cpu(), pytest.raises(tilejit.OutOfBoundsError) as ei:
        store_past[(1,)](x, big2[:100], 100, 20, BLOCK=128)
    assert "refused before the launch" in str(ei.value) and ei.value.lane == 100
    assert (big2[100:] == -7.0).all()


def test_stride_bug_is_caught_on_the_right_line_and_program():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 10)).astype(np.float32)
    out = np.zeros(6, np.float32)
    with _cpu():
        row_sum[(6,)](x, out, 6, 10, 10, BLOCK=16, sanitize=True)    # correct stride
        np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5)
        with pytest.raises(tilejit.OutOfBoundsError) as ei:           # stride 11: row 5 runs off
            row_sum[(6,)](x, out, 6, 10, 11, BLOCK=16, sanitize=True)
    e = ei.value
    assert e.program_id == (5, 0, 0)
    assert e.lane == 5                  # 5*11 + 5 = 60 = one past the last element
    assert f"test_sanitize.py:{_line(row_sum, 'tl.load')}" in str(e)


def test_masked_off_out_of_bounds_lanes_are_not_reported():
    x = np.arange(1000, dtype=np.float32)
    y = np.zeros_like(x)
    with _cpu():
        shifted_copy[(tilejit.cdiv(1000, 128) + 3,)](x, y, 1000, 0, BLOCK=128, sanitize=True)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("block", [64, 128])
def test_in_bounds_results_are_unchanged(block):
    rng = np.random.default_rng(block)
    x = rng.integers(-1000, 1000, (7, 50)).astype(np.float32)     # exact sums in any order
    plain, checked = np.zeros(7, np.float32), np.zeros(7, np.float32)
    with _cpu():
        row_sum[(7,)](x, plain, 7, 50, 50, BLOCK=block)
        row_sum[(7,)](x, checked, 7, 50, 50, BLOCK=block, sanitize=True)
    np.testing.assert_array_equal(plain, checked)
    np.testing.assert_array_equal(checked, x.astype(np.float64).sum(1))
    z = rng.standard_normal(1000).astype(np.float32)
    a, b = np.zeros_like(z), np.zeros_like(z)
    with _cpu():
        shifted_copy[(tilejit.cdiv(1000, block),)](z, a, 1000, 0, BLOCK=block)
        shifted_copy[(tilejit.cdiv(1000, block),)](z, b, 1000, 0, BLOCK=block, sanitize=True)
    np.testing.assert_array_equal(a, z)
    np.testing.assert_array_equal(b, z)


def test_sanitized_variant_has_checks_and_the_default_has_none():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    with _cpu():
        off = shifted_copy[(2,)](x, y, 64, 0, BLOCK=32)
        on = shifted_copy[(2,)](x, y, 64, 0, BLOCK=32, sanitize=True)
        again = shifted_copy[(2,)](x, y, 64, 0, BLOCK=32, sanitize=False)
        on_again = shifted_copy[(2,)](x, y, 64, 0, BLOCK=32, sanitize=True)
    assert on is not off and again is off and on_again is on   # separate cache entries, reused
    assert on.sanitize and not off.sanitize
    for stage in ("llir", "llir-opt"):
        assert "tj_inbounds" in on.asm[stage]
        assert "tj_inbounds" not in off.asm[stage]
    # the offset arithmetic `pid * BLOCK` is checked for int32 overflow only when on
    assert not any(op.name == "tt.assert" for op in off.func.walk())
    assert any(op.name == "tt.assert" for op in on.func.walk())


def test_env_var_turns_it_on():
    assert Options.from_env({"TILEJIT_SANITIZE": "1"}).sanitize
    assert not Options.from_env({}).sanitize
    x = np.arange(10, dtype=np.float32)
    with _cpu(sanitize=True), pytest.raises(tilejit.OutOfBoundsError):
        shifted_copy[(1,)](x, np.zeros_like(x), 10, 5, BLOCK=16)


# ---------------------------------------------------------------- int32 offset overflow
@pytest.mark.parametrize("backend_name", ["interpreter", "cpu"])
def test_int32_offset_overflow_is_reported(backend_name):
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(8, np.float32)
    opts = dict(backend=backend_name, interpret=backend_name == "interpreter")
    with use_options(**opts):
        gather_product[(1,)](x, y, 3, 5, BLOCK=8, sanitize=True)     # 15: fine
        np.testing.assert_array_equal(y, x[15:23])
        # 65536 * 65536 wraps to 0 in int32: the load reads x[0:8], in bounds, silently
        y[:] = -1
        gather_product[(1,)](x, y, 65536, 65536, BLOCK=8)
        np.testing.assert_array_equal(y, x[:8])
        with pytest.raises(tilejit.OffsetOverflowError) as ei:
            gather_product[(1,)](x, y, 65536, 65536, BLOCK=8, sanitize=True)
    e = ei.value
    assert isinstance(e, tilejit.OutOfBoundsError) and isinstance(e, OverflowError)
    msg = str(e)
    assert f"test_sanitize.py:{_line(gather_product, 'offs = i * k')}" in msg
    assert "gather_product" in msg and "'*' wrapped past 2**31" in msg
    assert e.program_id == (0, 0, 0)


@tilejit.jit
def fill_rows(y_ptr, row, stride, BLOCK: tl.constexpr):
    tl.store(y_ptr + row * stride + tl.arange(0, BLOCK), 1.0)


@pytest.mark.parametrize("backend_name", ["interpreter", "cpu"])
def test_overflowing_store_offset_writes_nothing(backend_name):
    y = np.zeros(16, np.float32)
    with use_options(backend=backend_name, interpret=backend_name == "interpreter"):
        fill_rows[(1,)](y, 1, 8, BLOCK=8, sanitize=True)
        np.testing.assert_array_equal(y, [0] * 8 + [1] * 8)
        y[:] = 0
        with pytest.raises(tilejit.OffsetOverflowError) as ei:     # 2**16 * 2**16 wraps to 0
            fill_rows[(1,)](y, 2**16, 2**16, BLOCK=8, sanitize=True)
        assert (y == 0).all()                                       # nothing was written
        fill_rows[(1,)](y, 2**16, 2**16, BLOCK=8)                   # unchecked: row 0 overwritten
        np.testing.assert_array_equal(y, [1] * 8 + [0] * 8)
    assert f":{_line(fill_rows, 'tl.store')}" in str(ei.value)


@tilejit.jit
def wide_offsets(x_ptr, y_ptr, i, k, BLOCK: tl.constexpr):
    offs = i.to(tl.int64) * k + tl.arange(0, BLOCK)
    junk = i * k                                   # may wrap, but never feeds an address
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + offs) + junk.to(tl.float32))


def test_int64_offsets_and_non_address_arithmetic_are_not_checked():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(8, np.float32)
    with _cpu():
        k = wide_offsets[(1,)](x, y, 2, 3, BLOCK=8, sanitize=True)
        np.testing.assert_array_equal(y, x[6:14] + 6)
        assert not [op for op in k.func.walk() if op.name == "tt.assert"]
        with pytest.raises(tilejit.OutOfBoundsError) as ei:     # 2**32 in int64: a real OOB
            wide_offsets[(1,)](x, y, 65536, 65536, BLOCK=8, sanitize=True)
    assert not isinstance(ei.value, tilejit.OffsetOverflowError)
    assert ei.value.address == x.ctypes.data + 4 * 2**32


@tilejit.jit
def histogram(idx_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    bins = tl.load(idx_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=m)


def test_atomic_out_of_bounds_is_caught():
    idx = np.array([0, 1, 2, 3, 1, 1], np.int32)
    hist = np.zeros(4, np.int32)
    with _cpu():
        histogram[(1,)](idx, hist, 6, BLOCK=8, sanitize=True)
        np.testing.assert_array_equal(hist, [1, 3, 1, 1])
        idx[4] = 4                                        # one past the last bin
        with pytest.raises(tilejit.OutOfBoundsError) as ei:
            histogram[(1,)](idx, hist, 6, BLOCK=8, sanitize=True)
    e = ei.value
    assert e.lane == 4 and e.address == hist.ctypes.data + 16
    assert "tt.atomic_rmw" in str(e) and "nearest buffer 'hist_ptr'" in str(e)
    assert f":{_line(histogram, 'tl.atomic_add')}" in str(e)


# ---------------------------------------------------------------- agreement with the interpreter
@tilejit.jit
def strided_gather(x_ptr, y_ptr, n, stride, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs * stride + shift, mask=m, other=-1.0)
    tl.store(y_ptr + offs + shift, v, mask=m)


def _verdict(backend_name, size_x, size_y, n, stride, shift, grid):
    x = np.arange(size_x, dtype=np.float32)
    y = np.zeros(size_y, np.float32)
    opts = dict(backend=backend_name, interpret=backend_name == "interpreter", num_threads=1)
    try:
        with use_options(**opts):
            strided_gather[(grid,)](x, y, n, stride, shift, BLOCK=8, sanitize=True)
    except tilejit.OutOfBoundsError as e:
        which = "load" if "load" in str(e) else "store"
        buf = x if which == "load" else y
        outside = not buf.ctypes.data <= e.address <= buf.ctypes.data + buf.nbytes - 4
        return ("oob", which, outside, e.program_id[0] < grid and 0 <= e.lane < 8)
    return ("ok", y.tolist())


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=int(__import__("os").environ.get("TILEJIT_FUZZ_EXAMPLES", "25")),
          deadline=None)
@given(size_x=st.integers(1, 40), size_y=st.integers(1, 40), n=st.integers(0, 40),
       stride=st.integers(-2, 3), shift=st.integers(-4, 4), grid=st.integers(1, 5))
def test_compiled_checks_agree_with_the_interpreter(size_x, size_y, n, stride, shift, grid):
    """Same verdict; each report names a real bad access; same memory when none.
    (Which bad access comes first may differ: compiled code runs a load and the
    store that consumes it lane by lane, the interpreter op by op.)"""
    a = _verdict("interpreter", size_x, size_y, n, stride, shift, grid)
    b = _verdict("cpu", size_x, size_y, n, stride, shift, grid)
    assert a[0] == b[0], (a, b)
    if a[0] == "oob":
        assert a[2:] == (True, True) and b[2:] == (True, True), (a, b)
    else:
        assert a[1] == b[1]


def test_offset_checks_reach_every_backend_ahead_of_time():
    """tilejit.compile(options=Options(sanitize=True)): the overflow checks are IR, so
    the CUDA backend gets them too (a recorded report, a CTA vote and an early return,
    no trap; no GPU needed to see it in the PTX)."""
    sig = {"y_ptr": "*fp32", "row": "i32", "stride": "i32"}
    on = tilejit.compile(fill_rows, signature=sig, constexprs={"BLOCK": 8}, target="cuda:90",
                         options=Options(sanitize=True))
    off = tilejit.compile(fill_rows, signature=sig, constexprs={"BLOCK": 8}, target="cuda:90",
                          options=Options())
    ptx_on, ptx_off = on.asm["ptx"], off.asm["ptx"]
    assert "bar.red.or.pred" in ptx_on and "atom.relaxed.sys.global.cas.b64" in ptx_on
    assert "trap;" not in ptx_on
    for check in ("bar.red", "atom.", "trap;", "tj_inbounds", "_param_3"):
        assert check not in ptx_off, check
    cpu = tilejit.compile(fill_rows, signature=sig, constexprs={"BLOCK": 8}, target="cpu",
                          options=Options(sanitize=True))
    assert "tj_inbounds" in cpu.asm["llir"]
    assert [op.msg for op in cpu.func.walk() if op.name == "tt.assert"][0].startswith("int32 offset")
