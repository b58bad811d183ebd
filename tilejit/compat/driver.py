"""What Triton scripts reach for in ``triton.runtime.driver`` / ``triton.compiler``.

``driver.active`` answers the usual questions (device, target, properties) for the
machine tilejit runs on: the CPU unless the CUDA backend is selected (or set active,
as Inductor does for CUDA tensors).  The drivers, targets and errors live in
:mod:`tilejit.compat.triton_api`.
"""
from __future__ import annotations

from ..errors import CompilationError  # noqa: F401  (triton.compiler.errors' name)
from .triton_api.drivers import CPUDriver, CudaDriver, DriverBase, GPUTarget, driver  # noqa: F401
from .triton_api.errors import OutOfResources, PTXASError  # noqa: F401

# ``triton.runtime.driver`` is both Triton's module and (as an attribute of
# ``triton.runtime``) its driver object: the module answers for the object too.
set_active = driver.set_active
reset_active = driver.reset_active


def __getattr__(name):
    if name in ("active", "default"):
        return getattr(driver, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
