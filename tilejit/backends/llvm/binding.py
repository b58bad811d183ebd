"""LLVM binding helpers shared by the LLVM-based backends.

Target machines, the new-pass-manager pipeline (``Pipeline``, chosen per module by
``pipeline_for``), assembly emission and the MCJIT engine.  Nothing here knows about the tile IR.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import llvmlite.binding as llvm

_lock = threading.Lock()
_initialized = set()


def _init_native():
    with _lock:
        if "native" not in _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized.add("native")


def init_all_targets():
    with _lock:
        if "all" not in _initialized:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _initialized.add("all")


_HOST = None
_HOST_CPU: list = []          # (cpu name, feature string), detected once per process


def host_cpu() -> tuple:
    """This host's CPU name and LLVM feature string (detection costs ~1 ms: once).

    On an AVX-512 host the string also turns off the CPU model's ``prefer-256-bit``
    tuning, so LLVM's vectorizers use 512-bit vectors as the hand-vectorized code
    (dot micro-kernel, vector loads) already does: row softmax 4096^2 4.0-4.4 ->
    5.1 GB/s, layer norm +5-10% on rocketlake (bench/bench_cpu_reduce.py,
    bench/results/cpu_codegen_notes.md).  AVX2 hosts are unchanged."""
    if not _HOST_CPU:
        _init_native()
        features = llvm.get_host_cpu_features().flatten()
        _HOST_CPU.append((llvm.get_host_cpu_name(), _vector_width_features(features)))
    return _HOST_CPU[0]


def _vector_width_features(features: str) -> str:
    """``features`` plus ``-prefer-256-bit`` when they include ``+avx512f``."""
    return features + ",-prefer-256-bit" if "+avx512f" in features.split(",") else features


def new_host_target_machine():
    """A fresh target machine for this host's CPU with its detected features
    (an MCJIT engine takes ownership of the one it is given)."""
    _init_native()
    target = llvm.Target.from_default_triple()
    name, features = host_cpu()
    return target.create_target_machine(cpu=name, features=features,
                                        opt=3, codemodel="jitdefault", jit=True)


def host_target_machine():
    """A shared target machine for the host (never hand it to an engine)."""
    global _HOST
    if _HOST is None:
        _HOST = new_host_target_machine()
    return _HOST


def target_machine(triple: str, cpu: str = "", features: str = "", opt: int = 3):
    """A target machine for ``triple`` (e.g. 'nvptx64-nvidia-cuda')."""
    init_all_targets()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=opt)


def parse_module(llvm_ir: str, tm=None):
    """Parse and verify LLVM IR text (made by llvmlite.ir) for target machine ``tm``."""
    mod = llvm.parse_assembly(llvm_ir)
    if tm is not None:
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
    mod.verify()
    return mod


BIG_MODULE = 3000       # instructions (unoptimized) above which the automatic level is 1


@dataclass(frozen=True)
class Pipeline:
    """LLVM's optimisation pipeline for one CPU module: the preset level (1-3) and
    whether LLVM's heuristic loop unrolling runs (a loop marked
    ``llvm.loop.unroll.disable`` is never unrolled)."""
    level: int = 3
    unroll: bool = True

    def __str__(self):
        return f"O{self.level}" + ("" if self.unroll else ", no heuristic unrolling")


def opt_level_for(llir: str, requested: int = -1) -> int:
    """The optimisation level for the module ``llir``: ``requested`` when it is 1-3,
    else (automatic) 3, or 1 for modules of more than ``BIG_MODULE`` instructions.

    O2 and O3 cost about the same here; O1 leaves out the passes whose time grows
    fastest with a function's size (jump threading, GVN, correlated value
    propagation: 60% of O3's time on an unrolled 3x3 stencil).  Measured on a
    Sapphire Rapids host (``bench/bench_compile_cpu.py``): the stencil's O3 pipeline
    0.30 s of CPU, O1 0.13 s, its launch 8% slower; the tutorial kernels (<= 2200
    instructions) keep O3."""
    if requested in (1, 2, 3):
        return requested
    instructions = llir.count("\n  ")
    return 1 if instructions > BIG_MODULE else 3


def pipeline_for(llir: str, options=None) -> Pipeline:
    """The pipeline for the module ``llir`` under ``options`` (``cpu_opt_level``,
    ``cpu_loop_unroll``; both -1, automatic, when ``options`` is None): the level by
    size (``opt_level_for``), LLVM's heuristic unrolling unless ``cpu_loop_unroll`` is 0.

    Unrolling is most of what a tile kernel's compile costs beyond O1: a tile op is
    lowered to a loop of constant trip count that LLVM vectorizes and interleaves, then
    unrolls, copying the vector body and fully unrolling the short loops left, so the
    module grows 3-8x (Inductor's column mean at XBLOCK=64, R0_BLOCK=4: 265 instructions,
    2,024 after O3, 252 without unrolling) and the later passes and code generation pay
    for every copy.  Without it, optimisation and code generation of the 27 kernels of
    ``bench/bench_compile_time.py`` take 0.71x the CPU time, but matmul 1024^3 runs 4%
    slower, layer norm 3%, row sum 2% (``bench/bench_compile_time_runtime.py``), so it
    stays on; the loops of rarely taken paths are kept rolled instead
    (``rolled_cold_loops``)."""
    level = opt_level_for(llir, getattr(options, "cpu_opt_level", -1))
    return Pipeline(level, getattr(options, "cpu_loop_unroll", -1) != 0)


def rolled_cold_loops(options=None) -> bool:
    """Whether the loops of a CPU kernel's rarely taken paths (the masked copy of a
    versioned tile op, cpu/tiles.py) are marked not to be unrolled: unless
    ``cpu_loop_unroll`` is 1 (LLVM unrolls every loop)."""
    return getattr(options, "cpu_loop_unroll", -1) != 1


def optimize(mod, tm, pipeline: Pipeline | int = 3, timing: bool = False) -> str | None:
    """Run LLVM's default pipeline (new pass manager) over ``mod``: ``pipeline`` (a
    ``Pipeline``, or a level 1-3 with heuristic unrolling).  ``timing``: return LLVM's
    pass timing report (bench/bench_compile_time.py ``--llvm-passes``)."""
    if isinstance(pipeline, int):
        pipeline = Pipeline(pipeline)
    pto = llvm.PipelineTuningOptions(speed_level=pipeline.level)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = pipeline.unroll
    pto.loop_interleaving = True
    pb = llvm.create_pass_builder(tm, pto)
    if timing:
        pb.start_pass_timing()
    pb.getModulePassManager().run(mod, pb)
    return pb.finish_pass_timing() if timing else None


def emit_assembly(mod, tm) -> str:
    return tm.emit_assembly(mod)


def create_engine(mod, tm=None):
    """An MCJIT engine owning ``mod`` and its own host target machine."""
    engine = llvm.create_mcjit_compiler(mod, tm or new_host_target_machine())
    engine.finalize_object()
    engine.run_static_constructors()
    return engine


def data_layout_of(tm) -> str:
    return str(tm.target_data)


def host_triple() -> str:
    _init_native()
    return llvm.get_process_triple()
