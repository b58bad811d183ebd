"""The ``cuda`` backend: tile IR -> LLVM IR (nvptx64) -> PTX -> CUDA driver.

``compile`` needs no GPU (ahead-of-time PTX); ``launch`` loads the PTX once per
device through cuda-bindings (imported lazily) and launches one CTA of
``num_warps*32`` threads per program on the arrays' device and the framework's
current stream.  The kernel's ``num_warps`` and target come from
``func.attrs['num_warps']`` (default 4) and ``func.attrs['target']``
('cuda:90', 'cuda:80', ...; default: the current device, else sm_90).
"""
from __future__ import annotations

from .. import Backend, CompiledKernel, register_backend, reject_16bit_float_minmax
from ...analysis import analyze
from ...analysis.access import bounded_facts
from ...errors import CompilationError, LaunchOptionError
from ...ir.printer import print_function
from ...runtime.cache import ptx_compile_cached
from ...runtime.options import launch_choice
from ...transforms.align_version import align_version
from . import target as tgt
from .async_pipeline import _versioned_fallbacks
from .driver import Launcher, cuda_available, current_device_arch, get_device
from .kernel import lower_kernel
from .plan import plan_notes, print_plan
from .rules_memory import CUDA_ACCESS


def _printer(func) -> str:
    return print_function(func)


# Programs per grid axis that a bounded compile assumes (y and z: the hardware limit).
# Under the bound ``pid * BLOCK + arange(BLOCK)`` cannot wrap for BLOCK <= 2048, so its
# sign is known and ``offs % C``, ``offs // C`` keep their runs; larger grids run the
# variant compiled without it (``CudaKernel.grid_bound``).
GRID_BOUND = (1 << 20, 65535, 65535)


def _facts(func, options, bounded=True):
    """``(facts, grid_bound)``: the analysis under :data:`GRID_BOUND` when that changes
    an access plan under :data:`CUDA_ACCESS` (``analysis.access.bounded_facts``; the
    kernel then checks every launch's grid), else without a bound;
    ``(None, None)`` with ``vectorize`` off.  A failing analysis is an ``AnalysisError``
    naming the kernel, never scalar code."""
    if options is not None and not getattr(options, "vectorize", True):
        return None, None
    if not bounded or getattr(options, "sanitize", False):
        return analyze(func), None
    return bounded_facts(func, CUDA_ACCESS, GRID_BOUND)


class CudaKernel(CompiledKernel):
    """A PTX kernel; ``asm`` holds 'ttir', 'llir', 'llir_opt' and 'ptx'.  With
    ``reports`` it takes a buffer table and an error record after its own parameters
    (sanitize mode or a ``tt.assert``; see sanitize.py); sanitize-mode launches and
    launches on host arrays synchronise and read the record."""

    reports = sanitize = False
    _accesses = _asserts = ()
    backend_name = "cuda"
    facts = ring = None      # the analysis facts and dot-loop decisions it was compiled with
    loop_plans = None        # {scf.for: plan.LoopPlan}: the planning stage's loop strategies
    access_widths = None     # {load/store: elements per access}: the planning stage's widths
    access_limits = None     # analysis.access.AccessLimits of the target
    plan_notes = ()          # the plan's kernel-level decisions, one line each (explain)
    grid_bound = None        # (bx, by, bz) the code was compiled under (GRID_BOUND), or None
    _general = None          # () -> the variant compiled without a grid bound

    def _over(self, gx, gy, gz) -> bool:
        gb = self.grid_bound
        return gb is not None and (gx > gb[0] or gy > gb[1] or gz > gb[2])

    def __init__(self, name, func, asm, arch, num_warps, smem_bytes):
        super().__init__(name, func, asm)
        self.entry = name        # the PTX entry; ``name`` may be renamed (@jit(repr=...))
        self.arch, self.num_warps, self.shared = arch, num_warps, smem_bytes
        self.arg_types = [a.value.type.element for a in func.arguments]
        self._launcher = None

    @property
    def ptx(self) -> str:
        return self.asm["ptx"]

    def launch(self, grid, args, **launch_options):
        if self._over(*grid):
            return self._general().launch(grid, args, **launch_options)
        if self._launcher is None:
            self._launcher = Launcher(self)
        self._launcher(grid, args, **launch_options)

    def device_runner(self, first_tensor: int):
        """The express lane's runner for launches whose arrays are all torch CUDA tensors
        (runtime/express.py): device from the first tensor, torch's current stream, one
        driver launch.  The lane's key holds every tensor's device, and the general
        path has accepted the same devices before, so they all agree.  None in sanitize
        mode (it needs the buffer table); a kernel with asserts gets a null table and
        record (its asserts trap: sanitize.py)."""
        import sys
        torch = sys.modules.get("torch")
        if self.sanitize or torch is None:
            return None
        run = self._device_runner(first_tensor, torch)
        return run if self.grid_bound is None else self._bounded(run, first_tensor)

    def _device_runner(self, first_tensor: int, torch):
        if self._launcher is None:
            self._launcher = Launcher(self)
        launcher = self._launcher
        run_on, stream_of, functions = launcher.run, torch._C._cuda_getCurrentRawStream, launcher.cache
        nulls = (0, 0) if self.reports else ()

        def run(values, vals, gx, gy, gz):
            idx = vals[first_tensor].get_device()
            native, entry = launcher.native, functions.get(idx)
            if native and entry is not None and entry[1] is not None:
                try:        # the native builtin (native_launch.py); any failure: the launcher
                    if not native(entry[1], gx, gy, gz, stream_of(idx), *values, *nulls):
                        return self
                except TypeError:
                    pass
            run_on(get_device(idx), (gx, gy, gz), values, stream_of(idx))
            return self
        return run

    def _bounded(self, mine, first_tensor: int):
        """``mine`` (this kernel's device runner) for grids within :attr:`grid_bound`;
        launches over it go to the unbounded variant's runner."""
        gb, other = self.grid_bound, []

        def run(values, vals, gx, gy, gz):
            if gx > gb[0] or gy > gb[1] or gz > gb[2]:
                if not other:
                    other.append(self._general().device_runner(first_tensor))
                return other[0](values, vals, gx, gy, gz)
            return mine(values, vals, gx, gy, gz)
        return run


# the most dynamic shared memory one block may use (opt-in), by compute capability
MAX_SHARED = {80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448}


def _check_shared_memory(func, arch: int, nbytes: int) -> None:
    """A kernel whose shared memory cannot fit one block on ``arch`` is an error at
    compile time, naming the kernel, instead of a driver error at launch."""
    limit = MAX_SHARED.get(arch, min(MAX_SHARED.values()))
    if nbytes <= limit:
        return
    loc = func.loc
    raise CompilationError(
        f"kernel needs {nbytes} bytes of shared memory per program on the cuda backend, "
        f"more than sm_{arch} allows ({limit}); use smaller blocks, fewer num_stages, or "
        "split the axis of a sort/scan/gather", kernel=func.name,
        file=getattr(loc, "file", ""), line=getattr(loc, "line", 0))


def _ring_decisions(func, lw) -> dict:
    """{dot loop: None (the cp.async ring) or why it kept the register path}, from the
    plan's loops, for ``TILEJIT_EXPLAIN`` (analysis/explain.py)."""
    out = {o: None if lp.ring is not None else lp.reason for o, lp in lw.plan.loops.items()
           if lp.ring is not None or lp.reason is not None}
    for slow, fast in _versioned_fallbacks(func).items():
        if slow in out and out.get(fast, "") is None:
            out[slow] = f"{out[slow]} (the run-time fallback of a versioned loop)"
    return out


def _once(make):
    """``make()`` called on first use, its result kept."""
    box = []

    def get():
        if not box:
            box.append(make())
        return box[0]
    return get


class CudaBackend(Backend):
    name = "cuda"

    def is_available(self) -> bool:
        return cuda_available()

    def lower(self, func, options=None, bounded: bool = True):
        """``(lw, facts, grid bound)``: ``func`` checked for its target, versioned
        (align_version), analysed, planned and lowered to LLVM IR (``lw``: the
        :class:`~.lowering.Lowering`, its ``plan`` the planning stage's); no PTX yet."""
        arch = func.attrs.get("target") or func.attrs.get("arch")   # arch: the launch keyword
        arch = tgt.parse_target(arch) if arch else self.default_arch()
        num_warps = int(func.attrs.get("num_warps", 4))
        if arch < 90:
            reject_16bit_float_minmax(func, f"sm_{arch}")
        if int(func.attrs.get("num_ctas", 1)) > 1 and arch < 90:
            raise LaunchOptionError(f"{func.name}: num_ctas > 1 requires NVIDIA SM90+ (Hopper); "
                                    f"this compile is for sm_{arch}")
        if num_warps > 32:
            raise LaunchOptionError(f"{func.name}: num_warps={num_warps} is more than a CUDA block "
                                    "holds (32 warps, 1024 threads)")
        if getattr(options, "vectorize", True) and getattr(options, "align_version", True) \
                and not getattr(options, "sanitize", False):
            align_version(func, limits=CUDA_ACCESS)     # dot loops on runtime-checked alignment
        facts, bound = _facts(func, options, bounded)
        lw = lower_kernel(func, arch, num_warps, facts,
                          getattr(options, "vectorize", True) if options else True,
                          sanitize=bool(getattr(options, "sanitize", False)),
                          tuning=getattr(options, "cuda", None),
                          fp_fusion=launch_choice(func.attrs, options, "enable_fp_fusion"),
                          reflect_ftz=launch_choice(func.attrs, options, "enable_reflect_ftz"))
        return lw, facts, bound

    def plan_text(self, func, options=None) -> str:
        """The ``cuda-plan`` stage of ``func`` alone (lowered, no PTX made): goldens, tools."""
        return print_plan(self.lower(func, options)[0])

    def compile(self, func, options=None, bounded: bool = True) -> CudaKernel:
        """``bounded``: the analysis may assume :data:`GRID_BOUND` programs per axis
        (only kept when it changes an access plan; launches beyond it recompile
        without)."""
        lw, facts, bound = self.lower(func, options, bounded)
        arch, num_warps = lw.arch, lw.num_warps
        _check_shared_memory(func, arch, lw.smem_bytes)
        opt, ptx = ptx_compile_cached(lw.text, arch, lw.arch_specific)
        asm = {"ttir": _printer(func), "cuda-plan": print_plan(lw), "llir": lw.text, "llir_opt": opt, "ptx": ptx}
        kernel = CudaKernel(func.name, func, asm, arch, num_warps, lw.smem_bytes)
        kernel.reports, kernel.sanitize = lw.reports, lw.sanitize
        kernel._accesses, kernel._asserts = lw.accesses, lw.asserts
        kernel.facts, kernel.ring = facts, _ring_decisions(func, lw)
        kernel.loop_plans = lw.plan.loops   # scf.for -> plan.LoopPlan (explain)
        kernel.access_widths = lw.plan.access   # load/store -> elements per access (explain)
        kernel.access_limits = CUDA_ACCESS
        kernel.plan_notes = plan_notes(lw.plan)
        kernel.reg_cap = lw.reg_cap         # occupancy.py's register cap (None: none)
        if bound is not None:
            kernel.grid_bound = bound
            kernel._general = _once(lambda: self.compile(func, options, bounded=False))
        return kernel

    def default_arch(self) -> int:
        return current_device_arch() or tgt.DEFAULT_ARCH


register_backend("cuda", CudaBackend)
