"""``tl.device_assert`` in the interpreter and the compiled CPU backend: the error is
an ``AssertionError`` naming the kernel, the source line, the program id and the
message; the failing program stops at the assert."""
import inspect

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import DeviceAssertError
from tilejit.runtime.options import use_options

HOST_BACKENDS = ["interpreter", "cpu"]


def _line(kernel, text):
    src, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, s in enumerate(src) if text in s)


def _on(name):
    return use_options(backend=name, interpret=name == "interpreter")


@tilejit.jit
def scalar_assert(x_ptr, n):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, 1)
    tl.device_assert(pid < n, "pid must stay below n")
    tl.store(x_ptr + pid, 2)


@tilejit.jit
def masked_assert(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1)
    tl.device_assert(x >= 0, "negative input", mask=offs < n)


@tilejit.jit
def loop_assert(x_ptr, n_iter, limit, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.int32)
    for i in range(n_iter):
        acc += tl.load(x_ptr + tl.arange(0, BLOCK))
        if i > 1:
            tl.device_assert(acc < limit, "accumulator over the limit")
    tl.store(x_ptr + tl.arange(0, BLOCK), acc)


@tilejit.jit
def grid2d_assert(out_ptr, bad_x, bad_y):
    px = tl.program_id(0)
    py = tl.program_id(1)
    ok = (px != bad_x) | (py != bad_y)
    tl.device_assert(ok, "bad program")
    tl.store(out_ptr + py * tl.num_programs(0) + px, 1)


@pytest.mark.parametrize("name", HOST_BACKENDS)
def test_scalar_assert_stops_the_failing_program(name):
    x = np.zeros(4, np.int32)
    with _on(name):
        scalar_assert[(4,)](x, 4)
        np.testing.assert_array_equal(x, [2, 2, 2, 2])
        x[:] = 0
        with pytest.raises(AssertionError) as ei:
            scalar_assert[(1, 1, 1)](x[3:], 0)
    e = ei.value
    assert isinstance(e, DeviceAssertError) and e.program_id == (0, 0, 0)
    assert "pid must stay below n" in str(e) and "scalar_assert" in str(e)
    assert f"test_device_assert.py:{_line(scalar_assert, 'device_assert')}" in str(e)
    assert x[3] == 1                    # the store before the assert ran, the one after did not


@pytest.mark.parametrize("name", HOST_BACKENDS)
def test_masked_off_lanes_do_not_fail(name):
    x = np.arange(50, dtype=np.int32)
    with _on(name):
        masked_assert[(4,)](x, 50, BLOCK=16)          # lanes >= 50 load -1 but are masked off
        x[41] = -5
        with pytest.raises(DeviceAssertError) as ei:
            masked_assert[(4,)](x, 50, BLOCK=16)
    assert ei.value.program_id == (2, 0, 0)
    assert "negative input" in str(ei.value)


@pytest.mark.parametrize("name", HOST_BACKENDS)
def test_assert_inside_loop_and_if(name):
    x = np.ones(8, np.int32)
    with _on(name):
        loop_assert[(1,)](x, 5, 100, BLOCK=8)
        np.testing.assert_array_equal(x, np.full(8, 5))
        x[:] = 1
        with pytest.raises(DeviceAssertError) as ei:
            loop_assert[(1,)](x, 5, 3, BLOCK=8)       # acc reaches 3 at i == 2
    assert "accumulator over the limit" in str(ei.value)
    assert f":{_line(loop_assert, 'device_assert')}" in str(ei.value)
    np.testing.assert_array_equal(x, np.ones(8))      # the final store never ran


@pytest.mark.parametrize("name", HOST_BACKENDS)
def test_assert_names_the_2d_program(name):
    out = np.zeros(12, np.int32)
    with _on(name):
        grid2d_assert[(4, 3)](out, 99, 99)
        assert (out == 1).all()
        with pytest.raises(DeviceAssertError) as ei:
            grid2d_assert[(4, 3)](out, 1, 2)
    assert ei.value.program_id == (1, 2, 0)
    assert "program (1, 2, 0)" in str(ei.value)
