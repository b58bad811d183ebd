"""Integer semantics against a Python-int model of Triton's rules: promotion between
widths and signedness, wrap-around, // and % truncating toward zero, shifts and
comparisons of mixed signedness.  Property-based (hypothesis, bounded)."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tilejit
import tilejit.language as tl

N = 16


@tilejit.jit
def k_add(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(a_ptr + i) + tl.load(b_ptr + i))


@tilejit.jit
def k_sub(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(a_ptr + i) - tl.load(b_ptr + i))


@tilejit.jit
def k_mul(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(a_ptr + i) * tl.load(b_ptr + i))


@tilejit.jit
def k_div(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(a_ptr + i) // tl.load(b_ptr + i))


@tilejit.jit
def k_rem(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(a_ptr + i) % tl.load(b_ptr + i))


@tilejit.jit
def k_shl(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(a_ptr + i) << tl.load(b_ptr + i))


@tilejit.jit
def k_shr(a_ptr, b_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(a_ptr + i) >> tl.load(b_ptr + i))


@tilejit.jit
def k_cmp(a_ptr, b_ptr, lt_ptr, le_ptr, eq_ptr, ne_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i)
    b = tl.load(b_ptr + i)
    tl.store(lt_ptr + i, a < b)
    tl.store(le_ptr + i, a <= b)
    tl.store(eq_ptr + i, a == b)
    tl.store(ne_ptr + i, a != b)


def _info(dt):
    i = np.iinfo(dt)
    return i.bits, i.min < 0


def promote(a, b):
    """Triton's integer promotion: same signedness -> the wider; otherwise the
    unsigned type wins unless the signed one is strictly wider."""
    (ab, asg), (bb, bsg) = _info(a), _info(b)
    if asg == bsg:
        return a if ab >= bb else b
    if not asg:
        return a if ab >= bb else b
    return b if bb >= ab else a


def wrap(v, dt):
    bits, signed = _info(dt)
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def cdiv(a, b):
    """C division; tilejit defines ``x // 0`` as 0 on every backend."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


OPS = {
    "add": (k_add, lambda a, b: a + b),
    "sub": (k_sub, lambda a, b: a - b),
    "mul": (k_mul, lambda a, b: a * b),
    "div": (k_div, cdiv),
    "rem": (k_rem, lambda a, b: a - b * cdiv(a, b)),
    "shl": (k_shl, lambda a, b: a << b),
    "shr": (k_shr, lambda a, b: a >> b),
}

PAIRS = [(np.int32, np.int32), (np.int32, np.int64), (np.int32, np.uint32),
         (np.int64, np.uint32), (np.int64, np.uint64), (np.int8, np.uint8)]
PAIR_IDS = [f"{np.dtype(a).name}-{np.dtype(b).name}" for a, b in PAIRS]

SETTINGS = dict(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _ints(dt):
    i = np.iinfo(dt)
    edges = [int(i.min), int(i.max), 0, 1, -1, 7, -7, 1000, -1000]
    edges = [e for e in edges if i.min <= e <= i.max]
    return st.one_of(st.sampled_from(edges), st.integers(int(i.min), int(i.max)))


def _operands(data, op, ta, tb):
    pt = promote(ta, tb)
    a = data.draw(st.lists(_ints(ta), min_size=N, max_size=N))
    if op in ("shl", "shr"):
        bits = _info(pt)[0]
        hi = min(bits - 1, int(np.iinfo(tb).max))
        b = data.draw(st.lists(st.integers(0, hi), min_size=N, max_size=N))
    else:
        b = data.draw(st.lists(_ints(tb), min_size=N, max_size=N))
    return np.array(a, dtype=ta), np.array(b, dtype=tb), pt


def _mixed(ta, tb):
    return _info(ta)[1] != _info(tb)[1]


CASES = [(op, ta, tb) for op in OPS for ta, tb in PAIRS
         if not (op in ("div", "rem") and _mixed(ta, tb))]


@pytest.mark.parametrize("op,ta,tb", CASES,
                         ids=[f"{op}-{np.dtype(a).name}-{np.dtype(b).name}" for op, a, b in CASES])
@settings(**SETTINGS)
@given(data=st.data())
def test_binary_int_ops(backend, op, ta, tb, data):
    a, b, pt = _operands(data, op, ta, tb)
    kern, fn = OPS[op]
    out = np.zeros(N, dtype=pt)
    kern[(1,)](a, b, out, N=N)
    if op == "shr" and _info(ta)[1]:
        # Triton's tensor.__rshift__: arithmetic when x's own type is signed, even where the
        # promoted type is unsigned (int8 >> uint8 shifts the sign in, result uint8)
        want = [wrap(int(x) >> wrap(int(y), pt), pt) for x, y in zip(a, b)]
    else:
        want = [wrap(fn(wrap(int(x), pt), wrap(int(y), pt)), pt) for x, y in zip(a, b)]
    assert out.tolist() == want, (op, a.tolist(), b.tolist())


@pytest.mark.parametrize("ta,tb", PAIRS, ids=PAIR_IDS)
@settings(**SETTINGS)
@given(data=st.data())
def test_mixed_signedness_comparisons(backend, ta, tb, data):
    a, b, pt = _operands(data, "cmp", ta, tb)
    outs = [np.zeros(N, dtype=np.bool_) for _ in range(4)]
    k_cmp[(1,)](a, b, *outs, N=N)
    pa = [wrap(int(x), pt) for x in a]
    pb = [wrap(int(y), pt) for y in b]
    assert outs[0].tolist() == [x < y for x, y in zip(pa, pb)]
    assert outs[1].tolist() == [x <= y for x, y in zip(pa, pb)]
    assert outs[2].tolist() == [x == y for x, y in zip(pa, pb)]
    assert outs[3].tolist() == [x != y for x, y in zip(pa, pb)]


@pytest.mark.parametrize("kern", [k_div, k_rem], ids=["div", "rem"])
def test_div_rem_of_mixed_signedness_is_rejected(backend, kern):
    """As in Triton: /, // and % refuse operands of different signedness."""
    a = np.ones(N, np.int32)
    with pytest.raises(tilejit.CompilationError, match="signedness"):
        kern[(1,)](a, a.view(np.uint32), np.zeros(N, np.uint32), N=N)


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
INT_IDS = [np.dtype(d).name for d in INT_DTYPES]


def _edge_pairs(dt):
    """Every pair of edge values (INT_MIN, -1, 0, the maximum...) of ``dt``, zero divisors
    twice as often, in rows of N."""
    i = np.iinfo(dt)
    edges = [int(i.min), int(i.max), 0, 1, 7, 100] + ([-1, -7, -100] if i.min < 0 else [int(i.max) - 1])
    pairs = [(x, y) for x in edges for y in edges + [0, 0]]
    pairs += [(0, 0)] * (-len(pairs) % N)
    return np.array([x for x, _ in pairs], dt), np.array([y for _, y in pairs], dt)


@pytest.mark.parametrize("dt", INT_DTYPES, ids=INT_IDS)
def test_div_rem_edges_defined_on_every_backend(backend, dt):
    """INT_MIN // -1 wraps to INT_MIN (INT_MIN % -1 == 0); x // 0 == 0 and x % 0 == x,
    the same on every backend and every integer width, signed and unsigned (LLVM's
    sdiv/srem/udiv/urem leave these undefined; cuda lowers them through the shared guarded
    rule of backends/llvm/scalar.py)."""
    a, b = _edge_pairs(dt)
    for lo in range(0, len(a), N):
        ca, cb = a[lo:lo + N], b[lo:lo + N]
        q, r = np.zeros(N, dt), np.zeros(N, dt)
        k_div[(1,)](ca, cb, q, N=N)
        k_rem[(1,)](ca, cb, r, N=N)
        want_q = [wrap(cdiv(int(x), int(y)), dt) for x, y in zip(ca, cb)]
        want_r = [wrap(int(x) - int(y) * cdiv(int(x), int(y)), dt) for x, y in zip(ca, cb)]
        assert q.tolist() == want_q, (ca.tolist(), cb.tolist())
        assert r.tolist() == want_r, (ca.tolist(), cb.tolist())


@pytest.mark.parametrize("dt", INT_DTYPES, ids=INT_IDS)
def test_cuda_div_rem_are_guarded_and_assemble(dt):
    """The CUDA lowering of // and % divides only by a guarded divisor (a ``select``
    replacing 0, and -1 when signed), for sm_80 and sm_90, and ptxas accepts the PTX."""
    from tilejit.backends.cuda import target as tgt
    from tilejit.ir.types import dtype_from_numpy
    ty = "*" + dtype_from_numpy(np.dtype(dt)).name
    sig = {"a_ptr": ty, "b_ptr": ty, "o_ptr": ty}
    for kern, arch in [(k_div, 90), (k_rem, 90), (k_div, 80), (k_rem, 80)]:
        k = tilejit.compile(kern, signature=sig, constexprs={"N": N}, target=f"cuda:{arch}")
        llir = k.asm["llir"]
        divisors = re.findall(r"= (?:sdiv|srem|udiv|urem) i\d+ %\S+, (%\S+)", llir)
        assert divisors, llir
        for d in divisors:
            assert re.search(re.escape(d) + r" = select ", llir), (d, llir)
        if tgt.find_ptxas():
            tgt.ptxas(k.asm["ptx"], arch)


def test_known_triton_answers(backend):
    """Hand-checked cases: -7 // 2 == -3, -7 % 2 == -1, int32 overflow wraps,
    -1 < 1u is false (promoted to uint32)."""
    a = np.array([-7, 7, -7, 2**31 - 1] + [0] * 12, np.int32)
    b = np.array([2, -2, -2, 1] + [1] * 12, np.int32)
    q, r, s = (np.zeros(N, np.int32) for _ in range(3))
    k_div[(1,)](a, b, q, N=N)
    k_rem[(1,)](a, b, r, N=N)
    k_add[(1,)](a, b, s, N=N)
    assert q[:4].tolist() == [-3, -3, 3, 2**31 - 1]
    assert r[:4].tolist() == [-1, 1, -1, 0]
    assert s[3] == -2**31
    outs = [np.zeros(N, dtype=np.bool_) for _ in range(4)]
    k_cmp[(1,)](np.full(N, -1, np.int32), np.ones(N, np.uint32), *outs, N=N)
    assert not outs[0].any() and outs[3].all()
