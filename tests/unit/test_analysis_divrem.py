"""`//` and `%` by values known only through their divisibility and range (tutorial 03's
`% M`, a bias index `offs % C`): the range rules bound |divisor| below by its divisibility,
and the axis rules keep runs exactly when the dividend is proved non-negative.  Checked
against brute force and, in kernels, by the claim checker."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irkit import K, launch
from tilejit.analysis import analyze
from tilejit.analysis import ranges as R
from tilejit.analysis.checker import ClaimChecker
from tilejit.ir import TileType, ops
from tilejit.ir.types import int32

I32 = TileType(int32)


def _tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


@settings(max_examples=200, deadline=None)
@given(a=st.tuples(st.integers(-200, 200), st.integers(0, 60)), b=st.tuples(st.integers(-70, 70), st.integers(0, 90)),
       v=st.sampled_from([1, 2, 4, 8, 16]))
def test_divisor_multiple_of_v_ranges_are_sound(a, b, v):
    a, b = (a[0], a[0] + a[1]), (b[0], b[0] + b[1])
    q, r = R.idiv_range(a, b, I32, v), R.rem_range(a, b, I32, v)
    for y in range(b[0], b[1] + 1):
        if y == 0 or y % v:
            continue
        for x in range(a[0], a[1] + 1):
            assert q[0] <= _tdiv(x, y) <= q[1], (a, b, v, x, y)
            assert r[0] <= x - y * _tdiv(x, y) <= r[1], (a, b, v, x, y)


def test_divisibility_bounds_the_divisor():
    full = (-2**31, 2**31 - 1)
    assert R.min_nonzero_abs(full, 16) == 16 and R.min_nonzero_abs(full) == 1
    assert R.min_nonzero_abs((0, 0), 16) is None and R.min_nonzero_abs((5, 10), 16) is None
    assert R.rem_range((0, 15), full, I32, 16) == (0, 15)         # x % C == x for x < 16 <= |C|
    assert R.rem_range((0, 15), full, I32) == (0, 15)             # (always: |x % C| <= |x|)
    assert R.idiv_range((0, 2**31 - 2), full, I32, 8) == (-((2**31 - 2) // 8), (2**31 - 2) // 8)
    assert R.idiv_range((0, 2**31 - 2), full, I32) == (-(2**31 - 2), 2**31 - 2)


def _kernel(sign_known):
    """x = pid * 64 + arange(64) (pid bounded by the grid) or x = s + arange(64) (s any
    int); x % C, x // C, C a multiple of 16 (specialised)."""
    k = K("k", C="i32", s="i32")
    k._f.arguments[0].divisibility = 16
    r = k.arange(64)
    if sign_known:
        pid = k.v(ops.ProgramIdOp, axis=0)
        base = k.v(ops.MulOp, lhs=pid, rhs=k.const(64, int32, ()))
    else:
        base = k.s
    x = k.v(ops.AddOp, lhs=k.splat(base, (64,)), rhs=r)
    c = k.splat(k.C, (64,))
    rem = k.v(ops.RemOp, lhs=x, rhs=c)
    div = k.v(ops.IDivOp, lhs=x, rhs=c)
    return k, rem, div


def test_rem_by_a_specialised_argument_keeps_runs_of_16_for_non_negative_dividends():
    k, rem, div = _kernel(True)
    f = k.done()
    F = analyze(f, grid=(8, 1, 1))
    a = F.axis(rem)
    assert (a.contiguity, a.divisibility) == ((16,), (16,)) and F.axis(div).constancy == (16,)
    for C in (16, 48, -32, 64, 1024):
        launch(f, (8,), C, 0, observer=ClaimChecker(f, (8, 1, 1), F))
    free = analyze(f)                       # any grid: pid * 64 may wrap, x may be negative
    assert free.axis(rem).contiguity == (1,) and free.axis(div).constancy == (1,)


@pytest.mark.parametrize("s", [0, 16, -64, -5, 2**31 - 64])
def test_rem_of_an_unknown_sign_dividend_claims_no_runs(s):
    k, rem, div = _kernel(False)
    f = k.done()
    F = analyze(f)
    assert F.axis(rem).contiguity == (1,) and F.axis(div).constancy == (1,)
    launch(f, (1,), 48, s, observer=ClaimChecker(f, (1, 1, 1), F))
    # what Triton's rule would claim (runs of 16) is false for a negative dividend
    x = (np.int64(s) + np.arange(64)).astype(np.int32).astype(np.int64)
    got = np.fmod(x, 48)
    runs_hold = all((np.diff(got[i:i + 16]) == 1).all() for i in range(0, 64, 16))
    assert runs_hold == (s >= 0 and s % 16 == 0)
