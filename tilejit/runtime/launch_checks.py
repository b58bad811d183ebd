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
  counts bytes, :func:`casts_pointers`).
* :func:`grid_bounds`: for the unmasked loads, stores and atomics whose address is an
  argument plus offsets the range analysis bounds for a given grid (offsets made of
  program ids, ``tl.arange`` and constants), the byte interval each argument must
  cover.  :func:`bounds_violated` compares it with the arrays of a launch (once per
  grid, cached on the kernel); a launch that may step outside runs the sanitize-mode
  variant, which reports the first access out of bounds (``OutOfBoundsError``)
  before it happens.  Masked accesses and offsets built from integer arguments are
  not covered: out of bounds there is the kernel's bug, as in Triton
  (docs/debugging.md).
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


_SHAPE_OPS = (ops.SplatOp, ops.BroadcastOp, ops.ExpandDimsOp, ops.ReshapeOp, ops.TransOp)
_GRID_CACHE = 64          # grids remembered per kernel before the cache starts over


def _unmasked_accesses(kernel) -> list:
    """(IR argument name, address value) of every access without a mask whose address
    is a kernel argument plus offsets (cached on ``kernel``)."""
    got = getattr(kernel, "_tj_unmasked", None)
    if got is None:
        func = getattr(kernel, "func", None)
        got = []
        if func is not None:
            by_id = {id(a.value): a.name for a in func.arguments}
            for op in func.walk():
                if isinstance(op, (ops.LoadOp, ops.StoreOp, ops.AtomicRMWOp, ops.AtomicCASOp)) \
                        and getattr(op, "mask", None) is None:
                    base = _base_argument(op.ptr)
                    if base is not None and id(base) in by_id and _grid_only(op.ptr):
                        got.append((by_id[id(base)], op.ptr))
        kernel._tj_unmasked = got
    return got


def _base_argument(v):
    """The block argument ``v`` is an address into (through addptr and shape ops), or None."""
    while True:
        op = v.op
        if op is None:
            return v
        if isinstance(op, ops.AddPtrOp):
            v = op.ptr
        elif isinstance(op, _SHAPE_OPS):
            v = op.operands[0]
        else:
            return None


def _launch_determined(v) -> bool:
    """Whether integer value ``v`` is computed from program ids, grid sizes, aranges and
    constants only (no argument, no load, no loop-carried or region value)."""
    stack, seen = [v], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        op = v.op
        if op is None or op.regions or isinstance(op, (ops.LoadOp, ops.AtomicRMWOp,
                                                        ops.AtomicCASOp, ops.InlineAsmOp)):
            return False
        stack.extend(op.operands)
    return True


def _grid_only(v) -> bool:
    """Whether every offset on the address chain of ``v`` is :func:`_launch_determined`."""
    while v.op is not None:
        op = v.op
        if isinstance(op, ops.AddPtrOp) and not _launch_determined(op.offset):
            return False
        v = op.ptr if isinstance(op, ops.AddPtrOp) else op.operands[0]
    return True


def has_bounds(kernel) -> bool:
    """Whether ``kernel`` has unmasked accesses :func:`grid_bounds` can bound."""
    return bool(_unmasked_accesses(kernel))


def _byte_interval(facts, v):
    """[lo, hi) bytes from the base argument that address tile ``v`` touches, or None
    when an offset is not determined by the launch's grid alone."""
    lo = hi = 0
    while v.op is not None:
        op = v.op
        if isinstance(op, ops.AddPtrOp):
            r = facts.range(op.offset) if _launch_determined(op.offset) else None
            if r is None:
                return None
            size = max(1, (op.ptr.type.element.element.bits + 7) // 8)
            lo, hi = lo + r[0] * size, hi + r[1] * size
            v = op.ptr
        else:
            v = op.operands[0]
    size = max(1, (v.type.element.element.bits + 7) // 8)
    return lo, hi + size


def grid_bounds(kernel, grid, names) -> dict:
    """Parameter name -> [lo, hi) bytes from the array's address its unmasked accesses
    may touch in a launch over ``grid`` (only accesses the analysis bounds)."""
    accesses = _unmasked_accesses(kernel)
    if not accesses:
        return {}
    cache = getattr(kernel, "_tj_grid_bounds", None)
    if cache is None or len(cache) >= _GRID_CACHE:
        cache = kernel._tj_grid_bounds = {}
    got = cache.get(grid)
    if got is None:
        from ..analysis import analyze
        facts = analyze(kernel.func, grid=grid)
        got = {}
        for ir_name, ptr in accesses:
            iv = _byte_interval(facts, ptr)
            param = ir_name if ir_name in names else None
            if iv is None or param is None:
                continue
            old = got.get(param)
            got[param] = iv if old is None else (min(old[0], iv[0]), max(old[1], iv[1]))
        cache[grid] = got
    return got


def bounds_violated(kernel, grid, names, vals) -> bool:
    """Whether some bounded unmasked access of a launch over ``grid`` with the values
    ``vals`` (one per parameter) may fall outside its argument's array."""
    need = grid_bounds(kernel, grid, names)
    for name, (lo, hi) in need.items():
        v = vals[names.index(name)]
        if type(v) is np.ndarray and v.flags.c_contiguous:     # [address, + nbytes)
            if lo < 0 or hi > v.nbytes:
                return True
            continue
        from .arrays import describe
        info = describe(v)
        if info is not None and (info.address + lo < info.lo
                                 or info.address + hi > info.lo + info.nbytes):
            return True
    return False
