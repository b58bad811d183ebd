"""``tt.atomic_rmw`` / ``tt.atomic_cas`` on NVPTX.  A scalar atomic is done by thread 0
for the CTA, after a CTA barrier (so the CTA's earlier writes happen before it, as
``tl.debug_barrier()`` orders plain accesses); where its old value is used, or the
layout replicates elements (a tile smaller than the CTA), the owner's old value
reaches the other copies through shared memory.  A tile atomic is done by the thread
owning each slot.

Ordering.  NVPTX turns every ``atomicrmw`` into a relaxed ``atom`` whatever its LLVM
ordering, and a ``cmpxchg`` with one into a system-scope ``atom.acq_rel.sys`` (a
``membar.sys`` each).  With ``CudaTuning.ordered_atom_asm`` the atomics are PTX ``atom``
instructions in inline assembly (float max/min as two predicated integer ``atom``, as
Triton does): a scalar atomic is one ``atom.global.{scope}.{sem}`` (the
ordering in the instruction, as Triton emits it: SASS MEMBAR + ATOM + CCTL for
acq_rel, in the acting thread only), with a CTA barrier after it for acquire
semantics when its old value is not shared; a tile atomic is a release fence at
``scope`` before the thread's ``atom.global.{scope}.relaxed`` instructions and an acquire
fence after them (one fence per thread, not one per slot).  Without it (or for what
PTX has no instruction for: 16-bit exchange/CAS -- LLVM's CAS loops; float max/min as a
CAS loop of backends/llvm/atomics.float_minmax_bits),
``sem`` is made by ``fence.acq_rel`` at ``scope`` around relaxed LLVM atomics --
the PTX memory model's release and acquire patterns.  The order among one op's own
elements is unspecified, as in Triton."""
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
    if lay is not None or not lw.tuning.ordered_atom_asm:
        lw.barrier()        # (a scalar atomic starts with one: nothing read the slot since)
    idx = [lw.i32(0)] if lay is None else [lw.elem_index(lay, s) for s in range(len(olds))]
    for c, i, v in zip(conds, idx, olds):
        addr = lw.smem_addr(base, lw.b.mul(i, lw.i32(size)))
        lw.guarded(c, lambda a=addr, v=v: lw.b.store(v, a))
    lw.barrier()
    return [lw.b.load(lw.smem_addr(base, lw.b.mul(i, lw.i32(size))), typ=mty) for i in idx]


# PTX ``atom`` with the ordering in the instruction (checked on an H200:
# bench/results/memory_bound_notes.md): ``CudaTuning.ordered_atom_asm`` (False: LLVM atomics
# between fences in every thread, as before).
_SYNCSCOPE = {"gpu": "device", "cta": "block", "sys": None}
_RELEASES, _ACQUIRES = ("release", "acq_rel"), ("acquire", "acq_rel")
_REG = {16: ("h", T.I16), 32: ("r", T.I32), 64: ("l", T.I64)}


def _fence(lw, op, ordering):
    lw.b.fence(ordering, _SYNCSCOPE[op.scope])


def ptx_atom_op(kind, el, arch=90):
    """``op.type`` of the PTX ``atom`` instruction for ``kind`` on ``el`` ('cas' for
    compare-and-swap) on ``sm_<arch>``, or None where PTX has none (float max/min,
    16-bit xchg, bf16 add before sm_90: LLVM's CAS loops)."""
    if isinstance(el, T.PointerType) or el.kind not in ("int", "uint", "float"):
        return None
    bits, fl = el.bits, el.kind == "float"
    if bits == 16:
        if kind == "cas":
            return "cas.b16"
        if fl and kind == "add" and (el.name == "fp16" or arch >= 90):
            return f"add.noftz.{'bf16' if el.name == 'bf16' else 'f16'}"
        return None
    if bits not in (32, 64):
        return None
    if kind in ("xchg", "cas"):
        return f"{'exch' if kind == 'xchg' else 'cas'}.b{bits}"
    if kind == "add":
        return f"add.{'f' if fl else 'u'}{bits}"
    if fl:
        return None
    if kind in ("max", "min"):
        return f"{kind}.{'u' if el.kind == 'uint' else 's'}{bits}"
    return f"{kind}.b{bits}"


def _asm_atom(lw, opname, sem, scope, el, ptr, operands, cond):
    """``@cond atom.global.{scope}.{sem}.{opname} old, [ptr], operands...`` as inline PTX
    (the ordering is the instruction's own); where cond is false the result is 0.  The
    qualifiers in Triton's order (``atom.global.{sem}.{scope}.cas`` for CAS), which
    ptxas accepts as PTX's own ``atom.{sem}.{scope}.global``."""
    c, ity = _REG[el.bits]
    n = len(operands)
    pred = n + 2
    guard = f"@${pred} " if cond is not None else ""
    args = ", ".join(f"${i + 2}" for i in range(n))
    quals = f"{sem}.{scope}" if opname.startswith("cas") else f"{scope}.{sem}"
    text = f"{guard}atom.global.{quals}.{opname} $0, [$1], {args};"
    cons = [f"={c}", "l"] + [c] * n
    ins = [lw.b.ptrtoint(ptr, T.I64)] + [v if v.type == ity else lw.b.bitcast(v, ity) for v in operands]
    types = [T.I64] + [ity] * n
    if cond is not None:
        cons += ["b", "0"]
        ins += [cond, ir.Constant(ity, 0)]
        types += [T.I1, ity]
    old = lw.b.asm(ir.FunctionType(ity, types), text, ",".join(cons), ins, True)
    mty = T.mem_type(el)
    return old if mty == ity else lw.b.bitcast(old, mty)


def _result_used(lw, op) -> bool:
    counts = lw.atomic_use_counts
    if counts is None:
        from ...transforms.rewrite import use_counts
        counts = lw.atomic_use_counts = use_counts(lw.func)
    return counts.get(id(op.result), 0) > 0


def _lower(lw, op, per_slot, masks, asm=None):
    """``per_slot(s)``: the LLVM atomic of slot ``s``; ``asm(s, sem, cond)``: the same as
    one PTX ``atom`` with ordering ``sem`` (None where PTX has no such instruction)."""
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
    if not lw.tuning.ordered_atom_asm:
        return _lower_fenced(lw, op, per_slot, conds, lay, el, zero)
    if lay is None and asm is not None:
        # one thread: the ordering in its instruction, as Triton emits it; the barrier
        # before (and after, for acquire) orders the CTA's other threads with it
        olds = [asm(0, op.sem, conds[0])]
    elif lay is None:
        def fenced(s=0):
            if op.sem in _RELEASES:
                _fence(lw, op, "release")
            v = per_slot(s)
            if op.sem in _ACQUIRES:
                _fence(lw, op, "acquire")
            return v
        olds = [_masked_value(lw, conds[0], fenced, zero)]
    else:
        if op.sem in _RELEASES:
            _fence(lw, op, "release")
        if asm is not None:
            olds = [asm(s, "relaxed", c) for s, c in enumerate(conds)]
        else:
            olds = [_masked_value(lw, c, lambda s=s: per_slot(s), zero) for s, c in enumerate(conds)]
        if op.sem in _ACQUIRES:
            _fence(lw, op, "acquire")
    if _result_used(lw, op) or lw.sanitize:
        out = Tile(_share(lw, lay, conds, olds, el), lay)
    else:
        if lay is None and op.sem in _ACQUIRES:
            lw.barrier()        # the CTA's later accesses follow thread 0's acquire
        out = Tile(olds if lay is not None else [zero], lay)
    finish(lw)
    return [out]


def _lower_fenced(lw, op, per_slot, conds, lay, el, zero):
    """Every thread: a release fence, its slots' relaxed LLVM atomics, an acquire fence;
    the old values always shared."""
    if op.sem in _RELEASES:
        _fence(lw, op, "release")
    olds = [_masked_value(lw, c, lambda s=s: per_slot(s), zero) for s, c in enumerate(conds)]
    if op.sem in _ACQUIRES:
        _fence(lw, op, "acquire")
    out = Tile(_share(lw, lay, conds, olds, el), lay)
    finish(lw)
    return [out]


def _float_minmax_atom(lw, kind, sem, scope, el, ptr, val, cond):
    """Float atomic max/min as Triton emits it: ``atom.{max|min}.s`` on the bits where
    ``val``'s sign bit is clear, ``atom.{min|max}.u`` where it is set, each predicated
    (one executes); a NaN value takes the signed one with its identity (no change).
    The semantics: backends/llvm/atomics.float_minmax_bits."""
    b = lw.b
    ity = _REG[el.bits][1]
    vi = b.bitcast(val, ity)
    nan = b.fcmp_unordered("uno", val, val)
    neg = b.and_(b.icmp_signed("<", vi, ir.Constant(ity, 0)), b.not_(nan))
    ident = ir.Constant(ity, -(1 << (el.bits - 1)) if kind == "max" else (1 << (el.bits - 1)) - 1)
    vs = b.select(nan, ident, vi)
    pos = b.not_(neg)
    both = (lambda p: p) if cond is None else (lambda p: b.and_(cond, p))
    other = "min" if kind == "max" else "max"
    old_s = _asm_atom(lw, f"{kind}.s{el.bits}", sem, scope, el, ptr, [vs], both(pos))
    old_u = _asm_atom(lw, f"{other}.u{el.bits}", sem, scope, el, ptr, [vi], both(neg))
    return b.select(neg, old_u, old_s)


@RULES.register(ops.AtomicRMWOp)
def _atomic_rmw(lw, op):
    el = op.result.type.element
    ptrs = lw.get(op.ptr).regs
    vals = lw.get(op.val).regs
    masks = lw.get(op.mask).regs if op.mask is not None else [None] * len(ptrs)
    name = ptx_atom_op(op.kind, el, lw.arch) if lw.tuning.ordered_atom_asm else None
    asm = None if name is None else \
        (lambda s, sem, c: _asm_atom(lw, name, sem, op.scope, el, ptrs[s], [vals[s]], c))
    if lw.tuning.ordered_atom_asm and name is None and el.kind == "float" and el.bits in (32, 64) \
            and op.kind in ("max", "min"):
        asm = lambda s, sem, c: _float_minmax_atom(lw, op.kind, sem, op.scope, el, ptrs[s], vals[s], c)  # noqa: E731
    return _lower(lw, op, lambda s: emit_rmw(lw.b, op.kind, el, ptrs[s], vals[s], "relaxed"), masks, asm)


@RULES.register(ops.AtomicCASOp)
def _atomic_cas(lw, op):
    el = op.result.type.element
    ptrs = lw.get(op.ptr).regs
    cmps, vals = lw.get(op.cmp).regs, lw.get(op.val).regs
    name = ptx_atom_op("cas", el, lw.arch) if lw.tuning.ordered_atom_asm else None
    asm = None if name is None else \
        (lambda s, sem, c: _asm_atom(lw, name, sem, op.scope, el, ptrs[s], [cmps[s], vals[s]], c))
    return _lower(lw, op, lambda s: emit_cas(lw.b, el, ptrs[s], cmps[s], vals[s], "relaxed"),
                  [None] * len(ptrs), asm)
