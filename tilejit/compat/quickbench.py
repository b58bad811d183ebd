"""``python -m tilejit bench`` without a script: a vector add against numpy."""
from __future__ import annotations

import numpy as np

import tilejit
import tilejit.language as tl
from tilejit.testing import Benchmark, do_bench, perf_report


@tilejit.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def _bench(size, provider):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(size).astype(np.float32)
    y = rng.standard_normal(size).astype(np.float32)
    out = np.empty_like(x)
    if provider == "tilejit":
        block = 1024
        fn = lambda: _add_kernel[(tilejit.cdiv(size, block),)](x, y, out, size, BLOCK=block)
        fn()
        np.testing.assert_allclose(out, x + y, rtol=1e-6)
    else:
        fn = lambda: np.add(x, y, out=out)
    ms = do_bench(fn, warmup=10, rep=50)
    return 3 * x.nbytes / (ms * 1e-3) / 1e9


def main() -> int:
    report = perf_report(Benchmark(x_names=["size"], x_vals=[2 ** i for i in (12, 16, 20, 22)],
                                   line_arg="provider", line_vals=["tilejit", "numpy"],
                                   line_names=["tilejit GB/s", "numpy GB/s"],
                                   plot_name="vector-add", ylabel="GB/s"))(_bench)
    report.run(print_data=True)
    return 0
