"""Triton's host API under the alias, as TorchInductor drives it: ``triton.compile(
ASTSource(...), target=GPUTarget(...), options=...)`` and the compiled kernel's
launcher convention, on every backend (numpy arrays; on cuda, torch CUDA tensors as
Inductor passes them: a kernel compiled for a GPU target takes device arrays, as Triton's)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit import compat


@tilejit.jit
def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + y, mask=mask)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "alpha": "fp32",
       "BLOCK": "constexpr"}


@pytest.fixture
def triton(backend):
    compat.install_triton_alias()
    import triton
    yield triton
    compat.uninstall_triton_alias()


def _compile(triton, backend, attrs=None, block=64):
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource
    target = GPUTarget("cuda", 90, 32) if backend == "cuda" else GPUTarget("cpu", "", 32)
    src = ASTSource(scaled_add, SIG, {"BLOCK": block}, attrs or {})
    return triton.compile(src, target=target, options={"num_warps": 4, "num_stages": 1, "debug": True})


def _device(backend):
    """numpy array -> the array the backend's kernels take (a torch CUDA tensor on cuda)."""
    if backend != "cuda":
        return lambda a: a
    torch = pytest.importorskip("torch", reason="the cuda case passes torch CUDA tensors")
    return lambda a: torch.from_numpy(np.ascontiguousarray(a)).to("cuda")


def _host(a):
    return a.cpu().numpy() if hasattr(a, "cpu") else a


def _arrays(n, rng, backend):
    """(x, y, out) on the backend's device and (x, y) on the host."""
    dev = _device(backend)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return (dev(x), dev(y), dev(np.zeros(n, np.float32))), (x, y)


def test_compile_and_run_as_inductor_does(triton, backend, rng):
    k = _compile(triton, backend, attrs={(0,): [["tt.divisibility", 16]]})
    k._init_handles()
    assert k.metadata.num_warps == 4 and k.metadata.name == "scaled_add" and k.hash
    assert k.metadata.shared >= 0 and "ttir" in k.asm
    if backend != "cuda":
        assert (k.n_regs, k.n_spills) == (0, 0)      # the host's documented defaults
    (dx, dy, out), (x, y) = _arrays(1000, rng, backend)
    # Inductor's launcher: grid, stream, function, metadata, launch metadata, hooks, every arg
    k.run(16, 1, 1, 0, k.function, k.packed_metadata, None, None, None, dx, dy, out, 1000, 0.5, 64)
    np.testing.assert_allclose(_host(out), x * np.float32(0.5) + y, rtol=1e-6)
    out[:] = 0
    k[(16,)](dx, dy, out, 1000, 2.0, 64)              # Triton's kernel[grid](*args)
    np.testing.assert_allclose(_host(out), x * np.float32(2.0) + y, rtol=1e-6)


def test_launch_hooks_see_every_launch(triton, backend, rng):
    from triton import knobs
    seen = []
    knobs.runtime.launch_enter_hook = lambda meta: seen.append(("enter", meta["name"]))
    knobs.runtime.launch_exit_hook = lambda meta: seen.append(("exit", meta["name"]))
    try:
        k = _compile(triton, backend)
        (x, y, out), _ = _arrays(100, rng, backend)
        k[(2,)](x, y, out, 100, 1.0, 64)
    finally:
        knobs.runtime.launch_enter_hook = knobs.runtime.launch_exit_hook = None
    assert seen == [("enter", "scaled_add"), ("exit", "scaled_add")]
    assert k.launch_metadata((1, 1, 1), 0) is None     # no hook: nothing computed


def test_launch_checks_the_compiled_signature(triton, backend, rng):
    k = _compile(triton, backend, attrs={(0,): [["tt.divisibility", 16]]})
    (x, y, out), (_, hy) = _arrays(64, rng, backend)
    dev = _device(backend)
    with pytest.raises(TypeError, match=r"scaled_add: argument 'y_ptr' has dtype \S*float64 .* \*fp32"):
        k[(1,)](x, dev(hy.astype(np.float64)), out, 64, 1.0, 64)
    with pytest.raises(ValueError, match=r"scaled_add: argument 'x_ptr' .* divisible by 16"):
        k[(1,)](dev(np.zeros(65, np.float32))[1:], y, out, 64, 1.0, 64)
    with pytest.raises(ValueError, match=r"scaled_add: argument 'n' = 4294967296 does not fit i32"):
        k[(1,)](x, y, out, 2 ** 32, 1.0, 64)


def test_backends_drivers_and_versions(triton, backend):
    import triton.backends
    from triton.compiler.compiler import make_backend
    from triton.runtime import driver
    from triton.runtime.cache import triton_key
    assert triton.__version__.startswith("3.6.0+tilejit")
    assert set(triton.backends.backends) >= {"cpu", "nvidia"}
    cpu = triton.backends.backends["cpu"]
    assert cpu.driver.is_active()
    driver.set_active(cpu.driver())
    try:
        assert isinstance(driver.active, cpu.driver)
        assert triton.runtime.driver.active is driver.active
        t = driver.active.get_current_target()
        assert t.backend in ("cpu", "interpreter")
        h = make_backend(t).hash()
        assert triton_key() in h and h == make_backend(t).hash()
        assert make_backend(triton.backends.compiler.GPUTarget("cuda", 90, 32)).hash() != h
        assert make_backend(t).parse_options({"num_warps": 8, "unknown": 1}).num_warps == 8
    finally:
        driver.reset_active()
    assert [p.num for p in scaled_add.params] == list(range(6))


def test_unsupported_names_are_named(triton, backend):
    from triton import knobs
    from triton.runtime.interpreter import InterpretedFunction
    with pytest.raises(compat.UnsupportedTritonFeature, match=r"`triton.knobs.runtime.no_such_knob`"):
        knobs.runtime.no_such_knob
    with pytest.raises(compat.UnsupportedTritonFeature, match="InterpretedFunction"):
        InterpretedFunction(scaled_add)
    with pytest.raises(compat.UnsupportedTritonFeature, match="launch_cooperative_grid"):
        triton.compile(__import__("triton.compiler.compiler").compiler.compiler.ASTSource(
            scaled_add, SIG, {"BLOCK": 64}), options={"launch_cooperative_grid": True})


def test_cuda_target_compiles_to_ptx_without_a_gpu(triton, backend):
    if backend != "cpu":
        pytest.skip("one PTX compile is enough")
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource
    k = triton.compile(ASTSource(scaled_add, SIG, {"BLOCK": 128}), target=GPUTarget("cuda", 80, 32),
                       options={"num_warps": 2})
    assert ".entry scaled_add" in k.asm["ptx"] and k.metadata.num_warps == 2
