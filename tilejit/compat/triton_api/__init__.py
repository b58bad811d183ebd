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
