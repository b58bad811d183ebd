"""@autotune / @heuristics on real kernels, under every backend available; the disk
cache across processes with real compilation."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.runtime import cache as C
from tilejit.runtime.options import use_options

pytest.importorskip("tilejit.runtime.launcher")
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fast_bench(fn, quantiles=None):
    return tilejit.testing.do_bench(fn, warmup=1, rep=2, quantiles=quantiles)


@tilejit.jit
def _axpy_inplace(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=m) + a * tl.load(x_ptr + offs, mask=m), mask=m)


@tilejit.jit
def _accumulate(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=m) + tl.load(x_ptr + offs, mask=m), mask=m)


@pytest.fixture
def tmp_cache(tmp_path):
    with use_options(cache_dir=str(tmp_path / "cache")):
        yield


@pytest.mark.parametrize("n", [1000, 4096])
def test_restore_value_keeps_inplace_kernel_correct(backend, tmp_cache, n):
    """Benchmarking runs the in-place kernel many times; restore_value must undo them."""
    k = tilejit.autotune([tilejit.Config({"BLOCK": b}) for b in (64, 256)], key=["n"],
                         restore_value=["y_ptr"], do_bench=_fast_bench)(_axpy_inplace)
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    grid = lambda meta: (tilejit.cdiv(n, meta["BLOCK"]),)
    k[grid](x, y, n, 2.0)
    np.testing.assert_array_equal(y, 1 + 2 * x)            # applied exactly once
    assert k.best_config.kwargs["BLOCK"] in (64, 256)
    k[grid](x, y, n, 2.0)                                   # cached: no benchmarking
    np.testing.assert_array_equal(y, 1 + 4 * x)


def test_reset_to_zero_accumulator(backend, tmp_cache):
    n = 777
    k = tilejit.autotune([tilejit.Config({"BLOCK": b}) for b in (32, 128, 512)], key=["n"],
                         reset_to_zero=["acc_ptr"], do_bench=_fast_bench)(_accumulate)
    x = np.linspace(0, 1, n, dtype=np.float32)
    acc = np.full(n, 100.0, np.float32)
    k[lambda m: (tilejit.cdiv(n, m["BLOCK"]),)](x, acc, n)
    np.testing.assert_array_equal(acc, x)                   # zeroed, then one launch
    assert len(k.configs_timings) == 3


def test_heuristics_block_from_n(backend, tmp_cache):
    k = tilejit.heuristics({"BLOCK": lambda a: min(tilejit.next_power_of_2(a["n"]), 128)})(_accumulate)
    for n in (5, 300):
        x = np.arange(n, dtype=np.float32)
        acc = np.zeros(n, np.float32)
        k[lambda m: (tilejit.cdiv(n, m["BLOCK"]),)](x, acc, n)
        np.testing.assert_array_equal(acc, x)


def test_second_process_reuses_tuning_and_compiled_code(tmp_path):
    """Process 1 tunes and compiles; process 2 neither benchmarks nor re-optimizes."""
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent('''
        import sys, numpy as np, tilejit, tilejit.language as tl
        from tilejit.runtime import cache
        from tilejit.backends.llvm import binding
        cache._FINGERPRINT[:] = ["pinned"]
        optimized = []
        real_optimize = binding.optimize
        binding.optimize = lambda *a, **k: (optimized.append(1), real_optimize(*a, **k))[1]

        @tilejit.autotune([tilejit.Config({"BLOCK": 64}), tilejit.Config({"BLOCK": 128})],
                          key=["n"], warmup=1, rep=2)
        @tilejit.jit
        def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)

        n = 1000
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        scale[lambda m: (tilejit.cdiv(n, m["BLOCK"]),)](x, out, n)
        assert (out == 3 * x).all()
        print(scale.configs_timings is None, len(optimized), scale.best_config.kwargs["BLOCK"])
    '''))
    env = dict(os.environ, TILEJIT_CACHE_DIR=str(tmp_path / "cache"), TILEJIT_BACKEND="cpu",
               PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TILEJIT_INTERPRET", None)
    run = lambda: subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                                 text=True, timeout=300)
    r1 = run()
    assert r1.returncode == 0, r1.stderr[-2000:]
    tuned_fresh, n_opt1, best1 = r1.stdout.split()
    assert tuned_fresh == "False" and int(n_opt1) >= 1
    r2 = run()
    assert r2.returncode == 0, r2.stderr[-2000:]
    assert r2.stdout.split() == ["True", "0", best1]
    info = C.FileCache(str(tmp_path / "cache")).info()["namespaces"]
    assert info["autotune"]["entries"] == 1 and info["obj"]["entries"] >= 1


def test_host_backends_bench_configs_that_differ_only_in_launch_options_once(backend, tmp_cache):
    """num_warps / num_stages / maxnreg change nothing on cpu and the interpreter: one of
    each group is benchmarked there; every config is on CUDA."""
    configs = [tilejit.Config({"BLOCK": 64}, num_warps=4), tilejit.Config({"BLOCK": 64}, num_warps=8),
               tilejit.Config({"BLOCK": 128}, num_warps=4, num_stages=2),
               tilejit.Config({"BLOCK": 128}, num_warps=4, num_stages=4, maxnreg=128),
               tilejit.Config({"BLOCK": 128}, num_warps=2)]
    benched = []

    def bench(fn, quantiles=None):
        benched.append(fn)
        return _fast_bench(fn, quantiles)

    k = tilejit.autotune(configs, key=["n"], do_bench=bench, cache_results=False)(_accumulate)
    n = 1000
    x = np.arange(n, dtype=np.float32)
    acc = np.zeros(n, np.float32)
    grid = lambda meta: (tilejit.cdiv(n, meta["BLOCK"]),)
    k[grid](x, acc, n)
    assert len(benched) == (5 if backend == "cuda" else 2)
    assert set(k.configs_timings) <= set(configs)
    if backend != "cuda":
        assert list(k.configs_timings) == [configs[0], configs[2]]
    got = np.zeros(n, np.float32)
    k[grid](x, got, n)                                       # the chosen config, once
    np.testing.assert_array_equal(got, x)
