"""tilejit.testing: do_bench, assert_close, perf_report."""
import time

import numpy as np
import pytest

import tilejit
from tilejit import testing


def _sleeper(ms):
    def f():
        end = time.perf_counter() + ms / 1e3
        while time.perf_counter() < end:
            pass
    return f


def test_do_bench_measures_ms():
    t = testing.do_bench(_sleeper(2.0), warmup=5, rep=20)
    assert 1.9 < t < 6.0
    q = testing.do_bench(_sleeper(1.0), warmup=2, rep=10, quantiles=[0.5, 0.2, 0.8])
    assert len(q) == 3 and q[1] <= q[0] <= q[2] and 0.9 < q[0] < 4.0
    single = testing.do_bench(_sleeper(1.0), warmup=1, rep=5, quantiles=[0.5])
    assert isinstance(single, float)
    allt = testing.do_bench(_sleeper(1.0), warmup=1, rep=5, return_mode="all")
    assert isinstance(allt, list) and len(allt) >= 4 and min(allt) >= 0.99
    flip = [0]

    def alternating():            # 1 ms, 3 ms, 1 ms, ...
        flip[0] ^= 1
        _sleeper(1.0 if flip[0] else 3.0)()
    lo = testing.do_bench(alternating, warmup=1, rep=20, return_mode="min")
    hi = testing.do_bench(alternating, warmup=1, rep=20, return_mode="max")
    med = testing.do_bench(alternating, warmup=1, rep=20, return_mode="mean")
    assert lo < 1.6 and hi > 2.9 and 1.6 < med < 2.6
    with pytest.raises(ValueError):
        testing.do_bench(lambda: None, warmup=1, rep=1, return_mode="p99")


def test_do_bench_call_counts_follow_warmup_and_rep():
    n = [0]

    def f():
        n[0] += 1
        _sleeper(1.0)()
    testing.do_bench(f, warmup=10, rep=20)
    # 1 + 5 estimate calls, ~10 warm-up, ~20 timed (each ~1 ms)
    assert 20 <= n[0] <= 45


def test_do_bench_grad_to_none():
    class T:
        grad = 1
    ts = [T(), T()]
    testing.do_bench(lambda: None, warmup=1, rep=1, grad_to_none=ts)
    assert all(t.grad is None for t in ts)


def test_assert_close():
    testing.assert_close(np.array([1.0, 2.0]), np.array([1.005, 2.0]))
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([1.0, 2.0]), np.array([1.1, 2.0]))
    testing.assert_close(np.array([1.0]), np.array([1.1]), atol=0.2)
    testing.assert_close(np.array([100.0]), np.array([101.0]), atol=0, rtol=0.02)
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([1, 2]), np.array([1, 3]), atol=5)   # ints exact
    testing.assert_close(np.array([np.nan]), np.array([np.nan]))
    testing.assert_close(3.0, 3.001)
    assert tilejit.testing is testing


def test_assert_close_torch():
    torch = pytest.importorskip("torch")
    testing.assert_close(torch.tensor([1.0, 2.0], dtype=torch.bfloat16), np.array([1.0, 2.0]))
    with pytest.raises(AssertionError):
        testing.assert_close(torch.tensor([1.0]), torch.tensor([2.0]))


def test_perf_report_table_and_csv(tmp_path, capsys):
    calls = []

    @testing.perf_report(testing.Benchmark(
        x_names=["N"], x_vals=[2, 4], line_arg="provider", line_vals=["a", "b"],
        line_names=["A", "B"], plot_name="demo-bench", args={"scale": 10}, ylabel="GB/s"))
    def bench(N, provider, scale):
        calls.append((N, provider, scale))
        v = N * scale + (1 if provider == "b" else 0)
        return (v, v - 1, v + 1) if provider == "b" else v

    df = bench.run(print_data=True, save_path=str(tmp_path), return_df=True)
    out = capsys.readouterr().out
    assert "demo-bench:" in out
    lines = out.strip().splitlines()
    assert lines[1].split() == ["N", "A", "B"]
    assert lines[2].split() == ["2", "20", "21"] and lines[3].split() == ["4", "40", "41"]
    assert calls == [(2, "a", 10), (2, "b", 10), (4, "a", 10), (4, "b", 10)]
    csv = (tmp_path / "demo-bench.csv").read_text().splitlines()
    assert csv == ["N,A,B", "2,20,21", "4,40,41"]
    rows = df.to_dict("records") if hasattr(df, "to_dict") else df
    assert rows[1]["B"] == 41
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "demo-bench.png").exists()
    except ImportError:
        assert not (tmp_path / "demo-bench.png").exists()
