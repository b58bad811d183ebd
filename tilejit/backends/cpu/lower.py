"""Tile IR -> LLVM IR for the CPU backend: the driver, the per-program context and
the rules for constants, ids, elementwise and shape ops.

Rules register in :data:`RULES` (``RuleTable``) against op classes, one rule per op
class (or base class).  Memory, reductions, dot and control flow live in sibling
modules that register into the same table.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...errors import LoweringError
from ...ir import ops
from ...ir.core import RuleTable
from ...ir.types import int32
from ..llvm.builder_utils import FunctionEmitter
from ..llvm.scalar import lower_elementwise
from ..llvm.types import I32, I64, constant, value_type
from .fusion import FusionPlan
from .tiles import (BufTile, COST_ARITH, COST_MATH, LazyTile, MATERIALIZE_COST, Tile,
                    materialize, merge_masks)

RULES = RuleTable("cpu lowering")


class ProgramContext:
    """State while lowering one kernel into the LLVM function of one program."""

    def __init__(self, module: ir.Module, fn: ir.Function, func, options):
        self.module = module
        self.func = func
        self.options = options
        self.em = FunctionEmitter(fn)
        self.values: dict = {}
        self.elem_cache: dict = {}
        self.known_true: set = set()     # ids of mask tiles known to be all true here
        self.plan = FusionPlan(func)
        self.asserts: list = []          # (op) in order; index+1 is the status code
        self.accesses: list = []         # checked loads/stores (sanitize mode)
        self.args_ptr = None
        self.pid = self.nprog = None
        self.return_block = None
        self.facts = None                # analysis facts driving vector accesses (vectorize.py)

    @property
    def b(self) -> ir.IRBuilder:
        return self.em.b

    def alloca(self, ty, count=1):
        return self.em.alloca(ty, count)

    # ---- values ---------------------------------------------------------
    def get(self, v):
        try:
            return self.values[v]
        except KeyError:
            raise LoweringError(f"value {v} used before its definition") from None

    def set(self, v, rep):
        self.values[v] = rep

    def define(self, op, rep):
        """Bind op's single result, materializing a lazy tile when the plan says so."""
        if isinstance(rep, Tile) and not isinstance(rep, BufTile) and self.plan.must_materialize(op, rep):
            rep = materialize(self, rep)
        self.set(op.result, rep)

    # ---- loops ----------------------------------------------------------
    def loop_nest(self, shape, body, outer_idx=(), order=None):
        """Nested loops over ``shape`` calling ``body(idx)`` innermost; ``order``: the
        axes from outermost to innermost (default: in order, the last innermost)."""
        self.elem_cache = {}
        if order is None or tuple(order) == tuple(range(len(shape))):
            self._nest(list(shape), list(outer_idx), body)
        else:
            self._nest_ordered(tuple(shape), tuple(order), {}, body)
        self.elem_cache = {}

    def _nest(self, shape, idx, body):
        if not shape:
            body(tuple(idx))
            return
        self.em.counted_loop(ir.Constant(I64, 0), ir.Constant(I64, shape[0]), name="d%d" % len(idx),
                             body=lambda i: self._nest(shape[1:], idx + [i], body))

    def _nest_ordered(self, shape, order, got, body):
        if len(got) == len(shape):
            body(tuple(got[d] for d in range(len(shape))))
            return
        d = order[len(got)]
        self.em.counted_loop(ir.Constant(I64, 0), ir.Constant(I64, shape[d]), name="d%d" % d,
                             body=lambda i: self._nest_ordered(shape, order, {**got, d: i}, body))

    # ---- driver ---------------------------------------------------------
    def lower_block(self, block):
        for op in block.ops:
            self.lower_op(op)

    def lower_op(self, op):
        rule = RULES.lookup(type(op))
        try:
            rule(self, op)
        except LoweringError:
            raise
        except NotImplementedError as e:
            raise LoweringError(f"{op.loc}: cannot lower {op.name}: {e}") from e
        except Exception as e:  # noqa: BLE001 - wrap with the op's location
            raise LoweringError(f"{op.loc}: error lowering {op.name}: {type(e).__name__}: {e}") from e


def elem_of(ctx, rep, idx):
    """Element of a tile at ``idx``; a scalar is its own element."""
    return rep.elem(ctx, idx) if isinstance(rep, Tile) else rep


# --------------------------------------------------------------------------
# constants, ids
# --------------------------------------------------------------------------
@RULES.register(ops.ConstantOp)
def _constant(ctx, op):
    ty = op.result.type
    c = constant(ty.element, op.value)
    if ty.is_scalar:
        ctx.set(op.result, c)
    else:
        ctx.set(op.result, LazyTile(ty.shape, ty.element, lambda _c, _i: c, 0))


@RULES.register(ops.ProgramIdOp)
def _pid(ctx, op):
    ctx.set(op.result, ctx.pid[op.axis])


@RULES.register(ops.NumProgramsOp)
def _nprog(ctx, op):
    ctx.set(op.result, ctx.nprog[op.axis])


@RULES.register(ops.ArangeOp)
def _arange(ctx, op):
    start = op.start

    def fn(c, idx):
        v = c.b.trunc(idx[0], I32)
        return c.b.add(v, ir.Constant(I32, start)) if start else v
    ctx.set(op.result, LazyTile(op.result.type.shape, int32, fn, 0))


# --------------------------------------------------------------------------
# elementwise
# --------------------------------------------------------------------------
_MATH_CLASSES = tuple(ops.MATH_OPS.values())


@RULES.register(ops.ElementwiseOp)
def _elementwise(ctx, op):
    srcs = op.operands
    in_dtypes = [s.type.element for s in srcs]
    out_t = op.result.type
    reps = [ctx.get(s) for s in srcs]
    if isinstance(op, ops.AddOp) and fold_add_into_dot(ctx, op, reps) is not None:
        return
    if isinstance(op, (ops.AddOp, ops.SelectOp)) and _accumulate_partial(ctx, op, reps):
        return
    if out_t.is_scalar:
        ctx.set(op.result, lower_elementwise(ctx.b, op, reps, in_dtypes, out_t.element))
        return
    ctx.define(op, elementwise_tile(ctx, op, reps))


def elementwise_tile(ctx, op, reps) -> LazyTile:
    """The lazy tile of elementwise ``op`` applied to ``reps`` (tiles or scalars)."""
    in_dtypes = [s.type.element for s in op.operands]
    out_t = op.result.type
    cost = (COST_MATH if isinstance(op, _MATH_CLASSES + (ops.IDivOp, ops.RemOp)) else COST_ARITH)
    cost += sum(r.cost for r in reps if isinstance(r, Tile))

    def fn(c, idx):
        return lower_elementwise(c.b, op, [elem_of(c, r, idx) for r in reps], in_dtypes,
                                 out_t.element)
    if isinstance(op, ops.SelectOp) and isinstance(reps[0], Tile):
        return _select_tile(ctx, op, reps, fn, cost)
    tile = LazyTile(out_t.shape, out_t.element, fn, cost, merge_masks(*reps))
    if ctx.facts is not None:           # whole lane groups as vector code (vectorize.py)
        from .vectorize import attach_elementwise_vec
        attach_elementwise_vec(tile, op, reps, in_dtypes, out_t.element)
    return tile


def _select_tile(ctx, op, reps, select, cost) -> LazyTile:
    """``where(cond, a, b)``: ``a`` itself (its vector code too) inside a loop versioned
    on ``cond`` being all true (tiles.versioned; e.g. Inductor's ``where(mask, acc + x,
    acc)`` on its load's mask), ``select`` per element otherwise."""
    from .vectorize import _plain, vec_of
    cond, a = reps[0], reps[1]
    t = op.result.type

    def fn(c, idx):
        return elem_of(c, a, idx) if id(cond) in c.known_true else select(c, idx)
    tile = LazyTile(t.shape, t.element, fn, cost, merge_masks(*reps))
    if _plain(t.element):
        tile.vec = lambda c, idx, width: vec_of(c, a, idx, width) if id(cond) in c.known_true else None
    return tile


def _accumulate_partial(ctx, op, reps) -> bool:
    """``acc + x`` (or Inductor's ``where(mask, acc + x, acc)``) into a carried sum kept
    as partial sums (partial_acc.py), in place."""
    from .partial_acc import PartialAcc, guarded
    accs = [r for r in reps if isinstance(r, PartialAcc)]
    if not accs:
        return False
    acc = accs[0]
    if isinstance(op, ops.SelectOp):        # where(mask, acc + x, acc): add where(mask, x, 0)
        if acc.pending is None or reps[1] is not acc or reps[2] is not acc:
            raise LoweringError(f"{op.loc}: a partial-sum accumulator selected")
        x, acc.pending = acc.pending, None
        acc.accumulate(ctx, elementwise_tile(ctx, op, [reps[0], x, constant(op.result.type.element, 0)]))
    elif len(accs) != 1:
        raise LoweringError(f"{op.loc}: two partial-sum accumulators added")
    elif any(guarded(u, op, v, op.parent) for u in ctx.plan.user_ops(op.result)
             for v in op.operands if ctx.get(v) is acc):
        acc.pending = reps[1] if reps[0] is acc else reps[0]      # summed at the where
    else:
        acc.accumulate(ctx, reps[1] if reps[0] is acc else reps[0])
    ctx.set(op.result, acc)
    return True


# --------------------------------------------------------------------------
# shape ops
# --------------------------------------------------------------------------
ZERO = ir.Constant(I64, 0)


@RULES.register(ops.SplatOp)
def _splat(ctx, op):
    s = ctx.get(op.src)
    ctx.set(op.result, LazyTile(op.shape, op.src.type.element, lambda _c, _i: s, 0))


def _derived(ctx, op, src, index_map):
    rep = ctx.get(src)
    t = op.result.type
    ctx.set(op.result, LazyTile(t.shape, t.element, lambda c, idx: rep.elem(c, index_map(idx)),
                                rep.cost, rep.masks))


@RULES.register(ops.BroadcastOp)
def _broadcast(ctx, op):
    src_shape = op.src.type.shape
    if op.src.type.is_scalar:
        return _splat(ctx, op)
    keep = [s != 1 for s in src_shape]
    _derived(ctx, op, op.src, lambda idx: tuple(i if k else ZERO for i, k in zip(idx, keep)))


@RULES.register(ops.ExpandDimsOp)
def _expand_dims(ctx, op):
    axis = op.axis
    if op.src.type.is_scalar:
        s = ctx.get(op.src)
        ctx.set(op.result, LazyTile(op.result.type.shape, op.src.type.element, lambda _c, _i: s, 0))
        return
    _derived(ctx, op, op.src, lambda idx: tuple(idx[:axis]) + tuple(idx[axis + 1:]))


@RULES.register(ops.TransOp)
def _trans(ctx, op):
    perm = list(op.perm)

    def index_map(idx):
        src = [None] * len(perm)
        for i, p in enumerate(perm):
            src[p] = idx[i]
        return tuple(src)
    _derived(ctx, op, op.src, index_map)


@RULES.register(ops.ReshapeOp)
def _reshape(ctx, op):
    from .tiles import linear_index, strides_of
    t = op.result.type
    rep = ctx.get(op.src)
    if op.src.type.is_scalar:
        ctx.set(op.result, LazyTile(t.shape, t.element, lambda _c, _i: rep, 0))
        return
    if t.is_scalar:                       # a one-element tile to a scalar (tensor.item())
        ctx.set(op.result, rep.elem(ctx, (ZERO,) * len(op.src.type.shape)))
        return
    if len(op.src.type.shape) == 1 and not isinstance(rep, BufTile):
        strides = strides_of(t.shape)
        ctx.set(op.result, LazyTile(t.shape, t.element,
                                    lambda c, idx: rep.elem(c, (linear_index(c, idx, strides),)), rep.cost,
                                    rep.masks))
        return
    buf = materialize(ctx, rep)
    strides = strides_of(t.shape)
    ctx.set(op.result, LazyTile(t.shape, t.element,
                                lambda c, idx: buf.elem_linear(c, linear_index(c, idx, strides)), 1))


@RULES.register(ops.HintOp)
def _hint(ctx, op):
    ctx.set(op.result, ctx.get(op.src))


# rules in sibling modules register themselves
from . import lower_mem, lower_reduce, lower_dot, lower_cf  # noqa: E402,F401
from . import lower_atomic  # noqa: E402,F401
from . import lower_combine_reduce  # noqa: E402,F401
from . import lower_gather  # noqa: E402,F401
from .lower_dot import fold_add_into_dot  # noqa: E402
