"""Atomics (tl.atomic_*): old values returned, masks, duplicates within a tile, many
programs racing on the CPU thread pool; a spin lock from atomic_cas/atomic_xchg."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl

DTYPES = [np.int32, np.int64, np.uint32, np.float32]


@tilejit.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    bins = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=m)


def test_histogram_by_atomic_add(backend, rng):
    n, nbins = 20000, 16
    x = rng.integers(0, nbins, n).astype(np.int32)
    hist = np.zeros(nbins, np.int32)
    histogram_kernel[(triton_cdiv(n, 256),)](x, hist, n, BLOCK=256)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=nbins))


def triton_cdiv(a, b):
    return (a + b - 1) // b


@tilejit.jit
def rmw_kernel(p_ptr, v_ptr, old_ptr, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(v_ptr + offs, mask=m)
    p = p_ptr + offs
    if KIND == "add":
        old = tl.atomic_add(p, v, mask=m)
    elif KIND == "max":
        old = tl.atomic_max(p, v, mask=m)
    elif KIND == "min":
        old = tl.atomic_min(p, v, mask=m, sem="relaxed")
    elif KIND == "and":
        old = tl.atomic_and(p, v, mask=m, scope="gpu")
    elif KIND == "or":
        old = tl.atomic_or(p, v, mask=m)
    elif KIND == "xor":
        old = tl.atomic_xor(p, v, mask=m)
    else:
        old = tl.atomic_xchg(p, v, mask=m)
    tl.store(old_ptr + offs, old, mask=m)


_NP = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
       "or": np.bitwise_or, "xor": np.bitwise_xor, "xchg": lambda a, b: b}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", list(_NP))
def test_rmw_kinds(backend, rng, kind, dtype):
    if np.dtype(dtype).kind == "f" and kind in ("and", "or", "xor"):
        pytest.skip("bitwise atomics are integer-only")
    n, block = 50, 64
    if np.dtype(dtype).kind == "f":
        p0 = rng.standard_normal(block).astype(dtype)
        v = rng.standard_normal(block).astype(dtype)
    else:
        hi = 1000 if np.dtype(dtype).kind == "u" else 500
        lo = 0 if np.dtype(dtype).kind == "u" else -500
        p0 = rng.integers(lo, hi, block).astype(dtype)
        v = rng.integers(lo, hi, block).astype(dtype)
    p = p0.copy()
    old = np.zeros(block, dtype)
    rmw_kernel[(1,)](p, v, old, n, KIND=kind, BLOCK=block)
    np.testing.assert_array_equal(old[:n], p0[:n])
    np.testing.assert_array_equal(p[:n], _NP[kind](p0[:n], v[:n]).astype(dtype))
    np.testing.assert_array_equal(p[n:], p0[n:])          # masked lanes untouched


def _float_minmax_reference(kind, m, v):
    """fmax/fmin with -0.0 < +0.0 and a NaN value changing nothing; a NaN already in
    memory follows Triton's integer formulation (signed max of the bits for a value with
    its sign bit clear, unsigned min for one with it set; min the other way round)."""
    ints, uints = m.dtype.str.replace("f", "i"), m.dtype.str.replace("f", "u")
    out = (np.fmax if kind == "max" else np.fmin)(m, v)
    zeros = (m == 0) & (v == 0)
    pick_neg = (np.signbit(m) & np.signbit(v)) if kind == "max" else (np.signbit(m) | np.signbit(v))
    out = np.where(zeros, np.where(pick_neg, -0.0, 0.0).astype(m.dtype), out)
    mi, vi, mu, vu = m.view(ints), v.view(ints), m.view(uints), v.view(uints)
    s = np.maximum(mi, vi) if kind == "max" else np.minimum(mi, vi)
    u = (np.minimum(mu, vu) if kind == "max" else np.maximum(mu, vu)).view(ints)
    bits = np.where(vi < 0, u, s).view(m.dtype)
    return np.where(np.isnan(m) & ~np.isnan(v), bits, np.where(np.isnan(v), m, out))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", ["max", "min"])
def test_float_max_min_signed_zeros_nan_infinities(backend, kind, dtype):
    """Every pair of special memory values and operands: signed zeros (-0.0 < +0.0),
    infinities, extremes, subnormals, NaN operands (no change) and NaN in memory."""
    fi = np.finfo(dtype)
    sp = np.array([-np.inf, fi.min, -2.5, -1.0, -fi.smallest_subnormal, -0.0, 0.0,
                   fi.smallest_subnormal, 1.0, 3.0, fi.max, np.inf], dtype)
    nan = np.array([np.nan], dtype)
    mem, val = [a.ravel() for a in np.meshgrid(np.concatenate([sp, nan, -nan]),
                                                 np.concatenate([sp, nan, -nan]), indexing="ij")]
    n = len(mem)
    p, old = mem.copy(), np.zeros(n, dtype)
    rmw_kernel[(1,)](p, val, old, n, KIND=kind, BLOCK=256)
    np.testing.assert_array_equal(old.view(f"u{old.itemsize}"), mem.view(f"u{mem.itemsize}"))
    want = _float_minmax_reference(kind, mem, val)
    bad = p.view(f"u{p.itemsize}") != want.view(f"u{want.itemsize}")
    assert not bad.any(), f"(memory, value, got, want): {list(zip(mem[bad], val[bad], p[bad], want[bad]))[:6]}"


@tilejit.jit
def rowmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    tl.atomic_max(out_ptr, tl.max(x, axis=0))              # scalar pointer, scalar value
    tl.atomic_min(out_ptr + 1 + offs % 4, x, mask=offs < n_cols)   # duplicates in one tile


def test_atomic_max_min_many_programs(backend, rng):
    x = rng.standard_normal((64, 100)).astype(np.float32)
    out = np.array([-np.inf, np.inf, np.inf, np.inf, np.inf], np.float32)
    rowmax_kernel[(64,)](x, out, 100, BLOCK=128)
    assert out[0] == x.max()
    np.testing.assert_array_equal(out[1:], [x[:, j::4].min() for j in range(4)])


@tilejit.jit
def cas_kernel(p_ptr, cmp_ptr, val_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_cas(p_ptr + offs, tl.load(cmp_ptr + offs), tl.load(val_ptr + offs))
    tl.store(old_ptr + offs, old)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_atomic_cas_tile(backend, rng, dtype):
    block = 32
    p0 = rng.integers(0, 4, block).astype(dtype)
    cmp = rng.integers(0, 4, block).astype(dtype)
    val = rng.integers(10, 20, block).astype(dtype)
    p, old = p0.copy(), np.zeros(block, dtype)
    cas_kernel[(1,)](p, cmp, val, old, BLOCK=block)
    np.testing.assert_array_equal(old, p0)
    np.testing.assert_array_equal(p, np.where(p0 == cmp, val, p0))


@tilejit.jit
def locked_accumulate(lock_ptr, count_ptr, acc_ptr, x_ptr, BLOCK: tl.constexpr):
    """Every program adds its row into one shared row under a spin lock (a non-atomic
    read-modify-write), as Triton's layer-norm backward tutorial does."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + offs)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    count = tl.load(count_ptr)
    if count == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        x += tl.load(acc_ptr + offs)
    tl.store(acc_ptr + offs, x)
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


def test_spin_lock(backend, rng):
    rows, block = 200, 32
    x = rng.integers(-100, 100, (rows, block)).astype(np.int32)
    lock, count = np.zeros(1, np.int32), np.zeros(1, np.int32)
    acc = np.full(block, 12345, np.int32)
    locked_accumulate[(rows,)](lock, count, acc, x, BLOCK=block)
    np.testing.assert_array_equal(acc, x.sum(0))
    assert lock[0] == 0 and count[0] == 1


def test_spin_lock_under_contention(backend, rng):
    """Thousands of programs through one lock: a release that does not order the
    critical section's stores before the unlock (or an acquire that lets the next
    holder read stale data) loses updates here."""
    if backend == "interpreter":
        pytest.skip("programs run one after another on the interpreter (see test_spin_lock)")
    rows, block = 4096, 256
    x = rng.integers(-100, 100, (rows, block)).astype(np.int32)
    lock, count = np.zeros(1, np.int32), np.zeros(1, np.int32)
    acc = np.zeros(block, np.int32)
    locked_accumulate[(rows,)](lock, count, acc, x, BLOCK=block, num_warps=4)
    np.testing.assert_array_equal(acc, x.sum(0))
    assert lock[0] == 0 and count[0] == 1


@tilejit.jit
def add_fp32_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr + offs % 8, x, mask=offs < n)


def test_atomic_add_float_sum(backend, rng):
    n = 4000
    x = rng.integers(-8, 8, n).astype(np.float32)          # exact in any order
    out = np.zeros(8, np.float32)
    add_fp32_kernel[(triton_cdiv(n, 128),)](out, x, n, BLOCK=128)
    np.testing.assert_array_equal(out, [x[j::8].sum() for j in range(8)])


@tilejit.jit
def ticket_kernel(counter_ptr, tickets_ptr, ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    """Each program draws BLOCK tickets per round from one counter (a tile of atomics
    on one address) in a loop; every ticket must be drawn exactly once."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for r in range(ROUNDS):
        t = tl.atomic_add(counter_ptr + offs * 0, 1)
        tl.store(tickets_ptr + (pid * ROUNDS + r) * BLOCK + offs, t)


def test_tickets_are_a_permutation(backend):
    progs, rounds, block = 64, 4, 16
    counter = np.zeros(1, np.int64)
    tickets = np.full(progs * rounds * block, -1, np.int64)
    ticket_kernel[(progs,)](counter, tickets, ROUNDS=rounds, BLOCK=block)
    assert counter[0] == tickets.size
    np.testing.assert_array_equal(np.sort(tickets), np.arange(tickets.size))
    # within one atomic op, lanes draw in lane order on the reference interpreter
    if backend == "interpreter":
        np.testing.assert_array_equal(tickets.reshape(-1, block) - tickets.reshape(-1, block)[:, :1],
                                      np.broadcast_to(np.arange(block), (progs * rounds, block)))


@tilejit.jit
def fp16_add_kernel(out_ptr, x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_add(out_ptr + offs % 4, tl.load(x_ptr + tl.program_id(0) * BLOCK + offs))
    tl.store(x_ptr + tl.program_id(0) * BLOCK + offs, old)


def test_atomic_add_fp16(backend, rng):
    progs, block = 8, 16
    x = rng.integers(-4, 5, progs * block).astype(np.float16)        # exact sums in fp16
    out = np.zeros(4, np.float16)
    want = np.array([x[j::4].astype(np.float64).sum() for j in range(4)])
    fp16_add_kernel[(progs,)](out, x.copy(), BLOCK=block)
    np.testing.assert_array_equal(out.astype(np.float64), want)
