"""``tl.reduce`` with a general combine function as one ``tt.combine_reduce`` op.

The combine function is inlined once, into the op's region, on scalars; the op's
order of combination (a pairwise tree, see ``ops.CombineReduceOp``) is the one
``language.scan.reduce_tree`` builds out of whole-tile ops, so results are the same
bit for bit, but the IR stays one op however long the axis is."""
from __future__ import annotations

from ..ir import ops
from ..ir.core import Block, Region
from ..ir.types import TileType
from ..language import scan as lang_scan
from ..language import semantic_tile as st
from ..language.core import current_builder, tensor


def _combine_block(inputs, combine):
    """The combine region's block, or None when the combine function's inlined body
    is not made of pure region-free ops (then the caller builds the tree instead)."""
    scalars = [TileType(x.dtype) for x in inputs]
    block = Block(scalars + scalars)
    a = tuple(tensor(v) for v in block.args[:len(inputs)])
    b = tuple(tensor(v) for v in block.args[len(inputs):])
    builder = current_builder()
    with builder.at_end(block):
        out = lang_scan._apply(combine, a, b, a)
        builder.create(ops.YieldOp, values=[x.handle for x in out])
    if any(o.regions or not (o.has_trait("pure") or o is block.ops[-1]) for o in block.ops):
        return None
    return block


def reduce_region(inputs, axis, combine, keep_dims=False):
    """Reduce the tuple ``inputs`` along ``axis`` (None: all, in row-major order) with
    ``combine(a: tuple, b: tuple) -> tuple``; returns a tuple of tensors."""
    inputs = lang_scan._check_inputs(inputs, "reduce")
    rank = len(inputs[0].shape)
    if rank == 0:
        return inputs
    if axis is None:
        return lang_scan.reduce_flattened(inputs, lambda flat: reduce_region(flat, 0, combine), keep_dims)
    axis = lang_scan._norm_axis(axis, rank, "reduction")
    block = _combine_block(inputs, combine)
    if block is None:
        return lang_scan.reduce_tree(inputs, axis, combine, keep_dims)
    op = current_builder().create(ops.CombineReduceOp, srcs=[x.handle for x in inputs], axis=axis,
                                  regions=[Region([block])])
    out = tuple(tensor(r) for r in op.results)
    if keep_dims:
        out = tuple(st.expand_dims(o, axis) for o in out)
    return out
