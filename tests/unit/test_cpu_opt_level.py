"""LLVM pipeline of CPU kernels: ``Options.cpu_opt_level`` (TILEJIT_CPU_OPT_LEVEL), chosen by
module size when automatic (backends/llvm/binding.py ``opt_level_for``), and
``Options.cpu_loop_unroll`` (TILEJIT_CPU_LOOP_UNROLL; ``pipeline_for``)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.backends.llvm import binding
from tilejit.runtime.options import Options, use_options
from tests.unit.test_cpu_pool import _add  # the masked vector add

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
    assert Options.from_env({}).cpu_loop_unroll == -1
    assert Options.from_env({"TILEJIT_CPU_LOOP_UNROLL": "1"}).cpu_loop_unroll == 1
    assert Options.from_env({"TILEJIT_CPU_LOOP_UNROLL": "off"}).cpu_loop_unroll == 0
    with pytest.raises(ValueError, match="TILEJIT_CPU_LOOP_UNROLL"):
        Options.from_env({"TILEJIT_CPU_LOOP_UNROLL": "some"})


def test_pipeline_follows_options():
    small, big = _module(100), _module(binding.BIG_MODULE + 1)
    assert binding.pipeline_for(small) == binding.Pipeline(3, True)
    assert binding.pipeline_for(big) == binding.Pipeline(1, True)
    opts = Options(cpu_opt_level=2, cpu_loop_unroll=0)
    assert binding.pipeline_for(small, opts) == binding.pipeline_for(big, opts) == binding.Pipeline(2, False)
    assert binding.pipeline_for(small, Options(cpu_loop_unroll=1)) == binding.Pipeline(3, True)
    assert binding.rolled_cold_loops(None) and binding.rolled_cold_loops(Options(cpu_loop_unroll=0))
    assert not binding.rolled_cold_loops(Options(cpu_loop_unroll=1))


def _unrolled(text: str) -> bool:
    """Whether LLVM unrolled the 16-iteration loop of ``_loop_module`` (no back edge left,
    or a body copied)."""
    return text.count("fadd") > 1 or "br i1" not in text


def _loop_module() -> str:
    return """define void @f(ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%n, %loop]
  %q = getelementptr float, ptr %p, i64 %i
  %v = load volatile float, ptr %q
  %w = fadd float %v, 1.0
  store volatile float %w, ptr %q
  %n = add i64 %i, 1
  %c = icmp slt i64 %n, 16
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
"""


def test_unroll_switch_reaches_llvm():
    tm = binding.host_target_machine()
    done = {}
    for unroll in (True, False):
        mod = binding.parse_module(_loop_module(), tm)
        binding.optimize(mod, tm, binding.Pipeline(3, unroll))
        done[unroll] = _unrolled(str(mod))
    assert done == {True: True, False: False}


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
@pytest.mark.parametrize("level,unroll", [(-1, -1), (1, -1), (3, 1), (3, 0)])
def test_every_level_computes_the_same(level, unroll, monkeypatch, tmp_path):
    used = []
    real = binding.optimize
    monkeypatch.setattr(binding, "optimize", lambda mod, tm, p: used.append(p) or real(mod, tm, p))
    monkeypatch.setattr(binding, "opt_level_for", _recording(binding.opt_level_for, sizes := []))
    H, W = 37, 45                                           # odd sizes: every edge mask in use
    x = np.random.default_rng(7).standard_normal((H, W)).astype(np.float32)
    y = np.zeros_like(x)
    with use_options(backend="cpu", cpu_opt_level=level, cpu_loop_unroll=unroll, cache_dir=str(tmp_path)):
        tilejit.jit(_stencil.fn)[(3, 3)](x, y, H, W, BH=16, BW=16)
    np.testing.assert_allclose(y, _reference(x), rtol=1e-5, atol=1e-5)
    assert used, "the kernel was not compiled"
    assert used[-1].unroll == (unroll != 0)
    if level > 0:
        assert used[-1].level == level
    else:                                                   # this unrolled stencil is a big module
        assert sizes[-1] > binding.BIG_MODULE and used[-1].level == 1


def _recording(fn, sizes):
    def rec(llir, requested=-1):
        sizes.append(llir.count("\n  "))
        return fn(llir, requested)
    return rec


@needs_cpu
@pytest.mark.parametrize("unroll", [-1, 0, 1])
def test_masked_copy_keeps_its_loops_rolled(unroll, tmp_path):
    """The masked copy of a versioned tile op (the last, partial block) has its loops
    marked ``llvm.loop.unroll.disable`` unless ``cpu_loop_unroll=1``; every variant adds
    right, the partial block included."""
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    with use_options(backend="cpu", cpu_loop_unroll=unroll, cache_dir=str(tmp_path)):
        k = tilejit.compile(_add, signature=sig, constexprs={"BLOCK": 64})
        assert ("llvm.loop.unroll.disable" in k.asm["llir"]) == (unroll != 1)
        n = 1000                                    # 15 full blocks and one of 40
        x, y = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
        out = np.zeros(n + 8, np.float32)
        tilejit.jit(_add.fn)[(16,)](x, y, out, n, BLOCK=64)
    np.testing.assert_array_equal(out[:n], x + y)
    assert not out[n:].any()
