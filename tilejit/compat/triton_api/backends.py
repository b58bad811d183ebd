"""``triton.backends`` and ``triton.backends.compiler``: targets and compiler backends.

``backends`` maps Triton's backend names to ``Backend(compiler, driver)`` pairs, as
Triton's entry-point discovery does: ``"cpu"`` (tilejit's x86-64 backend, or its
interpreter under ``TILEJIT_INTERPRET=1``) and ``"nvidia"`` (tilejit's CUDA
backend; its driver is active only where a GPU and cuda-bindings are present).
A compiler backend's ``hash()`` names everything that changes the code it emits;
``parse_options`` turns Triton's compile options into :class:`TritonOptions`.
"""
from __future__ import annotations

import dataclasses
from abc import ABCMeta, abstractmethod
from dataclasses import dataclass

from .drivers import CPUDriver, CudaDriver, DriverBase, GPUTarget

__all__ = ["GPUTarget", "BaseBackend", "Backend", "backends", "TritonOptions", "DriverBase"]


@dataclass(frozen=True)
class TritonOptions:
    """Triton's compile options as tilejit reads them.  ``num_warps`` and
    ``num_stages`` shape CUDA kernels (the CPU backend runs one program per task and
    ignores them); ``debug`` is accepted (tilejit always checks ``tl.device_assert``);
    ``enable_fp_fusion`` and ``enable_reflect_ftz`` are tilejit's Options fields of those
    names (CUDA only; runtime/options.py); ``sanitize_overflow`` and ``launch_pdl`` are
    accepted and have no effect; ``launch_cooperative_grid=True`` is refused at compile."""
    backend_name: str = "cpu"
    arch: object = ""
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    maxnreg: int | None = None
    debug: bool = False
    sanitize_overflow: bool = True
    enable_fp_fusion: bool = True
    enable_reflect_ftz: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    extern_libs: tuple | None = None
    supported_fp8_dtypes: tuple = ("fp8e5", "fp8e4nv")

    def hash(self) -> str:
        return repr(sorted(dataclasses.asdict(self).items()))


class BaseBackend(metaclass=ABCMeta):
    """A compiler backend for one kind of target (Triton's interface)."""

    def __init__(self, target: GPUTarget) -> None:
        self.target = target
        if not self.supports_target(target):
            raise ValueError(f"{type(self).__name__} does not compile for {target}")

    @staticmethod
    @abstractmethod
    def supports_target(target: GPUTarget) -> bool:
        raise NotImplementedError

    @abstractmethod
    def hash(self) -> str:
        raise NotImplementedError

    @abstractmethod
    def parse_options(self, options: dict) -> object:
        raise NotImplementedError

    @staticmethod
    def parse_attr(desc):
        return [["tt.divisibility", 16]] if "D" in str(desc) else []


class _TilejitBackend(BaseBackend):
    defaults: dict = {}

    def parse_options(self, options: dict) -> TritonOptions:
        """Known options are read (Triton drops unknown ones; so does tilejit)."""
        fields = {f.name for f in dataclasses.fields(TritonOptions)}
        args = {**self.defaults, "backend_name": self.target.backend, "arch": self.target.arch}
        args.update({k: v for k, v in (options or {}).items() if k in fields})
        if args.get("extern_libs") is not None:
            args["extern_libs"] = tuple(sorted(dict(args["extern_libs"]).items()))
        if args.get("supported_fp8_dtypes") is not None:
            args["supported_fp8_dtypes"] = tuple(args["supported_fp8_dtypes"])
        return TritonOptions(**args)

    def hash(self) -> str:
        from .cache import triton_key
        return f"{triton_key()}-{self.target.backend}-{self.target.arch}"

    def add_stages(self, stages, options, language=None):
        from ...compat import UnsupportedTritonFeature
        raise UnsupportedTritonFeature(
            "tilejit does not support `BaseBackend.add_stages` (missing feature: tilejit's "
            "pipeline is not made of MLIR stages; use `python -m tilejit dump` to see each stage)")


class CPUBackend(_TilejitBackend):
    """tilejit's host backend: x86-64 through LLVM (the interpreter when asked)."""
    defaults = {"num_stages": 1}

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend in ("cpu", "interpreter")


class CUDABackend(_TilejitBackend):
    """tilejit's CUDA backend: PTX through LLVM's NVPTX target."""

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "cuda"


@dataclass(frozen=True)
class Backend:
    compiler: type
    driver: type


backends: dict[str, Backend] = {"cpu": Backend(CPUBackend, CPUDriver),
                                "nvidia": Backend(CUDABackend, CudaDriver)}


def make_backend(target: GPUTarget) -> BaseBackend:
    """The compiler backend for ``target`` (``triton.compiler.compiler.make_backend``)."""
    found = [b.compiler for b in backends.values() if b.compiler.supports_target(target)]
    if len(found) != 1:
        raise RuntimeError(f"tilejit has no compiler backend for target {target} "
                           "(backends: 'cpu', 'interpreter', 'cuda')")
    return found[0](target)
