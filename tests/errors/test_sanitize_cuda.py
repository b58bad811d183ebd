"""Sanitize mode on the CUDA backend (GPU tier; skipped without a CUDA GPU): the
int32 offset-overflow checks are IR, so checked kernels run on the GPU with the
interpreter's results, and a wrapped offset stops the launch (a device trap: the
launch fails; the failure runs in a child process since a trap ends the CUDA
context)."""
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
    ''')
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests", "errors"))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    out = r.stdout.split("\n")
    assert "inbounds True" in out, r.stdout + r.stderr
    assert any(line.startswith("raised ") for line in out), r.stdout + r.stderr
