"""An access through an address the kernel read from memory (a pointer table, as in
Triton's grouped GEMM) reaches arrays the launch never passed: the interpreter and
sanitize mode report it as out of bounds, and the report says why and what to do.  An
ordinary out-of-bounds access gets no such sentence.  The same kernel runs compiled."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import OutOfBoundsError
from tilejit.runtime.options import use_options


@tilejit.jit
def through_table(table_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    """Row ``pid`` of the output is a copy of the array whose address is table[pid];
    the pointer is carried through a loop before the load."""
    pid = tl.program_id(0)
    src = tl.load(table_ptr + pid).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    for _ in range(2):
        src = src + 0
    v = tl.load(src + offs + SHIFT, mask=offs < n)
    tl.store(out_ptr + pid * BLOCK + offs, v, mask=offs < n)


def _run(shift=0):
    rows = [np.arange(8, dtype=np.float32) + 10 * r for r in range(3)]
    table = np.array([r.ctypes.data for r in rows], np.int64)
    out = np.zeros((3, 8), np.float32)
    through_table[(3,)](table, out, 8, SHIFT=shift, BLOCK=8)
    return rows, out


@pytest.mark.parametrize("mode", ["interpreter", "sanitize"])
def test_pointer_table_access_report_says_why(mode):
    opts = dict(backend="interpreter", interpret=True) if mode == "interpreter" else \
        dict(backend="cpu", sanitize=True)
    with use_options(**opts):
        with pytest.raises(OutOfBoundsError, match=r"read from memory or cast from an integer "
                                                   r"\(a pointer table\?\).*TILEJIT_BACKEND=cpu") as e:
            _run()
    assert "through_table" in str(e.value) and "test_pointer_table_report.py" in str(e.value)


@pytest.mark.parametrize("mode", ["interpreter", "sanitize"])
def test_ordinary_out_of_bounds_has_no_pointer_table_sentence(mode):
    @tilejit.jit
    def past_end(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs + 1, mask=offs < n), mask=offs < n)
    opts = dict(backend="interpreter", interpret=True) if mode == "interpreter" else \
        dict(backend="cpu", sanitize=True)
    x, y = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with use_options(**opts):
        with pytest.raises(OutOfBoundsError) as e:
            past_end[(1,)](x, y, 8, BLOCK=8)
    assert "pointer table" not in str(e.value)


def test_pointer_table_kernel_runs_compiled():
    with use_options(backend="cpu"):
        rows, out = _run()
    np.testing.assert_array_equal(out, np.stack(rows))
