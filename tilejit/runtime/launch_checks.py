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
  when an offset wraps (see :func:`huge_arrays`; a kernel that casts pointers
  counts bytes, :func:`casts_pointers`) -- unless :func:`offsets_fit` proves them in
  range for that launch's grid and integer arguments (host arrays and CUDA tensors
  alike).
* :func:`has_bounds`, :func:`bounds_fit`, :func:`check_bounds`: the accesses whose
  offsets and masks are computed from program ids, aranges, constants and integer
  arguments (``arg_bounds.py``) are bounded per grid and argument values; arrays that
  cover the bounds launch at once, and otherwise a lane certainly outside every array
  raises ``OutOfBoundsError`` before the launch.  A bound that does not fit without
  such a lane is no error (bounds over-approximate), except that an unmasked access
  bounded by the grid alone runs the sanitize-mode variant, which reports the first
  access out of bounds before it happens.  Other accesses (offsets read from memory,
  carried by loops) are not covered: out of bounds there is the kernel's bug, as in
  Triton (docs/debugging.md).
"""
from __future__ import annotations

from operator import itemgetter

import numpy as np

from ..ir import ops
from . import arg_bounds as _bounds

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


def offsets_fit(kernel, grid, names, vals) -> bool:
    """Whether :func:`offset_ops` stay within int32 for this launch's grid and
    integer arguments (arg_bounds.offsets_in_range); a launch with a huge array then
    runs the plain kernel."""
    return all(grid) and _bounds.offsets_in_range(kernel, offset_ops(kernel), grid, names, vals)


def casts_pointers(kernel) -> bool:
    """Whether ``kernel`` makes a pointer by a cast (to another element type, or from
    an integer): its offsets may then count smaller units than the arrays' elements
    (cached on ``kernel``)."""
    got = getattr(kernel, "_tj_casts_pointers", None)
    if got is None:
        func = getattr(kernel, "func", None)
        got = func is not None and any(
            isinstance(op, (ops.CastOp, ops.BitcastOp)) and op.result.type.element.is_ptr()
            for op in func.walk())
        kernel._tj_casts_pointers = got
    return got


def huge_arrays(buffers, by_bytes: bool = False) -> list:
    """Names of the buffers with more than 2**31-1 elements (bytes when ``by_bytes``)."""
    return [b.name for b in buffers if b.itemsize
            and (b.nbytes if by_bytes else b.nbytes // b.itemsize) > INT32_ELEMENTS]


def has_bounds(kernel) -> bool:
    """Whether ``kernel`` has accesses whose bounds a launch checks (arg_bounds.py)."""
    got = getattr(kernel, "_tj_has_bounds", None)
    if got is None:
        got = kernel._tj_has_bounds = bool(_bounds.accesses(kernel))
    return got


def bounds_fit(kernel, grid, names, vals) -> bool:
    """Whether every array of the launch covers the bounds of the kernel's checked
    accesses for ``grid`` and the integer arguments in ``vals`` (cached per values)."""
    fits = _bounds.fits
    for _acc, i, lo, hi in _bounds.requirements(kernel, grid, names, vals):
        if not fits(vals[i], lo, hi):
            return False
    return True


def check_bounds(kernel, kernel_name, grid, names, vals, buffers) -> bool:
    """Raise OutOfBoundsError for a lane certainly outside every array (before the
    launch); True when the sanitize-mode variant should run (arg_bounds.check_launch)."""
    return _bounds.check_launch(kernel, kernel_name, grid, names, vals, buffers)


def bounds_scalars(kernel, names) -> frozenset:
    """Indices of the integer arguments the bounds of the kernel's checked accesses read."""
    return frozenset(i for _v, i in _bounds.plan(kernel, names).scalars)


def param_bounds(kernel, grid, names, vals) -> dict:
    """Parameter index -> [lo, hi) bytes the checked accesses reach for ``grid`` and the
    integer arguments in ``vals``."""
    return {i: (lo, hi) for i, lo, hi in _bounds.per_param(kernel, grid, names, vals)}


def express_bounds(kernel, names, run, general):
    """The express lane's ``run`` with :func:`bounds_fit` first (per launch: the grid
    and the integer arguments read make a key; two comparisons per checked array); a
    launch that may not fit takes the general path."""
    p = _bounds.plan(kernel, names)
    idx = tuple(i for _v, i in p.scalars)
    scalars = itemgetter(*idx) if idx else (lambda vals: None)
    per_key: dict = {}
    ndarray = np.ndarray
    fits = _bounds.fits
    per_param = _bounds.per_param

    def checked(values, vals, gx, gy, gz):
        key = (gx, gy, gz, scalars(vals))
        need = per_key.get(key)
        if need is None:
            if len(per_key) >= 256:
                per_key.clear()
            need = per_key[key] = per_param(kernel, (gx, gy, gz), names, vals)
        for i, lo, hi in need:
            v = vals[i]
            if type(v) is ndarray and v.flags.c_contiguous:
                if lo < 0 or hi > v.nbytes:
                    return general(tuple(vals), {}, (gx, gy, gz))
            elif not fits(v, lo, hi):
                return general(tuple(vals), {}, (gx, gy, gz))
        return run(values, vals, gx, gy, gz)
    return checked
