"""Streaming (non-temporal) vector stores for launches that write more than the cache holds.

A plain store of a line that is not in the cache first reads the line (a read for
ownership), then writes it back when it is evicted: 16 bytes of memory traffic per 4
bytes of a streamed fp32 output, plus the 8 read.  A non-temporal store writes the
whole line without reading it and without keeping it: the vector add 2^24 of issue 20
(64 MiB per operand) runs at 20-22 instead of 16-17 GB/s on one znver3 core
(bench/results/cpu_matmul_notes.md, "Streaming stores").  It is a loss when the data
would have stayed in cache for the next kernel (2^16 elements: 24 vs 30 GB/s), so only
launches whose streamable stores write at least ``Options.cpu_stream_bytes`` (default:
3/4 of the last-level cache, the threshold glibc's memcpy uses for the same choice)
stream.  The choice is the launch's (backend.CPUKernel.launch: programs x
:func:`program_bytes`): such a launch runs a variant of the kernel compiled with
streamed stores, made on first need, so kernels never launched that large compile
nothing more (a run-time branch around every store loop cost 20-40% more compile time).

A store is streamable (:func:`eligible`) when it is a vector store whose mask is known
true in the emitted version (tiles.versioned), through pointers at least 16-byte
aligned, in contiguous runs of at least :data:`MIN_RUN_BYTES` along the last dimension
(whole lines but for a run's ends).  Each streamed store loop ends with ``sfence``, so
the program's later memory operations (an atomic releasing the result to another
program, the end of the chunk) are ordered after its streamed stores as after plain
ones; a later load of a streamed address by the same thread sees the stored value (x86
keeps a core's own stores visible to it).  The values stored are the same either way.
"""
from __future__ import annotations

import os

import llvmlite.ir as ir

from ..llvm.intrinsics import declare

MIN_RUN_BYTES = 256          # contiguous bytes per run: 4 whole lines (partial lines are slow to stream)
MIN_ALIGN = 16               # movntps/movntdq need 16-byte alignment (LLVM splits wider vectors)
_LLC = []


def last_level_cache_bytes() -> int:
    """The host's last-level cache size in bytes (8 MiB when it cannot be read)."""
    if not _LLC:
        size = 0
        try:
            size = os.sysconf("SC_LEVEL3_CACHE_SIZE") or os.sysconf("SC_LEVEL2_CACHE_SIZE")
        except (ValueError, OSError):
            pass
        _LLC.append(size if size > 0 else _sysfs_llc() or 8 << 20)
    return _LLC[0]


def _sysfs_llc() -> int:
    base, best = "/sys/devices/system/cpu/cpu0/cache", (0, 0)
    try:
        for d in os.listdir(base):
            if not d.startswith("index"):
                continue
            with open(os.path.join(base, d, "level")) as f:
                level = int(f.read())
            with open(os.path.join(base, d, "size")) as f:
                text = f.read().strip()
            mult = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
            best = max(best, (level, int(text.rstrip("KM")) * mult))
    except (OSError, ValueError):
        return 0
    return best[1]


def threshold_bytes(options) -> int:
    """Launch bytes from which a launch streams its streamable stores (0: never)."""
    t = getattr(options, "cpu_stream_bytes", -1)
    return last_level_cache_bytes() * 3 // 4 if t < 0 else t


def eligible(ctx, op, plan, mask_known_true: bool) -> bool:
    """Whether tile store ``op`` with vector plan ``plan`` may stream (module docstring)."""
    if not mask_known_true or plan.width < 2 or plan.align < MIN_ALIGN:
        return False
    if not ctx.module.triple.startswith("x86_64"):
        return False
    facts = getattr(ctx, "facts", None)
    esz = op.value.type.element.bits // 8
    if facts is None or esz * plan.width < MIN_ALIGN:
        return False
    run = facts.axis(op.ptr).contiguity[-1]
    return min(run, op.ptr.type.shape[-1]) * esz >= MIN_RUN_BYTES


def emit_store(ctx, op, emit) -> None:
    """A streamable store's loop: ``emit(True)`` (stores marked by :func:`mark`) then
    ``sfence`` in a streaming compile (``ctx.stream_stores``), else ``emit(False)``,
    the store's bytes counted for :func:`program_bytes`."""
    if getattr(ctx, "stream_stores", False):
        emit(True)
        ctx.b.call(declare(ctx.module, "llvm.x86.sse.sfence", ir.VoidType(), []), [])
        return
    counted = ctx.module.__dict__.setdefault("stream_ops", {})
    n = op.value.type.element.bits // 8
    for d in op.ptr.type.shape:
        n *= d
    counted[op] = n               # once per op (a versioned store is emitted twice)
    emit(False)


def program_bytes(module) -> int:
    """Bytes one program writes through streamable stores of ``module`` (0: none)."""
    return sum(module.__dict__.get("stream_ops", {}).values())


def mark(ctx, inst):
    """Make store ``inst`` non-temporal."""
    inst.set_metadata("nontemporal", ctx.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
    return inst


__all__ = ["eligible", "emit_store", "last_level_cache_bytes", "mark", "program_bytes", "threshold_bytes"]
