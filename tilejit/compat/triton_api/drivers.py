"""``triton.runtime.driver``: the active driver and the host and CUDA drivers.

``driver.active`` is the CPU driver unless ``TILEJIT_BACKEND=cuda`` chose the CUDA
backend; ``driver.set_active(d)`` / ``reset_active()`` switch it (Inductor's
``set_driver_to_cpu`` / ``set_driver_to_gpu`` do).  Answers come from this machine:
the CPU's core count, the GPU's compute capability and properties.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class GPUTarget:
    """What a kernel is compiled for: backend ('cpu', 'cuda', 'interpreter'),
    architecture (compute capability for CUDA) and warp size."""
    backend: str
    arch: object
    warp_size: int


def _options():
    from ...runtime.options import get_options
    return get_options()


class DriverBase:
    """Triton's driver interface (the subset kernels and Inductor use)."""

    @classmethod
    def is_active(cls) -> bool:
        raise NotImplementedError

    def get_current_target(self) -> GPUTarget:
        raise NotImplementedError

    def get_benchmarker(self):
        from ...testing import do_bench
        return do_bench


class _HostUtils:
    @staticmethod
    def get_device_properties(device=0) -> dict:
        """The host as a device: one 'multiprocessor' per core; no shared-memory or
        register-file limit applies to a program (values beyond any kernel's needs)."""
        return {"multiprocessor_count": os.cpu_count() or 1, "max_shared_mem": 1 << 20,
                "max_num_regs": 65536, "warpSize": 1, "sm_clock_rate": 0, "mem_clock_rate": 0,
                "mem_bus_width": 0}


class CPUDriver(DriverBase):
    """The host: tilejit's CPU backend (or its interpreter with TILEJIT_INTERPRET=1)."""
    utils = _HostUtils()

    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_target(self) -> GPUTarget:
        o = _options()
        name = "interpreter" if o.interpret or o.backend == "interpreter" else "cpu"
        return GPUTarget(name, "x86-64", 1)

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        if device not in (0, None):
            raise ValueError(f"the host has one device (0), not {device!r}")

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")

    def get_device_interface(self):
        import torch
        return torch.cpu


class _CudaUtils:
    @staticmethod
    def get_device_properties(device=0) -> dict:
        import torch
        p = torch.cuda.get_device_properties(device)
        return {"multiprocessor_count": p.multi_processor_count,
                "max_shared_mem": getattr(p, "shared_memory_per_block_optin", 49152),
                "max_num_regs": getattr(p, "regs_per_multiprocessor", 65536),
                "warpSize": getattr(p, "warp_size", 32), "sm_clock_rate": 0,
                "mem_clock_rate": 0, "mem_bus_width": 0}


class CudaDriver(DriverBase):
    """An NVIDIA GPU through tilejit's CUDA backend (cuda-bindings and a device needed)."""
    utils = _CudaUtils()

    @classmethod
    def is_active(cls) -> bool:
        from ...backends.cuda.driver import cuda_available
        return cuda_available()

    def get_current_device(self) -> int:
        torch = sys.modules.get("torch")
        return torch.cuda.current_device() if torch is not None and torch.cuda.is_available() else 0

    def set_current_device(self, device) -> None:
        import torch
        torch.cuda.set_device(device)

    def get_current_stream(self, device=None) -> int:
        import torch
        return torch.cuda.current_stream(device).cuda_stream

    def get_device_capability(self, device=0) -> tuple:
        from ...backends.cuda.driver import get_device
        return divmod(get_device(device).arch, 10)

    def get_current_target(self) -> GPUTarget:
        major, minor = self.get_device_capability(self.get_current_device())
        return GPUTarget("cuda", major * 10 + minor, 32)

    def get_active_torch_device(self):
        import torch
        return torch.device("cuda", self.get_current_device())

    def get_device_interface(self):
        import torch
        return torch.cuda


class DriverConfig:
    """``triton.runtime.driver``: ``active`` (the driver set, else the default one),
    ``default``, ``set_active``, ``reset_active``."""

    def __init__(self):
        self._active = None

    @property
    def default(self) -> DriverBase:
        return CudaDriver() if _options().backend == "cuda" else CPUDriver()

    @property
    def active(self) -> DriverBase:
        return self._active if self._active is not None else self.default

    def set_active(self, driver: DriverBase) -> None:
        self._active = driver

    def reset_active(self) -> None:
        self._active = None


driver = DriverConfig()
