"""The NVPTX target: LLVM module setup, optimisation and PTX emission through llvmlite."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile

import llvmlite.binding as llvm

from .llvm_pipeline import wants_triton_pipeline

TRIPLE = "nvptx64-nvidia-cuda"
# 32-bit shared-memory pointers (addrspace 3), as nvptx-short-ptr gives.
DATA_LAYOUT = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
DEFAULT_ARCH = 90
SUPPORTED_ARCHS = (70, 75, 80, 86, 89, 90)


def parse_target(target) -> int:
    """'cuda:90' / 'cuda' / 'sm_80' / 'sm80' / 90 -> compute capability as an int (major*10+minor)."""
    if isinstance(target, int):
        return target
    t = str(target).strip().lower()
    m = re.fullmatch(r"(?:cuda)?:?(?:sm_?)?(\d+)a?", t)
    if m:
        return int(m.group(1))
    if t in ("cuda", "gpu", ""):
        return DEFAULT_ARCH
    raise ValueError(f"unknown CUDA target {target!r} (expected 'cuda:90', 'cuda:80', ...)")


def ptx_features(arch: int) -> str:
    # PTX 8.0 (CUDA 12.0) covers sm_90 and below; drivers >= 525 load it.
    return "+ptx80"


def cpu_name(arch: int, arch_specific: bool = False) -> str:
    """``sm_90a`` for kernels using arch-specific instructions (wgmma), which only run on
    exactly compute capability 9.0; ``sm_<arch>`` otherwise."""
    if arch_specific and arch != 90:
        raise ValueError(f"arch-specific PTX is only emitted for sm_90 (got sm_{arch})")
    return f"sm_{arch}a" if arch_specific else f"sm_{arch}"


@functools.lru_cache(maxsize=None)
def _target_machine(arch: int, arch_specific: bool = False):
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=cpu_name(arch, arch_specific), features=ptx_features(arch), opt=3)


def llvm_to_ptx(llvm_ir: str, arch: int, arch_specific: bool = False) -> tuple[str, str]:
    """Parse, verify, optimise (O3) and emit PTX.  Returns (optimised LLVM IR, PTX)."""
    tm = _target_machine(arch, arch_specific)
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_unrolling = True
    # Triton's pipeline (no target machine) where the planner marked the module (llvm_pipeline.py)
    pb = llvm.create_pass_builder(None if wants_triton_pipeline(llvm_ir) else tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return str(mod), tm.emit_assembly(mod)


def find_ptxas() -> str | None:
    for cand in (shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"):
        if cand and os.path.exists(cand):
            return cand
    return None


def ptxas(ptx: str, arch: int = DEFAULT_ARCH, verbose: bool = False) -> str:
    """Assemble ``ptx`` with ptxas (a test and diagnostics helper, never used to launch).
    Returns ptxas' messages; raises RuntimeError with them on failure."""
    exe = find_ptxas()
    if exe is None:
        raise FileNotFoundError("ptxas not found")
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        sm = f"sm_{arch}a" if re.search(rf"^\.target sm_{arch}a\b", ptx, re.M) else f"sm_{arch}"
        cmd = [exe, f"-arch={sm}", src, "-o", out] + (["-v"] if verbose else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas failed:\n{r.stderr}")
        return r.stderr
