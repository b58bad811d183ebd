"""The claim checker: it must catch every kind of wrong claim with a useful message,
and TILEJIT_CHECK_ANALYSIS (options.check_analysis) must turn it on for launches."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from irkit import K, launch
from tilejit.analysis import Fact, analyze
from tilejit.analysis.checker import AnalysisClaimError, ClaimChecker, check_value, make_observer
from tilejit.analysis.lattice import AxisInfo
from tilejit.ir import PointerType, TileType, ops
from tilejit.ir.types import float32, int32, uint64
from tilejit.runtime.options import use_options


def fact(rng, c, v, k):
    return Fact(rng, AxisInfo(tuple(c), tuple(v), tuple(k)))


T16 = TileType(int32, (16,))


@pytest.mark.parametrize("arr,f,claim", [
    (np.arange(16, dtype=np.int32), fact((0, 14), [16], [1], [1]), "range [0, 14]"),
    (np.arange(16, dtype=np.int32)[::-1].copy(), fact((0, 15), [2], [1], [1]), "contiguity[0] = 2"),
    (np.arange(16, dtype=np.int32) + 2, fact((2, 17), [4], [4], [1]), "divisibility[0] = 4"),
    (np.arange(16, dtype=np.int32) // 4, fact((0, 3), [1], [1], [8]), "constancy[0] = 8"),
    (np.arange(16, dtype=np.int32) * 4, fact((0, 60), [1], [8], [1]), "divisibility[0] = 8"),
])
def test_each_kind_of_wrong_claim_is_caught(arr, f, claim):
    bad = check_value(T16, arr, f)
    assert bad is not None and bad[0] == claim


def test_true_claims_pass():
    a = np.arange(16, dtype=np.int32)
    assert check_value(T16, a, fact((0, 15), [16], [1 << 32], [1])) is None
    assert check_value(T16, a // 4, fact((0, 3), [1], [1], [4])) is None
    assert check_value(T16, (a // 4) * 8, fact((0, 24), [1], [8], [4])) is None
    assert check_value(T16, np.zeros(16, np.int32), fact((0, 0), [1], [1 << 32], [16])) is None


def test_pointer_claims_are_in_bytes():
    t = TileType(PointerType(float32), (8,))
    addr = np.uint64(4096 + 16) + np.arange(8, dtype=np.uint64) * np.uint64(4)
    assert check_value(t, addr, fact(None, [8], [16], [1])) is None
    assert check_value(t, addr, fact(None, [8], [32], [1]))[0] == "divisibility[0] = 32"
    step1 = np.uint64(4096) + np.arange(8, dtype=np.uint64)
    assert check_value(t, step1, fact(None, [2], [1], [1]))[0] == "contiguity[0] = 2"


def test_wraparound_is_not_contiguous():
    t = TileType(uint64, (2,))
    assert check_value(t, np.array([2**64 - 2, 2**64 - 1], np.uint64), fact(None, [2], [1], [1])) is None
    assert check_value(t, np.array([2**64 - 1, 0], np.uint64), fact(None, [2], [1], [1])) is not None
    t32 = TileType(int32, (2,))
    wrapped = np.array([2**31 - 1, -2**31], np.int32)
    assert check_value(t32, wrapped, fact(None, [2], [1], [1]))[0] == "contiguity[0] = 2"


def test_float_constancy_is_bitwise():
    t = TileType(float32, (4,))
    nan = np.array([np.nan] * 4, np.float32)
    assert check_value(t, nan, fact(None, [1], [1], [4])) is None
    assert check_value(t, np.array([0.0, -0.0, 1, 1], np.float32), fact(None, [1], [1], [2])) is not None


def _divrem_kernel():
    """q = (arange(16) - 8) // 4, stored."""
    k = K("divrem", o="*i32")
    a = k.arange(16)
    neg = k.v(ops.SubOp, lhs=a, rhs=k.const(8, int32, (16,)))
    q = k.v(ops.IDivOp, lhs=neg, rhs=k.const(4, int32, (16,)))
    k.op(ops.StoreOp, ptr=k.ptrs(k.o, a), value=q)
    return k.done(), q


def test_error_names_op_line_claim_and_counter_example():
    """Triton #7749's claim (constancy 4 for a signed // on negatives) is refuted."""
    f, q = _divrem_kernel()
    facts = analyze(f)
    assert facts.axis(q).constancy == (1,)
    tritons = fact(facts.range(q), [1], [1], [4])
    facts._state[q] = tritons
    with pytest.raises(AnalysisClaimError) as e:
        launch(f, (1,), np.zeros(16, np.int32), observer=ClaimChecker(f, facts=facts))
    msg = str(e.value)
    assert "arith.idiv" in msg and f"kern.py:{q.op.loc.line}" in msg
    assert "constancy[0] = 4" in msg
    assert "element (0,) = -2, element (1,) = -1" in msg
    assert e.value.op is q.op


def test_sound_facts_pass_and_every_value_is_checked():
    f, q = _divrem_kernel()
    out = np.zeros(16, np.int32)
    checker = make_observer(f, (2, 1, 1))
    launch(f, (2,), out, observer=checker)
    np.testing.assert_array_equal(out, np.fix((np.arange(16) - 8) / 4).astype(np.int32))
    n_results = sum(len(op.results) for op in f.walk())
    assert checker.checked == 2 * n_results
    assert make_observer(f, (2, 1, 1)).facts is checker.facts     # cached per grid


@tilejit.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask), mask)


def test_check_analysis_option_turns_the_checker_on(monkeypatch):
    from tilejit.analysis import ranges
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    with use_options(backend="interpreter", interpret=True, check_analysis=True):
        _copy[(4,)](x, y, 64, BLOCK=16)
        np.testing.assert_array_equal(x, y)
        # a wrong range rule for arange: the launch must now fail in the checker
        monkeypatch.setitem(ranges.RANGE_RULES.rules, ops.ArangeOp,
                            lambda op, ctx: [(op.start, op.end - 2)])
        with pytest.raises(AnalysisClaimError, match="tt.make_range"):
            _copy[(3,)](x, y, 48, BLOCK=16)    # a new grid: analysed afresh
