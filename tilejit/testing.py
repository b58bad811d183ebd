"""Benchmarking and checking helpers, compatible with ``triton.testing``.

``do_bench`` times a callable in milliseconds, ``assert_close`` compares arrays or
tensors, and ``perf_report``/``Benchmark`` sweep parameters, print a table and, when
matplotlib is installed, save a plot.
"""
from __future__ import annotations

import math
import os
import statistics
import sys
import time
import warnings

import numpy as np

__all__ = ["do_bench", "assert_close", "Benchmark", "perf_report", "Mark", "synchronize"]


def synchronize() -> None:
    """Wait for outstanding device work (CUDA through torch or tilejit's driver)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()
        except Exception:  # pragma: no cover - depends on the machine
            pass
    cuda = sys.modules.get("tilejit.backends.cuda.backend")
    sync = getattr(cuda, "synchronize", None)
    if sync is not None:
        sync()


def _clear_grads(grad_to_none):
    if grad_to_none is not None:
        for x in grad_to_none:
            x.grad = None


def _summarize(times, quantiles, return_mode):
    if quantiles is not None:
        arr = np.asarray(times, dtype=np.float64)
        ret = [float(v) for v in np.quantile(arr, list(quantiles))]
        return ret[0] if len(ret) == 1 else ret
    if return_mode == "all":
        return [float(t) for t in times]
    fn = {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}
    if return_mode not in fn:
        raise ValueError(f"return_mode must be one of min, max, mean, median, all; got {return_mode!r}")
    return float(fn[return_mode](times))


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Time ``fn()`` in milliseconds (Triton's ``do_bench``).

    ``warmup`` and ``rep`` are target durations in ms: a first estimate over 5 calls
    sets how many warm-up and timed calls run (at least one of each).  With
    ``quantiles`` returns those quantiles (a list, or one float for one quantile);
    otherwise a statistic chosen by ``return_mode`` ("min", "max", "mean", "median",
    "all").  ``grad_to_none``: tensors whose ``.grad`` is reset before each call.
    """
    fn()
    synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        _clear_grads(grad_to_none)
        fn()
    synchronize()
    estimate_ms = max((time.perf_counter() - t0) * 1e3 / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    n_repeat = min(n_repeat, 100_000)
    n_warmup = min(n_warmup, 100_000)
    for _ in range(n_warmup):
        fn()
    synchronize()
    times = []
    for _ in range(n_repeat):
        _clear_grads(grad_to_none)
        s = time.perf_counter()
        fn()
        synchronize()
        times.append((time.perf_counter() - s) * 1e3)
    return _summarize(times, quantiles, return_mode)


def _to_numpy(x):
    if hasattr(x, "detach"):          # torch tensor
        x = x.detach()
        if hasattr(x, "cpu"):
            x = x.cpu()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":
            x = x.float()
        return x.numpy()
    if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        return x.get()
    return np.asarray(x)


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Assert that ``x`` and ``y`` (arrays, tensors or scalars) are close.

    Defaults as Triton: ``atol=1e-2``, ``rtol=0``.  ``atol``/``rtol`` may be
    callables taking the dtype.  Booleans and integers are compared exactly.
    """
    xa, ya = _to_numpy(x), _to_numpy(y)
    atol = 1e-2 if atol is None else atol
    rtol = 0 if rtol is None else rtol
    atol = atol(xa.dtype) if callable(atol) else atol
    rtol = rtol(xa.dtype) if callable(rtol) else rtol
    if xa.dtype == np.bool_ or ya.dtype == np.bool_ or (
            np.issubdtype(xa.dtype, np.integer) and np.issubdtype(ya.dtype, np.integer)):
        np.testing.assert_array_equal(xa, ya, err_msg=err_msg)
        return
    np.testing.assert_allclose(xa.astype(np.float64), ya.astype(np.float64), atol=atol,
                               rtol=rtol, equal_nan=True, err_msg=err_msg)


class Benchmark:
    """One sweep of a ``perf_report`` (Triton's ``triton.testing.Benchmark``)."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name,
                 args=None, xlabel="", ylabel="", x_log=False, y_log=False, styles=None,
                 color=None):
        self.x_names = list(x_names)
        self.x_vals = list(x_vals)
        self.line_arg = line_arg
        self.line_vals = list(line_vals)
        self.line_names = list(line_names)
        self.plot_name = plot_name
        self.args = dict(args or {})
        self.xlabel, self.ylabel = xlabel, ylabel
        self.x_log, self.y_log = x_log, y_log
        self.styles = styles


def _format_table(columns, rows) -> str:
    cells = [[str(c) for c in columns]] + [[_fmt(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def _fmt(v) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.6g}"
    return str(v)


class Mark:
    """The object ``perf_report`` returns: ``.run(...)`` performs the sweeps."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def _run_one(self, bench, save_path, show_plots, print_data):
        columns = list(bench.x_names) + list(bench.line_names)
        rows = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            xargs = dict(zip(bench.x_names, xs))
            row = list(xs)
            for lv in bench.line_vals:
                r = self.fn(**xargs, **{bench.line_arg: lv}, **bench.args)
                row.append(float(r[0] if isinstance(r, (list, tuple)) else r))
            rows.append(row)
        if print_data:
            print(f"{bench.plot_name}:")
            print(_format_table(columns, rows))
        if save_path:
            os.makedirs(save_path, exist_ok=True)
            with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w") as f:
                f.write(",".join(columns) + "\n")
                for r in rows:
                    f.write(",".join(_fmt(v) for v in r) + "\n")
        self._plot(bench, columns, rows, save_path, show_plots)
        return columns, rows

    @staticmethod
    def _plot(bench, columns, rows, save_path, show_plots):
        if not (save_path or show_plots):
            return
        try:
            import matplotlib
            if not show_plots:
                matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as e:
            kept = f"; the table is in {os.path.join(save_path, bench.plot_name + '.csv')}" if save_path else ""
            warnings.warn(f"perf_report: no plot for '{bench.plot_name}': matplotlib cannot be "
                          f"imported ({e}); pip install matplotlib{kept}", stacklevel=4)
            return
        fig, ax = plt.subplots()
        nx = len(bench.x_names)
        xs = [r[0] for r in rows]
        for i, name in enumerate(bench.line_names):
            kw = {}
            if bench.styles:
                kw = {"color": bench.styles[i][0], "linestyle": bench.styles[i][1]}
            ax.plot(xs, [r[nx + i] for r in rows], label=name, **kw)
        ax.legend()
        ax.set_xlabel(bench.xlabel or bench.x_names[0])
        ax.set_ylabel(bench.ylabel)
        if bench.x_log:
            ax.set_xscale("log")
        if bench.y_log:
            ax.set_yscale("log")
        if show_plots:
            plt.show()
        if save_path:
            fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
        plt.close(fig)

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        """Run every benchmark; with ``return_df`` return the table(s) (pandas
        DataFrames when pandas is installed, otherwise lists of row dicts)."""
        benches = self.benchmarks if isinstance(self.benchmarks, (list, tuple)) else [self.benchmarks]
        results = []
        for b in benches:
            columns, rows = self._run_one(b, save_path, show_plots, print_data)
            results.append(_as_frame(columns, rows))
        if return_df:
            return results if len(results) > 1 else results[0]
        return None


def _as_frame(columns, rows):
    try:
        import pandas as pd
        return pd.DataFrame(rows, columns=columns)
    except ImportError:
        return [dict(zip(columns, r)) for r in rows]


def perf_report(benchmarks):
    """Decorator: ``@perf_report(Benchmark(...))`` turns a function returning a
    number (or a ``(value, min, max)`` tuple) into a :class:`Mark`."""
    return lambda fn: Mark(fn, benchmarks)
