"""Autotuner / heuristics / Config semantics, on fake kernels (objects with .run)."""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tilejit
from tilejit.runtime import autotuner as at
from tilejit.runtime import cache as cache_mod
from tilejit.runtime.options import use_options


class FakeKernel(tilejit.KernelInterface):
    """Records launches; a launch with BLOCK=b takes cost[b] seconds."""

    def __init__(self, cost=None, arg_names=("x", "n"), on_run=None):
        def kernel_src(x, n, BLOCK):  # a distinct source per test is not needed
            pass
        self.fn = kernel_src
        self.src = "def fake(x, n, BLOCK): pass  # " + repr(sorted((cost or {}).items()))
        self.arg_names = list(arg_names)
        self.cost = cost or {}
        self.calls = []
        self.on_run = on_run

    def run(self, *args, grid, **kwargs):
        self.calls.append((args, grid, dict(kwargs)))
        if self.on_run:
            self.on_run(args, kwargs)
        t = self.cost.get(kwargs.get("BLOCK"), 0.0)
        if t:
            end = time.perf_counter() + t
            while time.perf_counter() < end:
                pass
        return kwargs


@pytest.fixture(autouse=True)
def tmp_cache(tmp_path, monkeypatch):
    with use_options(cache_dir=str(tmp_path / "cache")):
        yield tmp_path / "cache"


def fast_bench(fn, quantiles=None):
    return tilejit.testing.do_bench(fn, warmup=1, rep=3, quantiles=quantiles)


def configs(*blocks, **kw):
    return [tilejit.Config({"BLOCK": b}, **kw) for b in blocks]


def test_config_semantics():
    c = tilejit.Config({"BLOCK": 128}, num_warps=8)
    assert c.all_kwargs() == {"BLOCK": 128, "num_warps": 8, "num_stages": 3, "num_ctas": 1}
    assert str(c) == "BLOCK: 128, num_warps: 8, num_ctas: 1, num_stages: 3, maxnreg: None"
    assert c == tilejit.Config({"BLOCK": 128}, num_warps=8)
    assert c != tilejit.Config({"BLOCK": 64}, num_warps=8)
    assert len({c, tilejit.Config({"BLOCK": 128}, num_warps=8)}) == 1


def test_picks_fastest_and_caches_per_key():
    k = FakeKernel(cost={16: 0.004, 32: 0.0005, 64: 0.002})
    tuned = tilejit.autotune(configs(16, 32, 64), key=["n"], do_bench=fast_bench)(k)
    out = tuned[(1,)](np.zeros(4), 10)
    assert out["BLOCK"] == 32 and out["num_warps"] == 4
    assert str(tuned.best_config).startswith("BLOCK: 32")
    assert set(tuned.configs_timings) == set(configs(16, 32, 64))
    n = len(k.calls)
    tuned[(1,)](np.zeros(4), 10)            # same key: one launch, no benchmarking
    assert len(k.calls) == n + 1
    tuned[(1,)](np.zeros(4), 11)            # new key value: benchmarks again
    assert len(k.calls) > n + 2
    tuned[(1,)](np.zeros(4, np.float32), 11)  # dtype is part of the key
    assert len(tuned.cache) == 3


def test_single_config_does_not_bench():
    k = FakeKernel()
    tuned = tilejit.autotune(configs(8), key=["n"])(k)
    assert tuned[(2,)](np.zeros(1), 3)["BLOCK"] == 8
    assert len(k.calls) == 1 and k.calls[0][1] == (2,)


def test_conflicting_meta_parameters():
    k = FakeKernel()
    tuned = tilejit.autotune(configs(8, 16), key=["n"], do_bench=fast_bench)(k)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        tuned[(1,)](np.zeros(1), 3, BLOCK=4)


def test_prune_configs_by():
    seen = []

    def early(cfgs, nargs, **kw):
        seen.append((len(cfgs), nargs["n"]))
        return [c for c in cfgs if c.kwargs["BLOCK"] <= nargs["n"]]

    def perf_model(x, n, BLOCK, num_warps, num_stages, num_ctas, **kw):
        return abs(BLOCK - 16)           # prefers 16, then 32 / 8
    k = FakeKernel()
    tuned = tilejit.autotune(configs(4, 8, 16, 32, 64), key=["n"], do_bench=fast_bench,
                             prune_configs_by={"early_config_prune": early,
                                               "perf_model": perf_model, "top_k": 2})(k)
    tuned[(1,)](np.zeros(1), 32)
    assert seen == [(5, 32)]
    benched = {c.kwargs["BLOCK"] for c in tuned.configs_timings}
    assert benched in ({16, 8}, {16, 32})
    # float top_k: fraction of the config list
    tuned2 = tilejit.autotune(configs(4, 8, 16, 32), key=["n"], do_bench=fast_bench,
                              prune_configs_by={"perf_model": perf_model, "top_k": 0.5})(FakeKernel())
    tuned2[(1,)](np.zeros(1), 1)
    assert {c.kwargs["BLOCK"] for c in tuned2.configs_timings} == {16, 8} or \
        {c.kwargs["BLOCK"] for c in tuned2.configs_timings} == {16, 32}


def test_reset_to_zero_and_restore_value():
    observed = []

    def on_run(args, kwargs):
        x, acc = args[0], args[1]
        observed.append((acc.copy(), x.copy()))
        acc += 1                       # an accumulating kernel
        x *= 2                         # an in-place kernel
    k = FakeKernel(arg_names=("x", "acc", "n"), on_run=on_run)
    tuned = tilejit.autotune(configs(1, 2), key=["n"], do_bench=fast_bench,
                             reset_to_zero=["acc"], restore_value=["x"])(k)
    x = np.arange(3.0)
    acc = np.full(3, 7.0)
    tuned[(1,)](x, acc, 3)
    # every benchmark run saw acc zeroed and x restored
    for a, xv in observed[:-1]:
        np.testing.assert_array_equal(a, 0)
        np.testing.assert_array_equal(xv, np.arange(3.0))
    # the final real launch: acc zeroed once more (reset_only), x untouched before it
    np.testing.assert_array_equal(acc, 1)
    np.testing.assert_array_equal(x, np.arange(3.0) * 2)
    with pytest.raises(ValueError, match="not an argument"):
        tilejit.autotune(configs(1), key=[], reset_to_zero=["nope"])(FakeKernel())


def test_hooks_called_with_nargs():
    log = []
    pre = lambda nargs, reset_only=False: log.append(("pre", reset_only, nargs.get("BLOCK")))
    post = lambda nargs, exception: log.append(("post", exception))
    cfg_hook = lambda nargs: log.append(("cfg", nargs["BLOCK"], nargs["n"]))
    k = FakeKernel()
    cfgs = [tilejit.Config({"BLOCK": 1}, pre_hook=cfg_hook), tilejit.Config({"BLOCK": 2})]
    tuned = tilejit.autotune(cfgs, key=["n"], pre_hook=pre, post_hook=post,
                             do_bench=lambda fn, quantiles: (fn(), 1.0)[1])(k)
    tuned[(1,)](np.zeros(1), 5)
    assert log[:3] == [("cfg", 1, 5), ("pre", False, 1), ("post", None)]
    assert ("pre", True, 1) in log   # the reset_only call after tuning (ties: first config)
    assert log[-1] == ("cfg", 1, 5)  # the config's pre_hook before the real launch


def test_resource_errors_become_inf():
    class OutOfResources(Exception):
        pass

    def on_run(args, kwargs):
        if kwargs["BLOCK"] == 64:
            raise OutOfResources("shared memory")
    k = FakeKernel(on_run=on_run)
    tuned = tilejit.autotune(configs(64, 8), key=["n"], do_bench=fast_bench)(k)
    assert tuned[(1,)](np.zeros(1), 2)["BLOCK"] == 8
    assert tuned.configs_timings[configs(64)[0]] == [float("inf")] * 3

    def bad(args, kwargs):
        raise RuntimeError("boom")
    tuned = tilejit.autotune(configs(1, 2), key=["n"], do_bench=fast_bench)(FakeKernel(on_run=bad))
    with pytest.raises(RuntimeError, match="boom"):
        tuned[(1,)](np.zeros(1), 2)


def test_print_autotuning(monkeypatch, capsys):
    monkeypatch.setenv("TILEJIT_PRINT_AUTOTUNING", "1")
    tuned = tilejit.autotune(configs(1, 2), key=["n"], do_bench=fast_bench)(FakeKernel())
    tuned[(1,)](np.zeros(1), 2)
    out = capsys.readouterr().out
    assert "autotuning for function" in out and "best config selected: BLOCK:" in out
    assert out.count(" ms  BLOCK:") == 2
    tuned[(1,)](np.zeros(1), 2)
    assert capsys.readouterr().out == ""


def test_progress_on_stderr_when_slow(capsys):
    k = FakeKernel(cost={1: 0.6, 2: 0.6})
    once = lambda fn, quantiles: (fn(), [0.6] * 3)[1]
    tilejit.autotune(configs(1, 2), key=["n"], do_bench=once)(k)[(1,)](np.zeros(1), 2)
    err = capsys.readouterr().err
    assert "autotuning fake" in err or "autotuning kernel_src" in err
    assert "2/2 configs" in err
    k2 = FakeKernel()
    tilejit.autotune(configs(1, 2), key=["n"], do_bench=once)(k2)[(1,)](np.zeros(1), 2)
    assert capsys.readouterr().err == ""


def test_heuristics_and_stacking():
    k = FakeKernel(arg_names=("x", "n"))
    h = tilejit.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})(k)
    tuned = tilejit.autotune(configs(2, 3), key=["n"], do_bench=fast_bench)(h)
    out = tuned[(1,)](np.zeros(1), 6)
    assert out["EVEN"] is True
    out = tuned[(1,)](np.zeros(1), 4)
    assert out["EVEN"] == (4 % out["BLOCK"] == 0)
    h2 = tilejit.heuristics({"B": lambda a: tilejit.next_power_of_2(a["n"])})(FakeKernel())
    assert h2[(1,)](np.zeros(1), 5)["B"] == 8


def _run_tuning_process(cache_dir, preferred):
    script = textwrap.dedent(f'''
        import numpy as np, tilejit
        from tilejit.runtime import cache
        cache._FINGERPRINT[:] = ["pinned"]       # stable even while tilejit's files change
        class K(tilejit.KernelInterface):
            src = "def k(x, n, BLOCK): pass"
            arg_names = ["x", "n"]
            def __init__(self):
                def k(x, n, BLOCK): pass
                self.fn = k
                self.launches = []
            def run(self, *a, grid, **kw):
                self.launches.append(kw["BLOCK"])
                return kw["BLOCK"]
        k = K()
        def bench(fn, quantiles):
            fn()
            b = k.launches[-1]
            return [0.0 if b == {preferred} else 1.0] * 3
        t = tilejit.autotune([tilejit.Config({{"BLOCK": b}}) for b in (1, 2, 4)], key=["n"],
                             do_bench=bench)(k)
        print(t[(1,)](np.zeros(2), 7), len(k.launches))
    ''')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TILEJIT_CACHE_DIR=str(cache_dir),
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    best, launches = r.stdout.split()
    return int(best), int(launches)


def test_results_persist_across_processes(tmp_path):
    d = tmp_path / "shared_cache"
    assert _run_tuning_process(d, 2) == (2, 4)       # 3 benchmark launches + 1 real
    # a second process reuses the stored choice: no benchmarking (it would pick 4)
    assert _run_tuning_process(d, 4) == (2, 1)
    info = cache_mod.get_cache(str(d)).info()
    assert info["namespaces"]["autotune"]["entries"] == 1
    cache_mod.get_cache(str(d)).clear()
    assert _run_tuning_process(d, 4) == (4, 4)


def test_disk_key_depends_on_configs_and_key_values(tmp_cache):
    k = FakeKernel()
    t1 = tilejit.autotune(configs(1, 2), key=["n"], do_bench=fast_bench)(k)
    t2 = tilejit.autotune(configs(1, 2, 4), key=["n"], do_bench=fast_bench)(k)
    t1.nargs = t2.nargs = {}
    assert t1._disk_key((5,)) != t2._disk_key((5,))
    assert t1._disk_key((5,)) != t1._disk_key((6,))
    assert t1._disk_key((5,)) == t1._disk_key((5,))
    k2 = FakeKernel(cost={1: 0.0})          # a different source
    t3 = tilejit.autotune(configs(1, 2), key=["n"], do_bench=fast_bench)(k2)
    assert t3._disk_key((5,)) != t1._disk_key((5,))


def test_corrupt_disk_entry_is_ignored(tmp_cache):
    k = FakeKernel()
    t = tilejit.autotune(configs(1, 2), key=["n"], do_bench=fast_bench)(k)
    t[(1,)](np.zeros(1), 3)
    dk = t._disk_key((3, "float64"))
    c = cache_mod.get_cache()
    c.put(dk, json.dumps({"index": 7, "config": "x"}).encode(), namespace="autotune")
    t.cache.clear()
    n = len(k.calls)
    t[(1,)](np.zeros(1), 3)
    assert len(k.calls) > n + 1             # re-benchmarked, did not trust the bad entry
