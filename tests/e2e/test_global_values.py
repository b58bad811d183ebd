"""A kernel that reads module-level values is compiled again when they change (the
in-process caches, the express lane and the disk key all see the new value)."""
import numpy as np

import tilejit
import tilejit.language as tl

SCALE = 2
OFFSET: tl.constexpr = tl.constexpr(1.5)
OUT_DTYPE = tl.float32


@tilejit.jit
def _helper(x):
    return x + OFFSET


@tilejit.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, m)
    tl.store(out_ptr + i, _helper(x * SCALE).to(OUT_DTYPE), m)


def _run(x):
    out = np.zeros_like(x)
    for _ in range(3):          # repeated launches take the fast lanes
        scale_kernel[(1,)](x, out, x.size, BLOCK=16)
    return out


def test_changed_globals_recompile(backend):
    global SCALE, OFFSET
    x = np.arange(10, dtype=np.float32)
    try:
        np.testing.assert_array_equal(_run(x), x * 2 + 1.5)
        SCALE = 3
        np.testing.assert_array_equal(_run(x), x * 3 + 1.5)
        OFFSET = tl.constexpr(-4.0)                    # read by a @jit callee
        np.testing.assert_array_equal(_run(x), x * 3 - 4.0)
        SCALE = 2
        OFFSET = tl.constexpr(1.5)
        np.testing.assert_array_equal(_run(x), x * 2 + 1.5)
    finally:
        SCALE, OFFSET = 2, tl.constexpr(1.5)


def test_disk_key_includes_global_values():
    global SCALE
    from tilejit.runtime.cache import compile_key
    args = (scale_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 16}, {}, None, "cpu")
    k1 = compile_key(*args)
    try:
        SCALE = 5
        assert compile_key(*args) != k1
    finally:
        SCALE = 2
    assert compile_key(*args) == k1


def test_guard_lists_values_and_callees_not_modules():
    # @jit callees are guarded by identity: a redefined helper recompiles the kernel
    from tilejit.runtime.globals_guard import value_globals
    names = {name for _g, name in value_globals(scale_kernel)}
    assert names == {"SCALE", "OFFSET", "OUT_DTYPE", "_helper"}


@tilejit.jit
def _fill_kernel(out_ptr, V: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 4), tl.full((4,), 1.0, tl.float32) / V)


def test_constexpr_minus_zero_and_nan_are_their_own_kernels(backend):
    out = np.zeros(4, np.float32)
    for v, want in ((0.0, np.inf), (-0.0, -np.inf), (0.0, np.inf), (float("nan"), np.nan)):
        for _ in range(2):
            _fill_kernel[(1,)](out, V=v)
            np.testing.assert_array_equal(out, np.full(4, want, np.float32))
