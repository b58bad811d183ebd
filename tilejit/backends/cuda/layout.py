"""Blocked layout of a tile over the threads of one program (CTA).

A tile of ``N`` elements (row-major flattened) is split into chunks of ``V``
contiguous elements; chunk ``c`` belongs to thread ``c % T`` (``T = num_warps*32``)
and is that thread's repetition ``c // T``.  So thread ``t`` holds the elements

    e = (r*T + t)*V + j        r in [0, R), j in [0, V)

in its registers ("slots", ``slot = r*V + j``).  Neighbouring threads hold
neighbouring chunks, which makes global accesses coalesced, and a thread's ``V``
elements are contiguous, which lets the memory rules use vector accesses where the
axis analysis proves contiguity and alignment.  Tiles smaller than ``T*V`` are
replicated: ``e`` wraps modulo ``N`` and only the first copy is "owned" (stores and
reductions use owned slots only).  The layout depends on the element count and, through
the chunk width (which divides it), the last dimension: elementwise ops never convert;
reshape and expand_dims are free where the chunking agrees and otherwise move the
elements through shared memory (rules_tiles.py).

A 2-D layout may be ``dim0_first``: the blocked layout of the transposed shape ``(C, R)``
(chunks and neighbouring threads run along dim 0), for tiles whose accesses move along
dim 0 (dim_order.py decides, per shape).  ``e`` above is then the element's flat index in
the transposed shape; :func:`row_major` gives the row-major one that the rules use.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MAX_VEC = 4


@dataclass(frozen=True)
class Layout:
    shape: tuple
    threads: int        # T
    vec: int            # V: contiguous elements per chunk
    reps: int           # R: chunks per thread
    dim0_first: bool = False    # 2-D: e counts along dim 0 first (the transposed shape's layout)

    def same_slots(self, other) -> bool:
        """Whether ``other`` (a layout of as many elements, another shape) holds the same
        row-major elements in the same slots (a reshape is then free)."""
        if self == other:
            return True
        return (self.vec, self.reps) == (other.vec, other.reps) and not (self.dim0_first or other.dim0_first)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nslots(self) -> int:
        return self.reps * self.vec

    @property
    def exact(self) -> bool:
        """Every slot of every thread holds a distinct element."""
        return self.reps * self.vec * self.threads == self.numel

    def slot_base(self, slot: int) -> int:
        """Constant part of slot's element index: r*T*V + j (add tid*V)."""
        r, j = divmod(slot, self.vec)
        return r * self.threads * self.vec + j


def kernel_max_vec(func, facts=None, threads: int = 0) -> int:
    """Elements per chunk for the kernel's blocked layouts: 8 when every tile the
    kernel loads or stores has 2-byte elements (so a chunk is one 16-byte access, as
    for fp32 tiles with 4), else ``MAX_VEC``.  Where tiles are loaded or stored inside
    a loop, those accesses alone decide: a row loop over bf16 rows that keeps fp32
    partial sums and stores them once after the loop (Liger-Kernel's RMSNorm and
    LayerNorm backward) moves its rows in 16-byte accesses, and the once-only fp32
    store takes two 16-byte accesses per 8-element chunk (Triton picks each access's
    layout by its own element size and converts: the same widths).  One value per
    kernel keeps the layout a function of the shape alone (no conversions between a
    tile and its casts).  Kernels with ``tt.dot`` keep ``MAX_VEC``: their tensor-core
    paths pick the layouts of their operands themselves (async_pipeline.prepare for
    planned loops, rules_mma.widen_operand_chunks for loop-free kernels).

    With the analysis ``facts`` and the program's ``threads``: 1 when none of those
    deciding accesses can move two elements at once (no contiguity or alignment proven
    along the last dimension: Inductor's ``r % 513`` addressing, odd row strides) and
    each of their tiles is 1-D or has rows of a multiple of ``threads * MAX_VEC``
    elements (Inductor's ``[1, 2048]`` / ``[2, 2048]`` reduction blocks; tiles of fewer
    elements than ``threads * MAX_VEC`` do not count).  Neighbouring
    threads then hold neighbouring elements, so each scalar access instruction of a warp
    is coalesced, as Triton's coalescing makes it (``sizePerThread`` 1 where contiguity
    is 1); with chunks of 4, a warp's scalar load spans 4 times the bytes it uses.  The
    row condition keeps which threads share a row, hence the reductions, unchanged
    (narrower rows would spread over more threads)."""
    from ...ir import ops
    from .occupancy import in_loop
    sizes, looped, accesses, looped_accesses = set(), set(), [], []
    for op in func.walk():
        if isinstance(op, ops.DotOp):
            return MAX_VEC
        if isinstance(op, (ops.LoadOp, ops.StoreOp)):
            ty = op.ptr.type
            if not ty.shape:
                continue                       # scalar accesses have no layout
            el = ty.element.element if ty.element.is_ptr() else ty.element
            size = 8 if el.is_ptr() else max(1, el.bits // 8)
            sizes.add(size)
            accesses.append(op)
            if in_loop(op):
                looped.add(size)
                looped_accesses.append(op)
    # tiles smaller than every thread's chunk (a [XBLOCK, 1] result) shrink their own
    # chunks (make_layout): they do not decide
    deciding = [op for op in looped_accesses or accesses
                if math.prod(op.ptr.type.shape) >= threads * MAX_VEC]
    if facts is not None and threads and deciding and not _any_vector(deciding, facts) \
            and all(_whole_rows(op.ptr.type.shape, threads) for op in deciding):
        return 1
    return 8 if (looped or sizes) == {2} else MAX_VEC


def _whole_rows(shape, threads: int) -> bool:
    return len(shape) == 1 or shape[-1] % (threads * MAX_VEC) == 0


def _any_vector(accesses, facts) -> bool:
    """Whether some access of ``accesses`` can group lanes along its last dimension."""
    from ...analysis.access import plan_access
    from .rules_memory import CUDA_ACCESS
    return any(plan_access(facts, op.ptr, op.mask, CUDA_ACCESS).width > 1 for op in accesses)


def make_dim0_layout(shape, threads: int, max_vec: int = 1) -> Layout:
    """The dim-0-first layout of the 2-D ``shape`` (R, C): the blocked layout of (C, R),
    so neighbouring threads hold neighbouring elements of dim 0."""
    R, C = shape
    t = make_layout((C, R), threads, max_vec)
    return Layout(tuple(shape), threads, t.vec, t.reps, dim0_first=True)


def row_major(b, lay: Layout, e, i32):
    """The row-major flat index of the element whose index in ``lay``'s order is ``e``
    (an i32 LLVM value; ``b`` the builder, ``i32`` the constant maker)."""
    if not lay.dim0_first:
        return e
    R, C = lay.shape
    return b.add(b.mul(b.urem(e, i32(R)), i32(C)), b.udiv(e, i32(R)))


def make_layout(shape, threads: int, max_vec: int = MAX_VEC) -> Layout:
    """The blocked layout of ``shape``; chunks of up to ``max_vec`` elements (the cuda
    dot pipeline asks for 8 so that 2-byte operand tiles move in 16-byte chunks)."""
    shape = tuple(shape)
    n = 1
    for d in shape:
        n *= d
    last = shape[-1] if shape else 1
    vec = max_vec
    while vec > 1 and (n < vec * threads or n % vec or last % vec):
        vec //= 2
    reps = -(-n // (threads * vec))
    return Layout(shape, threads, vec, reps)
