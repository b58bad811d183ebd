"""Triton language behaviours its own tests rely on (Triton 3.6 test_core.py): shapes
compare equal to lists, a literal bound to a name acts as a typed scalar, ``x.cast``,
``x.item()`` and ``if`` on a one-element tile, rounding toward zero, interleave of
scalars, ``div_rn`` with a number, ``hasattr``/``isinstance`` introspection and ``...``
indexing.  Every backend, against numpy."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import CompilationError


# ------------------------------------------------------------------ shapes compare as lists
@tilejit.jit
def shape_checks(out_ptr, BLOCK: tl.constexpr):
    x = tl.arange(0, BLOCK)
    tl.static_assert(x.shape == [BLOCK])
    tl.static_assert(x[None, :].shape == [1, BLOCK])
    tl.static_assert(x[:, None].shape == (BLOCK, 1))
    tl.static_assert(tl.sum(x, 0).shape == [])
    d = tl.make_tensor_descriptor(out_ptr, [BLOCK], [1], [BLOCK])
    tl.static_assert(d.block_shape == [BLOCK])
    tl.static_assert(out_ptr[None, None, :].shape == [1, 1])    # a ':' past the last dim is ignored
    facts = (x.shape == [BLOCK], x.shape != [BLOCK], x.shape == [BLOCK, 1], [BLOCK] == x.shape,
             x[None, :].shape == [1, BLOCK], d.block_shape == [BLOCK])
    for i in tl.static_range(len(facts)):
        tl.store(out_ptr + i, facts[i])


def test_shape_equals_list(backend):
    out = np.full(8, -1, np.int32)
    shape_checks[(1,)](out, BLOCK=8)
    np.testing.assert_array_equal(out[:6], [1, 0, 0, 1, 1, 1])


# ------------------------------------------------------------------ literals are typed scalars
@tilejit.jit
def literal_types(out_i_ptr, out_f_ptr, out_h_ptr, BLOCK: tl.constexpr):
    value = 1
    big = 2**40
    wide = 1e50
    half = 2.5
    tl.static_assert(value.dtype == tl.int32)
    tl.static_assert(big.dtype == tl.int64)
    tl.static_assert(wide.dtype == tl.float64)
    tl.static_assert(half.dtype == tl.float32)
    offs = tl.arange(0, BLOCK)
    tl.store(out_i_ptr + offs, tl.full([BLOCK], value, dtype=value.dtype) + offs)
    tl.store(out_f_ptr + offs, half.to(tl.float64) * offs)
    tl.store(out_h_ptr + offs, half.cast(tl.float16) + offs.to(tl.float16))
    tl.store(out_i_ptr.to(tl.pointer_type(big.dtype)) + BLOCK // 4, big)   # int32 slots 4, 5


def test_literal_has_dtype_and_to(backend):
    n = 8
    oi = np.zeros(n, np.int32)
    of = np.zeros(n, np.float64)
    oh = np.zeros(n, np.float16)
    literal_types[(1,)](oi, of, oh, BLOCK=n)
    np.testing.assert_array_equal(oi[:n // 2], np.arange(n // 2) + 1)
    assert oi[n // 2:].view(np.int64)[0] == 2**40 and oi[n // 2 + 2] == n // 2 + 3
    np.testing.assert_array_equal(of, 2.5 * np.arange(n))
    np.testing.assert_array_equal(oh, (2.5 + np.arange(n)).astype(np.float16))


@tilejit.jit
def literal_promotion(x_ptr, h_ptr, out_ptr, outh_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)                  # int8
    h = tl.load(h_ptr + offs)                  # fp16
    n = 100
    scale = 0.1
    tl.static_assert((x * n).dtype == tl.int32)        # a named number is an int32 scalar
    tl.static_assert((x * 100).dtype == tl.int8)       # an unnamed one takes x's type
    tl.static_assert((h * scale).dtype == tl.float32)
    tl.static_assert(tl.arange(0, n).shape == [n])     # and it still sizes tiles
    tl.store(out_ptr + offs, x * n)
    tl.store(outh_ptr + offs, h * scale)


def test_named_literal_promotes_like_triton(backend, rng):
    n = 32
    x = rng.integers(-128, 128, n).astype(np.int8)
    h = rng.standard_normal(n).astype(np.float16)
    out, outh = np.zeros(n, np.int32), np.zeros(n, np.float32)
    literal_promotion[(1,)](x, h, out, outh, BLOCK=n)
    np.testing.assert_array_equal(out, x.astype(np.int32) * 100)
    np.testing.assert_array_equal(outh, h.astype(np.float32) * np.float32(0.1))


@tilejit.jit
def same_number_both_paths(out_ptr, flag, N: tl.constexpr):
    if flag > 0:
        n = 4
    else:
        n = N
    tl.store(out_ptr + tl.arange(0, n), tl.arange(0, n) * flag)   # n stays a compile-time 4


def test_named_number_equal_on_both_paths_stays_static(backend):
    out = np.zeros(4, np.int32)
    same_number_both_paths[(1,)](out, 3, N=4)
    np.testing.assert_array_equal(out, np.arange(4) * 3)


# ------------------------------------------------------------------ cast, bitcast, rounding
@tilejit.jit
def cast_kernel(x_ptr, h_ptr, hz_ptr, bz_ptr, bits_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(h_ptr + offs, x.cast(tl.float16))
    tl.store(hz_ptr + offs, x.cast(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(bz_ptr + offs, tl.cast(x, tl.bfloat16, fp_downcast_rounding="rtz").to(tl.int16, bitcast=True))
    tl.store(bits_ptr + offs, x.cast(tl.int32, bitcast=True))


def _fp16_toward_zero(x):
    """Round each fp32 toward zero to fp16: the finite fp16 of largest magnitude not
    above |x| (from the table of every non-negative finite fp16)."""
    table = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mag = np.abs(x.astype(np.float64))
    idx = np.searchsorted(table, mag, side="right") - 1
    out = table[idx] * np.sign(x)
    out[np.isinf(x)] = x[np.isinf(x)]
    return out.astype(np.float16)


def test_cast_method_and_toward_zero(backend, rng):
    n = 64
    x = (rng.standard_normal(n) * np.logspace(-9, 6, n)).astype(np.float32)
    x[:4] = [70000.0, -1e9, np.inf, -np.inf]       # overflow rounds to the largest finite
    x[4:6] = [2.0 ** -24 * 0.75, -(2.0 ** -20)]     # subnormal fp16 results
    h, hz = np.zeros(n, np.float16), np.zeros(n, np.float16)
    bz, bits = np.zeros(n, np.int16), np.zeros(n, np.int32)
    cast_kernel[(1,)](x, h, hz, bz, bits, BLOCK=n)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(h, x.astype(np.float16))
    np.testing.assert_array_equal(hz, _fp16_toward_zero(x))
    want_bf16 = (x.view(np.uint32) >> 16).astype(np.uint16).view(np.int16)   # truncation
    np.testing.assert_array_equal(bz, want_bf16)
    np.testing.assert_array_equal(bits, x.view(np.int32))


@tilejit.jit
def bad_rounding(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, x.to(tl.float64, fp_downcast_rounding="rtz").to(tl.float32))


def test_rounding_only_for_downcasts(backend):
    with pytest.raises(CompilationError, match="only for truncating fp conversions"):
        bad_rounding[(1,)](np.zeros(1, np.float32))


# ------------------------------------------------------------------ item() and if on a 1-element tile
@tilejit.jit
def unsplat_kernel(x_ptr, EXPLICIT: tl.constexpr):
    condition = tl.load(x_ptr + tl.arange(0, 1)) > 42
    if EXPLICIT:
        condition = condition.item()
        tl.static_assert(condition.shape == [])
    if condition:
        tl.store(x_ptr, 42)


@pytest.mark.parametrize("explicit", [False, True])
def test_item_and_if_on_one_element_tile(backend, explicit):
    for start, want in ((41, 41), (43, 42)):
        x = np.array([start], np.int32)
        unsplat_kernel[(1,)](x, explicit)
        assert x[0] == want


@tilejit.jit
def if_on_tile(x_ptr):
    if tl.load(x_ptr + tl.arange(0, 2)) > 0:
        tl.store(x_ptr, 1)


def test_if_on_larger_tile_is_an_error(backend):
    with pytest.raises(CompilationError, match="condition must be a scalar"):
        if_on_tile[(1,)](np.zeros(2, np.int32))


# ------------------------------------------------------------------ interleave, div_rn, introspection, ...
@tilejit.jit
def misc_kernel(a, b, z_ptr, x_ptr, q_ptr, e_ptr, BLOCK: tl.constexpr):
    z = tl.interleave(a, b)
    tl.static_assert(z.shape == [2])
    tl.store(z_ptr + tl.arange(0, 2), z)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(q_ptr + offs, tl.math.div_rn(x, 3) + tl.math.div_rn(1.0, x))
    e = x[None, ..., None]
    tl.static_assert(e.shape == [1, BLOCK, 1])
    tl.store(e_ptr + offs[None, :, None], e + x[..., None, None].reshape(1, BLOCK, 1))


def test_interleave_scalars_div_rn_number_and_ellipsis(backend, rng):
    n = 16
    x = rng.uniform(0.5, 4.0, n).astype(np.float32)
    z, q, e = np.zeros(2, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    misc_kernel[(1,)](10, 20, z, x, q, e, BLOCK=n)
    np.testing.assert_array_equal(z, [10, 20])
    want = (x / np.float32(3)) + (np.float32(1) / x)     # each division correctly rounded in fp32
    np.testing.assert_array_equal(q, want)
    np.testing.assert_array_equal(e, 2 * x)


@tilejit.jit
def introspect(x):
    if (x is not None) and hasattr(x, "dtype") and isinstance(x.dtype, tl.pointer_type) \
            and (x.dtype.element_ty == tl.int32) and (tl.load(x) > 42):
        tl.store(x, 42)


def test_hasattr_and_isinstance_on_arguments(backend):
    introspect[(1,)](None)
    introspect[(1,)](2)
    for value, dtype, want in ((100000, np.int32, 42), (7, np.int32, 7), (100000, np.int64, 100000),
                               (84.0, np.float32, 84.0)):
        x = np.array([value], dtype)
        introspect[(1,)](x)
        assert x[0] == want


# ------------------------------------------------------------------ tl.const pointers
@tilejit.jit
def pass_either(a, b, choose_b):
    if choose_b:
        return b
    return a


@tilejit.jit
def const_copy(in_ptr: tl.const, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, mask=offs < n, other=-1.0) * 2)


def test_const_pointer_reads(backend, rng):
    x = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    const_copy[(1,)](x, out, 12, BLOCK=16)
    np.testing.assert_array_equal(out, np.where(np.arange(16) < 12, x, -1.0) * 2)


_CONST_BODIES = {
    "store": ("tl.store(c_ptr, 1.0)", "Cannot store to a constant pointer"),
    "atomic": ("tl.atomic_add(c_ptr, 1.0)", "Cannot store to a constant pointer"),
    "if": ("if flag:\n        p = c_ptr\n    else:\n        p = out_ptr\n    tl.store(p, 1.0)",
           "Mismatched type for p between then block (*kfp32) and else block (*fp32)"),
    "ternary": ("tl.store(c_ptr if flag else out_ptr, 1.0)",
                "Ternary expression with dynamic condition has inconsistent type"),
    "call": ("tl.store(pass_either(out_ptr, c_ptr, flag), 1.0)", "Return type mismatch"),
}


@pytest.mark.parametrize("case", list(_CONST_BODIES))
def test_const_pointer_cannot_be_written(backend, case, tmp_path):
    body, message = _CONST_BODIES[case]
    src = (f"import tilejit\nimport tilejit.language as tl\n\n\n@tilejit.jit\n"
           f"def k(c_ptr: tl.const, out_ptr, flag):\n    {body}\n")
    path = tmp_path / f"const_{case}.py"
    path.write_text(src)
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"const_{case}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.pass_either = pass_either
    buf = np.zeros(1, np.float32)
    with pytest.raises(CompilationError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")) as e:
        mod.k[(1,)](buf, buf, 2)     # not 1: an int equal to 1 is tl.constexpr(1) (the branch folds)
    assert message in e.value.error_message


# ------------------------------------------------------------------ tl.map_elementwise, tl.condition
@tilejit.jit
def compare_scalar(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@tilejit.jit
def divmod_scalar(a, b):
    return a // b, a % b


@tilejit.jit
def divmod_packed(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@tilejit.jit
def rotate4(a0, a1, a2, a3):
    return a1, a2, a3, a0


@tilejit.jit
def safe_ratio(x, y):
    r = 0.0
    if y != 0:
        r = x / y
    return r if r < 100.0 else 100.0


@tilejit.jit
def map_kernel(x_ptr, y_ptr, c_ptr, q_ptr, m_ptr, pq_ptr, pm_ptr, r_ptr, rot_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(c_ptr + offs, tl.map_elementwise(compare_scalar, x, y))
    q, m = tl.map_elementwise(divmod_scalar, x, y)
    tl.store(q_ptr + offs, q)
    tl.store(m_ptr + offs, m)
    pq, pm = tl.map_elementwise(divmod_packed, x, y, pack=2)
    tl.store(rot_ptr + offs, tl.map_elementwise(rotate4, x, pack=4))
    tl.store(pq_ptr + offs, pq)
    tl.store(pm_ptr + offs, pm)
    r = tl.map_elementwise(safe_ratio, x.to(tl.float32), y.to(tl.float32))
    tl.store(r_ptr + offs, r)


def test_map_elementwise(backend, rng):
    n = 64
    x = rng.integers(-50, 50, n).astype(np.int32)
    y = rng.integers(-5, 5, n).astype(np.int32)
    y[:3] = [0, 1, -1]
    x[3] = y[3]
    outs = [np.zeros(n, np.int32) for _ in range(5)] + [np.zeros(n, np.float32), np.zeros(n, np.int32)]
    map_kernel[(1,)](x, y, *outs, BLOCK=n)
    c, q, m, pq, pm, r, rot = outs
    np.testing.assert_array_equal(rot, x.reshape(-1, 4)[:, [1, 2, 3, 0]].ravel())
    np.testing.assert_array_equal(c, np.sign(x - y))
    nz = y != 0                                 # x // 0 is not defined in Triton; compare the rest
    tq = np.trunc(x[nz] / y[nz]).astype(np.int32)  # C division truncates toward zero
    np.testing.assert_array_equal(q[nz], tq)
    np.testing.assert_array_equal(m[nz], x[nz] - tq * y[nz])
    np.testing.assert_array_equal(pq[nz], q[nz])
    np.testing.assert_array_equal(pm[nz], m[nz])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(y != 0, x.astype(np.float32) / y.astype(np.float32), np.float32(0))
    np.testing.assert_array_equal(r, np.minimum(want, np.float32(100.0)))


@tilejit.jit
def store_in_branch(x, out_ptr):
    if x > 0:
        tl.store(out_ptr, x)
    return x


@tilejit.jit
def map_with_store(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(x_ptr + tl.arange(0, 4), tl.map_elementwise(store_in_branch, x, x_ptr))


def test_map_elementwise_rejects_side_effects_in_branches(backend):
    with pytest.raises(CompilationError, match="cannot use tt.store"):
        map_with_store[(1,)](np.zeros(4, np.int32))


@tilejit.jit
def condition_loop(out_ptr, n):
    i = 0
    total = 0
    while tl.condition(i < n, disable_licm=True):
        total += i
        i = i + 1
    for j in tl.range(0, n, disable_licm=True):
        total += j
    tl.store(out_ptr, total)


def test_while_condition(backend):
    out = np.zeros(1, np.int32)
    condition_loop[(1,)](out, 10)
    assert out[0] == 90
