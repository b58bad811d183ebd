"""Fuzz the analysis: random index-expression kernels (built as IR) run through the
interpreter with the claim checker, which fails on any claim a value violates.

Bounded for CI; ``TILEJIT_FUZZ_EXAMPLES=N`` runs N examples per test instead.
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from analysis_fuzzkit import build_kernel, dst_size
from irkit import launch
from tilejit.analysis import analyze
from tilejit.analysis.checker import ClaimChecker

EXAMPLES = int(os.environ.get("TILEJIT_FUZZ_EXAMPLES", "0") or 0)


def _settings(default):
    return settings(max_examples=EXAMPLES or default, deadline=None, derandomize=not EXAMPLES,
                    suppress_health_check=list(HealthCheck))


def run_checked(k, with_grid=True):
    """Run the kernel under the checker; returns (checker, dst)."""
    checker = ClaimChecker(k.func, k.grid if with_grid else None)
    dst = np.zeros(dst_size(k), dtype=np.int64)
    launch(k.func, k.grid, k.src, dst, *k.values, observer=checker)
    return checker, dst


SEEDS = st.integers(0, 2**32 - 1)


@_settings(150)
@given(SEEDS)
def test_claims_hold_with_grid(seed):
    k = build_kernel(seed)
    checker, _ = run_checked(k, with_grid=True)
    assert checker.checked > 0


@_settings(100)
@given(SEEDS)
def test_claims_hold_without_grid(seed):
    k = build_kernel(seed)
    checker, _ = run_checked(k, with_grid=False)
    assert checker.checked > 0


@_settings(60)
@given(SEEDS)
def test_claims_hold_under_a_grid_bound(seed):
    """The facts a bounded compile uses (cpu and cuda backends: launches within the bound)."""
    k = build_kernel(seed)
    bound = (k.grid[0] + seed % 3, k.grid[1] + 1, 1)
    checker = ClaimChecker(k.func, None, analyze(k.func, grid_bound=bound))
    launch(k.func, k.grid, k.src, np.zeros(dst_size(k), dtype=np.int64), *k.values, observer=checker)
    assert checker.checked > 0


def test_generator_makes_the_new_shapes():
    """``% n`` / ``// n`` by a specialised argument and range claims come up."""
    from tilejit.ir import ops
    seen = set()
    for seed in range(300):
        k = build_kernel(seed)
        for op in k.func.walk():
            if isinstance(op, ops.AssumeRangeOp):
                seen.add("assume_range")
            if isinstance(op, (ops.RemOp, ops.IDivOp)) and isinstance(op.rhs.op, ops.SplatOp) \
                    and op.rhs.op.src in [a.value for a in k.func.arguments]:
                seen.add(type(op).__name__)
    assert seen == {"assume_range", "RemOp", "IDivOp"}


@_settings(60)
@given(SEEDS)
def test_analysis_is_deterministic_and_total(seed):
    """Every value gets a fact, and analysing twice gives the same facts."""
    k = build_kernel(seed)
    f1, f2 = analyze(k.func, k.grid), analyze(k.func, k.grid)
    for op in k.func.walk():
        for v in op.results:
            assert v in f1
            assert f1.fact(v) == f2.fact(v)


def _cpu_backend():
    from tilejit.backends import available_backends, get_backend
    if "cpu" not in available_backends():
        pytest.skip("cpu backend not available")
    return get_backend("cpu")


@_settings(25)
@given(SEEDS)
def test_compiled_matches_interpreted(seed):
    """The CPU backend (which may use the facts to vectorize) agrees bit-exactly with
    the interpreter (which checks them)."""
    from tilejit.backends import Buffer, LaunchArgs
    from tilejit.runtime.options import Options
    backend = _cpu_backend()
    k = build_kernel(seed)
    _, ref = run_checked(k, with_grid=False)
    out = np.zeros_like(ref)
    arrays = [k.src, out]
    bufs = [Buffer(n, a.ctypes.data, a.nbytes, a.itemsize) for n, a in zip(("src", "dst"), arrays)]
    compiled = backend.compile(k.func, Options())
    compiled.launch(k.grid, LaunchArgs([a.ctypes.data for a in arrays] + list(k.values), bufs, arrays))
    np.testing.assert_array_equal(out, ref)
