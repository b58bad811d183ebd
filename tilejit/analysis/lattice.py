"""The analysis lattice: integer ranges and axis info, per value.

Semantics of the facts (what the claim checker verifies, and what a backend may
rely on).  For a value of shape ``S`` (a scalar is treated as shape ``(1,)``) and a
dimension ``d`` with ``n = S[d]``, cut every line along ``d`` into aligned blocks
``[i*m, min((i+1)*m, n))``:

* ``range = (lo, hi)``: every element ``x`` (its numeric value; unsigned types are
  non-negative) satisfies ``lo <= x <= hi``.  ``None`` for floats and pointers.
* ``contiguity[d] = c``: in each block of ``c`` the values increase by exactly one
  *element* per step (pointers: by the pointee's size in bytes), no wraparound.
* ``constancy[d] = k``: in each block of ``k`` all values are equal (bitwise).
* ``divisibility[d] = v`` (a power of two): the first value of each contiguity
  block is a multiple of ``v`` (pointers: of ``v`` bytes).  With ``c = 1`` every
  element is.  ``v = 2**bits`` (the cap) means the value is 0 modulo the width.

Unknown is 1 for the three axis facts and the full type range for ranges.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import NamedTuple

from ..ir.types import PointerType, TileType, int_range


class AxisInfo(NamedTuple):
    """Per-dimension contiguity, divisibility and constancy (tuples, one entry per
    dimension; a scalar has one entry)."""

    contiguity: tuple
    divisibility: tuple
    constancy: tuple

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    def dim(self, d: int) -> tuple:
        return self.contiguity[d], self.divisibility[d], self.constancy[d]


@dataclass(frozen=True)
class Fact:
    """One lattice element: the range and the axis info of a value."""

    range: tuple | None
    axis: AxisInfo


# ---------------------------------------------------------------- type helpers
def shape_of(ty: TileType) -> tuple:
    """The shape used for axis facts: scalars count as ``(1,)``."""
    return ty.shape if ty.shape else (1,)


def is_int_type(ty: TileType) -> bool:
    el = ty.element
    return not isinstance(el, PointerType) and el.kind in ("int", "uint", "bool")


def is_ptr_type(ty: TileType) -> bool:
    return isinstance(ty.element, PointerType)


def bits_of(ty: TileType) -> int:
    return ty.element.bits


def div_cap(ty: TileType) -> int:
    """The largest divisibility worth claiming: 2**bits (0 modulo the width)."""
    return 1 << bits_of(ty)


def elem_step(ty: TileType) -> int:
    """What 'one element' adds: the pointee size for pointers, 1 for integers."""
    if is_ptr_type(ty):
        pointee = ty.element.element
        return max(1, pointee.bits // 8) if not isinstance(pointee, PointerType) else 8
    return 1


def type_range(ty: TileType):
    """The full range of an integer type, or None for floats and pointers."""
    return int_range(ty.element) if is_int_type(ty) else None


def fits(rng, ty: TileType) -> bool:
    tr = type_range(ty)
    return rng is not None and tr is not None and tr[0] <= rng[0] and rng[1] <= tr[1]


def wrap_range(lo: int, hi: int, ty: TileType):
    """``[lo, hi]`` (exact mathematical bounds) if it fits the type, else the full
    type range (the result may have wrapped around)."""
    tr = type_range(ty)
    if tr is None:
        return None
    return (lo, hi) if tr[0] <= lo and hi <= tr[1] else tr


# ---------------------------------------------------------------- numbers
def pow2div(x: int, cap: int) -> int:
    """Largest power of two dividing ``x`` (``cap`` for 0), at most ``cap``."""
    x = int(x)
    if x == 0:
        return cap
    return min(x & -x, cap)


def pow2floor(x: int) -> int:
    """Largest power of two <= x (x >= 1)."""
    return 1 << (int(x).bit_length() - 1)


def gcdn(*xs: int) -> int:
    g = 0
    for x in xs:
        g = gcd(g, int(x))
    return g or 1


# ---------------------------------------------------------------- axis helpers
def unknown_axis(ty: TileType) -> AxisInfo:
    r = len(shape_of(ty))
    return AxisInfo((1,) * r, (1,) * r, (1,) * r)


def top(ty: TileType) -> Fact:
    """Nothing known: the type's full range, axis facts all 1."""
    return Fact(type_range(ty), unknown_axis(ty))


def elem_div(info: AxisInfo, d: int, g: int, step: int = 1) -> int:
    """Divisibility guaranteed for the elements at indices that are multiples of
    ``g`` along ``d`` (``g = 1``: every element)."""
    c, v, _k = info.dim(d)
    if g % c == 0:
        return v
    return gcd(v, gcd(g, c) * step)


def all_div(info: AxisInfo, step: int = 1) -> int:
    """Divisibility of every element (each dimension gives a valid bound)."""
    return max(elem_div(info, d, 1, step) for d in range(info.rank))


def wrap_contiguity(c: int, v: int, ty: TileType) -> int:
    """Contiguity that survives wraparound of a result whose exact runs have length
    ``c`` and start at multiples of ``v``: runs of ``gcd(c, v)`` never straddle a
    wrap boundary (a multiple of ``2**(bits-1)``)."""
    return gcd(c, min(v, 1 << (bits_of(ty) - 1)))


def normalize(ty: TileType, rng, info: AxisInfo) -> Fact:
    """Clamp the facts to the shape and type; a known constant gets full facts."""
    shape = shape_of(ty)
    cap = div_cap(ty)
    if is_int_type(ty) and rng is not None:
        tr = type_range(ty)
        if rng[0] < tr[0] or rng[1] > tr[1] or rng[0] > rng[1]:
            rng = tr
        if rng[0] == rng[1]:
            r = len(shape)
            dv = pow2div(rng[0], cap)
            return Fact(rng, AxisInfo((1,) * r, (dv,) * r, tuple(shape)))
    elif is_int_type(ty):
        rng = type_range(ty)
    else:
        rng = None
    floaty = not is_int_type(ty) and not is_ptr_type(ty)
    cs, vs, ks = [], [], []
    for d, n in enumerate(shape):
        c, v, k = info.dim(d)
        c = max(1, min(int(c), n))
        k = max(1, min(int(k), n))
        if c > 1 and k > 1:          # contradictory claims: drop them all
            c, v, k = 1, 1, 1
        if floaty:
            c, v = 1, 1
        v = min(pow2floor(max(1, int(v))), cap)
        cs.append(c)
        vs.append(v)
        ks.append(k)
    return Fact(rng, AxisInfo(tuple(cs), tuple(vs), tuple(ks)))


# ---------------------------------------------------------------- join / widen
def join_axis(a: AxisInfo, b: AxisInfo, step: int = 1) -> AxisInfo:
    cs, vs, ks = [], [], []
    for d in range(a.rank):
        c = gcd(a.contiguity[d], b.contiguity[d])
        cs.append(c)
        vs.append(gcd(elem_div(a, d, c, step), elem_div(b, d, c, step)))
        ks.append(gcd(a.constancy[d], b.constancy[d]))
    return AxisInfo(tuple(cs), tuple(vs), tuple(ks))


def join_range(a, b):
    if a is None or b is None:
        return None
    return (min(a[0], b[0]), max(a[1], b[1]))


def join(ty: TileType, a: Fact | None, b: Fact | None) -> Fact | None:
    """Least upper bound (None is bottom: not reached yet)."""
    if a is None:
        return b
    if b is None:
        return a
    return normalize(ty, join_range(a.range, b.range), join_axis(a.axis, b.axis, elem_step(ty)))


def widen(ty: TileType, old: Fact | None, new: Fact | None) -> Fact | None:
    """Join, then push range bounds that moved to the type's limits."""
    j = join(ty, old, new)
    if old is None or j is None or j.range is None or old.range is None:
        return j
    tr = type_range(ty)
    lo = tr[0] if j.range[0] < old.range[0] else j.range[0]
    hi = tr[1] if j.range[1] > old.range[1] else j.range[1]
    return normalize(ty, (lo, hi), j.axis)
