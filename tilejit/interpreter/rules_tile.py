"""Interpreter rules for shape ops, memory, reductions, dot, hints and debugging."""
from __future__ import annotations

import numpy as np

from ..backends.llvm.printing import line_format, value_spec
from ..ir import ops

from . import numerics as nm
from ..errors import DeviceAssertError, OutOfBoundsError
from .provenance import hint as pointer_hint
from .rules import RULES


# ---------------------------------------------------------------- shapes
@RULES.register(ops.SplatOp)
def _splat(ctx, op, vals):
    v = vals[0]
    out = np.empty(op.attrs["shape"], dtype=v.dtype)
    out.fill(v)
    return [out]


@RULES.register(ops.BroadcastOp)
def _broadcast(ctx, op, vals):
    return [np.broadcast_to(vals[0], tuple(op.attrs["shape"]))]


@RULES.register(ops.ExpandDimsOp)
def _expand_dims(ctx, op, vals):
    return [np.expand_dims(vals[0], op.axis)]


@RULES.register(ops.ReshapeOp)
def _reshape(ctx, op, vals):
    out = np.reshape(vals[0], tuple(op.shape))
    return [out if op.shape else out[()]]


@RULES.register(ops.TransOp)
def _trans(ctx, op, vals):
    return [np.transpose(vals[0], tuple(op.perm))]


@RULES.register(ops.HintOp)
def _hint(ctx, op, vals):
    return [vals[0]]


# ---------------------------------------------------------------- memory
def _oob(ctx, op, lanes, pointee):
    """``fail(i, addr)`` for the memory layer: the i-th accessed lane is bad."""
    def fail(i, addr):
        lane = int(lanes[i]) if lanes is not None else i
        idx = np.unravel_index(lane, op.ptr.type.shape) if op.ptr.type.shape else ()
        raise OutOfBoundsError(
            f"{op.name} of {pointee} at address {addr:#x} (lane {lane}"
            f"{', index ' + str(tuple(int(j) for j in idx)) if len(idx) > 1 else ''}) "
            f"is outside every buffer: {ctx.memory.nearest(addr)}{pointer_hint(op)}",
            kernel=ctx.func.name, loc=op.loc, program_id=ctx.pid, lane=lane, address=addr)
    return fail


def _masked_lanes(ptr, mask):
    flat = np.ravel(ptr)
    if mask is None:
        return flat, None
    m = np.ravel(mask) if np.shape(mask) == np.shape(ptr) else np.ravel(np.broadcast_to(mask, np.shape(ptr)))
    if m.all():
        return flat, None
    lanes = np.flatnonzero(m)
    return flat[lanes], lanes


@RULES.register(ops.LoadOp)
def _load(ctx, op, vals):
    slots = op.slots
    ptr = vals[0]
    mask = vals[1] if slots["mask"] is not None else None
    other = vals[-1] if slots["other"] is not None else None
    pt = slots["ptr"].type
    pointee = pt.element.element
    shape = pt.shape
    addrs, lanes = _masked_lanes(ptr, mask)
    loaded = ctx.memory.load(addrs, pointee, _oob(ctx, op, lanes, pointee)) if addrs.size else None
    if lanes is None:
        out = loaded.reshape(shape)
    else:
        dt = nm.storage(op.results[0].type.element)
        if other is None:
            out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=dt)
        else:
            out = np.array(np.broadcast_to(other, shape), dtype=dt).reshape(-1)
        if loaded is not None:
            out[lanes] = loaded
        out = out.reshape(shape)
    return [out if shape else out[()]]


@RULES.register(ops.StoreOp)
def _store(ctx, op, vals):
    ptr, value = vals[0], vals[1]
    mask = vals[2] if len(vals) > 2 else None
    pointee = op.slots["ptr"].type.element.element
    addrs, lanes = _masked_lanes(ptr, mask)
    if addrs.size == 0:
        return []
    flatv = np.ravel(value) if np.shape(value) == np.shape(ptr) else np.ravel(np.broadcast_to(value, np.shape(ptr)))
    if lanes is not None:
        flatv = flatv[lanes]
    ctx.memory.store(addrs, flatv, pointee, _oob(ctx, op, lanes, pointee))
    return []


# ---------------------------------------------------------------- reductions
def _argext(x, axis, kind):
    """First index of the max/min along axis; NaNs are ignored unless all are NaN."""
    if x.dtype.kind == "f":
        fill = -np.inf if kind == "argmax" else np.inf
        x = np.where(np.isnan(x), fill, x)
    fn = np.argmax if kind == "argmax" else np.argmin
    return fn(x, axis=axis).astype(np.int32)


@RULES.register(ops.ReduceOp)
def _reduce(ctx, op, vals):
    """Sums are in the element type (16-bit floats accumulate in float32 and round
    once; float32 uses numpy's pairwise summation, so results may differ from a
    sequential sum by a few ulps times log2(n)).  max/min ignore NaN (fmax/fmin)."""
    el = op.src.type.element
    x = np.asarray(vals[0])
    axis = op.axis
    kind = op.kind
    if el.kind == "float":
        x = nm.decode(x, el).astype(nm.compute_dtype(el), copy=False)
    if kind == "sum":
        # an int1 sum wraps like any integer sum: modulo 2 (numpy's bool add is an or)
        out = np.bitwise_xor.reduce(x, axis=axis) if el.kind == "bool" else np.sum(x, axis=axis, dtype=x.dtype)
    elif kind == "max":
        out = np.fmax.reduce(x, axis=axis) if el.kind == "float" else np.max(x, axis=axis)
    elif kind == "min":
        out = np.fmin.reduce(x, axis=axis) if el.kind == "float" else np.min(x, axis=axis)
    elif kind in ("argmax", "argmin"):
        out = _argext(x, axis, kind)
        return [out if out.ndim else out[()]]
    elif kind == "xor_sum":
        out = np.bitwise_xor.reduce(x, axis=axis)
    else:
        raise NotImplementedError(f"reduction {kind}")
    out = nm.encode(np.asarray(out), el) if el.kind == "float" else np.asarray(out).astype(el.to_numpy())
    return [out if out.ndim else out[()]]


# ---------------------------------------------------------------- dot
@RULES.register(ops.DotOp)
def _dot(ctx, op, vals):
    """fp16/bf16/fp32 inputs multiply in float32 (no tf32 rounding); fp64 in float64;
    integer inputs in int32 (int64 for 64-bit); then ``+ acc`` in acc's type."""
    a, b, acc = vals
    ea, eb, ec = op.a.type.element, op.b.type.element, op.acc.type.element
    if ea.kind == "float":
        cd = np.float64 if ea.bits == 64 or eb.bits == 64 else np.float32
        prod = np.matmul(nm.decode(a, ea).astype(cd), nm.decode(b, eb).astype(cd))
        accv = nm.decode(acc, ec).astype(cd) if ec.kind == "float" else np.asarray(acc).astype(cd)
        res = prod + accv
        if ec.kind == "float":
            return [nm.encode(res.astype(nm.compute_dtype(ec)), ec)]
        return [nm.cast(res, _f(cd), ec)]
    wide = np.int64 if max(ea.bits, eb.bits, ec.bits) > 32 else np.int32
    prod = np.matmul(np.asarray(a).astype(wide), np.asarray(b).astype(wide))
    res = prod + np.asarray(acc).astype(wide)
    return [res.astype(ec.to_numpy())]


def _f(cd):
    from ..ir.types import float32, float64
    return float64 if cd is np.float64 else float32


# ---------------------------------------------------------------- debugging
@RULES.register(ops.DeviceAssertOp)
def _assert(ctx, op, vals):
    cond = np.asarray(vals[0])
    if not cond.all():
        bad = np.flatnonzero(~np.ravel(cond).astype(bool))
        from ..transforms.sanitize import overflow_error     # sanitize mode's offset checks
        err = overflow_error(op, kernel=ctx.func.name, loc=op.loc, program_id=ctx.pid,
                             detail=f" (first failing lane {int(bad[0])})")
        if err is not None:
            raise err
        raise DeviceAssertError(f"device assertion failed: {op.msg} (first failing lane {int(bad[0])})",
                                kernel=ctx.func.name, loc=op.loc, program_id=ctx.pid)
    return []


@RULES.register(ops.DebugBarrierOp)
def _debug_barrier(ctx, op, vals):
    """Programs run one at a time, in program order: nothing to wait for."""
    return []


@RULES.register(ops.DevicePrintOp)
def _print(ctx, op, vals):
    """The compiled code's lines (backends/llvm/printing.py, Triton's format): one per
    element and operand, in row-major order, each index padded to its dimension."""
    pid = tuple(int(p) for p in ctx.pid)
    many = len(op.args) > 1
    lines = [] if op.args else [_print_line(op.prefix, None, None, None, pid, (), None)]
    for n, (v, val) in enumerate(zip(op.args, vals)):
        el = v.type.element
        x = np.asarray(nm.decode(val, el)) if el.kind == "float" else np.asarray(val)
        spec = value_spec(el, op.hex)
        for idx in np.ndindex(x.shape):
            lines.append(_print_line(op.prefix, x.shape, spec, n if many else None, pid, idx,
                                     _print_value(x[idx], el, op.hex)))
    print("".join(lines), end="", flush=True)
    return []


def _print_line(prefix, shape, spec, operand, pid, idx, value) -> str:
    """``printing.line_format``'s line, formatted by Python (its ``%lld``-style
    conversions without the length modifier; the prefix put in verbatim)."""
    before, after = line_format("\0", shape, spec, operand).split("\0")
    text = before.replace("ll", "") % (pid + tuple(int(i) for i in idx)) + prefix
    return text + (after.replace("ll", "") % (value,) if spec is not None else after)


def _print_value(x, el, hex: bool):
    """An element as the compiled code passes it to printf: a float as a double, a signed
    int sign-extended, an unsigned int / bool / hex bits zero-extended, a pointer's address."""
    if el.kind == "float":
        return float(x)
    if el.is_ptr():
        return int(x)
    bits = int(x) & ((1 << el.bits) - 1)
    if el.kind == "int" and not hex and bits >> (el.bits - 1):
        return bits - (1 << el.bits)
    return bits


