"""Launch-time behaviour end to end: binding errors, grid callables with meta,
out-of-bounds accesses reported by the interpreter."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl


@tilejit.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@tilejit.jit
def unmasked_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, v)


def test_out_of_bounds_names_line_and_program(backend):
    if backend != "interpreter":
        pytest.skip("bounds checking is the interpreter's job")
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(128, np.float32)
    with pytest.raises(tilejit.OutOfBoundsError) as ei:
        unmasked_copy[(4,)](x, y, BLOCK=32)    # program 3 reads x[96..127]
    e = ei.value
    msg = str(e)
    line = unmasked_copy.first_line + 3         # the tl.load line
    assert e.program_id == (3, 0, 0) and e.lane == 4
    assert f"test_launch_errors.py:{line}" in msg
    assert "unmasked_copy" in msg and "program (3, 0, 0)" in msg and "lane 4" in msg
    assert "'x_ptr'" in msg and "past its end" in msg
    assert msg.rstrip().endswith("v = tl.load(x_ptr + offs)")   # the source line is shown
    assert (y[:96] == x[:96]).all()             # earlier programs completed


def test_wrong_argument_count(backend):
    x = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"copy_kernel\(\) missing required argument 'n'"):
        copy_kernel[(1,)](x, x, BLOCK=4)
    with pytest.raises(TypeError, match=r"copy_kernel\(\) takes 4 arguments but 5 were given"):
        copy_kernel[(1,)](x, x, 4, 4, 5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOK'"):
        copy_kernel[(1,)](x, x, 4, BLOK=4)


def test_unsupported_argument_type(backend):
    x = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="argument 'n' has unsupported type builtins.list"):
        copy_kernel[(1,)](x, x, [4], BLOCK=4)
    with pytest.raises(TypeError, match="unsupported array dtype"):
        copy_kernel[(1,)](x.astype(np.complex64), x, 4, BLOCK=4)


def test_bad_grid(backend):
    x = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="grid"):
        copy_kernel[(1, 1, 1, 1)](x, x, 4, BLOCK=4)
    with pytest.raises(TypeError, match="grid"):
        copy_kernel[lambda meta: "nope"](x, x, 4, BLOCK=4)


def test_grid_callable_receives_meta(backend, rng):
    x = rng.random(1000, dtype=np.float32)
    y = np.zeros_like(x)
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (tilejit.cdiv(meta["n"], meta["BLOCK"]),)
    copy_kernel[grid](x, y, x.size, BLOCK=128, num_warps=2, num_stages=3)
    np.testing.assert_array_equal(x, y)
    meta = seen[-1]
    assert meta["BLOCK"] == 128 and meta["n"] == 1000 and meta["x_ptr"] is x
    assert meta["num_warps"] == 2 and meta["num_stages"] == 3


def test_launch_options_and_cache(backend, rng):
    x = rng.random(64, dtype=np.float32)
    y = np.zeros_like(x)
    copy_kernel[(2,)](x, y, 64, BLOCK=32)
    k1 = copy_kernel[(2,)](x, y, 64, BLOCK=32)
    k2 = copy_kernel[(2,)](x, y, 64, BLOCK=32, num_warps=8)
    assert k1 is copy_kernel[(2,)](x, y, 64, BLOCK=32)     # cached
    assert k1 is not k2
    np.testing.assert_array_equal(x, y)


def test_outputs_written_in_place_through_views(backend):
    """Non-contiguous arguments pass their base pointer, as in Triton."""
    x = np.arange(64, dtype=np.float32)
    y = np.zeros((2, 64), np.float32)
    copy_kernel[(1,)](x, y[1], 64, BLOCK=64)            # a row view: written in place
    np.testing.assert_array_equal(y[1], x)
    assert not y[0].any()


def test_torch_cpu_tensors(backend):
    torch = pytest.importorskip("torch")
    x = torch.arange(100, dtype=torch.float32)
    y = torch.zeros(100, dtype=torch.float32)
    copy_kernel[(4,)](x, y, 100, BLOCK=32)
    assert torch.equal(x, y)
    xb = torch.randn(2, 64).to(torch.bfloat16)
    yb = torch.zeros(64, dtype=torch.bfloat16)
    copy_kernel[(1,)](xb[1], yb, 64, BLOCK=64)           # bf16 pointer, a row view
    assert torch.equal(xb[1], yb)


@tilejit.jit
def axpy_opt(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * alpha
    if y_ptr is not None:
        v += tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, v, mask=m)


def test_none_argument_is_a_constexpr_and_defaults(backend, rng):
    x = rng.random(100, dtype=np.float32)
    y = rng.random(100, dtype=np.float32)
    out = np.zeros_like(x)
    axpy_opt[(2,)](x, None, out, 100, 2.0)
    np.testing.assert_array_equal(out, x * np.float32(2.0))
    axpy_opt[(4,)](x, y, out, n=100, alpha=3.0, BLOCK=32, enable_fp_fusion=False)  # two roundings, as numpy
    np.testing.assert_array_equal(out, x * np.float32(3.0) + y)
    assert sum(1 for key in axpy_opt.cache if key[-1] == backend) == 2   # one per specialization


def test_scalar_argument_widths(backend):
    """i64 and u64 scalar arguments keep their values (beyond int32)."""
    x = np.zeros(1, np.int64)
    out = np.zeros(64, np.int64)
    axpy_opt[(1,)](x + 1, None, out, 1, 2**40)          # alpha: i64 -> int64 * int64
    assert out[0] == 2**40


@tilejit.jit
def _fill_with_param(x_ptr, num_stages: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, 4), tl.full((4,), num_stages, tl.int32))


def test_kernel_parameter_named_like_a_launch_option(backend):
    """Triton's softmax tutorial names a constexpr `num_stages`: it must reach the kernel."""
    out = np.zeros(4, np.int32)
    _fill_with_param[(1,)](out, num_stages=3)
    np.testing.assert_array_equal(out, [3, 3, 3, 3])
