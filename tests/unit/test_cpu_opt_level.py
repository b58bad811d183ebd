"""LLVM optimisation level of CPU kernels: ``Options.cpu_opt_level`` (TILEJIT_CPU_OPT_LEVEL),
chosen by module size when automatic (backends/llvm/binding.py ``opt_level_for``)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.backends.llvm import binding
from tilejit.runtime.options import Options, use_options

needs_cpu = pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")


def _module(instructions: int) -> str:
    return "define void @f() {\nentry:\n" + "  %x = add i32 1, 2\n" * instructions + "  ret void\n}\n"


def test_automatic_level_follows_module_size():
    assert binding.opt_level_for(_module(100)) == 3
    assert binding.opt_level_for(_module(binding.BIG_MODULE - 1)) == 3
    assert binding.opt_level_for(_module(binding.BIG_MODULE + 1)) == 1
    for lvl in (1, 2, 3):                                   # an explicit level wins
        assert binding.opt_level_for(_module(10), lvl) == lvl
        assert binding.opt_level_for(_module(binding.BIG_MODULE * 2), lvl) == lvl


def test_option_from_environment():
    assert Options.from_env({}).cpu_opt_level == -1
    assert Options.from_env({"TILEJIT_CPU_OPT_LEVEL": "2"}).cpu_opt_level == 2
    assert Options.from_env({"TILEJIT_CPU_OPT_LEVEL": "-1"}).cpu_opt_level == -1
    with pytest.raises(ValueError, match="TILEJIT_CPU_OPT_LEVEL"):
        Options.from_env({"TILEJIT_CPU_OPT_LEVEL": "fast"})


@tilejit.jit
def _stencil(x_ptr, y_ptr, H, W, BH: tl.constexpr, BW: tl.constexpr):
    r = tl.program_id(0) * BH + tl.arange(0, BH)[:, None]
    c = tl.program_id(1) * BW + tl.arange(0, BW)[None, :]
    acc = tl.zeros((BH, BW), dtype=tl.float32)
    for di in tl.static_range(3):
        for dj in tl.static_range(3):
            rr = r + (di - 1)
            cc = c + (dj - 1)
            m = (rr >= 0) & (rr < H) & (cc >= 0) & (cc < W)
            acc += tl.load(x_ptr + rr * W + cc, mask=m, other=0.0) * ((di + 1) * 0.25 + dj * 0.125)
    tl.store(y_ptr + r * W + c, acc, mask=(r < H) & (c < W))


def _reference(x):
    H, W = x.shape
    p = np.pad(x.astype(np.float64), 1)
    out = np.zeros((H, W))
    for di in range(3):
        for dj in range(3):
            out += p[di:di + H, dj:dj + W] * ((di + 1) * 0.25 + dj * 0.125)
    return out


@needs_cpu
@pytest.mark.parametrize("level", [-1, 1, 3])
def test_every_level_computes_the_same(level, monkeypatch, tmp_path):
    used = []
    real = binding.optimize
    monkeypatch.setattr(binding, "optimize", lambda mod, tm, lvl=3: used.append(lvl) or real(mod, tm, lvl))
    monkeypatch.setattr(binding, "opt_level_for", _recording(binding.opt_level_for, sizes := []))
    H, W = 37, 45                                           # odd sizes: every edge mask in use
    x = np.random.default_rng(7).standard_normal((H, W)).astype(np.float32)
    y = np.zeros_like(x)
    with use_options(backend="cpu", cpu_opt_level=level, cache_dir=str(tmp_path)):
        tilejit.jit(_stencil.fn)[(3, 3)](x, y, H, W, BH=16, BW=16)
    np.testing.assert_allclose(y, _reference(x), rtol=1e-5, atol=1e-5)
    assert used, "the kernel was not compiled"
    if level > 0:
        assert used[-1] == level
    else:                                                   # this unrolled stencil is a big module
        assert sizes[-1] > binding.BIG_MODULE and used[-1] == 1


def _recording(fn, sizes):
    def rec(llir, requested=-1):
        sizes.append(llir.count("\n  "))
        return fn(llir, requested)
    return rec
