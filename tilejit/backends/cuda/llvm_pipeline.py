"""Which LLVM O3 pipeline optimises a kernel: the planner's choice of Triton's (no target
machine) for loops that load under a per-thread mask.

tilejit optimises NVPTX modules with the NVPTX target machine attached; Triton runs LLVM's
O3 without one (``llvm.optimize_module``).  The difference matters where a loop's loads
are predicated by a mask that does not change in the loop -- Inductor's ``xmask`` on every
``tl.load`` of an ``[XBLOCK, R0_BLOCK]`` reduction loop.  The NVPTX target reports
divergent branches, so LLVM's loop unswitching leaves a loop whose condition depends on
the thread alone; without a target it splits the loop on that condition, the mask is a
constant ``true`` in the copy that runs, and ptxas unrolls its unpredicated loads (16 and
more in flight per thread) where it keeps one predicated load per use.  Inductor's amax
over the middle axis of 32 x 2048 x 513 (XBLOCK 64, R0_BLOCK 4): the NVPTX pipeline gives
4 loads in the loop's SASS, the target-free one 36 in 304 instructions -- Triton's own
SASS, instruction for instruction (ptxas + cuobjdump, sm_90).

The choice is recorded in the module (named metadata :data:`MARK`), so the PTX cache key
(the IR text) holds it and ``target.llvm_to_ptx`` reads it there.
"""
from __future__ import annotations

from ...ir import ops

MARK = "tilejit.triton_pipeline"


def plan_triton_pipeline(lw) -> str:
    """Why ``lw``'s kernel takes Triton's pipeline ('' when it keeps the NVPTX one): a
    load in an ``scf.for`` whose mask is an ``&`` with a term computed before the loop
    (Inductor's ``r0_mask & xmask``: the loop can be split on it), in a kernel without
    ``tt.dot`` (dot kernels keep the pipeline their rings were tuned with);
    ``CudaTuning.triton_llvm_pipeline`` on.  Marks the module."""
    if not lw.tuning.triton_llvm_pipeline or lw.sanitize:
        return ""
    found = None
    for o in lw.func.walk():
        if isinstance(o, ops.DotOp):
            return ""
        if found is None and isinstance(o, ops.LoadOp) and o.mask is not None and o.ptr.type.shape:
            loop = _enclosing_loop(o)
            if loop is not None and _invariant_term(o.mask, set(loop.walk())):
                found = o
    if found is None:
        return ""
    from llvmlite import ir
    lw.module.add_named_metadata(MARK, [ir.MetaDataString(lw.module, "1")])
    loc = getattr(found, "loc", None)
    where = f" at line {loc.line}" if loc is not None and getattr(loc, "line", 0) else ""
    return (f"a masked load in a loop{where}: LLVM O3 without the NVPTX target machine, as Triton "
            "(the loop unswitched on its per-thread mask; llvm_pipeline.py)")


def _enclosing_loop(op):
    """The innermost ``scf.for`` around ``op`` (None outside loops)."""
    b = op.parent
    while b is not None and b.parent is not None:
        o = b.parent.parent            # block -> region -> op
        if isinstance(o, ops.ForOp):
            return o
        b = getattr(o, "parent", None)
    return None


def _invariant_term(v, inside) -> bool:
    """Whether the mask ``v`` is, or is an ``&`` (through broadcasts) with, a term defined
    before the loop whose ops are ``inside``."""
    op = v.op
    if op is None or op not in inside:
        return True
    if isinstance(op, (ops.BroadcastOp, ops.ExpandDimsOp)):
        return _invariant_term(op.src, inside)
    if isinstance(op, ops.AndOp):
        return any(_invariant_term(x, inside) for x in op.operands)
    return False


def wants_triton_pipeline(llvm_ir: str) -> bool:
    """Whether the module text was marked by :func:`plan_triton_pipeline`."""
    return f"!{MARK} =" in llvm_ir
