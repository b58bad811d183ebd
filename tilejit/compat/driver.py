"""What Triton scripts reach for in ``triton.runtime.driver`` / ``triton.compiler``.

``driver.active`` answers the usual questions (device, target, properties) for the
machine tilejit runs on: the CPU unless the CUDA backend is selected and available.
"""
from __future__ import annotations

import os
from collections import namedtuple

from ..frontend.errors import CompilationError  # noqa: F401  (triton.compiler.errors' name)

GPUTarget = namedtuple("GPUTarget", ["backend", "arch", "warp_size"])


def _backend_name() -> str:
    from ..runtime.options import get_options
    o = get_options()
    if o.interpret:
        return "interpreter"
    return o.backend or "cpu"


class _Utils:
    @staticmethod
    def get_device_properties(device=0) -> dict:
        return {"multiprocessor_count": os.cpu_count() or 1, "max_shared_mem": 1 << 20,
                "max_num_regs": 65536, "warpSize": 1, "sm_clock_rate": 0, "mem_clock_rate": 0,
                "mem_bus_width": 0}


class _ActiveDriver:
    utils = _Utils()

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        pass

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_current_target(self) -> GPUTarget:
        name = _backend_name()
        if name == "cuda":
            return GPUTarget("cuda", 90, 32)
        return GPUTarget(name, "x86-64", 1)

    def get_active_torch_device(self):
        import torch
        if _backend_name() == "cuda" and torch.cuda.is_available():
            return torch.device("cuda", 0)
        return torch.device("cpu")

    def get_device_interface(self):
        import torch
        return torch.cuda


class _Driver:
    active = _ActiveDriver()


driver = _Driver()


class OutOfResources(Exception):
    """A config needs more resources than the target has (autotuning skips it)."""


