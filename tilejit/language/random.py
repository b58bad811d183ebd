"""Counter-based random numbers (Philox 4x32 / 4x64), written in the language itself.

Deterministic in ``(seed, offset)``: the same seed and offsets give the same bits on
every backend, and the same numbers as Triton's ``tl.rand`` family.
"""
from .jit_callable import jit_helper as jit
from . import core as tl
from . import math
from . import standard

N_ROUNDS_DEFAULT = 10  # Philox rounds


@jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Run ``n_rounds`` rounds of Philox on counters (c0..c3) with key (k0, k1)."""
    if c0.dtype == tl.uint32:
        KEY_A: tl.constexpr = 0x9E3779B9
        KEY_B: tl.constexpr = 0xBB67AE85
        ROUND_A: tl.constexpr = 0xD2511F53
        ROUND_B: tl.constexpr = 0xCD9E8D57
    else:
        standard.static_assert(c0.dtype == tl.uint64, "dtype not supported in philox_impl")
        KEY_A: tl.constexpr = 0x9E3779B97F4A7C15
        KEY_B: tl.constexpr = 0xBB67AE8584CAA73B
        ROUND_A: tl.constexpr = 0xD2E7470EE14C6C93
        ROUND_B: tl.constexpr = 0xCA5A826395121157
    for _ in standard.static_range(n_rounds):
        prev_c0 = c0
        prev_c2 = c2
        c0 = math.umulhi(ROUND_B, prev_c2) ^ c1 ^ k0
        c2 = math.umulhi(ROUND_A, prev_c0) ^ c3 ^ k1
        c1 = ROUND_B * prev_c2
        c3 = ROUND_A * prev_c0
        k0 = k0 + KEY_A
        k1 = k1 + KEY_B
    return c0, c1, c2, c3


@jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Philox on counters of 32 or 64 bits keyed by the integer ``seed``."""
    seed = standard.to_tensor(seed)
    c0 = standard.to_tensor(c0)
    c1 = standard.to_tensor(c1)
    c2 = standard.to_tensor(c2)
    c3 = standard.to_tensor(c3)
    standard.static_assert(seed.dtype.is_int(), "the seed must be an integer")
    seed = seed.to(tl.uint64)
    if c0.dtype.primitive_bitwidth == 32:
        int_dtype = tl.uint32
        seed_hi = ((seed >> 32) & 0xffffffff).to(tl.uint32)
        seed_lo = (seed & 0xffffffff).to(tl.uint32)
    else:
        standard.static_assert(c0.dtype.primitive_bitwidth == 64, "bitwidth not supported in philox")
        int_dtype = tl.uint64
        seed_hi = standard.full((1, ), 0, dtype=int_dtype)
        seed_lo = seed
    c0 = c0.to(int_dtype, bitcast=True)
    c1 = c1.to(int_dtype, bitcast=True)
    c2 = c2.to(int_dtype, bitcast=True)
    c3 = c3.to(int_dtype, bitcast=True)
    return philox_impl(c0, c1, c2, c3, seed_lo, seed_hi, n_rounds)


@jit
def randint4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for ``seed`` and ``offset``; a 64-bit offset's upper
    32 bits go into the second counter word (Triton's Philox 4x32)."""
    offset_lo = offset.to(tl.uint32)
    _0 = offset_lo * 0
    if tl.constexpr(offset.dtype.primitive_bitwidth) > 32:
        offset_hi = (offset >> 32).to(tl.uint32)
    else:
        offset_hi = _0
    return philox(seed, offset_lo, offset_hi, _0, _0, n_rounds)


@jit
def randint(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """One block of random uint32 for ``seed`` (a scalar) and ``offset`` (a block)."""
    ret, _, _, _ = randint4x(seed, offset, n_rounds)
    return ret


@jit
def uint_to_uniform_float(x):
    """A random unsigned int to a float uniformly distributed in [0, 1)."""
    if x.dtype == tl.uint32 or x.dtype == tl.int32:
        x = x.to(tl.int32, bitcast=True)
        scale = 4.6566127342e-10
    else:
        standard.static_assert(x.dtype == tl.uint64 or x.dtype == tl.int64, "unsupported dtype")
        x = x.to(tl.int64, bitcast=True)
        scale = 1.0842020432385337e-19
    x = standard.where(x < 0, -x - 1, x)
    return x * scale


@jit
def rand(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 uniform in [0, 1) for ``seed`` and ``offset``."""
    source = randint(seed, offset, n_rounds)
    return uint_to_uniform_float(source)


@jit
def rand4x(seed, offsets, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of float32 uniform in [0, 1)."""
    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)
    return (uint_to_uniform_float(i1), uint_to_uniform_float(i2), uint_to_uniform_float(i3),
            uint_to_uniform_float(i4))


@jit
def pair_uniform_to_normal(u1, u2):
    """Box-Muller transform of two uniform blocks into two normal blocks."""
    u1 = standard.maximum(1.0e-7, u1)
    th = 6.283185307179586 * u2
    r = math.sqrt(-2.0 * math.log(u1))
    return r * math.cos(th), r * math.sin(th)


@jit
def randn(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 drawn from N(0, 1) for ``seed`` and ``offset``."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    u1 = uint_to_uniform_float(i1)
    u2 = uint_to_uniform_float(i2)
    n1, _ = pair_uniform_to_normal(u1, u2)
    return n1


@jit
def randn4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of float32 drawn from N(0, 1)."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
