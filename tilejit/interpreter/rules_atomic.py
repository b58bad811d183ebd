"""Interpreter rules for ``tt.atomic_rmw`` and ``tt.atomic_cas``.

Programs run one at a time, so atomicity is free; lanes are applied in lane order
(a lane sees the writes of the lanes before it: duplicate addresses accumulate).
"""
from __future__ import annotations

import numpy as np

from ..ir import ops
from . import numerics as nm
from .rules import RULES
from .rules_tile import _masked_lanes, _oob


def _combine(kind, el, old, val):
    """The new memory value of one rmw (storage dtype in, storage dtype out)."""
    if kind == "xchg":
        return val
    if el.kind == "float" and kind in ("max", "min") and el.bits in (32, 64):
        return _float_minmax(kind, el, old, val)
    if el.kind == "float":
        o = nm.decode(old, el).astype(nm.compute_dtype(el))
        v = nm.decode(val, el).astype(nm.compute_dtype(el))
        fn = {"add": np.add, "max": np.fmax, "min": np.fmin}[kind]
        return nm.encode(np.asarray(fn(o, v)), el)
    fn = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    return np.asarray(fn(old, val)).astype(old.dtype)


def _float_minmax(kind, el, old, val):
    """Float atomic max/min on the bit patterns, as Triton (and every tilejit backend,
    backends/llvm/atomics.float_minmax_bits) computes it: a value with its sign bit clear
    does a signed max (min) of the bits, one with it set an unsigned min (max); a NaN value
    changes nothing.  fmax/fmin, except -0.0 < +0.0 and a NaN in memory may stay."""
    st = nm.storage(el)
    si, ui = np.dtype(f"i{el.bits // 8}"), np.dtype(f"u{el.bits // 8}")
    o, v = np.asarray(old, st), np.broadcast_to(np.asarray(val, st), np.shape(old))
    os_, vs = o.view(si), v.view(si)
    ou, vu = o.view(ui), v.view(ui)
    if kind == "max":
        s, u = np.maximum(os_, vs), np.minimum(ou, vu).view(si)
    else:
        s, u = np.minimum(os_, vs), np.maximum(ou, vu).view(si)
    new = np.where(np.isnan(v), os_, np.where(vs < 0, u, s))
    return np.asarray(new).view(st)


def _flat(v, shape):
    return np.ravel(v) if np.shape(v) == tuple(shape) else np.ravel(np.broadcast_to(v, shape))


def _run_lanes(ctx, op, ptr, lanes_fn, mask):
    """Shared driver: ``lanes_fn(old_flat, lane_indices) -> new_flat`` per group of
    lanes with distinct addresses (in lane order); returns the old values."""
    pt = op.ptr.type
    pointee = pt.element.element
    shape = pt.shape
    addrs, lanes = _masked_lanes(ptr, mask)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    out = np.zeros(n, dtype=nm.storage(pointee))
    if addrs.size:
        fail = _oob(ctx, op, lanes, pointee)
        idx = np.arange(addrs.size) if lanes is None else lanes
        groups = _rounds(addrs)
        for g in groups:
            a = addrs[g]
            old = np.asarray(ctx.memory.load(a, pointee, fail))
            new = lanes_fn(old, idx[g])
            ctx.memory.store(a, new, pointee, fail)
            out[idx[g]] = old
    out = out.reshape(shape)
    return [out if shape else out[()]]


@RULES.register(ops.AtomicRMWOp)
def _atomic_rmw(ctx, op, vals):
    ptr, val = vals[0], vals[1]
    mask = vals[2] if op.mask is not None else None
    el = op.ptr.type.element.element
    shape = op.ptr.type.shape
    flatv = _flat(val, shape)
    return _run_lanes(ctx, op, ptr, lambda old, li: _combine(op.kind, el, old, flatv[li]), mask)


@RULES.register(ops.AtomicCASOp)
def _atomic_cas(ctx, op, vals):
    ptr, cmp, val = vals
    el = op.ptr.type.element.element
    shape = op.ptr.type.shape
    flatc, flatv = _flat(cmp, shape), _flat(val, shape)

    def new(old, li):
        c = flatc[li]
        same = old.view(_bits(old)) == np.asarray(c).astype(old.dtype).view(_bits(old))
        return np.where(same, flatv[li], old)
    return _run_lanes(ctx, op, ptr, new, None)


def _rounds(addrs):
    """Lane groups with distinct addresses: round k holds the k-th lane (in lane
    order) of every address, so applying the rounds in order is lane order per address."""
    order = np.argsort(addrs, kind="stable")
    sorted_addrs = addrs[order]
    starts = np.r_[True, sorted_addrs[1:] != sorted_addrs[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(addrs.size), 0))
    rank = np.empty(addrs.size, dtype=np.int64)
    rank[order] = np.arange(addrs.size) - first
    if rank.max(initial=0) == 0:
        return [np.arange(addrs.size)]
    return [np.flatnonzero(rank == k) for k in range(int(rank.max()) + 1)]


def _bits(a):
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]


@RULES.register(ops.InlineAsmOp)
def _inline_asm(ctx, op, vals):
    raise NotImplementedError("tl.inline_asm_elementwise runs target assembly (PTX): only the cuda "
                              "backend can run it")
