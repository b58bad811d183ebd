"""The analysis fuzzer on tiles whose dimensions are not powers of two (3, 6, 10, 12,
(3, 5), (6, 12), ...): every range / contiguity / divisibility / constancy claim is
checked against the interpreter's values, and the CPU backend (which vectorizes from
those claims) agrees bit-exactly.  ``TILEJIT_FUZZ_EXAMPLES=N`` runs N examples."""
import numpy as np
from hypothesis import given, strategies as st

from analysis_fuzzkit import NON_POW2_SHAPES, build_kernel
from test_fuzz_analysis import _cpu_backend, _settings, run_checked

SEEDS = st.integers(0, 2**32 - 1)


@_settings(80)
@given(SEEDS)
def test_claims_hold_for_non_pow2_tiles(seed):
    k = build_kernel(seed, shapes=NON_POW2_SHAPES)
    for with_grid in (True, False):
        checker, _ = run_checked(k, with_grid=with_grid)
        assert checker.checked > 0


@_settings(15)
@given(SEEDS)
def test_compiled_matches_interpreted_for_non_pow2_tiles(seed):
    from tilejit.backends import Buffer, LaunchArgs
    from tilejit.runtime.options import Options
    backend = _cpu_backend()
    k = build_kernel(seed, shapes=NON_POW2_SHAPES)
    _, ref = run_checked(k, with_grid=False)
    out = np.zeros_like(ref)
    arrays = [k.src, out]
    bufs = [Buffer(n, a.ctypes.data, a.nbytes, a.itemsize) for n, a in zip(("src", "dst"), arrays)]
    compiled = backend.compile(k.func, Options())
    compiled.launch(k.grid, LaunchArgs([a.ctypes.data for a in arrays] + list(k.values), bufs, arrays))
    np.testing.assert_array_equal(out, ref)
