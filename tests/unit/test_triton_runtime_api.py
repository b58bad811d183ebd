"""Triton's runtime API as tilejit provides it: reinterpret/TensorWrapper, the TritonError
hierarchy, must_use_result, compile(ASTSource(...)), JITFunction._unsafe_update_src,
tl.str_to_ty.  Kernels run under every backend (the ``backend`` fixture)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.compat.driver import OutOfResources
from tilejit.errors import CompilationError, CompileTimeAssertionFailure
from tilejit.errors import InterpreterError, OutOfBoundsError
from tilejit.compat.triton_api.compiler import ASTSource, compile as triton_compile
from tilejit.runtime.jit import type_canonicalisation_dict


@tilejit.jit
def div3_kernel(X, Y, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(Y + offs, tl.load(X + offs) // 3)


def test_reinterpret_uint8_through_int8_storage(backend):
    a = np.array([250, 7, 130, 3, 255, 128, 1, 200], dtype=np.uint8)
    x = tilejit.reinterpret(a.view(np.int8), tl.uint8)      # int8 storage read as uint8
    y = tilejit.reinterpret(np.zeros(8, np.int8), tl.uint8)
    assert isinstance(x, tilejit.TensorWrapper) and x.dtype is tl.uint8
    div3_kernel[(1,)](x, y, N=8)
    np.testing.assert_array_equal(y.base.view(np.uint8), a // 3)   # signed // would differ


@tilejit.jit
def copy4_kernel(X, Y):
    offs = tl.arange(0, 4)
    tl.store(Y + offs, tl.load(X + offs))


def test_reinterpret_torch_tensor(backend):
    torch = pytest.importorskip("torch", reason="torch not installed")
    a = np.array([40000, 3, 65535, 12345], dtype=np.uint16)
    x = tilejit.reinterpret(torch.tensor(a.view(np.int16)), tl.uint16)
    y = tilejit.reinterpret(torch.zeros(4, dtype=torch.int16), tl.uint16)
    div3_kernel[(1,)](x, y, N=4)
    np.testing.assert_array_equal(y.base.numpy().view(np.uint16), a // 3)
    assert tilejit.reinterpret(y, torch.int16) is y.base       # back to its own dtype
    f = torch.tensor([1.5, -2.0, 3.25, 0.0], dtype=torch.float16)
    h = torch.zeros(4, dtype=torch.float16)
    copy4_kernel[(1,)](tilejit.reinterpret(f, torch.int16), tilejit.reinterpret(h, torch.int16))
    assert torch.equal(h, f)                                   # bits copied as int16
    assert x.shape == (4,) and x.element_size() == 2 and x.data_ptr() == x.base.data_ptr()


def test_reinterpret_rejects_size_mismatch_and_non_tensors():
    y = tilejit.reinterpret(np.zeros(4, np.int8), tl.float32)
    with pytest.raises(TypeError, match="1-byte elements as fp32"):
        div3_kernel[(1,)](y, y, N=4)
    with pytest.raises(TypeError, match="cannot reinterpret"):
        tilejit.reinterpret([1, 2], tl.int8)


def test_error_hierarchy():
    for cls in (CompilationError, CompileTimeAssertionFailure, InterpreterError,
                OutOfBoundsError, OutOfResources):
        assert issubclass(cls, tilejit.TritonError), cls
    assert tilejit.InterpreterError is InterpreterError


@tilejit.jit
def bad_name_kernel(X):
    tl.store(X, undefined_name)          # noqa: F821 - a compile error


def test_compile_error_is_a_triton_error(backend):
    with pytest.raises(tilejit.TritonError, match="undefined_name"):
        bad_name_kernel[(1,)](np.zeros(4, np.int32))


@tilejit.must_use_result("Assign it.")
@tilejit.jit
def cube(x):
    return x * x * x


@tilejit.jit
def unused_result_kernel():
    a = tl.full((16,), 2.0, tl.float32)
    cube(a)


@tilejit.jit
def used_result_kernel(Out):
    a = tl.full((16,), 2.0, tl.float32)
    a = cube(a)
    tl.store(Out + tl.arange(0, 16), a)


def test_must_use_result(backend):
    with pytest.raises(CompilationError, match="The result of cube is not being used. Assign it"):
        triton_compile(ASTSource(fn=unused_result_kernel, signature={}, constexprs={}))
    out = np.zeros(16, np.float32)
    used_result_kernel[(1,)](out)
    np.testing.assert_array_equal(out, np.full(16, 8.0, np.float32))


@tilejit.jit
def static_assert_kernel(N: tl.constexpr):
    tl.static_assert(N > 2, "N must exceed 2")


def test_compile_astsource_constexpr():
    k = triton_compile(ASTSource(fn=static_assert_kernel, signature={"N": "constexpr"},
                                  constexprs={"N": 4}))
    assert "ttir" in k.asm
    with pytest.raises(CompileTimeAssertionFailure, match="N must exceed 2"):
        triton_compile(ASTSource(fn=static_assert_kernel, signature={"N": "constexpr"},
                                  constexprs={(0,): 1}))


@tilejit.jit
def template_kernel(X):
    tl.store(X + tl.arange(0, 4), tl.arange(0, 4) * GENERATE_HERE)   # noqa: F821


def test_unsafe_update_src_recompiles(backend):
    k = tilejit.JITFunction(template_kernel.fn)
    k._unsafe_update_src(k.src.replace("GENERATE_HERE", "3"))
    x = np.zeros(4, np.int32)
    k[(1,)](x)
    np.testing.assert_array_equal(x, [0, 3, 6, 9])
    k._unsafe_update_src(k.src.replace("* 3", "* 5"))
    k[(1,)](x)
    np.testing.assert_array_equal(x, [0, 5, 10, 15])


def test_str_to_ty():
    assert tl.str_to_ty(type_canonicalisation_dict["uint16"], None) is tl.uint16
    assert tl.str_to_ty(type_canonicalisation_dict["bool"]) is tl.int1
    assert tl.str_to_ty("*fp32") == tl.pointer_type(tl.float32)
    assert tl.str_to_ty("*kfp16") == tl.pointer_type(tl.float16)


@tilejit.jit
def empty_kernel(dst):
    pass


def test_num_warps_must_be_a_power_of_two(backend):
    dst = np.zeros(4, np.float32)
    for bad in (3, 0, 6, 96):
        with pytest.raises(AssertionError, match=f"empty_kernel: num_warps={bad} must be a power of 2"):
            empty_kernel.warmup(dst, grid=(1,), num_warps=bad)
        with pytest.raises(ValueError, match="must be a power of 2"):
            empty_kernel[(1,)](dst, num_warps=bad)
    for ok in (1, 2, 4, 8):
        empty_kernel.warmup(dst, grid=(1,), num_warps=ok)
        empty_kernel[(1,)](dst, num_warps=ok)
    if backend == "cuda":                # a CUDA block holds 32 warps at most
        with pytest.raises(ValueError, match="num_warps=64 is more than a CUDA block holds"):
            empty_kernel[(1,)](dst, num_warps=64)
    else:                                # Triton's print test uses 128 // warp size 1 on a CPU
        empty_kernel[(1,)](dst, num_warps=128)


def test_allocation_module_under_the_alias():
    from tilejit import compat
    compat.install_triton_alias()
    try:
        import triton
        from triton.runtime._allocation import NullAllocator
        triton.set_allocator(NullAllocator())          # the default, restored
        with pytest.raises(RuntimeError, match="need an allocator"):
            NullAllocator()(128, 16, None)
    finally:
        compat.uninstall_triton_alias()


def test_knobs_ptxas_version_is_the_real_one():
    import shutil
    import subprocess
    from tilejit import compat
    from tilejit.backends.cuda.target import find_ptxas
    if find_ptxas() is None:
        pytest.skip("ptxas not installed")
    compat.install_triton_alias()
    try:
        from triton import knobs
        out = subprocess.run([find_ptxas(), "--version"], capture_output=True, text=True).stdout
        assert f"release {knobs.nvidia.ptxas.version}," in out
        assert knobs.nvidia.ptxas.path == find_ptxas() and shutil.which(knobs.nvidia.ptxas.path)
        with pytest.raises(AttributeError, match="does not support `triton.knobs.nvidia.cuobjdump`"):
            knobs.nvidia.cuobjdump
    finally:
        compat.uninstall_triton_alias()
