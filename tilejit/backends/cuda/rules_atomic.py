"""``tt.atomic_rmw`` / ``tt.atomic_cas`` on NVPTX: one LLVM ``atomicrmw``/``cmpxchg`` on
the global pointer per owned slot (NVPTX selects ``atom.global.*``; float max/min and
anything without an instruction become a CAS loop).  A scalar atomic is done by
thread 0; when the layout replicates elements (a scalar, or a tile smaller than
the CTA) the owner's old value reaches the other copies through shared memory.  A
scalar atomic starts with a CTA barrier, so the CTA's earlier writes happen before
it (``tl.debug_barrier()`` is a no-op in tilejit).

Ordering: NVPTX turns every ``atomicrmw`` into a relaxed ``atom`` whatever its LLVM
ordering, and a ``cmpxchg`` with one into a system-scope ``atom.acq_rel.sys`` (a
``membar.sys`` each).  So the atomics themselves are emitted relaxed and the op's
``sem`` is made by fences at its ``scope`` (gpu: ``fence.acq_rel.gpu``, cta, sys):
a release fence before the op's atomics (release, acq_rel), an acquire fence after
them (acquire, acq_rel) -- the PTX memory model's release and acquire patterns.
The order among one op's own elements is unspecified, as in Triton."""
from __future__ import annotations

from llvmlite import ir

from ...ir import ops
from ..llvm.atomics import emit_cas, emit_rmw
from . import types as T
from .lowering import RULES, Tile
from .rules_memory import _masked_value
from .sanitize import check_slots, finish


def _conds(lw, lay, masks):
    """Per slot: i1 (or None) for 'this thread performs the atomic of this slot'."""
    if lay is None:
        first = lw.b.icmp_unsigned("==", lw.tid, lw.i32(0))
        return [first if masks[0] is None else lw.b.and_(masks[0], first)]
    out = []
    for s, m in enumerate(masks):
        own = lw.owned(lay, s)
        out.append(m if own is None else (own if m is None else lw.b.and_(m, own)))
    return out


def _share(lw, lay, conds, olds, el):
    """Old values of replicated slots from the thread that performed the atomic."""
    if lay is not None and lay.exact:
        return olds
    mty, size = T.mem_type(el), T.mem_size(el)
    n = 1 if lay is None else lay.numel
    base = lw.smem(n * size)
    lw.barrier()
    idx = [lw.i32(0)] if lay is None else [lw.elem_index(lay, s) for s in range(len(olds))]
    for c, i, v in zip(conds, idx, olds):
        addr = lw.smem_addr(base, lw.b.mul(i, lw.i32(size)))
        lw.guarded(c, lambda a=addr, v=v: lw.b.store(v, a))
    lw.barrier()
    return [lw.b.load(lw.smem_addr(base, lw.b.mul(i, lw.i32(size))), typ=mty) for i in idx]


_SYNCSCOPE = {"gpu": "device", "cta": "block", "sys": None}
_RELEASES, _ACQUIRES = ("release", "acq_rel"), ("acquire", "acq_rel")


def _fence(lw, op, ordering):
    lw.b.fence(ordering, _SYNCSCOPE[op.scope])


def _lower(lw, op, per_slot, masks):
    ptile = lw.get(op.ptr)
    el = op.result.type.element
    lay = ptile.layout
    if lay is None:
        # thread 0 acts for the CTA: the other threads' earlier writes must be done
        # (a lock released by atomic_xchg after stores, as in layer-norm backward)
        lw.barrier()
    conds = _conds(lw, lay, masks)
    conds = check_slots(lw, op, ptile.regs, conds, T.mem_size(el), lay)    # sanitize mode only
    zero = T.const(el, 0)
    if op.sem in _RELEASES:
        _fence(lw, op, "release")
    olds = [_masked_value(lw, c, lambda s=s: per_slot(s), zero) for s, c in enumerate(conds)]
    if op.sem in _ACQUIRES:
        _fence(lw, op, "acquire")
    out = Tile(_share(lw, lay, conds, olds, el), lay)
    finish(lw)
    return [out]


@RULES.register(ops.AtomicRMWOp)
def _atomic_rmw(lw, op):
    el = op.result.type.element
    ptrs = lw.get(op.ptr).regs
    vals = lw.get(op.val).regs
    masks = lw.get(op.mask).regs if op.mask is not None else [None] * len(ptrs)
    return _lower(lw, op, lambda s: emit_rmw(lw.b, op.kind, el, ptrs[s], vals[s], "relaxed"), masks)


@RULES.register(ops.AtomicCASOp)
def _atomic_cas(lw, op):
    el = op.result.type.element
    ptrs = lw.get(op.ptr).regs
    cmps, vals = lw.get(op.cmp).regs, lw.get(op.val).regs
    return _lower(lw, op, lambda s: emit_cas(lw.b, el, ptrs[s], cmps[s], vals[s], "relaxed"),
                  [None] * len(ptrs))
