"""Python's scoping in kernels and what makes a compiled kernel stale.

A name in a kernel is a local, else a variable of an enclosing function (a closure
cell), else a global (Python's rule); the values read from outside are folded into the
code, so they are part of the cache key and a change compiles again.  A ``@jit`` helper
redefined after a kernel calling it compiled (a notebook cell run again) is used by
the next launch.
"""
import types

import numpy as np

import tilejit
import tilejit.language as tl

C = 3          # a module-level name the closures below shadow


def _run(kernel):
    x = np.zeros(4, np.int32)
    kernel[(1,)](x)
    return x


def test_closure_variable_shadows_global(backend):
    C = 5

    @tilejit.jit
    def scale(X):
        tl.store(X + tl.arange(0, 4), tl.arange(0, 4) * C)

    np.testing.assert_array_equal(_run(scale), [0, 5, 10, 15])


def _make_scale(c):
    @tilejit.jit
    def scale(X):
        tl.store(X + tl.arange(0, 4), tl.arange(0, 4) * c)
    return scale


def test_closures_with_equal_source_and_different_values(backend):
    # same source text, different captured values: distinct compiled kernels
    np.testing.assert_array_equal(_run(_make_scale(2)), [0, 2, 4, 6])
    np.testing.assert_array_equal(_run(_make_scale(7)), [0, 7, 14, 21])
    np.testing.assert_array_equal(_run(_make_scale(2)), [0, 2, 4, 6])


def test_closure_variable_changed_after_compile(backend):
    k = 2

    @tilejit.jit
    def scale(X):
        tl.store(X + tl.arange(0, 4), tl.arange(0, 4) * k)

    np.testing.assert_array_equal(_run(scale), [0, 2, 4, 6])
    k = 9          # the cell the kernel reads
    np.testing.assert_array_equal(_run(scale), [0, 9, 18, 27])


def test_closure_jit_helper(backend):
    @tilejit.jit
    def add_one(v):
        return v + 1

    @tilejit.jit
    def kernel(X):
        tl.store(X + tl.arange(0, 4), add_one(tl.arange(0, 4)))

    np.testing.assert_array_equal(_run(kernel), [1, 2, 3, 4])


@tilejit.jit
def helper(v):
    return v * 2


@tilejit.jit
def calls_helper(X):
    tl.store(X + tl.arange(0, 4), helper(tl.arange(0, 4)))


def test_redefined_helper_recompiles(backend):
    global helper
    original = helper
    np.testing.assert_array_equal(_run(calls_helper), [0, 2, 4, 6])
    helper = _make_times(10)     # what re-running a notebook cell defining `helper` does
    np.testing.assert_array_equal(_run(calls_helper), [0, 10, 20, 30])
    helper = original
    np.testing.assert_array_equal(_run(calls_helper), [0, 2, 4, 6])


def _make_times(n):
    @tilejit.jit
    def helper(v):
        return v * n
    return helper


def test_global_shadowed_only_where_captured(backend):
    @tilejit.jit
    def uses_global(X):
        tl.store(X + tl.arange(0, 4), tl.arange(0, 4) * C)

    np.testing.assert_array_equal(_run(uses_global), [0, 3, 6, 9])


@tilejit.jit
def leaf(v):
    return v * 2


@tilejit.jit
def middle(v):
    return leaf(v) + 1


@tilejit.jit
def calls_middle(X):
    tl.store(X + tl.arange(0, 4), middle(tl.arange(0, 4)))


def test_redefined_helper_two_calls_down_recompiles(backend):
    global leaf
    original = leaf
    np.testing.assert_array_equal(_run(calls_middle), [1, 3, 5, 7])
    leaf = _make_times(10)
    try:
        np.testing.assert_array_equal(_run(calls_middle), [1, 11, 21, 31])
    finally:
        leaf = original
    np.testing.assert_array_equal(_run(calls_middle), [1, 3, 5, 7])


# a helper library imported as a module (``import mylib``; ``importlib.reload(mylib)``
# or ``mylib.helper = ...`` redefines the helper the kernel calls as ``mylib.helper``)
helper_lib = types.ModuleType("scoping_helper_lib")
helper_lib.helper = _make_times(2)
helper_lib.FACTOR = 1


@tilejit.jit
def calls_module_helper(X):
    tl.store(X + tl.arange(0, 4), helper_lib.helper(tl.arange(0, 4)) + helper_lib.FACTOR)


def test_redefined_module_attribute_helper_recompiles(backend):
    original = helper_lib.helper
    np.testing.assert_array_equal(_run(calls_module_helper), [1, 3, 5, 7])
    helper_lib.helper = _make_times(3)
    try:
        np.testing.assert_array_equal(_run(calls_module_helper), [1, 4, 7, 10])
        helper_lib.FACTOR = 5            # a module constant the kernel folds in
        np.testing.assert_array_equal(_run(calls_module_helper), [5, 8, 11, 14])
    finally:
        helper_lib.helper, helper_lib.FACTOR = original, 1
    np.testing.assert_array_equal(_run(calls_module_helper), [1, 3, 5, 7])


def test_helper_redefined_in_enclosing_function_recompiles(backend):
    @tilejit.jit
    def times(v):
        return v * 2

    @tilejit.jit
    def kernel(X):
        tl.store(X + tl.arange(0, 4), times(tl.arange(0, 4)))

    np.testing.assert_array_equal(_run(kernel), [0, 2, 4, 6])

    @tilejit.jit
    def times(v):  # noqa: F811 - redefined on purpose, as a re-run cell does
        return v * 7

    np.testing.assert_array_equal(_run(kernel), [0, 7, 14, 21])
