"""Library functions written in the language itself (inlined like user helpers)."""
from .jit_callable import jit_helper as jit
from . import standard


@jit
def swizzle2d(i, j, size_i, size_j, size_g):
    """Map row-major indices (i, j) of a size_i x size_j grid to the grouped order where
    groups of ``size_g`` rows are traversed column by column (Triton's swizzle2d)."""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    # the last group may have fewer rows; ij becomes the index inside the group
    size_g = standard.minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    new_i = off_i + ij % size_g
    new_j = ij // size_g
    return new_i, new_j
