"""TILEJIT_PTX_CHECK (tilejit/runtime/ptx_check.py): kernels compiled for a host backend
are compiled for CUDA too, their PTX assembled by ptxas where installed; a CUDA
lowering that breaks, or PTX that ptxas rejects, fails the launch with an error naming
the kernel and the architecture; a user-facing CompilationError of the CUDA backend is
accepted.  No GPU needed."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import backend as cuda_backend
from tilejit.backends.cuda import target as tgt
from tilejit.errors import CompilationError
from tilejit.runtime import ptx_check
from tilejit.runtime.options import use_options


@tilejit.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, alpha * x + tl.load(y_ptr + offs, mask=m), mask=m)


def _launch(n=300, block=128):
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    scale_add[(tilejit.cdiv(n, block),)](x, y, out, n, 2.5, BLOCK=block)
    np.testing.assert_allclose(out, 2.5 * x.astype(np.float64) + y, rtol=1e-6)


@pytest.mark.parametrize("text,archs", [("80,90", (80, 90)), ("cuda:90", (90,)), ("sm_80; 90", (80, 90)),
                                        ("0", ()), ("off", ()), ("", ())])
def test_parse_archs(text, archs):
    assert ptx_check.parse_archs(text) == archs


def test_parse_archs_rejects_other_text():
    with pytest.raises(ValueError, match="TILEJIT_PTX_CHECK"):
        ptx_check.parse_archs("hopper")


def test_each_new_specialization_is_compiled_for_every_arch(monkeypatch, tmp_path):
    seen = []
    real = ptx_check.check_cuda_ptx

    def spy(build, options, name):
        texts = real(build, options, name)
        seen.append((name, texts))
        return texts
    monkeypatch.setattr(ptx_check, "check_cuda_ptx", spy)
    with use_options(backend="cpu", ptx_check="80,90", cache_dir=str(tmp_path)):
        _launch(block=128)
        _launch(block=128)          # cached: not compiled (nor checked) again
        _launch(block=64)
    assert [name for name, _ in seen] == ["scale_add", "scale_add"]
    for _, texts in seen:
        assert ".target sm_80" in texts[0] and ".target sm_90" in texts[1]


def test_off_by_default_outside_the_tests(monkeypatch, tmp_path):
    called = []
    monkeypatch.setattr(ptx_check, "check_cuda_ptx", lambda *a: called.append(a))
    with use_options(backend="cpu", ptx_check="", cache_dir=str(tmp_path)):
        _launch(block=32)
    assert called == []


def test_internal_error_names_kernel_and_arch(monkeypatch, tmp_path):
    def broken(self, func, options=None):
        raise KeyError("a lowering bug")
    monkeypatch.setattr(cuda_backend.CudaBackend, "compile", broken)
    with use_options(backend="cpu", ptx_check="90", cache_dir=str(tmp_path)):
        with pytest.raises(ptx_check.PtxCheckError, match=r"scale_add: .*sm_90 .*KeyError"):
            _launch(block=256)


def test_user_limit_is_accepted(monkeypatch, tmp_path):
    def limited(self, func, options=None):
        raise CompilationError("needs more shared memory than sm_80 has")
    monkeypatch.setattr(cuda_backend.CudaBackend, "compile", limited)
    with use_options(backend="cpu", ptx_check="80", cache_dir=str(tmp_path)):
        _launch(block=512)          # the CPU result is still checked


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
def test_ptxas_rejection_fails_the_launch(monkeypatch, tmp_path):
    real = cuda_backend.CudaBackend.compile

    def corrupt(self, func, options=None):
        kernel = real(self, func, options)
        kernel.asm["ptx"] = kernel.asm["ptx"].replace("ret;", "ret_not_an_instruction;")
        return kernel
    monkeypatch.setattr(cuda_backend.CudaBackend, "compile", corrupt)
    with use_options(backend="cpu", ptx_check="80", cache_dir=str(tmp_path)):
        with pytest.raises(ptx_check.PtxCheckError, match=r"scale_add: ptxas rejected the PTX for sm_80"):
            _launch(block=16)


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
def test_accepted_ptx_is_not_assembled_again(monkeypatch, tmp_path):
    calls = []
    real = tgt.ptxas
    monkeypatch.setattr(tgt, "ptxas", lambda ptx, arch=90, verbose=False: calls.append(arch) or real(ptx, arch))
    with use_options(backend="cpu", ptx_check="80", cache_dir=str(tmp_path)):
        scale_add.cache.clear()
        _launch(block=8)
        scale_add.cache.clear()     # compiled again (a new process would): same PTX, ptxas not run
        _launch(block=8)
        _launch(block=4)            # other PTX: assembled
    assert calls == [80, 80]
