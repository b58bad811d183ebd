"""Memory access for the interpreter: real addresses into the launch's buffers.

Pointers are uint64 addresses.  Each masked-in lane must fall, with its whole
element, inside one buffer of ``LaunchArgs.buffers`` and be aligned to the
element size; lanes are grouped by buffer and read/written through numpy views
of that buffer's memory.  Masked-off lanes touch nothing.
"""
from __future__ import annotations

import bisect
import ctypes

import numpy as np

from ..ir.types import PointerType


_MEM: dict = {}


def _mem_dtype(elem) -> np.dtype:
    """How ``elem`` is laid out in memory (int1 is one byte, 0 or 1)."""
    dt = _MEM.get(elem)
    if dt is None:
        dt = _MEM[elem] = _mem_dtype_uncached(elem)
    return dt


def _mem_dtype_uncached(elem) -> np.dtype:
    if isinstance(elem, PointerType):
        return np.dtype(np.uint64)
    if elem.kind == "bool":
        return np.dtype(np.uint8)
    return elem.to_numpy()


class Memory:
    """The buffers of one launch, sorted by address."""

    def __init__(self, buffers):
        bufs = sorted((b for b in buffers if b.nbytes > 0), key=lambda b: b.address)
        self.buffers = bufs
        self.starts = np.array([b.address for b in bufs], dtype=np.uint64)
        self.ends = np.array([b.address + b.nbytes for b in bufs], dtype=np.uint64)
        self._start_list = [b.address for b in bufs]
        self._end_list = [b.address + b.nbytes for b in bufs]
        self._bytes = [None] * len(bufs)
        self._views: dict = {}

    # ------------------------------------------------------------ views
    def _byte_view(self, i: int) -> np.ndarray:
        v = self._bytes[i]
        if v is None:
            b = self.buffers[i]
            raw = (ctypes.c_uint8 * b.nbytes).from_address(b.address)
            v = self._bytes[i] = np.frombuffer(raw, dtype=np.uint8)
        return v

    def _typed_view(self, i: int, dt: np.dtype):
        """(view, start) with view[k] at address start + k*itemsize, or None when the
        buffer start is not aligned to the element size."""
        key = (i, dt)
        got = self._views.get(key)
        if got is None:
            b = self.buffers[i]
            lead = (-b.address) % dt.itemsize
            raw = self._byte_view(i)[lead:]
            n = raw.size // dt.itemsize
            got = self._views[key] = (raw[: n * dt.itemsize].view(dt), b.address + lead)
        return got

    # ------------------------------------------------------------ lookup
    def locate(self, addrs: np.ndarray, itemsize: int):
        """Buffer index per address, or -1 when the element is not inside one buffer
        or the address is misaligned."""
        if not self.buffers:
            return np.full(addrs.shape, -1, dtype=np.int64)
        idx = np.searchsorted(self.starts, addrs, side="right").astype(np.int64) - 1
        safe = np.maximum(idx, 0)
        ok = (idx >= 0) & (addrs + np.uint64(itemsize) <= self.ends[safe]) & (addrs >= self.starts[safe])
        ok &= (addrs % np.uint64(itemsize)) == 0
        return np.where(ok, idx, -1)

    def nearest(self, addr: int) -> str:
        """Describe the buffer nearest to ``addr`` (for error messages)."""
        if not self.buffers:
            return "no buffers were passed"
        best, dist = None, None
        for b in self.buffers:
            d = 0 if b.address <= addr < b.address + b.nbytes else min(
                abs(addr - b.address), abs(addr - (b.address + b.nbytes - 1)))
            if dist is None or d < dist:
                best, dist = b, d
        end = best.address + best.nbytes
        if best.address <= addr < end:
            rel = f"at byte offset {addr - best.address} (misaligned or element crosses the end)"
        elif addr < best.address:
            rel = f"{best.address - addr} bytes before its start"
        else:
            rel = f"{addr - end} bytes past its end"
        return f"nearest buffer '{best.name}' [{best.address:#x}, {end:#x}) ({best.nbytes} bytes), {rel}"

    # ------------------------------------------------------------ access
    def _fast(self, addrs, dt):
        """All lanes inside one buffer and aligned: (view, element indices), else None."""
        lo, hi = int(addrs.min()), int(addrs.max())
        i = bisect.bisect_right(self._start_list, lo) - 1
        size = dt.itemsize
        if i < 0 or hi + size > self._end_list[i]:
            return None
        view, base = self._typed_view(i, dt)
        if base % size:
            return None
        rel = addrs - np.uint64(base)
        if size > 1 and (rel & np.uint64(size - 1)).any():
            return None
        return view, (rel >> np.uint64(size.bit_length() - 1)).astype(np.intp)

    def _groups(self, addrs, dt, fail):
        """Yield (view, lane positions or None for all, element indices) for flat ``addrs``."""
        fast = self._fast(addrs, dt) if addrs.size else None
        if fast is not None:
            yield fast[0], None, fast[1]
            return
        where = self.locate(addrs, dt.itemsize)
        bad = np.flatnonzero(where < 0)
        if bad.size:
            fail(int(bad[0]), int(addrs[bad[0]]))
        first = where[0] if where.size else 0
        if where.size and (where == first).all():
            groups = [(int(first), None)]
        else:
            groups = [(int(g), np.flatnonzero(where == g)) for g in np.unique(where)]
        for g, lanes in groups:
            sub = addrs if lanes is None else addrs[lanes]
            view, base = self._typed_view(g, dt)
            yield view, lanes, ((sub - np.uint64(base)) // np.uint64(dt.itemsize)).astype(np.intp)

    def load(self, addrs: np.ndarray, elem, fail) -> np.ndarray:
        """Read elements at flat ``addrs`` (all masked in); ``fail(lane, addr)`` raises."""
        dt = _mem_dtype(elem)
        out = None
        for view, lanes, idx in self._groups(addrs, dt, fail):
            if lanes is None:
                out = view[idx]
            else:
                if out is None:
                    out = np.empty(addrs.shape, dtype=dt)
                out[lanes] = view[idx]
        if not isinstance(elem, PointerType) and elem.kind == "bool":
            return out != 0
        return out

    def store(self, addrs: np.ndarray, values: np.ndarray, elem, fail) -> None:
        dt = _mem_dtype(elem)
        values = np.asarray(values).astype(dt, copy=False)
        for view, lanes, idx in self._groups(addrs, dt, fail):
            view[idx] = values if lanes is None else values[lanes]
