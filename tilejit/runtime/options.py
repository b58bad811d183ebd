"""Compiler and runtime options, read from the environment once.

The options object is frozen and part of every compilation cache key; nothing deep
in the compiler reads the environment.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace


def _flag(env, name) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _xdg_cache_dir(env) -> str:
    """``$XDG_CACHE_HOME/tilejit`` when XDG_CACHE_HOME is an absolute path (the XDG
    base-directory rule: relative values are ignored), else ''."""
    base = env.get("XDG_CACHE_HOME", "").strip()
    return os.path.join(base, "tilejit") if os.path.isabs(base) else ""


_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size(env, name, default: int) -> int:
    """A count from the environment: digits with an optional K/M/G/T suffix (``500M``)."""
    text = env.get(name, "").strip().upper().removesuffix("B").removesuffix("I")
    if not text:
        return default
    num, suffix = (text[:-1], text[-1]) if text[-1] in _SUFFIX else (text, "")
    try:
        return max(0, int(float(num) * _SUFFIX[suffix]))
    except ValueError:
        raise ValueError(f"{name}={env.get(name)!r}: expected a number with an optional "
                         "K/M/G suffix, e.g. 500M") from None


@dataclass(frozen=True)
class CudaTuning:
    """The CUDA backend's code-generation choices (``Options.cuda``; part of the compile
    key).  Each boolean field is one lowering strategy; True uses it, False keeps the
    plain lowering it replaces.  The defaults are what ships, and every one of them is ON:
    each was measured on an H200 (bench/results/*_notes.md; a strategy that was not faster
    there was deleted with its code, not left OFF).  ``TILEJIT_CUDA_TUNING="index_tiles=0,
    fuse_siblings=0"`` sets fields from the environment; tests and benchmarks use
    ``use_options(cuda=replace(get_options().cuda, index_tiles=False))``."""

    # mma_rows.py: row-region loops (attention)
    rotate_scalar_loads: bool = True    # a region loop's strided computed-pointer loads rotated a tile ahead
    kmajor_b: bool = True               # a region dot's B, contiguous along K, loaded transposed and staged K-major
    index_tiles: bool = True            # 2-D aranges/splats/constants (causal masks) computed in the region layout
    # rules_mma.py: loop-free dots
    kmajor_operands: bool = True        # a column-major fp16/bf16 operand loaded in vectors along dim 0, staged transposed
    # rules_tiles.py
    remat_broadcasts: bool = True       # a broadcast's registers recomputed in its layout (False: shared memory)
    # rules_wgmma.py
    imm_offsets: bool = True            # shared-memory addresses that differ by constants: one register + immediates
    uniform_wg: bool = True             # the wgmma warpgroup index read from lane 0 (uniform descriptors)
    # hoist_loads.py
    hoist_branch_loads: bool = True     # a branch's loads issued before it (False: they stay in the branch)
    # rules_elementwise.py
    wide_umulhi: bool = True            # umulhi as mul.wide.u32, the low half shared with the i32 multiply
    uniform_divisor: bool = True        # x / d with one d per thread: the reciprocal once (div.rn's fast path)
    chunk_divide: bool = True           # fp32 x / d: div.rn's fast path for a thread's slots behind one range check
    chunk_constant_cmp: bool = True     # a compare proved constant over a chunk: evaluated once per chunk
    # rules_reduce.py
    fuse_siblings: bool = True          # full reductions of one block done together (one cross-warp exchange)
    row_butterflies: bool = True        # last-axis reductions of one-row blocks / rows over whole warps: butterflies
    dim0_layouts: bool = True           # 2-D tiles whose accesses move along dim 0: neighbouring threads along dim 0 (dim_order.py)
    dim0_row_stores: bool = True        # with them, a store moving along dim 1 (a transpose) restaged row-major through shared memory
    triton_llvm_pipeline: bool = True   # kernels with masked loads in loops (no dots): LLVM O3 without the NVPTX target, as Triton
    # remat.py
    remat_reductions: bool = True       # cheap values recomputed after reductions instead of kept live
    remat_occupancy: bool = True        # such a plan with room: ask ptxas for 2 CTAs per SM (.minnctapersm 2)
    remat_min_saving: int = 16          # registers per thread a remat plan must save to be used
    # rules_atomic.py
    ordered_atom_asm: bool = True       # PTX atom with the ordering in the instruction (False: LLVM atomics + fences)
    # rows_ring.py: cp.async rings of row-region loops
    row_ring: bool = True               # region dots' B tiles copied with cp.async into a ring
    ring_rotate_first: bool = True      # the loop's first dot computed an iteration ahead
    ring_wgmma: bool = True             # on sm_90a the ring's dots as wgmma (A from registers)
    ring_occupancy: bool = True         # wgmma-ring kernels: registers capped for 2 CTAs per SM (occupancy.py)
    ring_wide_copies: bool = True       # the ring's B tiles copied in 16-byte cp.async.cg (8-element chunks), as Triton
    ring_remat_leaves: bool = True      # the ring copies' loop-invariant index leaves recomputed per slot (False: via shared memory)
    ring_split_offsets: bool = True     # a ring copy's ptr + (u + i) * c as (ptr + i * c) made once + u * c per iteration
    # pipeline.py, async_pipeline.py: software-pipelined dot loops
    wgmma_inflight: bool = True         # a ring's (rows_ring: the last dot's) wgmma group left in flight across the loop edge (False: wait for all)
    ring_late_issue: bool = True        # with a group in flight: the next tile copied after a 2nd barrier (S-1 ahead; False: S-2)
    proxy_fence: bool = True            # fence.proxy.async between the cp.async wait and wgmma reads
    fresh_tid: bool = True              # %tid.x read again in the body of a loop around a dot loop
    coalesced_results: bool = True      # a dot loop's result shape stored scalar but contiguous: one element per thread

    @classmethod
    def parse(cls, text: str, base: "CudaTuning | None" = None) -> "CudaTuning":
        """``"index_tiles=0,fuse_siblings=0"`` -> the tuning with those fields changed
        (from ``base``, default the shipped one); unknown names and values are errors."""
        base = base if base is not None else cls()
        kinds = {f.name: f.type for f in fields(cls)}
        names = list(kinds)
        changes = {}
        for item in str(text).replace(";", ",").split(","):
            if not item.strip():
                continue
            name, eq, value = (x.strip().lower() for x in item.partition("="))
            if name not in names:
                raise ValueError(f"TILEJIT_CUDA_TUNING: unknown field {name!r}; the fields are "
                                 f"{', '.join(names)}")
            if kinds[name] in ("int", int):
                if not eq or not value.isdigit():
                    raise ValueError(f"TILEJIT_CUDA_TUNING: {item.strip()!r}: write {name}=<a count>")
                changes[name] = int(value)
            elif not eq or value not in _BOOLS:
                raise ValueError(f"TILEJIT_CUDA_TUNING: {item.strip()!r}: write {name}=1 or {name}=0")
            else:
                changes[name] = _BOOLS[value]
        return replace(base, **changes)


def _opt_level(env) -> int:
    """TILEJIT_CPU_OPT_LEVEL: 1, 2 or 3 (unset, empty or -1: chosen by kernel size)."""
    raw = env.get("TILEJIT_CPU_OPT_LEVEL", "").strip()
    if raw in ("", "-1"):
        return -1
    if raw not in ("1", "2", "3"):
        raise ValueError(f"TILEJIT_CPU_OPT_LEVEL={raw!r}: write 1, 2 or 3 (or leave it unset: chosen by kernel size)")
    return int(raw)


def _tristate(env, name) -> int:
    """``name`` as 1 or 0 (1/0, on/off, true/false...); unset, empty or -1: -1 (automatic)."""
    raw = env.get(name, "").strip().lower()
    if raw in ("", "-1"):
        return -1
    if raw not in _BOOLS:
        raise ValueError(f"{name}={env.get(name)!r}: write 1 or 0 (or leave it unset: automatic)")
    return int(_BOOLS[raw])


def _default_on(env, *names) -> bool:
    """The first of ``names`` set in ``env`` as a boolean (1/0, true/false, on/off...); True
    when none is set.  Other values are errors."""
    for name in names:
        raw = env.get(name, "").strip().lower()
        if raw:
            if raw not in _BOOLS:
                raise ValueError(f"{name}={env.get(name)!r}: write 1 or 0")
            return _BOOLS[raw]
    return True


def launch_choice(attrs, options, name: str) -> bool:
    """A compile option that a launch keyword may set (``enable_fp_fusion``,
    ``enable_reflect_ftz``): the keyword's value recorded in the kernel's ``attrs``
    (runtime/launcher.py), else the ``Options`` field of that name."""
    value = attrs.get(name)
    return bool(getattr(options, name, True) if value is None else value)


_BOOLS = {"1": True, "true": True, "yes": True, "on": True,
          "0": False, "false": False, "no": False, "off": False}


@dataclass(frozen=True)
class Options:
    interpret: bool = False          # TILEJIT_INTERPRET=1: run on the reference interpreter
    backend: str = ""                # TILEJIT_BACKEND=cpu|interpreter|cuda (overrides the default)
    check_analysis: bool = False     # TILEJIT_CHECK_ANALYSIS=1: interpreter checks analysis claims
    sanitize: bool = False           # TILEJIT_SANITIZE=1: bounds-checked compiled code
    debug: bool = False              # TILEJIT_DEBUG=1: verify the IR after every pass
    dump_dir: str = ""               # TILEJIT_DUMP_DIR=dir: write every stage's text
    num_threads: int = 0             # TILEJIT_NUM_THREADS (0: all cores)
    cache_dir: str = ""              # TILEJIT_CACHE_DIR, else $XDG_CACHE_HOME/tilejit (default ~/.cache/tilejit)
    cache_max_bytes: int = 1 << 30   # TILEJIT_CACHE_SIZE=500M: disk cache cap, oldest dropped (0: no cap)
    kernel_cache_size: int = 1024    # TILEJIT_KERNEL_CACHE_SIZE: compiled kernels kept in memory per kernel (LRU)
    vectorize: bool = True           # TILEJIT_VECTORIZE=0 disables analysis-driven vector access
    align_version: bool = True       # TILEJIT_ALIGN_VERSION=0: dot loops not versioned on run-time checks (transforms/align_version.py)
    native_call: bool = True         # TILEJIT_NATIVE_CALL=0: launches pack with struct + ctypes
    ptx_check: str = ""              # TILEJIT_PTX_CHECK=80,90: also compile host kernels for CUDA
    traceback: bool = False          # TILEJIT_TRACEBACK=1: compile errors keep tilejit's own frames
    explain: bool = False            # TILEJIT_EXPLAIN=1: print each compiled kernel's paths (stderr)
    cpu_opt_level: int = -1          # TILEJIT_CPU_OPT_LEVEL=1|2|3: LLVM's pipeline for CPU kernels (-1: by size, llvm/binding.py)
    cpu_loop_unroll: int = -1        # TILEJIT_CPU_LOOP_UNROLL=0|1: LLVM's heuristic loop unrolling for CPU kernels (-1: chosen by the backend, llvm/binding.py pipeline_for)
    cpu_stream_bytes: int = -1       # TILEJIT_CPU_STREAM_BYTES=64M: a CPU store's bytes per launch from which it streams (non-temporal; -1: 3/4 of the last-level cache, 0: never; backends/cpu/streaming.py)
    # Floating-point semantics on CUDA, Triton's compile options of the same names and
    # defaults; a launch keyword (``kernel[grid](..., enable_fp_fusion=False)``) overrides
    # the field for that compile (:func:`launch_choice`).  docs/differences.md gives the
    # tolerances; the interpreter and the cpu backend never contract nor flush.
    enable_fp_fusion: bool = True    # TILEJIT_DEFAULT_FP_FUSION=0: no a*b+c contracted into one fma (one rounding)
    enable_reflect_ftz: bool = True  # TILEJIT_DEFAULT_REFLECT_FTZ=0: fp32 exp2 keeps subnormal results (no ex2.approx.ftz)
    cuda: CudaTuning = field(default_factory=CudaTuning)   # TILEJIT_CUDA_TUNING="name=0|1,...": CUDA lowering choices

    @classmethod
    def from_env(cls, env=None) -> "Options":
        env = os.environ if env is None else env
        return cls(
            interpret=_flag(env, "TILEJIT_INTERPRET"),
            backend=env.get("TILEJIT_BACKEND", "").strip(),
            check_analysis=_flag(env, "TILEJIT_CHECK_ANALYSIS"),
            sanitize=_flag(env, "TILEJIT_SANITIZE"),
            debug=_flag(env, "TILEJIT_DEBUG"),
            dump_dir=env.get("TILEJIT_DUMP_DIR", ""),
            num_threads=int(env.get("TILEJIT_NUM_THREADS", "0") or 0),
            cache_dir=env.get("TILEJIT_CACHE_DIR", "") or _xdg_cache_dir(env),
            cache_max_bytes=_size(env, "TILEJIT_CACHE_SIZE", 1 << 30),
            kernel_cache_size=_size(env, "TILEJIT_KERNEL_CACHE_SIZE", 1024),
            vectorize=env.get("TILEJIT_VECTORIZE", "1").strip() != "0",
            align_version=env.get("TILEJIT_ALIGN_VERSION", "1").strip() != "0",
            native_call=env.get("TILEJIT_NATIVE_CALL", "1").strip() != "0",
            ptx_check=env.get("TILEJIT_PTX_CHECK", "").strip(),
            traceback=_flag(env, "TILEJIT_TRACEBACK"),
            explain=_flag(env, "TILEJIT_EXPLAIN"),
            cpu_opt_level=_opt_level(env),
            cpu_loop_unroll=_tristate(env, "TILEJIT_CPU_LOOP_UNROLL"),
            cpu_stream_bytes=_size(env, "TILEJIT_CPU_STREAM_BYTES", -1),
            enable_fp_fusion=_default_on(env, "TILEJIT_DEFAULT_FP_FUSION", "TRITON_DEFAULT_FP_FUSION"),
            enable_reflect_ftz=_default_on(env, "TILEJIT_DEFAULT_REFLECT_FTZ"),
            cuda=CudaTuning.parse(env.get("TILEJIT_CUDA_TUNING", "")),
        )

    def with_(self, **changes) -> "Options":
        return replace(self, **changes)


_current: Options | None = None


def get_options() -> Options:
    """The process-wide options, read from the environment on first use."""
    global _current
    if _current is None:
        _current = Options.from_env()
    return _current


def set_options(options: Options | None) -> None:
    """Replace the process-wide options (tests; None re-reads the environment)."""
    global _current
    _current = options


class use_options:
    """Context manager: ``with use_options(backend="cpu"): ...`` temporarily
    replaces fields of the process-wide options (used by tests and benchmarks)."""

    def __init__(self, **changes):
        self.changes = changes
        self.saved = None

    def __enter__(self):
        self.saved = _current
        set_options(get_options().with_(**self.changes))
        return get_options()

    def __exit__(self, *exc):
        set_options(self.saved)
        return False

