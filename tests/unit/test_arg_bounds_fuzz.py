"""The launch check of argument-dependent bounds (runtime/arg_bounds.py) against the
interpreter, the reference: over random lengths, n, strides, shifts and grids it raises
exactly when the interpreter finds an access outside every array (never on a kernel
that stays inside; and, for these affine kernels over small grids, never misses)."""
import zlib

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import Buffer
from tilejit.runtime import launch_checks
from tilejit.runtime.options import use_options


@tilejit.jit
def lt_n(x, out, n, s, c, nout, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    o = offs * s + c
    tl.store(out + offs, tl.load(x + o, mask=o < n, other=0), mask=offs < nout)


@tilejit.jit
def both_sides(x, out, n, s, c, nout, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    o = offs * s + c
    tl.store(out + offs, tl.load(x + o, mask=(o >= 0) & (o < n), other=0), mask=offs < nout)


@tilejit.jit
def unmasked(x, out, n, s, c, nout, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out + offs, tl.load(x + (offs % n) * s + c), mask=offs < nout)


@tilejit.jit
def rows(x, out, n, s, c, nout, B: tl.constexpr):
    r = tl.program_id(0) * 2 + tl.arange(0, 2)
    k = tl.arange(0, B)
    m = (r[:, None] < n) & (k[None, :] < c)
    v = tl.load(x + r[:, None] * s + k[None, :], mask=m, other=0)
    o = r[:, None] * B + k[None, :]
    tl.store(out + o, v, mask=o < nout)


NAMES = ["x", "out", "n", "s", "c", "nout", "B"]


def _interpreter_oob(kernel, grid, args) -> bool:
    with use_options(backend="interpreter", interpret=True):
        try:
            kernel[grid](*args, B=16)
        except tilejit.OutOfBoundsError:
            return True
    return False


def _check_raises(kernel, grid, args) -> bool:
    with use_options(backend="interpreter", interpret=True):
        compiled = kernel.warmup(*args, B=16, grid=grid)
    x, out = args[0], args[1]
    buffers = [Buffer("x", x.ctypes.data, x.nbytes, 4), Buffer("out", out.ctypes.data, out.nbytes, 4)]
    try:
        launch_checks.check_bounds(compiled, kernel.__name__, grid + (1, 1), NAMES,
                                   list(args) + [16], buffers)
    except tilejit.OutOfBoundsError as e:
        assert "refused before the launch" in str(e) and "argument 'x'" in str(e)
        return True
    return False


@pytest.mark.parametrize("kernel", [lt_n, both_sides, unmasked, rows])
def test_launch_check_agrees_with_the_interpreter(kernel):
    _agree(kernel)


def _agree(kernel):
    rng = np.random.default_rng(zlib.crc32(kernel.__name__.encode()))
    raised = 0
    for _ in range(40):
        g = int(rng.integers(1, 5))
        x = np.arange(int(rng.integers(1, 80)), dtype=np.float32)
        out = np.zeros(g * 32, np.float32)
        n = int(rng.integers(1, 100))
        s = int(rng.choice([1, 2, 3, -1]))
        c = int(rng.integers(-4, 20 if kernel in (rows, looped) else 5))
        args = (x, out, n, s, c, out.size)
        expect = _interpreter_oob(kernel, (g,), args)
        got = _check_raises(kernel, (g,), args)
        assert got == expect, (kernel.__name__, g, x.size, n, s, c)
        raised += got
    assert 0 < raised < 40          # both outcomes were exercised


@tilejit.jit
def looped(x, out, n, s, c, nout, B: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([B], dtype=tl.float32)
    for k in range(c, n, B):
        o = k + tl.arange(0, B)
        acc += tl.load(x + r * s + o, mask=o < n, other=0)
    tl.store(out + r * B + tl.arange(0, B), acc, mask=r * B + tl.arange(0, B) < nout)


def test_launch_check_in_loops_agrees_with_the_interpreter():
    _agree(looped)
