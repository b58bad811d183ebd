"""``tt.combine_reduce`` on CUDA: the op's pairwise tree (``ops.CombineReduceOp``)
through shared memory.  Each operand's tile is stored axis-major
(``buf[k * L + lane]``, ``L`` output lanes); round ``s = 1, 2, 4, ...`` lets the
threads of the block share the ``ceil((n - s) / 2s) * L`` pairs ``(i, i + s)``
(``i = 0, 2s, ...``), each combining them with the region's scalar code into
``buf[i]``; a barrier ends each round.  ``1 + ceil(log2 n)`` barriers, the same
order as the interpreter for every combine function (associative or not); row 0
holds the results.  The first ``log2(vec)`` rounds, inside a thread's chunk of ``vec``
consecutive elements along the axis, run in registers before the store (``_chunk``)."""
from __future__ import annotations

from ...ir import ops
from . import types as T
from .lowering import RULES, Tile
from .rules_reduce import _mem, _reg


def _offsets(op, n, lanes):
    """Byte offset in shared memory of each operand's buffer, and the total."""
    offs, total = [], 0
    for v in op.srcs:
        size = T.mem_size(v.type.element)
        total = (total + size - 1) // size * size
        offs.append(total)
        total += n * lanes * size
    return offs, total


def _addr(lw, off, el, index):
    size = T.mem_size(el)
    return lw.smem_addr(lw.smem(0), lw.b.add(lw.i32(off), lw.b.mul(index, lw.i32(size))))


def _chunk(lw, op, srcs):
    """Elements per chunk that the first rounds combine in registers: the layout's ``vec``
    consecutive elements of one thread, when they lie along the reduction axis (the last):
    a chunk starts at a multiple of ``vec``, so rounds ``s < vec`` pair elements inside it."""
    lay = srcs[0].layout
    if op.axis != len(op.srcs[0].type.shape) - 1 or any(t.layout != lay for t in srcs) \
            or getattr(lay, "dim0_first", False):
        return 1
    return lay.vec


def _combine(lw, op, a, b):
    """The combine region's scalar code on the LLVM values ``a`` and ``b`` (N each)."""
    body = op.body
    for arg, v in zip(body.args, list(a) + list(b)):
        lw.values[arg] = Tile([v], None)
    for o in body.ops[:-1]:
        lw.lower_op(o)
    return [lw.get(v).scalar for v in body.ops[-1].operands]


def _store_sources(lw, op, srcs, offs, lanes, vec):
    """Each thread's chunks, reduced in registers (rounds ``s < vec``), stored at
    ``buf[(k // vec) * lanes + lane]``."""
    axis, shape = op.axis, op.srcs[0].type.shape
    inner = 1
    for d in shape[axis + 1:]:
        inner *= d
    n = shape[axis]
    els = [v.type.element for v in op.srcs]
    lay = srcs[0].layout
    for c in range(len(srcs[0].regs) // vec):
        xs = [[t.regs[c * vec + j] for t in srcs] for j in range(vec)]
        s = 1
        while s < vec:
            for i in range(0, vec, 2 * s):
                xs[i] = _combine(lw, op, xs[i], xs[i + s])
            s *= 2
        e = lw.elem_index(lay, c * vec)
        outer, rest = lw.b.udiv(e, lw.i32(n * inner)), lw.b.urem(e, lw.i32(n * inner))
        k, inn = lw.b.udiv(rest, lw.i32(inner)), lw.b.urem(rest, lw.i32(inner))
        lane = lw.b.add(lw.b.mul(outer, lw.i32(inner)), inn)
        k = lw.b.udiv(k, lw.i32(vec)) if vec > 1 else k
        at = lw.b.add(lw.b.mul(k, lw.i32(lanes)), lane)
        for x, off, el in zip(xs[0], offs, els):
            lw.b.store(_mem(lw, x), _addr(lw, off, el, at)).align = T.mem_size(el)


def _combine_pair(lw, op, offs, lo, hi):
    """``buf[lo] = combine(buf[lo], buf[hi])`` for every operand."""
    els = [v.type.element for v in op.srcs]
    args = []
    for at in (lo, hi):
        row = []
        for off, el in zip(offs, els):
            x = lw.b.load(_addr(lw, off, el, at), typ=T.mem_type(el))
            x.align = T.mem_size(el)
            row.append(_reg(lw, x, T.llvm_type(el)))
        args.append(row)
    for v, off, el in zip(_combine(lw, op, *args), offs, els):
        lw.b.store(_mem(lw, v), _addr(lw, off, el, lo)).align = T.mem_size(el)


def _round(lw, op, offs, n, lanes, s):
    work = (n - s + 2 * s - 1) // (2 * s) * lanes
    per_thread = (work + lw.threads - 1) // lw.threads

    def item(j, vals):
        t = lw.b.add(lw.b.mul(j, lw.i32(lw.threads)), lw.tid) if per_thread > 1 else lw.tid

        def pair():
            p, lane = lw.b.udiv(t, lw.i32(lanes)), lw.b.urem(t, lw.i32(lanes))
            lo = lw.b.add(lw.b.mul(p, lw.i32(2 * s * lanes)), lane)
            _combine_pair(lw, op, offs, lo, lw.b.add(lo, lw.i32(s * lanes)))
        lw.guarded(None if work % lw.threads == 0 else lw.b.icmp_unsigned("<", t, lw.i32(work)), pair)
        return vals
    if per_thread > 1:
        lw.counted_loop(per_thread, item, [])
    else:
        item(None, [])
    lw.barrier()


@RULES.register(ops.CombineReduceOp)
def _combine_reduce(lw, op):
    srcs = [lw.get(v) for v in op.srcs]
    vec = _chunk(lw, op, srcs)
    n = op.srcs[0].type.shape[op.axis] // vec
    rty = op.results[0].type
    lanes = max(1, rty.numel)
    offs, total = _offsets(op, n, lanes)
    lw.smem(total)
    lw.barrier()
    _store_sources(lw, op, srcs, offs, lanes, vec)
    lw.barrier()
    s = 1
    while s < n:
        _round(lw, op, offs, n, lanes, s)
        s *= 2
    lay = lw.layout(rty)
    out = []
    for r, off in zip(op.results, offs):
        el = r.type.element
        regs = []
        for slot in range(1 if lay is None else lay.nslots):
            e = lw.i32(0) if lay is None else lw.elem_index(lay, slot)
            x = lw.b.load(_addr(lw, off, el, e), typ=T.mem_type(el))
            x.align = T.mem_size(el)
            regs.append(_reg(lw, x, T.llvm_type(el)))
        out.append(Tile(regs, lay))
    return out
