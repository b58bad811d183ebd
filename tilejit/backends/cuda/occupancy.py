"""Two CTAs per SM for kernels whose dots run in wgmma rings: the register cap.

ptxas spends registers freely up to 255 per thread.  A kernel whose dots all run in
Hopper ``wgmma`` rings (``async_pipeline``'s matmul ring, ``rows_ring``'s row-region ring)
needs little besides its accumulators, but other code in it can set a register count that
leaves one CTA (8 warps) per SM, so nothing overlaps one CTA's wgmma with another's
softmax, epilogue or copies.  :func:`cap_registers` (called once, after the kernel is
lowered) then caps the registers at ``65536 // (2 * threads)`` (128 at 8 warps:
``.maxnreg 128``) so that two CTAs share an SM, when

- ``CudaTuning.ring_occupancy`` is on and the launch chose nothing itself (``maxnreg``,
  ``min_ctas_per_sm``; nor did another plan: remat's ``.minnctapersm``);
- the cap is below 255 (8 warps or more);
- every dot on the kernel's expected path was lowered in a wgmma ring: the only other
  dots sit in ``transforms.align_version``'s fallback loops (the ``else`` of a versioned
  ``scf.if``, run only when the launch's values fail the tested alignment or range);
- something besides the rings sets the register count: a row-region ring (attention's
  softmax rows) or such a fallback's register-path dot.  A plain ring kernel (tutorial
  09's hinted matmul: 110 registers) is left as it is;
- no ring loop sits inside another loop: a persistent kernel (tutorial 08's grouped GEMM)
  launches one program per SM, so a second CTA slot would stay empty and the cap would
  only spill;
- shared memory holds two CTAs: ``2 * (bytes + 1 KB reserved) <= 228 KB`` (sm_90);
- a ring loop's accumulators and hoisted A fragments take at most 3/4 of the cap
  (``HELD_SHARE``).

Measured on an H200: tutorial 06 (attention, every dot in a row ring) 2.40 -> 1.99 ms
with the cap given as a launch option, automatic 1.91 ms; with ``index_tiles`` (causal:
both loops in rings) causal 1.352 -> 1.147 ms.  Tutorial 03 as published (``% M``, no
hints; its dot loop range-versioned): 219 registers, 1 CTA/SM, 0.2683 ms (0.77x Triton)
-> with ``maxnreg=128`` 0.2237 ms (0.92x; the hinted kernel 0.2167 ms).

The loop planners ask :func:`ring_cap` (the launch- and shape-level part of the rule)
before lowering a ring: ``rows_ring`` computes the loop's first dot in order, not an
iteration ahead, under the cap (ahead, two score tiles spill).
"""
from __future__ import annotations

from ...ir import ops

SMEM_PER_SM = 228 * 1024        # sm_90: shared memory per SM
SMEM_RESERVED = 1024            # per CTA, taken by the system
REGS_PER_SM = 65536
CTAS = 2


def launch_chose(lw) -> bool:
    """Whether the launch (``maxnreg``, ``min_ctas_per_sm``) or another plan already set
    the kernel's registers or CTAs per SM."""
    attrs = lw.func.attrs
    return bool(attrs.get("maxnreg") or attrs.get("min_ctas_per_sm")
                or any('"nvvm.maxnreg"' in a or '"nvvm.minctasm"' in a for a in lw.kernel.attributes))


def ring_cap(lw):
    """The registers per thread a wgmma-ring kernel is capped at (two CTAs per SM), or
    None when the switch is off, the launch chose, or the cap would not bind (< 255)."""
    regs = REGS_PER_SM // (CTAS * lw.threads) // 8 * 8
    if not lw.tuning.ring_occupancy or launch_chose(lw) or regs >= 255:
        return None
    return regs


def note_ring(lw, loop, dots, rows: bool):
    """Record that ``dots`` of ``loop`` were lowered in a wgmma ring (``rows``: a
    row-region ring, rows_ring)."""
    for d in dots:
        lw.wgmma_ring_dots[d] = (loop, rows)


def _fallback_dots(func) -> set:
    from .async_pipeline import _versioned_fallbacks
    return {o for loop in _versioned_fallbacks(func) for o in loop.walk() if isinstance(o, ops.DotOp)}


def in_loop(op) -> bool:
    """Whether ``op`` sits inside a loop (scf.for / scf.while)."""
    blk = op.parent
    while blk is not None:
        owner = getattr(blk.parent, "parent", None)
        if isinstance(owner, (ops.ForOp, ops.WhileOp)):
            return True
        blk = getattr(owner, "parent", None)
    return False


def wants_cap(lw) -> bool:
    """The kernel-level part of the rule (module docstring): every expected-path dot in
    a wgmma ring, something else setting the registers, no ring inside a loop, shared
    memory for two CTAs."""
    rings = lw.wgmma_ring_dots
    if not rings or CTAS * (lw.smem_bytes + SMEM_RESERVED) > SMEM_PER_SM:
        return False
    fallback = _fallback_dots(lw.func)
    expected = [o for o in lw.func.walk() if isinstance(o, ops.DotOp) and o not in fallback]
    if any(d not in rings for d in expected):
        return False
    if any(in_loop(loop) for loop, _ in rings.values()):
        return False
    if _tiles_per_thread(lw) > HELD_SHARE * ring_cap(lw):
        return False
    return bool(fallback) or any(rows for _, rows in rings.values())


# The tiles a ring loop holds in registers -- its dots' fp32 accumulators and the A
# fragments read before it (attention's q) -- must leave room under the cap for the rest
# (softmax temporaries, addresses): tutorial 06 at HEAD_DIM 128 holds 64 + 32 + 32 = 128
# registers per thread at 8 warps, and capped at 128 it spilled 272 bytes with every
# wgmma serialised (C7511); at HEAD_DIM 64 it holds 80.
HELD_SHARE = 0.75


def _tiles_per_thread(lw) -> float:
    """The most 32-bit registers per thread one ring loop's accumulators and hoisted A
    fragments take."""
    import math
    per_loop = {}
    for d, (loop, _) in lw.wgmma_ring_dots.items():
        regs = math.prod(d.result.type.shape) / lw.threads
        if d in lw.hoisted_a:
            regs += math.prod(d.a.type.shape) / 2 / lw.threads
        per_loop[loop] = per_loop.get(loop, 0.0) + regs
    return max(per_loop.values(), default=0.0)


def cap_registers(lw):
    """After lowering: ``.maxnreg`` for two CTAs per SM when the rule holds."""
    regs = ring_cap(lw)
    if regs is not None and wants_cap(lw):
        lw.kernel.attributes.add(f'"nvvm.maxnreg"="{regs}"')
        lw.reg_cap = regs
