"""Launch-time helpers for the safety features: the per-launch ``sanitize=True``
option (``kernel[grid](..., sanitize=True)``) and block-shape limits.

``with_sanitize(options, flag)`` returns an :class:`Options` with ``sanitize`` set,
the same object for the same input (so the launcher's option token stays cheap to
look up and the sanitized variant has its own cache key).
"""
from __future__ import annotations

from ..errors import LaunchOptionError

_DERIVED: dict = {}


def with_sanitize(options, flag) -> object:
    """``options`` with ``sanitize=bool(flag)`` (cached: identical objects per input)."""
    flag = bool(flag)
    if options.sanitize == flag:
        return options
    key = (options, flag)
    got = _DERIVED.get(key)
    if got is None:
        got = _DERIVED[key] = options.with_(sanitize=flag)
    return got


MAX_PROGRAMS = 2**31 - 1         # program ids and num_programs are int32
CUDA_MAX_YZ = 65535              # CUDA's gridDim.y / gridDim.z limit


def needs_grid_check(g) -> bool:
    """Cheap test run on every launch: could ``g`` (3 ints >= 1) exceed a limit?"""
    return g[1] > CUDA_MAX_YZ or g[2] > CUDA_MAX_YZ or g[0] * g[1] * g[2] > MAX_PROGRAMS


def check_grid(g, name: str, backend: str) -> None:
    """Raise ValueError when grid ``g`` cannot be launched on ``backend``.

    Every backend: each dimension must fit program ids (int32).  Host backends
    (interpreter, cpu) number programs with int32 too, so the total must fit.
    CUDA: x up to 2**31-1, y and z up to 65535 (the hardware's limits)."""
    if any(d > MAX_PROGRAMS for d in g):
        raise ValueError(f"{name}: grid {tuple(g)} has a dimension over 2**31-1 "
                         "(tl.program_id is int32)")
    if backend == "cuda":
        if g[1] > CUDA_MAX_YZ or g[2] > CUDA_MAX_YZ:
            raise ValueError(f"{name}: grid {tuple(g)}: CUDA allows at most {CUDA_MAX_YZ} "
                             "programs along axes 1 and 2")
        return
    total = g[0] * g[1] * g[2]
    if total > MAX_PROGRAMS:
        raise ValueError(f"{name}: grid {tuple(g)} has {total} programs; the {backend} backend "
                         f"runs at most 2**31-1 per launch")


def check_devices(names, is_constexpr, vals, keys, name: str) -> None:
    """Raise ValueError when arrays of one launch live on different devices
    (called only when some array is not in host memory)."""
    where = {}
    it = iter(keys)
    for n, cx, v in zip(names, is_constexpr, vals):
        if cx or v is None:
            continue
        k = next(it)
        if isinstance(k[0], str) and k[0].startswith(("*", "tensordesc<")) and len(k) > 2:
            where.setdefault(k[2], n)
    if len(where) > 1:
        desc = ", ".join(f"'{arg}' on {dev}" for dev, arg in where.items())
        raise ValueError(f"{name}: arrays on different devices ({desc}); "
                         "move them to one device before the launch")


def check_launch_options(lopts, name: str) -> None:
    """Raise :class:`LaunchOptionError` for a ``num_warps`` that is not a power of 2 (as
    Triton; a CUDA block holds at most 32 warps, which the cuda backend checks) or a
    negative ``num_stages`` / ``num_ctas`` < 1, or an ``enable_fp_fusion`` /
    ``enable_reflect_ftz`` that is not a bool."""
    for k, v in lopts:
        if k == "num_warps" and not (isinstance(v, int) and 0 < v and v & (v - 1) == 0):
            raise LaunchOptionError(f"{name}: num_warps={v!r} must be a power of 2 "
                                    "(1, 2, 4, ...; at most 32 on CUDA)")
        if k == "num_stages" and not (isinstance(v, int) and v >= 0):
            raise LaunchOptionError(f"{name}: num_stages={v!r} must be an integer >= 0")
        if k == "num_ctas" and not (isinstance(v, int) and v >= 1):
            raise LaunchOptionError(f"{name}: num_ctas={v!r} must be an integer >= 1")
        if k in ("enable_fp_fusion", "enable_reflect_ftz") and not isinstance(v, bool):
            raise LaunchOptionError(f"{name}: {k}={v!r} must be True or False")
