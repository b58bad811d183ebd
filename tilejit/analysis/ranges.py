"""Integer range transfer rules: one per op class, in ``RANGE_RULES``.

A rule ``rule(op, ctx) -> [range per result]`` returns the *exact* mathematical
bounds of each result computed from its operands' ranges (``ctx.range(v)``), or
``None`` for non-integer results.  The driver then wraps: a bound outside the
result type means the value may have wrapped around, and the whole type range is
claimed instead (``lattice.normalize``).  Axis rules see the exact bounds too, to
tell whether a result may have wrapped.

Integer semantics follow ``ir/ops.py``: wraparound arithmetic, C-truncating
``idiv``/``rem``, arithmetic ``shr`` for signed and logical for unsigned types,
shifts by ``>= bits`` undefined (full range).
"""
from __future__ import annotations

from ..ir import ops
from ..ir.core import RuleTable
from .lattice import all_div, is_int_type, type_range

RANGE_RULES = RuleTable("range analysis")


def _tdiv(x: int, y: int) -> int:
    """C division: truncate toward zero."""
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _neg_bits(lo: int) -> int:
    """Smallest n with -2**n <= lo (lo < 0)."""
    return (-lo - 1).bit_length()


# ---------------------------------------------------------------- binary helpers
def add_range(a, b):
    return a[0] + b[0], a[1] + b[1]


def sub_range(a, b):
    return a[0] - b[1], a[1] - b[0]


def mul_range(a, b):
    p = [x * y for x in a for y in b]
    return min(p), max(p)


def _nonzero_parts(b, v=1):
    """The parts of divisor range ``b`` without 0 (``x // 0`` is handled apart); a divisor
    known to be a multiple of ``v`` has ``|b| >= v`` there."""
    parts = []
    if b[0] <= -v:
        parts.append((b[0], min(b[1], -v)))
    if b[1] >= v:
        parts.append((max(b[0], v), b[1]))
    return parts


def min_nonzero_abs(b, v=1):
    """The smallest ``|x|`` of a nonzero divisor in range ``b`` that is a multiple of ``v``
    (None: only 0)."""
    parts = _nonzero_parts(b, v)
    return min(abs(x) for p in parts for x in p) if parts else None


def idiv_range(a, b, ty, v=1):
    """``a // b`` truncating; ``x // 0`` is 0 (docs/differences.md)."""
    parts = _nonzero_parts(b, v)
    q = [_tdiv(x, y) for lo, hi in parts for x in a for y in (lo, hi)]
    if b[0] <= 0 <= b[1]:
        q.append(0)
    return (min(q), max(q)) if q else type_range(ty)


def rem_range(a, b, ty, v=1):
    """``a % b`` with the dividend's sign; ``x % 0`` is ``x`` (docs/differences.md)."""
    zero = b[0] <= 0 <= b[1]
    parts = _nonzero_parts(b, v)
    if not parts:
        return a if zero else type_range(ty)
    maxb = max(abs(b[0]), abs(b[1]))
    minb = min_nonzero_abs(b, v)
    if max(abs(a[0]), abs(a[1])) < minb:     # |a| < |b|: a % b == a
        return a
    lo = 0 if a[0] >= 0 else max(a[0], -(maxb - 1))
    hi = 0 if a[1] <= 0 else min(a[1], maxb - 1)
    if zero:                                 # a divisor of 0 leaves the dividend
        lo, hi = min(lo, a[0]), max(hi, a[1])
    return lo, hi


def _shift_ok(b, ty) -> bool:
    return 0 <= b[0] and b[1] < ty.element.bits


def shl_range(a, b, ty):
    if not _shift_ok(b, ty):
        return type_range(ty)
    p = [x << s for x in a for s in b]
    return min(p), max(p)


def shr_range(a, b, ty):
    if not _shift_ok(b, ty):
        return type_range(ty)
    p = [x >> s for x in a for s in b]    # floor: arithmetic (and logical on >= 0)
    return min(p), max(p)


def and_range(a, b):
    if a[0] >= 0 and b[0] >= 0:
        return 0, min(a[1], b[1])
    if a[0] >= 0:
        return 0, a[1]
    if b[0] >= 0:
        return 0, b[1]
    return -(1 << max(_neg_bits(a[0]), _neg_bits(b[0]))), max(a[1], b[1])


def or_range(a, b):
    hi = (1 << max(a[1], b[1], 0).bit_length()) - 1
    if a[0] >= 0 and b[0] >= 0:
        return max(a[0], b[0]), hi
    return min(a[0], b[0]), hi


def xor_range(a, b):
    n = max(a[1], b[1], 0).bit_length()
    if a[0] >= 0 and b[0] >= 0:
        return 0, (1 << n) - 1
    n = max(n, _neg_bits(min(a[0], b[0])))
    return -(1 << n), (1 << n) - 1


def umulhi_range(a, b, ty):
    bits = ty.element.bits
    if a[0] >= 0 and b[0] >= 0:
        return (a[0] * b[0]) >> bits, (a[1] * b[1]) >> bits
    return type_range(ty)


_BINARY = {
    ops.AddOp: lambda a, b, ty: add_range(a, b),
    ops.SubOp: lambda a, b, ty: sub_range(a, b),
    ops.MulOp: lambda a, b, ty: mul_range(a, b),
    ops.IDivOp: idiv_range,
    ops.RemOp: rem_range,
    ops.ShlOp: shl_range,
    ops.ShrOp: shr_range,
    ops.AndOp: lambda a, b, ty: and_range(a, b),
    ops.OrOp: lambda a, b, ty: or_range(a, b),
    ops.XorOp: lambda a, b, ty: xor_range(a, b),
    ops.MinOp: lambda a, b, ty: (min(a[0], b[0]), min(a[1], b[1])),
    ops.MaxOp: lambda a, b, ty: (max(a[0], b[0]), max(a[1], b[1])),
    ops.UmulhiOp: umulhi_range,
}


# ---------------------------------------------------------------- rules
@RANGE_RULES.register(ops.Op)
def _unknown(op, ctx):
    """Fallback for ops without a specific rule: the type's full range."""
    return [type_range(r.type) for r in op.results]


@RANGE_RULES.register(ops.ElementwiseOp)
def _elementwise(op, ctx):
    """Float math (fma, exp, ...) and any other elementwise op: no integer bounds."""
    return [type_range(r.type) for r in op.results]


@RANGE_RULES.register(*_BINARY)
def _binary(op, ctx):
    ty = op.result.type
    if not is_int_type(ty):
        return [None]
    if isinstance(op, (ops.IDivOp, ops.RemOp)):      # a divisor's divisibility bounds |b| from below
        rule = idiv_range if isinstance(op, ops.IDivOp) else rem_range
        return [rule(ctx.range(op.lhs), ctx.range(op.rhs), ty, all_div(ctx.axis(op.rhs)))]
    return [_BINARY[type(op)](ctx.range(op.lhs), ctx.range(op.rhs), ty)]


@RANGE_RULES.register(ops.ConstantOp)
def _constant(op, ctx):
    ty = op.result.type
    if not is_int_type(ty):
        return [None]
    try:
        v = int(op.value)
    except (TypeError, ValueError):     # not a scalar: nothing known
        return [type_range(ty)]
    return [(v, v)]


@RANGE_RULES.register(ops.ArangeOp)
def _arange(op, ctx):
    return [(op.start, op.end - 1)]


def _grid_dim(ctx, axis):
    if ctx.grid is None:
        return None
    g = tuple(ctx.grid) + (1,) * (3 - len(tuple(ctx.grid)))
    return int(g[axis])


def _grid_bound(ctx, axis) -> int:
    """Largest number of programs along ``axis`` (a grid bound, else int32's)."""
    bound = getattr(ctx, "grid_bound", None)
    return (1 << 31) - 1 if bound is None else max(1, min(int(bound[axis]), (1 << 31) - 1))


@RANGE_RULES.register(ops.ProgramIdOp)
def _program_id(op, ctx):
    n = _grid_dim(ctx, op.axis)
    return [(0, _grid_bound(ctx, op.axis) - 1) if n is None else (0, max(0, n - 1))]


@RANGE_RULES.register(ops.NumProgramsOp)
def _num_programs(op, ctx):
    n = _grid_dim(ctx, op.axis)
    return [(1, _grid_bound(ctx, op.axis)) if n is None else (n, n)]


@RANGE_RULES.register(ops.SplatOp, ops.BroadcastOp, ops.ExpandDimsOp, ops.ReshapeOp,
                      ops.TransOp, ops.HintOp)
def _same(op, ctx):
    return [ctx.range(op.src)]


@RANGE_RULES.register(ops.AssumeRangeOp)
def _assume_range(op, ctx):
    """The claimed bounds, intersected with what is known (the branch that made the
    claim has tested it; the checker verifies it)."""
    a = ctx.range(op.src)
    if a is None:
        return [None]
    lo, hi = (int(x) for x in op.values)
    return [(max(a[0], lo), min(a[1], hi))] if max(a[0], lo) <= min(a[1], hi) else [a]


@RANGE_RULES.register(ops.NegOp)
def _neg(op, ctx):
    if not is_int_type(op.result.type):
        return [None]
    a = ctx.range(op.src)
    return [(-a[1], -a[0])]


@RANGE_RULES.register(ops.AbsOp)
def _abs(op, ctx):
    if not is_int_type(op.result.type):
        return [None]
    a = ctx.range(op.src)
    if a[0] >= 0:
        return [a]
    if a[1] <= 0:
        return [(-a[1], -a[0])]
    return [(0, max(-a[0], a[1]))]


@RANGE_RULES.register(ops.InvertOp)
def _invert(op, ctx):
    ty = op.result.type
    a = ctx.range(op.src)
    if ty.element.kind == "int":
        return [(-a[1] - 1, -a[0] - 1)]
    top = type_range(ty)[1]
    return [(top - a[1], top - a[0])]


@RANGE_RULES.register(ops.CmpOp)
def _cmp(op, ctx):
    a, b = ctx.range(op.lhs), ctx.range(op.rhs)
    if a is None or b is None:
        return [(0, 1)]
    decide = {
        "lt": (a[1] < b[0], a[0] >= b[1]), "le": (a[1] <= b[0], a[0] > b[1]),
        "gt": (a[0] > b[1], a[1] <= b[0]), "ge": (a[0] >= b[1], a[1] < b[0]),
        "eq": (a[0] == a[1] == b[0] == b[1], a[1] < b[0] or b[1] < a[0]),
        "ne": (a[1] < b[0] or b[1] < a[0], a[0] == a[1] == b[0] == b[1]),
    }
    true, false = decide[op.pred]
    return [(1, 1) if true else (0, 0) if false else (0, 1)]


@RANGE_RULES.register(ops.SelectOp)
def _select(op, ctx):
    if not is_int_type(op.result.type):
        return [None]
    c = ctx.range(op.cond)
    t, f = ctx.range(op.true_value), ctx.range(op.false_value)
    if c == (1, 1):
        return [t]
    if c == (0, 0):
        return [f]
    return [(min(t[0], f[0]), max(t[1], f[1]))]


def cast_range(src_rng, src_ty, dst_ty):
    """Range of a value conversion (also used for bitcasts between integers)."""
    if not is_int_type(dst_ty):
        return None
    if dst_ty.element.kind == "bool":
        if src_rng is None:
            return (0, 1)
        if src_rng == (0, 0):
            return (0, 0)
        return (1, 1) if (src_rng[0] > 0 or src_rng[1] < 0) else (0, 1)
    if src_rng is not None and is_int_type(src_ty):
        tr = type_range(dst_ty)
        if tr[0] <= src_rng[0] and src_rng[1] <= tr[1]:
            return src_rng
    return type_range(dst_ty)


@RANGE_RULES.register(ops.CastOp, ops.BitcastOp)
def _cast(op, ctx):
    return [cast_range(ctx.range(op.src), op.src.type, op.result.type)]


@RANGE_RULES.register(ops.LoadOp, ops.DotOp, ops.AtomicRMWOp, ops.AtomicCASOp)
def _memory(op, ctx):
    return [type_range(op.result.type)]


@RANGE_RULES.register(ops.InlineAsmOp, ops.CombineReduceOp)
def _inline_asm(op, ctx):
    """Results of inline assembly and of reductions with a combine region: their
    types' full ranges."""
    return [type_range(r.type) for r in op.results]


@RANGE_RULES.register(ops.GatherOp)
def _gather(op, ctx):
    """Elements of ``src``, or 0 for an index out of range."""
    if not is_int_type(op.result.type):
        return [None]
    a = ctx.range(op.src)
    return [type_range(op.result.type) if a is None else (min(a[0], 0), max(a[1], 0))]


@RANGE_RULES.register(ops.HistogramOp)
def _histogram(op, ctx):
    return [(0, op.src.type.numel)]


@RANGE_RULES.register(ops.ReduceOp)
def _reduce(op, ctx):
    ty = op.result.type
    n = op.src.type.shape[op.axis]
    if op.kind in ("argmax", "argmin"):
        return [(0, n - 1)]
    if not is_int_type(ty):
        return [None]
    a = ctx.range(op.src)
    if op.kind in ("max", "min"):
        return [a]
    if op.kind == "sum":
        return [(a[0] * n, a[1] * n)]
    return [xor_range(a, a)]
