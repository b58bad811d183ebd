"""Safety checks of a launch that depend on the compiled kernel, each computed once
per compiled kernel (and cached on it) from its tile IR:

* :func:`written_params`: the pointer arguments the kernel stores or performs
  atomics through (``tt.store``, ``tt.atomic_rmw``, ``tt.atomic_cas``), traced back
  through pointer arithmetic, shape ops, selects and loop-carried values.  A
  read-only array (``arr.flags.writeable`` False, ``np.frombuffer(bytes)``,
  ``__array_interface__`` with the read-only flag) passed for one of them is refused
  before the launch by :func:`check_writable`.  A pointer read from memory or cast
  from an integer names no argument: such stores are not attributed.
* :func:`offset_ops`: the int32 ``+ - *`` that feed an address (sanitize mode's
  checks, transforms/sanitize.py) whose exact result the range analysis does not
  prove within int32 for every launch.  For arrays of at most 2**31-1 elements every
  in-bounds offset fits in int32, so wrapping cannot reach memory an exact offset
  would not; for a launch with a larger array the launcher runs the sanitize-mode
  variant instead, which stops with ``OffsetOverflowError`` naming the expression
  when an offset wraps (see :func:`huge_arrays`).
"""
from __future__ import annotations

import numpy as np

from ..ir import ops

INT32_ELEMENTS = 2 ** 31 - 1     # arrays longer than this may need offsets past int32
_WRITES = (ops.StoreOp, ops.AtomicRMWOp, ops.AtomicCASOp)


def _pointer_sources(v, sources, out: set) -> None:
    """Add to ``out`` the kernel arguments (block arguments of the entry block) that
    pointer value ``v`` is derived from."""
    stack, seen = [v], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.extend(sources.get(id(v), ()))
        op = v.op
        if op is None:
            out.add(id(v))
            continue
        if isinstance(op, ops.LoadOp) or op.regions:
            continue                      # a pointer read from memory: no argument
        stack.extend(x for x in op.operands if x.type.element.is_ptr())


def _compute_written(func):
    from ..transforms.sanitize import _loop_sources
    sources = _loop_sources(func)
    by_id = {id(a.value): a.name for a in func.arguments}
    written: dict = {}
    for op in func.walk():
        if isinstance(op, _WRITES):
            found: set = set()
            _pointer_sources(op.ptr, sources, found)
            for vid in found:
                name = by_id.get(vid)
                if name is not None:
                    written.setdefault(name, op)
    return written


def written_params(kernel, names) -> dict:
    """Parameter name -> the first op writing through it (cached on ``kernel``).
    IR arguments a parameter expands into (tensor descriptors) map to the parameter."""
    got = getattr(kernel, "_tj_written", None)
    if got is None:
        func = getattr(kernel, "func", None)
        ir_written = _compute_written(func) if func is not None else {}
        got = {}
        for ir_name, op in ir_written.items():
            param = ir_name if ir_name in names else next(
                (n for n in sorted(names, key=len, reverse=True) if ir_name.startswith(n)), None)
            if param is not None:
                got.setdefault(param, op)
        kernel._tj_written = got
    return got


def readonly_names(names, vals) -> list:
    """Names of the arguments that are read-only host arrays."""
    out = []
    for n, v in zip(names, vals):
        if type(v).__name__ == "TensorDescriptor":      # host descriptors: their array
            v = getattr(v, "base", v)
        if type(v) is np.ndarray or isinstance(v, np.ndarray):
            if not v.flags.writeable:
                out.append(n)
        elif hasattr(v, "__array_interface__") and not hasattr(v, "data_ptr"):
            data = v.__array_interface__.get("data")
            if isinstance(data, tuple) and len(data) > 1 and data[1]:
                out.append(n)
    return out


def check_writable(kernel, kernel_name: str, names, vals) -> None:
    """Raise ValueError when a read-only array is passed for an argument the kernel
    writes through."""
    ro = readonly_names(names, vals)
    if not ro:
        return
    written = written_params(kernel, names)
    for n in ro:
        op = written.get(n)
        if op is not None:
            what = "atomics" if not isinstance(op, ops.StoreOp) else "stores"
            raise ValueError(
                f"{kernel_name}: argument '{n}' is a read-only array but the kernel {what} "
                f"through it ({op.name} at {op.loc}); pass a writable array "
                "(np.array(a) copies one; np.frombuffer(bytes) is never writable)")


def offset_ops(kernel) -> list:
    """The int32 offset arithmetic of ``kernel`` the analysis does not prove
    in range (cached on ``kernel``)."""
    got = getattr(kernel, "_tj_offset_ops", None)
    if got is None:
        func = getattr(kernel, "func", None)
        got = _unproven_offsets(func) if func is not None else []
        kernel._tj_offset_ops = got
    return got


def _unproven_offsets(func) -> list:
    from ..analysis import analyze
    from ..analysis.ranges import add_range, mul_range, sub_range
    from ..ir.types import int32
    from ..transforms.sanitize import _CHECKED, address_slice
    feeds = address_slice(func)
    targets = [op for op in func.walk() if type(op) in _CHECKED
               and op.result.type.element == int32 and id(op.result) in feeds]
    if not targets:
        return []
    facts = analyze(func)
    exact = {ops.AddOp: add_range, ops.SubOp: sub_range, ops.MulOp: mul_range}
    out = []
    for op in targets:
        a, b = facts.range(op.lhs), facts.range(op.rhs)
        r = exact[type(op)](a, b) if a is not None and b is not None else None
        if r is None or r[0] < -2 ** 31 or r[1] > 2 ** 31 - 1:
            out.append(op)
    return out


def huge_arrays(buffers) -> list:
    """Names of the buffers with more than 2**31-1 elements."""
    return [b.name for b in buffers if b.itemsize and b.nbytes // b.itemsize > INT32_ELEMENTS]
