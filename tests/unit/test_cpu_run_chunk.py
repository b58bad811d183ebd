"""``run_chunk`` (backends/cpu/codegen.py) divides the program ids of its first program
out of the linear index once and steps x, y, z from there: every chunk of a 3-D grid,
starting anywhere, runs each of its programs with the right ids (the pool hands out
chunks at arbitrary starts), and a failed assert reports its program's ids."""
import ctypes

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import get_backend
from tilejit.frontend import build_ir
from tilejit.ir import dtype_from_name
from tilejit.runtime.options import Options
from tilejit.transforms import run_pipeline


@tilejit.jit
def grid_ids(out, stop):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    lin = x + tl.num_programs(0) * (y + tl.num_programs(1) * z)
    tl.device_assert(lin != stop, "stop")
    tl.store(out + lin, x + 1000 * y + 1000000 * z)


def _kernel():
    f = build_ir(grid_ids, {"out": dtype_from_name("*i32"), "stop": dtype_from_name("i32")}, {})
    f = run_pipeline(f, Options(debug=True))
    return get_backend("cpu").compile(f, Options(debug=True))


def _run(kernel, out, stop, grid, start, end):
    slots = (ctypes.c_int64 * 16)(out.ctypes.data, stop, *grid)
    status = kernel._fn(ctypes.cast(slots, ctypes.c_void_p), ctypes.c_int32(start), ctypes.c_int32(end))
    return status, list((ctypes.c_int32 * 4).from_buffer(slots, 8 * 5))


@pytest.mark.parametrize("grid", [(7, 5, 3), (1, 4, 6), (13, 1, 2), (64, 1, 1)])
def test_chunks_at_any_start(grid):
    k = _kernel()
    n = int(np.prod(grid))
    out = np.full(n, -1, np.int32)
    cuts = sorted({0, n, 1 % n, n // 3, n // 2 + 1, n - 1})
    for s, e in zip(cuts, cuts[1:]):
        assert _run(k, out, -1, grid, s, e)[0] == 0
    x, y, z = np.meshgrid(*(np.arange(g) for g in grid), indexing="ij")
    want = (x + 1000 * y + 1000000 * z).transpose(2, 1, 0).ravel()     # x fastest
    np.testing.assert_array_equal(out, want)


def test_failed_assert_reports_its_ids():
    k = _kernel()
    grid = (7, 5, 3)
    stop = 3 + 7 * (4 + 5 * 1)                 # program (3, 4, 1)
    out = np.full(105, -1, np.int32)
    status, rec = _run(k, out, stop, grid, 30, 90)
    assert status == 1 and rec == [1, 3, 4, 1]
    assert (out[30:stop] >= 0).all() and (out[stop:] == -1).all()
