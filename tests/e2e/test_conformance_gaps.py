"""Language features Triton's own tests use (found by scripts/conformance.py): dtypes by
name, namedtuples built inside a kernel, tl.where's warning, knobs scopes, and the
checks Triton makes at compile time; under every backend."""
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import CompilationError


@tilejit.jit
def fill_dtype(Out, DT: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.zeros((BLOCK,), DT)
    tl.store(Out + tl.arange(0, BLOCK), x.to(tl.float32) + 1 + (x.dtype == DT))


def test_dtype_by_name(backend):
    names = tl.dtype.SINT_TYPES + tl.dtype.UINT_TYPES + tl.dtype.STANDARD_FP_TYPES
    assert tl.dtype("fp16") is tl.float16 and tl.dtype("int1") is tl.int1
    for name in names:
        out = np.zeros(8, np.float32)
        fill_dtype[(1,)](out, tl.dtype(name), 8)
        np.testing.assert_array_equal(out, np.full(8, 2.0, np.float32), err_msg=name)


class Span(NamedTuple):
    ptr: object
    n: object
    scale: object


@tilejit.jit
def make_span(ptr, n, scale):
    return Span(scale=scale, ptr=ptr, n=n)


@tilejit.jit
def scaled_copy(Src, Dst, n, BLOCK: tl.constexpr):
    s = make_span(Src, n, 2.5)
    offs = tl.arange(0, BLOCK)
    x = tl.load(s.ptr + offs, mask=offs < s.n, other=0.0)
    tl.store(Dst + offs, x * s.scale, mask=offs < s[1])


def test_namedtuple_built_in_kernel(backend):
    src = np.arange(16, dtype=np.float32)
    dst = np.full(16, -1.0, np.float32)
    scaled_copy[(1,)](src, dst, 11, BLOCK=16)
    np.testing.assert_array_equal(dst, np.where(np.arange(16) < 11, src * 2.5, -1.0))


@tilejit.jit
def where_int(C, X, Out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Out + offs, tl.where(tl.load(C + offs), tl.load(X + offs), -1.0))


def test_where_non_bool_condition_warns(backend):
    c = np.array([0, 3, 0, 1, 255, 0, 7, 0], np.uint32)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with pytest.warns(UserWarning, match="non-boolean condition"):
        where_int[(1,)](c, x, out, BLOCK=8)
    np.testing.assert_array_equal(out, np.where(c != 0, x, -1.0))


@tilejit.jit
def fp8_dot(Out, ACC: tl.constexpr):
    a = tl.full((32, 32), 1.0, tl.float8e5)
    tl.store(Out + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :],
             tl.dot(a, a, max_num_imprecise_acc=ACC))


def test_max_num_imprecise_acc_checked(backend):
    out = np.zeros((32, 32), np.float32)
    fp8_dot[(1,)](out, 32)
    np.testing.assert_array_equal(out, np.full((32, 32), 32.0, np.float32))
    with pytest.raises(CompilationError, match=r"max_num_imprecise_acc \(64\) must be <= K \(32\)"):
        fp8_dot[(1,)](out, 64)


def test_constexpr_in_do_not_specialize_rejected(backend):
    @tilejit.jit(do_not_specialize=["N"])
    def k(Out, N: tl.constexpr):
        tl.store(Out, N)
    with pytest.raises(CompilationError, match="N marked as constexpr and listed in do_not_specialize"):
        k[(1,)](np.zeros(1, np.int32), 5)


def test_knobs_scope_moves_and_restores_the_cache(backend, tmp_path):
    from tilejit.compat.triton_api import knobs
    from tilejit.runtime.cache import default_cache_dir
    before = default_cache_dir()
    with knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = str(tmp_path)
        knobs.runtime.launch_enter_hook = print
        assert default_cache_dir() == str(tmp_path)
    assert default_cache_dir() == before
    assert knobs.runtime.launch_enter_hook is None


@tilejit.jit
def fp8_sum(X, Out):
    tl.store(Out, tl.sum(tl.load(X + tl.arange(0, 8)).to(tl.float8e5), 0).to(tl.float32))


def test_fp8_sum_is_a_clear_error(backend):
    with pytest.raises(CompilationError, match="arithmetic on fp8 is not supported"):
        fp8_sum[(1,)](np.ones(8, np.float32), np.zeros(1, np.float32))


@tilejit.jit
def desc_copy(Src, Dst, BN: tl.constexpr):
    s = tl.make_tensor_descriptor(Src, [8, 64], [64, 1], [8, BN])
    d = tl.make_tensor_descriptor(Dst, [8, 64], [64, 1], [8, BN])
    d.store([0, 0], s.load([0, 0]))


def test_descriptor_block_needs_16_bytes(backend):
    src = np.arange(512, dtype=np.int32).reshape(8, 64)
    dst = np.zeros_like(src)
    desc_copy[(1,)](src, dst, 4)                       # 4 * 4 bytes: the smallest allowed
    np.testing.assert_array_equal(dst[:, :4], src[:, :4])
    assert not dst[:, 4:].any()
    with pytest.raises(CompilationError, match="Descriptor block shape must have at least 16 bytes"):
        desc_copy[(1,)](src, dst, 2)


def _kernel_repr(specialization):
    ones = "_".join(k for k, v in specialization.constants.items() if v == 1)
    return f"named_{specialization.signature['value']}_{ones}_B{specialization.constants['B']}"


@tilejit.jit(repr=_kernel_repr)
def named(value, one, Out, B: tl.constexpr):
    tl.store(Out + tl.arange(0, B), value + one)


def test_jit_repr_names_the_kernel(backend):
    out = np.zeros(4, np.int64)
    h = named.warmup(2**40, 1, out, 4, grid=(1,))
    assert h.name == "named_i64_one_B4"
    named[(1,)](-3, 1, out, 4)
    assert named.warmup(-3, 1, out, 4, grid=(1,)).name == "named_i32_one_B4"
    np.testing.assert_array_equal(out, [-2, -2, -2, -2])


@tilejit.jit
def bool_sums(Out, init, N: tl.constexpr):
    x = tl.full((N, N), init, dtype=tl.int1)
    tl.store(Out, tl.sum(x, dtype=tl.int1).to(tl.int32))          # wraps: modulo 2
    tl.store(Out + 1, tl.sum(x).to(tl.int32))                     # promoted: a count
    tl.store(Out + 2 + tl.arange(0, N), tl.sum(x, axis=1, dtype=tl.int1).to(tl.int32))


@pytest.mark.parametrize("n", [4, 32])
@pytest.mark.parametrize("init", [0, 1])
def test_int1_sum_wraps_modulo_two(backend, n, init):
    # Triton's test_sum_dtype: an int1 sum in int1 is an integer sum modulo 2 (not an or)
    out = np.full(2 + n, -1, np.int32)
    bool_sums[(1,)](out, init, n)
    want = [(init * n * n) % 2, init * n * n] + [(init * n) % 2] * n
    np.testing.assert_array_equal(out, want)
