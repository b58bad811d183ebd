"""tilejit.compat: the triton alias, Inductor's runtime API, the CLI (no backend needed)."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tilejit
from tilejit import compat
from tilejit.compat import inductor as ind
from tilejit.runtime.options import use_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def alias():
    compat.install_triton_alias()
    compat.install_inductor_alias()
    yield
    compat.uninstall_triton_alias()


def test_triton_names_resolve_to_tilejit(alias):
    import triton
    import triton.language as tl
    import triton.testing
    from triton.runtime import driver
    from triton import Config, autotune, heuristics, cdiv, next_power_of_2
    import tilejit.language
    assert triton.jit is tilejit.jit and triton.JITFunction is tilejit.JITFunction
    assert triton.testing.do_bench is tilejit.testing.do_bench
    assert triton.testing.perf_report is tilejit.testing.perf_report
    assert Config is tilejit.Config and autotune is tilejit.autotune and heuristics is tilejit.heuristics
    assert cdiv(7, 2) == 4 and next_power_of_2(5) == 8
    assert tl.constexpr is tilejit.language.constexpr
    assert driver.active.get_current_target().backend in ("cpu", "interpreter", "cuda")
    import triton.language.extra.cuda.libdevice   # noqa: F401  (resolves, possibly empty)
    from triton.runtime.jit import JITFunction
    assert JITFunction is tilejit.JITFunction


def test_unsupported_features_are_named(alias):
    import triton
    import triton.language as tl
    with pytest.raises(AttributeError, match=r"tilejit does not support `triton.language.bitonic_merge`"):
        tl.bitonic_merge
    with pytest.raises(compat.UnsupportedTritonFeature, match="`triton.nonexistent_api`"):
        triton.nonexistent_api
    with pytest.raises(ImportError, match=r"tilejit does not support `triton.tools.disasm`"):
        import triton.tools.disasm  # noqa: F401
    with pytest.raises(ImportError, match=r"`triton.language.bitonic_merge`"):
        from triton.language import bitonic_merge  # noqa: F401
    assert not hasattr(tl, "surely_not_a_builtin")


def test_inductor_module_names(alias):
    from torchinductor.triton_ops.autotune import grid, pointwise  # noqa: F401
    from torchinductor.ir import ReductionHint
    from torchinductor.utils import instance_descriptor
    from torchinductor.codecache import AsyncCompile
    assert grid is ind.grid and ReductionHint is ind.ReductionHint
    assert AsyncCompile is ind.AsyncCompile and instance_descriptor is ind.instance_descriptor


def test_grid_and_descriptors():
    g = ind.grid(2000)
    assert g({"XBLOCK": 1024}) == (2, 1, 1) and g({"XBLOCK": 256}) == (8, 1, 1)
    assert ind.grid(100, 33)({"XBLOCK": 32, "YBLOCK": 16}) == (4, 3, 1)
    assert ind.grid(5)({}) == (5, 1, 1)
    d = ind.instance_descriptor(divisible_by_16=(0, 1, 2), equal_to_1=())
    assert d.divisible_by_16 == (0, 1, 2) and d.equal_to_1 == () and d.ids_of_folded_args == ()
    assert ind.ReductionHint.INNER != ind.ReductionHint.OUTER


def test_configs_from_size_hints():
    (c,) = ind._pointwise_configs([2048])
    assert c.kwargs == {"XBLOCK": 256}
    (c,) = ind._pointwise_configs([100])        # capped by the hint's power of two
    assert c.kwargs == {"XBLOCK": 128}
    (c,) = ind._pointwise_configs([1 << 20])
    assert c.kwargs == {"XBLOCK": 1024}
    two = ind._pointwise_configs([64, 4])
    assert all(k.kwargs["YBLOCK"] <= 4 and k.kwargs["XBLOCK"] <= 64 for k in two)
    (inner,) = ind._reduction_configs([1024, 4096], ind.ReductionHint.INNER)
    assert inner.kwargs["XBLOCK"] == 1 and inner.kwargs["RBLOCK"] == 2048
    (outer,) = ind._reduction_configs([1024, 4096], ind.ReductionHint.OUTER)
    assert outer.kwargs["XBLOCK"] == 64 and outer.kwargs["RBLOCK"] == 8
    assert len(ind._reduction_configs([1024, 4096], False)) >= 3
    pers = ind._persistent_configs([1024, 100], False)
    assert all(c.kwargs["RBLOCK"] == 128 for c in pers)
    assert [c.kwargs["XBLOCK"] for c in pers] == [1, 8, 32]
    assert ind._persistent_configs([4, 100], False)[-1].kwargs["XBLOCK"] == 1


class _Fake(tilejit.KernelInterface):
    def __init__(self, params, constexprs):
        def kernel():
            pass
        self.fn = kernel
        self.src = "def kernel(): pass"
        self.arg_names = list(params)
        self.constexpr_names = list(constexprs)
        self.__name__ = "kernel"
        self.calls = []

    def run(self, *args, grid, **kw):
        g = grid(kw) if callable(grid) else grid
        self.calls.append((args, g, kw))


def test_caching_autotuner_runs_with_meta_and_grid(tmp_path):
    fake = _Fake(["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"], ["XBLOCK"])
    meta = {"signature": {0: "*fp32", 1: "*fp32", 2: "i32"}, "device": 0, "constants": {},
            "configs": [ind.instance_descriptor(divisible_by_16=(0, 1, 2), equal_to_1=())]}
    k = ind.pointwise(size_hints=[2048], filename=__file__, meta=meta)(fake)
    assert isinstance(k, ind.CachingAutotuner)
    assert [c.kwargs for c in k.configs] == [{"XBLOCK": 256}]
    a = np.zeros(2000, np.float32)
    b = np.zeros(2000, np.float32)
    with use_options(cache_dir=str(tmp_path)), warnings.catch_warnings():
        warnings.simplefilter("error")
        k.run(a, b, 2000, grid=ind.grid(2000), stream=0)
    args, g, kw = fake.calls[0]
    assert g == (8, 1, 1) and kw["XBLOCK"] == 256 and args[2] == 2000
    # reduction: RBLOCK vs R0_BLOCK follows the kernel's parameter names
    red = _Fake(["x", "xnumel", "rnumel", "XBLOCK", "R0_BLOCK"], ["XBLOCK", "R0_BLOCK"])
    r = ind.reduction(size_hints=[16, 256], reduction_hint=ind.ReductionHint.INNER,
                      meta={"signature": {0: "*fp32", 1: "i32", 2: "i32"}})(red)
    assert r.configs[0].kwargs == {"XBLOCK": 1, "R0_BLOCK": 256}
    with pytest.raises(TypeError, match="meta signature has 3 arguments"):
        r.run(a, 1, grid=(1,))


def test_caching_autotuner_checks_meta_claims(tmp_path):
    fake = _Fake(["p", "n", "XBLOCK"], ["XBLOCK"])
    meta = {"signature": {0: "*fp32", 1: "i32"},
            "configs": [ind.instance_descriptor(divisible_by_16=(0, 1), equal_to_1=())]}
    k = ind.pointwise([64], meta=meta)(fake)
    buf = np.zeros(64, np.float32)
    with use_options(cache_dir=str(tmp_path)), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        k.run(buf[1:], 17, grid=(1,))       # neither the offset pointer nor 17 satisfy the claim
    msgs = [str(x.message) for x in w]
    assert any("argument 0 is divisible by 16" in m for m in msgs)
    assert any("argument 1 is divisible by 16, but it is 0x11" in m for m in msgs)


KERNEL_SRC = textwrap.dedent('''
    import triton
    import triton.language as tl
    from torchinductor.ir import ReductionHint
    from torchinductor.triton_ops.autotune import pointwise
    from torchinductor.utils import instance_descriptor

    @pointwise(size_hints=[1024], filename=__file__, meta={'signature': {0: '*fp32', 1: '*fp32', 2: 'i32'}, 'device': 0, 'configs': [instance_descriptor(divisible_by_16=(0, 1, 2), equal_to_1=())], 'constants': {}})
    @triton.jit
    def kernel(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
        xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
        tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xindex < xnumel), xindex < xnumel)
''')


@pytest.mark.parametrize("workers", ["0", "2"])
def test_async_compile_loads_kernels(alias, tmp_path, monkeypatch, workers):
    monkeypatch.setenv("TILEJIT_COMPILE_WORKERS", workers)
    monkeypatch.setenv("TILEJIT_CACHE_DIR", str(tmp_path))
    with use_options(cache_dir=str(tmp_path)):
        ac = ind.AsyncCompile()
        scope = {"k1": ac.triton(KERNEL_SRC), "k2": ac.triton("kernel", KERNEL_SRC, device_str="cpu"),
                 "other": 3}
        ac.wait(scope)
        ind.AsyncCompile.shutdown()
    for name in ("k1", "k2"):
        k = scope[name]
        assert isinstance(k, ind.CachingAutotuner)
        assert k.fn.__name__ == "kernel" and "tl.store(out_ptr0" in k.fn.src
        assert [c.kwargs for c in k.configs] == [{"XBLOCK": 256}]
        assert k.fn.arg_names == ["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"]
    assert scope["other"] == 3
    assert os.path.exists(scope["k1"].fn.file)


def test_async_compile_reports_errors(alias, tmp_path, monkeypatch):
    monkeypatch.setenv("TILEJIT_COMPILE_WORKERS", "0")
    with use_options(cache_dir=str(tmp_path)):
        ac = ind.AsyncCompile()
        scope = {"k": ac.triton("import triton\nimport triton.tools.nope\n@triton.jit\ndef k(): pass\n")}
        with pytest.raises(ImportError, match="tilejit does not support `triton.tools.nope`"):
            ac.wait(scope)


def _cli(*args, env=None, cwd=ROOT, timeout=120):
    e = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
             **(env or {}))
    return subprocess.run([sys.executable, "-m", "tilejit", *args], capture_output=True,
                          text=True, env=e, cwd=cwd, timeout=timeout)


def test_cli_help_for_every_subcommand(capsys):
    from tilejit.__main__ import main
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    top = capsys.readouterr().out
    for cmd in ("demo", "run", "dump", "cache", "bench"):
        assert cmd in top
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert "usage: python -m tilejit " + cmd in capsys.readouterr().out
    assert _cli("cache", "--help").returncode == 0      # and as a real `python -m`


def test_cli_version():
    import llvmlite
    import numpy
    r = _cli("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"tilejit {tilejit.__version__} (")
    assert f"llvmlite {llvmlite.__version__}" in r.stdout and f"numpy {numpy.__version__}" in r.stdout


def test_cli_run_passes_argv_and_reports_unsupported(tmp_path):
    ok = tmp_path / "ok.py"
    ok.write_text("import sys, triton, triton.language as tl\n"
                  "print('args', sys.argv[1:], triton.cdiv(9, 4), __name__)\n")
    r = _cli("run", str(ok), "a", "--flag")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "args ['a', '--flag'] 3 __main__"
    bad = tmp_path / "bad.py"
    bad.write_text("import triton\nfrom triton.language import bitonic_merge\n")
    r = _cli("run", str(bad))
    assert r.returncode == 2
    assert "unsupported Triton feature" in r.stderr and "bitonic_merge" in r.stderr
    ex = tmp_path / "exit.py"
    ex.write_text("import sys\nsys.exit(3)\n")
    assert _cli("run", str(ex)).returncode == 3
    assert _cli("run", str(tmp_path / "missing.py")).returncode == 2


def test_cli_dump_reports_bad_signature(tmp_path, capsys):
    from tilejit.__main__ import main
    src = tmp_path / "k.py"
    src.write_text("import triton\nimport triton.language as tl\n@triton.jit\n"
                   "def k(x, n, B: tl.constexpr):\n    pass\n")
    try:
        assert main(["dump", str(src), "k", "-s", "*fp32", "-c", "B=4"]) == 1
        assert "2 non-constexpr parameters (x, n)" in capsys.readouterr().err
        assert main(["dump", str(src), "nothere", "-s", "*fp32,i32"]) == 1
        assert "defines no 'nothere'" in capsys.readouterr().err
    finally:
        compat.uninstall_triton_alias()


def test_dump_signature_parsing(alias, tmp_path):
    from tilejit.compat import dump
    from tilejit.ir.types import PointerType, float32, int32
    src = tmp_path / "k2.py"
    src.write_text("import triton\nimport triton.language as tl\n@triton.jit\n"
                   "def k(x, n, B: tl.constexpr, C: tl.constexpr = 3):\n    pass\n")
    fn = dump.load_kernel(str(src), "k")
    assert dump.parse_signature(fn, "*fp32, i32") == {"x": PointerType(float32), "n": int32}
    assert dump.parse_signature(fn, "n=i32,x=*fp32") == {"x": PointerType(float32), "n": int32}
    assert dump.parse_constexprs(fn, ["B=16"]) == {"B": 16, "C": 3}
    with pytest.raises(ValueError, match="constexpr B needs a value"):
        dump.parse_constexprs(fn, [])
    spec = dump.parse_spec({"x": PointerType(float32), "n": int32}, ["n=eq1"])
    assert spec == {"x": (16, False), "n": (1, True)}


def test_cli_dump_end_to_end(tmp_path, capsys):
    pytest.importorskip("tilejit.runtime.launcher")
    src = tmp_path / "kern.py"
    src.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl
        print("module top-level output goes to stderr")

        @triton.jit
        def k741(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
            xnumel = 2000
            xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
            xmask = xindex < xnumel
            x0 = xindex % 1000
            x1 = xindex // 1000
            tmp0 = tl.load(in_ptr0 + xindex, xmask)
            tmp1 = tl.load(in_ptr1 + xindex, xmask)
            tl.store(out_ptr0 + x0 + (1000 * tmp0) + (196000 * x1), tmp1, xmask)
    '''))
    from tilejit.__main__ import main
    base = ["dump", str(src), "k741", "-s", "*i64,*fp32,*fp32,i32", "-c", "XBLOCK=1024"]
    try:
        with use_options(cache_dir=str(tmp_path / "c")):
            assert main(base + ["--stage", "list"]) == 0
            out, err = capsys.readouterr()
            stages = out.split()[1:]
            for st in ("source", "ir", "analysis", "llir", "llir-opt", "asm"):
                assert st in stages
            assert "top-level output" in err and "top-level" not in out
            assert main(base + ["--stage", "ir"]) == 0
            assert capsys.readouterr().out.startswith("tt.func @k741(")
            assert main(base + ["--stage", "analysis"]) == 0
            out = capsys.readouterr().out
            assert "range=[" in out and "contig=[" in out
            assert main(base + ["--stage", "llir-opt"]) == 0
            assert "define" in capsys.readouterr().out
            assert main(base + ["--stage", "nope"]) == 1
            assert "no stage 'nope'" in capsys.readouterr().err
            assert main(base + ["--target", "cuda:90", "--stage", "cuda-plan"]) == 0
            plan = capsys.readouterr().out.splitlines()
            assert plan[0] == "cuda-plan @k741 (sm_90, 4 warps)"
            assert plan[1].startswith("  tt.load <1024xint64> at kern.py:") and plan[1].endswith(": width 2 (masked)")   # 2 x 8 B
    finally:
        compat.uninstall_triton_alias()


def test_caching_autotuner_restores_mutated_args(tmp_path):
    """Benchmarking several configs of an in-place kernel must not compound its effect."""
    class InPlace(_Fake):
        def run(self, *args, grid, **kw):
            args[0][...] += 1
    fake = InPlace(["in_out_ptr0", "xnumel", "ynumel", "XBLOCK", "YBLOCK"], ["XBLOCK", "YBLOCK"])
    k = ind.pointwise([64, 64], inductor_meta={"mutated_arg_names": ["in_out_ptr0"]},
                      triton_meta={"signature": {0: "*fp32", 1: "i32", 2: "i32"}})(fake)
    assert len(k.configs) > 1 and k.mutated_arg_names == ["in_out_ptr0"]
    buf = np.zeros(16, np.float32)
    with use_options(cache_dir=str(tmp_path)):
        k._autotuner.user_do_bench = lambda fn, quantiles: (fn(), fn(), [1.0] * 3)[2]
        k.run(buf, 64, 64, grid=(1,))
    np.testing.assert_array_equal(buf, 1)
