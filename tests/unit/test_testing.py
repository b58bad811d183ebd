"""tilejit.testing: do_bench, assert_close, perf_report."""
import sys

import numpy as np
import pytest

import tilejit
from tilejit import testing


class FakeClock:
    """A deterministic clock: each call of the benchmarked function advances it."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(testing, "time", c)
    return c


def _costs(clock, durations_ms):
    """fn() whose i-th call takes durations_ms[i % len] ms of fake time; counts calls."""
    calls = [0]

    def fn():
        clock.now += durations_ms[calls[0] % len(durations_ms)] / 1e3
        calls[0] += 1
    return fn, calls


def test_do_bench_counts_and_mean(clock):
    fn, calls = _costs(clock, [2.0])
    t = testing.do_bench(fn, warmup=10, rep=20)
    assert t == pytest.approx(2.0)
    # 1 first call + 5 estimate calls, warmup/2ms = 5 warm-up calls, rep/2ms = 10 timed
    assert calls[0] == 1 + 5 + 5 + 10


def test_do_bench_return_modes_and_quantiles(clock):
    fn, _ = _costs(clock, [1.0, 3.0])       # alternating 1 ms, 3 ms: mean 2 ms
    lo = testing.do_bench(fn, warmup=2, rep=40, return_mode="min")
    hi = testing.do_bench(fn, warmup=2, rep=40, return_mode="max")
    mean = testing.do_bench(fn, warmup=2, rep=40, return_mode="mean")
    med = testing.do_bench(fn, warmup=2, rep=40, return_mode="median")
    assert (lo, hi) == (pytest.approx(1.0), pytest.approx(3.0))
    assert 1.8 <= mean <= 2.2 and med in (pytest.approx(1.0), pytest.approx(2.0), pytest.approx(3.0))
    fn, _ = _costs(clock, [1.0, 3.0])       # fresh: the 5-call estimate is 11/5 = 2.2 ms
    allt = testing.do_bench(fn, warmup=2, rep=40, return_mode="all")
    assert len(allt) == int(40 / 2.2) and sorted(set(round(x, 6) for x in allt)) == [1.0, 3.0]
    q = testing.do_bench(fn, warmup=2, rep=40, quantiles=[0.5, 0.2, 0.8])
    assert q[1] == pytest.approx(1.0) and q[2] == pytest.approx(3.0) and 1.0 <= q[0] <= 3.0
    single = testing.do_bench(fn, warmup=2, rep=40, quantiles=[0.8])
    assert isinstance(single, float) and single == pytest.approx(3.0)
    with pytest.raises(ValueError):
        testing.do_bench(fn, warmup=1, rep=1, return_mode="p99")


def test_do_bench_real_clock_smoke():
    n = [0]

    def f():
        n[0] += 1
    t = testing.do_bench(f, warmup=1, rep=2)
    assert t >= 0 and n[0] >= 8


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


@pytest.mark.filterwarnings("ignore:perf_report. no plot")
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


def test_perf_report_says_when_it_cannot_plot(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # as if matplotlib were absent

    @testing.perf_report(testing.Benchmark(
        x_names=["N"], x_vals=[2], line_arg="provider", line_vals=["a"], line_names=["A"],
        plot_name="no-plot", args={}))
    def bench(N, provider):
        return float(N)

    with pytest.warns(UserWarning, match=r"no plot for 'no-plot'.*pip install matplotlib.*no-plot\.csv"):
        bench.run(save_path=str(tmp_path))
    assert (tmp_path / "no-plot.csv").read_text().splitlines() == ["N,A", "2,2"]
    assert not (tmp_path / "no-plot.png").exists()
