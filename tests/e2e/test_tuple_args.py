"""Tuple arguments (plain, nested, namedtuple, with constants), ``tl.tuple`` and list
comprehensions over compile-time tuples, under every backend."""
from typing import NamedTuple

import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def _inc(values):
    return tl.tuple([v + 1 for v in values])


@tilejit.jit
def store_each(Ptrs, values):
    values = _inc(values)
    for i in tl.static_range(len(values)):
        tl.store(Ptrs[i], values[i])


@pytest.mark.parametrize("size", [0, 1, 3])
def test_tuple_of_pointers_and_ints(backend, size):
    outs = tuple(np.zeros(1, np.float32) for _ in range(size))
    vals = tuple(float(i + 1) for i in range(size))
    store_each[(1,)](outs, vals)
    assert tuple(float(o[0]) for o in outs) == tuple(v + 1 for v in vals)


@tilejit.jit
def nested_kernel(Out, t):
    tl.static_assert(t[1][1] is None)
    tl.static_assert(t[1][3] == 4)
    tl.store(Out + 0, tl.load(t[0]))
    tl.store(Out + 1, t[1][0])
    tl.store(Out + 2, tl.load(t[1][2]))
    tl.store(Out + 3, t[1][3] + t[2])


def test_nested_tuple_with_constants(backend):
    a = np.array([8], np.int32)
    b = np.array([12], np.int32)
    out = np.zeros(4, np.int32)
    nested_kernel[(1,)](out, (a, (1, None, b, tl.constexpr(4)), 7))
    np.testing.assert_array_equal(out, [8, 1, 12, 11])
    nested_kernel[(1,)](out, (b, (5, None, a, tl.constexpr(4)), 9))   # other values, types
    np.testing.assert_array_equal(out, [12, 5, 8, 13])


class Tile(NamedTuple):
    ptr: object
    shape: tuple
    stride: tuple


@tilejit.jit
def scale_rows(Src, Dst, k, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < Src.shape[0]) & (c < Src.shape[1])
    x = tl.load(Src.ptr + r * Src.stride[0] + c * Src.stride[1], mask=mask, other=0.0)
    tl.store(Dst.ptr + r * Dst.stride[0] + c * Dst.stride[1], x * k, mask=mask)


def test_namedtuple_argument(backend):
    src = np.arange(30, dtype=np.float32).reshape(5, 6)
    dst = np.zeros((5, 6), np.float32)
    isz = src.itemsize
    scale_rows[(1,)](Tile(src, src.shape, tuple(s // isz for s in src.strides)),
                     Tile(dst, dst.shape, tuple(s // isz for s in dst.strides)), 3.0, BLOCK=8)
    np.testing.assert_array_equal(dst, src * 3)


@tilejit.jit
def tuple_ops_kernel(Out):
    t = tl.tuple((4, 5)) + (6, 7)
    for i in tl.static_range(4):
        tl.store(Out + i, t[i])
    tl.store(Out + 4, tl.tuple((1, 2)) == (1, 2))
    tl.store(Out + 5, tl.tuple((1, 2)) == (1, 3))
    tl.store(Out + 6, sum([i * 10 for i in range(4) if i != 2]))


def test_tl_tuple_and_comprehensions(backend):
    out = np.zeros(7, np.int32)
    tuple_ops_kernel[(1,)](out)
    np.testing.assert_array_equal(out, [4, 5, 6, 7, 1, 0, 40])


@tilejit.jit
def runtime_if_in_comprehension(Out, values):
    t = [v for v in values if v > 0]
    tl.store(Out, t[0])


def test_comprehension_rejects_a_runtime_condition():
    with pytest.raises(tilejit.CompilationError, match="compile-time condition"):
        runtime_if_in_comprehension[(1,)](np.zeros(1, np.int32), (3, 5))
