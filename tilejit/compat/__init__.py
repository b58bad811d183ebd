"""Run code written for Triton unchanged: ``import triton`` resolves to tilejit.

:func:`install_triton_alias` puts a finder on ``sys.meta_path`` that maps ``triton``,
``triton.language``, ``triton.testing``, ``triton.language.extra...``,
``triton.runtime...`` to tilejit's modules.  Each alias module forwards attribute
access to its tilejit counterpart(s); a name tilejit lacks raises
:class:`UnsupportedTritonFeature` (an ``AttributeError``) naming the feature, and a
Triton module with no counterpart raises :class:`UnsupportedTritonModule` (a
``ModuleNotFoundError``).  :func:`install_inductor_alias` does the same for the
``torchinductor`` module names used by old Inductor output.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from ..errors import UnsupportedTritonFeature, UnsupportedTritonModule  # noqa: F401 - importable from here

__all__ = ["install_triton_alias", "uninstall_triton_alias", "install_inductor_alias",
           "UnsupportedTritonFeature", "UnsupportedTritonModule", "TRITON_MODULES"]


_LIBDEVICE = ("tilejit.language.extra.libdevice",
              "tilejit.language.math", "tilejit.language")
# alias name -> tilejit modules searched in order (each must exist: tests/unit/test_compat.py)
TRITON_MODULES = {
    "triton": ("tilejit", "tilejit.compat.allocator", "tilejit.compat.triton_api.toplevel"),
    "triton.language": ("tilejit.language",),
    "triton.language.core": ("tilejit.language.core", "tilejit.language"),
    "triton.language.math": ("tilejit.language.math", "tilejit.language"),
    "triton.language.standard": ("tilejit.language.standard", "tilejit.language"),
    "triton.language.semantic": ("tilejit.language.semantic",),
    "triton.language.extra": ("tilejit.language.extra",),
    "triton.language.extra.libdevice": _LIBDEVICE,
    "triton.language.extra.cuda": ("tilejit.language.extra.cuda", "tilejit.language.extra"),
    "triton.language.extra.cuda.libdevice": _LIBDEVICE,
    "triton.language.extra.cpu": ("tilejit.language.extra",),
    "triton.language.extra.cpu.libdevice": _LIBDEVICE,
    "triton.testing": ("tilejit.testing",),
    "triton.runtime": ("tilejit.runtime", "tilejit.compat.driver", "tilejit.runtime.jit",
                       "tilejit.runtime.autotuner"),
    "triton.runtime.jit": ("tilejit.runtime.jit",),
    "triton.runtime.autotuner": ("tilejit.runtime.autotuner", "tilejit.compat.triton_api.errors"),
    "triton.runtime.driver": ("tilejit.compat.driver",),
    "triton.runtime._allocation": ("tilejit.compat.allocator",),
    "triton.runtime.errors": ("tilejit.compat.triton_api.errors", "tilejit.compat.driver"),
    "triton.compiler": ("tilejit.compat.driver", "tilejit.runtime.compiler",
                        "tilejit.compat.triton_api.compiler"),
    "triton.compiler.errors": ("tilejit.compat.driver", "tilejit.errors"),
    "triton.errors": ("tilejit.errors",),
    "triton.tools": ("tilejit.tools",),
    # Triton's host-side API as TorchInductor uses it (tilejit/compat/triton_api/)
    "triton.backends": ("tilejit.compat.triton_api.backends",),
    "triton.backends.compiler": ("tilejit.compat.triton_api.backends",),
    "triton.backends.driver": ("tilejit.compat.triton_api.drivers",),
    "triton.compiler.compiler": ("tilejit.compat.triton_api.compiler",),
    "triton.knobs": ("tilejit.compat.triton_api.knobs",),
    "triton.runtime.cache": ("tilejit.compat.triton_api.cache",),
    "triton.runtime.interpreter": ("tilejit.compat.triton_api.interpreter",),
    "triton.tools.tensor_descriptor": ("tilejit.tools.tensor_descriptor",),
    "triton.tools.mxfp": ("tilejit.tools.mxfp",),
}
INDUCTOR_MODULES = {
    name: ("tilejit.compat.inductor",)
    for name in ("torchinductor", "torchinductor.ir", "torchinductor.utils",
                 "torchinductor.triton_ops", "torchinductor.triton_ops.autotune",
                 "torchinductor.codecache")
}


def _aliased_submodule(name, attr) -> bool:
    """``name.attr`` is itself an alias module (``triton.runtime`` of ``triton``)."""
    sub = f"{name}.{attr}"
    return sub in TRITON_MODULES or sub in INDUCTOR_MODULES


def _import_targets(targets):
    return [importlib.import_module(t) for t in targets]


class AliasModule(types.ModuleType):
    """A module named like Triton's whose attributes come from tilejit modules."""

    def __init__(self, name, targets):
        super().__init__(name)
        self.__path__ = []                      # a package: submodules go through the finder
        self.__dict__["_tilejit_targets"] = tuple(targets)
        mods = _import_targets(targets)
        self.__doc__ = f"Alias of {', '.join(m.__name__ for m in mods) or '(nothing)'} (tilejit)."
        for m in reversed(mods):
            for k, v in vars(m).items():
                if (not k.startswith("__") or k == "__version__") and not (isinstance(v, types.ModuleType)
                                                   and _aliased_submodule(name, k)):
                    self.__dict__.setdefault(k, v)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if _aliased_submodule(self.__name__, attr):     # triton.runtime -> its alias module
            return importlib.import_module(f"{self.__name__}.{attr}")
        for m in _import_targets(self.__dict__["_tilejit_targets"]):
            try:
                return getattr(m, attr)
            except AttributeError:
                continue
        sub = f"{self.__name__}.{attr}"
        if sub in sys.modules:
            return sys.modules[sub]
        raise UnsupportedTritonFeature(
            f"tilejit does not support `{sub}` (missing feature: `{attr}` is not implemented "
            "by tilejit)")


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, targets):
        self.targets = targets

    def create_module(self, spec):
        return AliasModule(spec.name, self.targets)

    def exec_module(self, module):
        parent, _, child = module.__name__.rpartition(".")
        if parent and parent in sys.modules:
            sys.modules[parent].__dict__[child] = module


class _AliasFinder(importlib.abc.MetaPathFinder):
    def __init__(self, table, roots):
        self.table = table
        self.roots = roots

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.split(".")[0]
        if root not in self.roots:
            return None
        if fullname not in self.table:
            # no ``name=``: ``from triton.x import y`` must surface this message rather
            # than Python's generic "cannot import name"
            raise UnsupportedTritonModule(
                f"tilejit does not support `{fullname}` (missing feature: not implemented by "
                "tilejit)")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(self.table[fullname]),
                                              is_package=True)


_finders: dict[str, _AliasFinder] = {}


def _install(tag, table, roots):
    if tag in _finders:
        return
    for name in list(sys.modules):
        if name.split(".")[0] in roots:
            del sys.modules[name]
    finder = _AliasFinder(table, roots)
    sys.meta_path.insert(0, finder)
    _finders[tag] = finder


# classes code generators name by ``__module__``: torch.compile writes a Triton kernel's
# annotated global ``X: tl.constexpr = ...`` as ``X: <module>.constexpr = ...`` into a
# file that imports only ``triton``; under the alias they carry Triton's module name
_TRITON_MODULE_NAMES = (("tilejit.language.core", "constexpr", "triton.language.core"),
                        ("tilejit.language.core", "tensor", "triton.language.core"))


def _retag_classes(alias: bool) -> None:
    import importlib
    for mod, name, triton_mod in _TRITON_MODULE_NAMES:
        cls = getattr(importlib.import_module(mod), name)
        cls.__module__ = triton_mod if alias else mod


def install_triton_alias() -> None:
    """Make ``import triton`` (and its submodules) resolve to tilejit in this process
    (and TorchInductor compile its Triton kernels here, where the alias holds)."""
    _install("triton", TRITON_MODULES, {"triton"})
    _retag_classes(True)
    from .triton_api import keep_inductor_in_process
    keep_inductor_in_process()


def install_inductor_alias() -> None:
    """Make the ``torchinductor`` names used by old Inductor output resolve to
    :mod:`tilejit.compat.inductor` (``torch._inductor`` is left alone)."""
    _install("inductor", INDUCTOR_MODULES, {"torchinductor"})


def uninstall_triton_alias() -> None:
    """Remove the aliases installed by this module (tests)."""
    for tag, finder in list(_finders.items()):
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name in list(sys.modules):
            if name.split(".")[0] in finder.roots:
                del sys.modules[name]
        del _finders[tag]
        if tag == "triton":
            _retag_classes(False)
