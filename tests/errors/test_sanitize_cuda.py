"""Sanitize mode and device_assert on the CUDA backend (GPU tier; skipped without a
CUDA GPU).  Checked kernels run on the GPU with the interpreter's results; a
masked-in access outside every buffer, a wrapped int32 offset or a failing
``tl.device_assert`` is recorded on the device (the first one wins), the failing
program returns early without touching memory past a bound, and the host raises
the CPU backend's error after the launch synchronises (no trap: the CUDA context
survives).  Which lane of a failing op wins is not fixed on the GPU (lanes run in
parallel), so lanes are checked against the set of bad lanes."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tilejit.backends import Buffer, LaunchArgs, get_backend
from tilejit.runtime.compiler import build
from tilejit.runtime.options import Options

pytestmark = [pytest.mark.skipif(not get_backend("cuda").is_available(), reason="no CUDA GPU")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _args(func, arrays):
    values, bufs = [], []
    for a, x in zip(func.arguments, arrays):
        if isinstance(x, np.ndarray):
            values.append(x.ctypes.data)
            bufs.append(Buffer(a.name, x.ctypes.data, x.nbytes, x.itemsize))
        else:
            values.append(x)
    return LaunchArgs(values, bufs, list(arrays))


def _checked(kernel, sig, consts):
    func, _ = build(kernel, sig, consts, options=Options(sanitize=True))
    assert any(op.name == "tt.assert" for op in func.walk())
    return func


def test_checked_kernels_match_the_interpreter_on_the_gpu():
    from tilejit.interpreter import run
    from test_sanitize import row_sum, strided_gather
    rng = np.random.default_rng(3)
    x = rng.integers(-100, 100, (6, 10)).astype(np.float32)
    func = _checked(row_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_rows": "i32",
                              "n_cols": "i32", "stride": "i32"}, {"BLOCK": 16})
    ref, got = np.zeros(6, np.float32), np.zeros(6, np.float32)
    run(func, (6, 1, 1), _args(func, [x, ref, 6, 10, 10]), None)
    get_backend("cuda").compile(func, Options(sanitize=True)).launch((6, 1, 1), _args(func, [x, got, 6, 10, 10]))
    np.testing.assert_array_equal(ref, x.sum(1))
    np.testing.assert_array_equal(got, ref)
    func = _checked(strided_gather, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32",
                                     "stride": "i32", "shift": "i32"}, {"BLOCK": 8})
    z = np.arange(100, dtype=np.float32)
    ref, got = np.zeros(40, np.float32), np.zeros(40, np.float32)
    run(func, (4, 1, 1), _args(func, [z, ref, 30, 3, 2]), None)
    get_backend("cuda").compile(func, Options(sanitize=True)).launch((4, 1, 1), _args(func, [z, got, 30, 3, 2]))
    np.testing.assert_array_equal(got, ref)


def test_wrapped_offset_stops_the_gpu_launch():
    script = textwrap.dedent('''
        import sys, numpy as np
        sys.path.insert(0, "tests/errors")
        from test_sanitize import fill_rows
        from test_sanitize_cuda import _args, _checked
        from tilejit.backends import get_backend
        from tilejit.runtime.options import Options
        func = _checked(fill_rows, {"y_ptr": "*fp32", "row": "i32", "stride": "i32"}, {"BLOCK": 8})
        k = get_backend("cuda").compile(func, Options(sanitize=True))
        y = np.zeros(16, np.float32)
        k.launch((1, 1, 1), _args(func, [y, 1, 8]))
        print("inbounds", y.tolist() == [0.0] * 8 + [1.0] * 8)
        y[:] = 0
        try:
            k.launch((1, 1, 1), _args(func, [y, 65536, 65536]))
            print("overflow-not-caught", y.tolist())
        except Exception as e:
            print("raised", type(e).__name__, (y == 0).all())
        k.launch((1, 1, 1), _args(func, [y, 1, 8]))          # the context survived
        print("after", y.tolist() == [0.0] * 8 + [1.0] * 8)
    ''')
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests", "errors"))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    out = r.stdout.split("\n")
    assert "inbounds True" in out, r.stdout + r.stderr
    assert "raised OffsetOverflowError True" in out, r.stdout + r.stderr
    assert "after True" in out, r.stdout + r.stderr


# ---------------------------------------------------------------- through kernel[grid](...)
import tilejit  # noqa: E402
from tilejit.errors import DeviceAssertError  # noqa: E402
from tilejit.runtime.options import use_options  # noqa: E402


def _gpu(**kw):
    return use_options(backend="cuda", interpret=False, **kw)


def test_gpu_read_one_past_the_end_names_line_pid_lane():
    from test_sanitize import _line, shifted_copy
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    with _gpu(), pytest.raises(tilejit.OutOfBoundsError) as ei:
        shifted_copy[(4,)](x, y, 100, 1, BLOCK=32, sanitize=True)   # x[100] read by program 3
    e = ei.value
    assert e.program_id == (3, 0, 0) and e.lane == 3
    msg = str(e)
    assert f"test_sanitize.py:{_line(shifted_copy, 'tl.load')}" in msg
    assert "shifted_copy" in msg and "out-of-bounds load of fp32" in msg
    assert "nearest buffer 'x_ptr'" in msg and "0 bytes past its end" in msg


def test_gpu_failing_program_returns_early_and_others_finish():
    from test_sanitize import shifted_copy
    x = np.arange(64, dtype=np.float32)
    y = np.full(64, -5.0, np.float32)
    with _gpu(), pytest.raises(tilejit.OutOfBoundsError) as ei:
        shifted_copy[(2,)](x, y, 64, -1, BLOCK=32, sanitize=True)   # program 0 lane 0 reads x[-1]
    e = ei.value
    assert e.program_id == (0, 0, 0) and e.lane == 0 and "4 bytes before its start" in str(e)
    assert (y[:32] == -5.0).all()                      # program 0 stopped before its store
    np.testing.assert_array_equal(y[32:], x[31:63])    # program 1 finished its own work


def test_gpu_write_past_the_end_writes_nothing_past_the_bound():
    from test_sanitize import _line, store_past
    big = np.full(128, -7.0, np.float32)
    y = big[:100]
    x = np.arange(128, dtype=np.float32)
    with _gpu(), pytest.raises(tilejit.OutOfBoundsError) as ei:
        store_past[(1,)](x, y, 100, 20, BLOCK=128, sanitize=True)
    e = ei.value
    assert "out-of-bounds store" in str(e) and "'y_ptr'" in str(e)
    assert f"test_sanitize.py:{_line(store_past, 'tl.store')}" in str(e)
    assert e.program_id == (0, 0, 0) and 100 <= e.lane < 120
    assert (big[100:] == -7.0).all()                   # nothing written past y's end
    with _gpu():      # the context survived: an unchecked launch runs and computes as before
        y2 = np.full(100, -7.0, np.float32)
        store_past[(1,)](x, y2, 100, 0, BLOCK=128)
    np.testing.assert_array_equal(y2, x[:100])


def test_gpu_stride_bug_and_in_bounds_results():
    from test_sanitize import _line, row_sum
    rng = np.random.default_rng(0)
    x = rng.integers(-100, 100, (6, 10)).astype(np.float32)
    out = np.zeros(6, np.float32)
    with _gpu():
        row_sum[(6,)](x, out, 6, 10, 10, BLOCK=16, sanitize=True)
        np.testing.assert_array_equal(out, x.sum(1))
        with pytest.raises(tilejit.OutOfBoundsError) as ei:
            row_sum[(6,)](x, out, 6, 10, 11, BLOCK=16, sanitize=True)    # row 5 runs off
    assert ei.value.program_id == (5, 0, 0) and 5 <= ei.value.lane < 10
    assert f"test_sanitize.py:{_line(row_sum, 'tl.load')}" in str(ei.value)


def test_gpu_masked_off_lanes_and_atomics():
    from test_sanitize import histogram, shifted_copy
    x = np.arange(1000, dtype=np.float32)
    y = np.zeros_like(x)
    with _gpu():
        shifted_copy[(tilejit.cdiv(1000, 128) + 3,)](x, y, 1000, 0, BLOCK=128, sanitize=True)
    np.testing.assert_array_equal(y, x)
    idx = np.array([0, 1, 2, 3, 1, 1], np.int32)
    hist = np.zeros(4, np.int32)
    with _gpu():
        histogram[(1,)](idx, hist, 6, BLOCK=8, sanitize=True)
        np.testing.assert_array_equal(hist, [1, 3, 1, 1])
        idx[4] = 4
        with pytest.raises(tilejit.OutOfBoundsError) as ei:
            histogram[(1,)](idx, hist, 6, BLOCK=8, sanitize=True)
    assert ei.value.lane == 4 and "tt.atomic_rmw" in str(ei.value)
    assert "nearest buffer 'hist_ptr'" in str(ei.value)


def test_gpu_offset_overflow_is_reported_and_writes_nothing():
    from test_sanitize import _line, fill_rows
    y = np.zeros(16, np.float32)
    with _gpu():
        with pytest.raises(tilejit.OffsetOverflowError) as ei:
            fill_rows[(1,)](y, 2**16, 2**16, BLOCK=8, sanitize=True)
    assert (y == 0).all()
    assert f":{_line(fill_rows, 'tl.store')}" in str(ei.value) and "'*' wrapped" in str(ei.value)


def test_gpu_device_assert_reports_line_and_program():
    from test_device_assert import _line, grid2d_assert, loop_assert, masked_assert, scalar_assert
    x = np.zeros(4, np.int32)
    with _gpu():
        scalar_assert[(4,)](x, 4)
        np.testing.assert_array_equal(x, [2, 2, 2, 2])
        x[:] = 0
        with pytest.raises(AssertionError) as ei:
            scalar_assert[(1, 1, 1)](x[3:], 0)
    e = ei.value
    assert isinstance(e, DeviceAssertError) and e.program_id == (0, 0, 0)
    assert "pid must stay below n" in str(e)
    assert f"test_device_assert.py:{_line(scalar_assert, 'device_assert')}" in str(e)
    assert x[3] == 1                     # the store before the assert ran, the one after did not
    x = np.arange(50, dtype=np.int32)
    with _gpu():
        masked_assert[(4,)](x, 50, BLOCK=16)
        x[41] = -5
        with pytest.raises(DeviceAssertError) as ei:
            masked_assert[(4,)](x, 50, BLOCK=16)
    assert ei.value.program_id == (2, 0, 0) and "negative input" in str(ei.value)
    x = np.ones(8, np.int32)
    with _gpu(), pytest.raises(DeviceAssertError) as ei:
        loop_assert[(1,)](x, 5, 3, BLOCK=8)
    assert "accumulator over the limit" in str(ei.value)
    np.testing.assert_array_equal(x, np.ones(8))       # the final store never ran
    out = np.zeros(12, np.int32)
    with _gpu():
        grid2d_assert[(4, 3)](out, 99, 99)
        assert (out == 1).all()
        with pytest.raises(DeviceAssertError) as ei:
            grid2d_assert[(4, 3)](out, 1, 2)
    assert ei.value.program_id == (1, 2, 0)


def test_gpu_torch_tensors_report_device_addresses():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    from test_sanitize import shifted_copy
    x = torch.arange(100, dtype=torch.float32, device="cuda")
    y = torch.zeros(100, dtype=torch.float32, device="cuda")
    with _gpu(), pytest.raises(tilejit.OutOfBoundsError) as ei:
        shifted_copy[(4,)](x, y, 100, 1, BLOCK=32, sanitize=True)
    assert ei.value.address == x.data_ptr() + 400 and ei.value.lane == 3
    with _gpu():
        shifted_copy[(4,)](x, y, 100, 0, BLOCK=32, sanitize=True)
    assert torch.equal(x, y)
