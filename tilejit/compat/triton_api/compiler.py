"""``triton.compiler.compiler``: ``ASTSource``, ``compile``, ``CompiledKernel``.

``compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget(...),
options={...})`` builds ``fn`` with tilejit's frontend and passes for that
specialization and compiles it with the tilejit backend the target names
('cpu' -> the x86-64 backend, or the interpreter under ``TILEJIT_INTERPRET=1``;
'cuda' -> PTX for the target's compute capability).  The result follows Triton's
launcher convention: ``kernel.run(grid_0, grid_1, grid_2, stream, function,
packed_metadata, launch_metadata, enter_hook, exit_hook, *args)`` with one value
per kernel parameter (constexpr ones included and ignored), ``kernel[grid](*args)``,
``metadata.num_warps / shared``, ``n_regs``, ``n_spills`` and ``launch_metadata``.
"""
from __future__ import annotations

import hashlib
from collections import namedtuple

from .backends import GPUTarget, make_backend
from .drivers import driver

__all__ = ["ASTSource", "CompiledKernel", "compile", "make_backend", "KernelMetadata"]

KernelMetadata = namedtuple("KernelMetadata", [
    "name", "hash", "target", "backend", "num_warps", "num_ctas", "num_stages", "shared",
    "cluster_dims", "debug", "launch_pdl", "launch_cooperative_grid"])


class ASTSource:
    """A ``@jit`` function with its specialization: ``signature`` maps every parameter
    name to a type ('*fp32', 'i32', ..., or 'constexpr'); ``constexprs`` maps names or
    ``(index,)`` paths to values; ``attrs`` maps ``(index,)`` to Triton's attribute
    lists (``[['tt.divisibility', 16]]``)."""

    def __init__(self, fn, signature, constexprs=None, attrs=None):
        if not hasattr(fn, "arg_names") or not hasattr(fn, "params"):
            raise TypeError(f"ASTSource expects a @triton.jit function, got {type(fn).__name__}")
        self.fn, self.name, self.ext = fn, fn.__name__, "ttir"
        for k in signature:
            if not isinstance(k, str):
                raise TypeError("Signature keys must be string")
        self.signature = dict(signature)
        self.constants = {}
        for k, v in (constexprs or {}).items():
            if isinstance(k, str):
                if k not in fn.arg_names:
                    raise ValueError(f"{self.name}: constexpr {k!r} is not a parameter")
                k = (fn.arg_names.index(k),)
            self.constants[tuple(k)] = v
        self.attrs = dict(attrs or {})

    def hash(self) -> str:
        from ...runtime.cache import kernel_source_key
        key = (kernel_source_key(self.fn), sorted(self.signature.items()),
               sorted((k, repr(v)) for k, v in self.constants.items()),
               sorted((k, repr(v)) for k, v in self.attrs.items()))
        return hashlib.sha256(repr(key).encode()).hexdigest()

    def divisible_by_16(self) -> list:
        """Parameter indices the attributes promise are multiples of 16."""
        return sorted(k[0] for k, props in self.attrs.items()
                      if len(k) == 1 and any(list(p) == ["tt.divisibility", 16] for p in props))


def _specialize(src: ASTSource):
    """(runtime signature {name: type}, constexprs {name: value}) of ``src``."""
    from inspect import Parameter
    sig, consts = {}, {}
    for i, p in enumerate(src.fn.params):
        ty = src.signature.get(p.name, "constexpr" if (i,) in src.constants else None)
        if ty is None:
            raise TypeError(f"{src.name}: the signature has no entry for parameter '{p.name}'")
        if ty != "constexpr":
            if (i,) in src.constants:
                raise TypeError(f"{src.name}: parameter '{p.name}' has type {ty!r} in the "
                                "signature and a constexpr value")
            sig[p.name] = ty
        elif (i,) in src.constants:
            consts[p.name] = src.constants[(i,)]
        elif p.default is not Parameter.empty:
            consts[p.name] = p.default
        else:
            raise TypeError(f"{src.name}: constexpr parameter '{p.name}' has no value")
    return sig, consts


def _tilejit_target(target: GPUTarget) -> str:
    if target.backend == "cuda":
        return f"cuda:{target.arch}" if target.arch else "cuda"
    from ...runtime.launch import choose_backend
    from ...runtime.options import get_options
    return "interpreter" if target.backend == "interpreter" else choose_backend(get_options(), "cpu")


def _fp_options(options) -> dict:
    """Triton's ``enable_fp_fusion`` / ``enable_reflect_ftz`` where the caller set them
    (tilejit's Options fields of those names; unset: the Options' own default)."""
    return {k: bool(v) for k, v in (options or {}).items()
            if k in ("enable_fp_fusion", "enable_reflect_ftz")}


def compile(src, target=None, options=None, _env_vars=None):
    """Compile ``src`` (an :class:`ASTSource`) for ``target`` (default: the active
    driver's) with Triton's ``options`` dict; returns a :class:`CompiledKernel`."""
    from ...compat import UnsupportedTritonFeature
    from ...runtime.compiler import compile as tilejit_compile
    from ...runtime.options import get_options
    if not isinstance(src, ASTSource):
        raise UnsupportedTritonFeature(
            "tilejit does not support `triton.compile` of IR text or files (missing feature: "
            "pass an ASTSource, or use tilejit.compile(fn, signature=...))")
    target = target if target is not None else driver.active.get_current_target()
    backend = make_backend(target)
    opts = backend.parse_options(dict(options or {}))
    if opts.launch_cooperative_grid:
        raise UnsupportedTritonFeature(
            "tilejit does not support `launch_cooperative_grid=True` (missing feature: "
            "grid-wide synchronisation)")
    sig, consts = _specialize(src)
    where = _tilejit_target(target)
    kernel = tilejit_compile(src.fn, signature=sig, constexprs=consts,
                             divisible_by_16=src.divisible_by_16(), target=where,
                             num_warps=opts.num_warps, num_stages=opts.num_stages,
                             options=get_options().with_(**_fp_options(options)))
    h = hashlib.sha256(f"{src.hash()}-{backend.hash()}-{opts.hash()}".encode()).hexdigest()
    meta = KernelMetadata(
        name=src.name, hash=h, target=target, backend=where.partition(":")[0],
        num_warps=opts.num_warps, num_ctas=opts.num_ctas, num_stages=opts.num_stages,
        shared=int(getattr(kernel, "shared", 0) or 0), cluster_dims=(1, 1, 1), debug=opts.debug,
        launch_pdl=opts.launch_pdl, launch_cooperative_grid=opts.launch_cooperative_grid)
    return CompiledKernel(src, kernel, meta, sig)


class CompiledKernel:
    """A kernel compiled by :func:`compile`; ``kernel`` is tilejit's backend kernel."""

    def __init__(self, src, kernel, metadata, signature):
        self.src, self.kernel, self.signature = src, kernel, signature
        self.metadata = self.packed_metadata = metadata
        self.name, self.hash = metadata.name, metadata.hash
        self.asm = getattr(kernel, "asm", None) or {}     # lazy: 'asm' on the cpu costs a codegen
        self.module = self.function = self._run = None
        self.n_regs = self.n_spills = self.n_max_threads = None

    @property
    def run(self):
        """The launcher (``run(grid_0, grid_1, grid_2, stream, function, metadata,
        launch_metadata, enter_hook, exit_hook, *args)``); loads the kernel first."""
        if self._run is None:
            self._init_handles()
        return self._run

    def _init_handles(self) -> None:
        """Load the kernel and make its launcher; set ``function``, ``n_regs`` and
        ``n_spills`` (CUDA: the driver's register and local-memory counts; host: 0)."""
        if self._run is not None:
            return
        from .launch import load, make_launcher
        self.module, self.function, self.n_regs, self.n_spills, self.n_max_threads = load(self)
        self._run = make_launcher(self)

    def launch_metadata(self, grid, stream, *args):
        """What the launch hooks receive (None while no enter hook is set)."""
        from . import knobs
        if knobs.runtime.launch_enter_hook is None:
            return None
        self._init_handles()
        ret = {"name": self.name, "function": self.function, "stream": stream}
        fn_meta = getattr(self.src.fn, "launch_metadata", None)
        if callable(fn_meta):
            ret.update(fn_meta(grid, self.metadata, dict(zip(self.src.fn.arg_names, args))) or {})
        return ret

    def __getitem__(self, grid):
        """``kernel[grid](*args, stream=None)``, Triton's direct launch."""
        from . import knobs
        self._init_handles()
        grid = tuple(grid) + (1,) * (3 - len(grid))

        def runner(*args, stream=None):
            if stream is None:
                stream = driver.active.get_current_stream(driver.active.get_current_device())
            meta = self.launch_metadata(grid, stream, *args)
            self._run(grid[0], grid[1], grid[2], stream, self.function, self.packed_metadata,
                      meta, knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *args)
        return runner
