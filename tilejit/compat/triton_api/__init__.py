"""Triton's host-side API under the ``triton`` alias, as TorchInductor uses it.

One small module per Triton module: ``backends`` (``triton.backends``,
``triton.backends.compiler``: GPUTarget, BaseBackend, the ``backends`` table),
``drivers`` (``triton.runtime.driver``: the active driver, ``set_active``),
``compiler`` (``triton.compiler.compiler``: ASTSource, CompiledKernel, compile,
make_backend), ``launch`` (the launcher a compiled kernel's ``run`` is), ``knobs``
(``triton.knobs``), ``cache`` (``triton.runtime.cache``), ``errors``
(``triton.runtime.errors``), ``interpreter`` (``triton.runtime.interpreter``).
Everything compiles and launches through tilejit's own compiler and backends.
"""

import os
import sys


def keep_inductor_in_process() -> None:
    """TorchInductor compiles Triton kernels in worker subprocesses when it may use
    several threads; those workers import ``triton`` without the alias (and fail, or
    load a real Triton).  Make it compile in this process: ``TORCHINDUCTOR_COMPILE_THREADS
    =1`` unless the user set it, and ``compile_threads = 1`` if Inductor's config is
    already imported."""
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    config = sys.modules.get("torch._inductor.config")
    if config is not None and os.environ["TORCHINDUCTOR_COMPILE_THREADS"] == "1":
        config.compile_threads = 1
