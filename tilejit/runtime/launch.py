"""``kernel[grid](*args, **kwargs)``: bind arguments, specialize, cache, launch.

Binding follows Triton: a Python int is i32, i64 when outside int32, u64 when
above int64; a float is fp32; a bool is i1; an array is a pointer to its dtype;
None (or a ``constexpr`` parameter) is a compile-time constant.  Ints equal to 1
(``equal_to_1``) and ints divisible by 16, and array addresses divisible by 16,
are specialized unless the parameter is in ``do_not_specialize``.

The cache key is (per-argument type and specialization, constexpr values, launch
options, Options, backend); compiled kernels are kept on the JITFunction's
:class:`Launcher`.  The repeated-launch path does a dict lookup per argument type
and one dict lookup for the kernel.
"""
from __future__ import annotations

import numpy as np

from ..errors import IntegerArgumentOverflow
from . import arrays

# launch keywords that are compile options (``arch``: the CUDA architecture to compile
# for, Triton's ``arch="sm80"``; the device's own when absent; host backends ignore it.
# ``enable_fp_fusion`` / ``enable_reflect_ftz``: Triton's, overriding the Options fields
# of those names for this compile, runtime/options.py ``launch_choice``)
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "arch",
                  "enable_fp_fusion", "enable_reflect_ftz")
_I32_MIN, _I32_MAX = -2 ** 31, 2 ** 31 - 1
_I64_MIN, _I64_MAX = -2 ** 63, 2 ** 63 - 1
_U64_MAX = 2 ** 64 - 1


# ---------------------------------------------------------------- binders
# A binder: (value, specialize: bool) -> (key, launch value, ArrayInfo | None)
def _bind_int(v, spec):
    if _I32_MIN <= v <= _I32_MAX:
        t = "i32"
    elif _I64_MIN <= v <= _I64_MAX:
        t = "i64"
    elif 0 <= v <= _U64_MAX:
        t = "u64"
    else:
        raise IntegerArgumentOverflow(f"integer {v} does not fit in 64 bits (int64 holds -2**63 to "
                         "2**63-1, uint64 0 to 2**64-1)")
    if not spec:
        return (t, 0), v, None
    return (t, 1 if v == 1 else (16 if v % 16 == 0 else 0)), v, None


def _bind_np_int(v, spec):
    return _bind_int(int(v), spec)


def _bind_bool(v, spec):
    return ("i1", 0), bool(v), None


def _bind_float(v, spec):
    return ("fp32", 0), float(v), None


def _bind_array_info(info, spec):
    key = ("*" + info.dtype.name, 16 if spec and info.address % 16 == 0 else 0, info.device)
    return key, info.address, info


def _bind_numpy(a, spec):
    return _bind_array_info(arrays.describe_numpy(a), spec)


def _bind_generic(v, spec):
    info = arrays.describe(v)
    if info is None:
        raise TypeError(f"unsupported argument type {type(v).__module__}.{type(v).__qualname__}")
    return _bind_array_info(info, spec)


_BINDERS = {int: _bind_int, bool: _bind_bool, float: _bind_float, np.ndarray: _bind_numpy,
            np.bool_: _bind_bool}


def binder_for(tp):
    """The binder for values of Python type ``tp`` (cached per type)."""
    b = _BINDERS.get(tp)
    if b is None:
        if issubclass(tp, (bool, np.bool_)):
            b = _bind_bool
        elif issubclass(tp, np.integer):
            b = _bind_np_int
        elif issubclass(tp, int):
            b = lambda v, s: _bind_int(int(v), s)   # noqa: E731
        elif issubclass(tp, (float, np.floating)):
            b = _bind_float
        elif issubclass(tp, np.ndarray):
            b = _bind_numpy
        elif (arrays.is_torch_type(tp) or issubclass(tp, arrays.TensorWrapper)
              or hasattr(tp, "__array_interface__")
              or hasattr(tp, "__cuda_array_interface__")):
            b = _bind_generic
        else:
            return None
        _BINDERS[tp] = b
    return b


# ---------------------------------------------------------------- backend choice
_DEFAULT_BACKEND: list = []


def choose_backend(options, device: str = "cpu") -> str:
    if options.backend:
        return options.backend
    if options.interpret:
        return "interpreter"
    if device == "cuda":
        return "cuda"
    if not _DEFAULT_BACKEND:
        from ..backends import available_backends
        _DEFAULT_BACKEND.append("cpu" if available_backends(("cpu",)) else "interpreter")
    return _DEFAULT_BACKEND[0]


# ---------------------------------------------------------------- grid
def normalize_grid(grid, meta=None, name="kernel") -> tuple:
    """A tuple/list of 1..3 ints, or a callable taking ``meta``, -> 3 ints."""
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, (int, np.integer)):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
        raise TypeError(f"{name}: grid must be a tuple of 1 to 3 ints (or a callable "
                        f"returning one), got {grid!r}")
    out = []
    for g in grid:
        if not isinstance(g, (int, np.integer)) or isinstance(g, bool):
            raise TypeError(f"{name}: grid dimensions must be ints, got {g!r}")
        if g < 0:
            raise ValueError(f"{name}: grid dimensions must be >= 0, got {tuple(grid)}")
        out.append(int(g))
    while len(out) < 3:
        out.append(1)
    return tuple(out)


# ---------------------------------------------------------------- entry point
def launch(jitfn, args, kwargs, grid, warmup=False):
    """Bind, compile (cached) and run ``jitfn`` over ``grid``; returns the compiled kernel."""
    launcher = jitfn.__dict__.get("_launcher")
    if launcher is None:
        from .launcher import Launcher
        launcher = jitfn._launcher = Launcher(jitfn)
    return launcher(args, kwargs, grid, warmup)
