"""The express lane of ``kernel[grid](...)``: a repeated launch in a few Python steps.

For each kernel the launcher generates one straight-line function, ``go(grid,
*args, **kwargs)`` (``kernel[grid]`` is ``functools.partial(go, grid)``), from its
parameter list.  It

1. checks that the process-wide options are the object it was filled under
   (``options._current`` identity; a change empties the lane and the launch goes
   through the launcher, which reads the options anew);
2. binds the arguments of the one common call shape (a run of positional
   arguments, the rest by keyword, no launch options) without building dicts;
3. sends arrays of more than 2**31-1 bytes, and read-only arrays for arguments a
   kernel of the lane writes, to the launcher (its launch checks);
4. computes a flat *express key*, one element per parameter, that separates
   exactly what the launcher's cache key separates: per array the dtype object's
   ``id`` with the 16-byte alignment bit, per int its width class and
   specialization (1, divisible by 16, other), a code per float / bool, each
   constexpr's value with its type where ``True == 1 == 1.0`` would collide;
5. looks the key up in ``express`` (filled by the launcher after a launch through
   the general rules picked the kernel for the same arguments) and calls the
   entry's runner, which packs the launch values and runs the kernel.

Anything else -- torch tensors on other devices, numpy scalars, ``None`` arguments, launch options,
omitted defaults, a non-int grid -- goes to the launcher unchanged, so the general
path stays the single source of truth for binding rules and errors.

Array data pointers are read from the ``data`` field of ``PyArrayObject`` (the
first field after the object header), which is what ``arr.ctypes.data`` and
``__array_interface__`` report, without their Python-level cost.  The field's
offset is checked at import against ``__array_interface__`` on probe arrays; if
the check fails (another Python implementation or layout) the lane uses ctypes'
``from_buffer`` instead and leaves non-contiguous arrays to the launcher.
"""
from __future__ import annotations

import ctypes
import linecache
import sys

import numpy as np

from . import options as _options
from ..backends import Buffer, LaunchArgs
from .entry import TRACEBACK_HINT, USER_ERRORS, user_error

_I32_MIN, _I32_MAX = -2 ** 31, 2 ** 31 - 1
_I64_MIN, _I64_MAX = -2 ** 63, 2 ** 63 - 1
FLOAT_CODE, BOOL_CODE, I64_CODE = 200, 300, 100    # int classes are 0, 1, 16 (+100 for i64)


def _probe_data_offset():
    """Offset of ``PyArrayObject.data`` from ``id(arr)``, or None when it does not
    check out on every probe array."""
    if sys.implementation.name != "cpython":
        return None
    off = object.__basicsize__                   # PyObject_HEAD
    base = np.arange(64, dtype=np.float64)
    ro = np.frombuffer(bytes(32), np.int8)
    probes = [base, base[3:], base[::-2], base.reshape(8, 8).T, ro, np.zeros(0, np.float32),
              np.empty((3, 5), np.float16, order="F")]
    read = ctypes.c_size_t.from_address
    for a in probes:
        if read(id(a) + off).value != a.__array_interface__["data"][0]:
            return None
    return off


DATA_OFFSET = _probe_data_offset()
WRITEABLE = 0x0400            # NPY_ARRAY_WRITEABLE


def _probe_head():
    """A ctypes structure over ``PyArrayObject`` from its ``data`` field to its
    ``flags`` field (``data``, ``flags``), so the lane reads an array's address and
    writability in one step; None when the layout does not check out on the probes."""
    if DATA_OFFSET is None:
        return None
    nd_int = ctypes.sizeof(ctypes.c_int)
    # data, nd (int, padded), dimensions, strides, base, descr, flags: NumPy's layout
    flags_at = DATA_OFFSET + 8 + 8 + 4 * 8
    head = type("ArrayHead", (ctypes.Structure,), {"_fields_": [
        ("data", ctypes.c_size_t), ("_mid", ctypes.c_char * (flags_at - DATA_OFFSET - 8)),
        ("flags", ctypes.c_int)]})
    if ctypes.sizeof(ctypes.c_void_p) != 8 or nd_int != 4:
        return None
    ro = np.frombuffer(bytes(32), np.int8)
    locked = np.zeros(4)
    locked.flags.writeable = False
    for a in (np.zeros(3), ro, locked, np.arange(10)[::2], np.zeros((2, 2)).T):
        h = head.from_address(id(a) + DATA_OFFSET)
        if h.data != a.__array_interface__["data"][0] or h.flags != a.flags.num:
            return None
    return head.from_address


ARRAY_HEAD = _probe_head()


class LazyArgs(LaunchArgs):
    """``LaunchArgs`` whose buffers are described from the arrays only when a
    backend asks (the interpreter, the CUDA host copies); the same Buffers the
    launcher's general path builds."""

    __slots__ = ("_names",)

    def __init__(self, values, vals, names):      # LaunchArgs(values, None, vals), inlined
        self.values = values
        self._buffers = self._raw = None
        self.keepalive = vals
        self._names = names

    @property
    def buffers(self) -> list:
        if self._buffers is None:
            from .arrays import describe_numpy
            out = []
            for name, v in zip(self._names, self.keepalive):
                if type(v) is np.ndarray:
                    info = describe_numpy(v)
                    out.append(Buffer(name, info.lo, info.nbytes, info.itemsize))
            self._buffers = out
        return self._buffers

    @buffers.setter
    def buffers(self, value) -> None:
        self._buffers = value


class _NoTensor:
    """Stands for torch.Tensor while torch is not imported (no value has this type)."""


def torch_tensor_type():
    """``torch.Tensor`` if torch is imported (the lane never imports it), else a stand-in;
    the launcher puts the real one in the lane's namespace once torch appears."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", _NoTensor) if torch is not None else _NoTensor


def generic_runner(kernel, names):
    """``run(values, vals, gx, gy, gz)`` for any compiled kernel: ``kernel.launch``
    with lazily described buffers."""
    def run(values, vals, gx, gy, gz):
        kernel.launch((gx, gy, gz), LazyArgs(values, vals, names))
        return kernel
    return run


def runner_for(kernel, names, vals=()):
    """The kernel's own express runner (``fast_runner()``, e.g. the CPU backend's, or the
    CUDA backend's for launches whose arrays are all device tensors) when it has one
    for this kernel, else :func:`generic_runner`; None when the lane must not take
    these arguments (device tensors for a kernel that reports errors)."""
    Tensor = torch_tensor_type()
    tensors = [i for i, v in enumerate(vals) if type(v) is Tensor]
    if tensors and getattr(kernel, "backend_name", "") != "cpu":     # host memory only there
        if any(type(v) is np.ndarray for v in vals):
            return generic_runner(kernel, names)          # host arrays: staged by the backend
        make = getattr(kernel, "device_runner", None)
        return make(tensors[0]) if make is not None else None
    make = getattr(kernel, "fast_runner", None)
    run = make() if make is not None else None
    return run if run is not None else generic_runner(kernel, names)


# ---------------------------------------------------------------- code generation
def _array_lines(i, spec):
    if ARRAY_HEAD is not None and DATA_OFFSET is not None:
        addr = [f"        h{i} = head(id(v{i}) + {DATA_OFFSET}); a{i} = h{i}.data"]
        writable = f"h{i}.flags & {WRITEABLE}"
    elif DATA_OFFSET is not None:
        addr = [f"        a{i} = read(id(v{i}) + {DATA_OFFSET}).value"]
        writable = f"v{i}.flags.writeable"
    else:
        addr = [f"        try: a{i} = addressof(from_buffer(v{i}))",
                "        except (TypeError, ValueError, BufferError): return slow(args, kwargs, grid)"]
        writable = "True"                 # from_buffer refuses read-only arrays
    align = f" | (not a{i} & 15)" if spec else ""
    talign = f", not a{i} & 15" if spec else ""
    slow = "return slow(args, kwargs, grid)"
    return [f"    if t{i} is ndarray:", *addr, f"        k{i} = id(v{i}.dtype){align}",
            # launch checks (runtime/launch_checks.py) take the launcher: arrays that may
            # hold over 2**31-1 elements (bytes: cheaper to read than the element count),
            # read-only arrays where a kernel of this lane writes (W<i>, set by miss())
            f"        if v{i}.nbytes > {_I32_MAX} or (W{i} and not {writable}): {slow}",
            f"    elif t{i} is Tensor:",            # torch CPU and CUDA tensors (others: the launcher)
            f"        if v{i}.numel() > {_I32_MAX}: {slow}",
            f"        a{i} = v{i}.data_ptr()",
            f"        if v{i}.is_cpu: k{i} = (v{i}.dtype, -1{talign})",    # get_device()'s -1
            f"        elif v{i}.is_cuda: k{i} = (v{i}.dtype, v{i}.get_device(){talign})",
            f"        else: {slow}"]


def _scalar_lines(i, spec):
    cls = f"(1 if v{i} == 1 else (16 if not v{i} & 15 else 0))" if spec else "0"
    return [
        f"    elif t{i} is int:",
        f"        a{i} = v{i}",
        f"        if {_I32_MIN} <= v{i} <= {_I32_MAX}: k{i} = {cls}",
        f"        elif {_I64_MIN} <= v{i} <= {_I64_MAX}: k{i} = {I64_CODE} + {cls}",
        "        else: return slow(args, kwargs, grid)",
        f"    elif t{i} is float: a{i} = v{i}; k{i} = {FLOAT_CODE}",
        f"    elif t{i} is bool: a{i} = v{i}; k{i} = {BOOL_CODE}",
        "    else: return slow(args, kwargs, grid)",
    ]


def _constexpr_lines(i):
    """The same separation as launcher._constexpr_key (plain values only)."""
    return [
        f"    if t{i} is int or t{i} is str: k{i} = v{i}",
        f"    elif t{i} is float: k{i} = (t{i}, repr(v{i}))",
        f"    elif t{i} is bool: k{i} = (t{i}, v{i})",
        f"    elif v{i} is None: k{i} = None",
        "    else: return slow(args, kwargs, grid)",
    ]


def key_lines(plan) -> list:
    """Per-parameter lines setting ``k<i>`` (and ``a<i>``, the launch value, for
    non-constexpr parameters) from ``v<i>``."""
    lines = []
    for i, (_name, is_cx, spec) in enumerate(plan):
        lines.append(f"    t{i} = type(v{i})")
        lines += _constexpr_lines(i) if is_cx else _array_lines(i, spec) + _scalar_lines(i, spec)
    return lines


def _split_order(plan) -> list:
    """Numbers of positional arguments to try, commonest first: everything up to the
    first constexpr, all positional, then the rest."""
    n = len(plan)
    first_cx = next((i for i, p in enumerate(plan) if p[1]), n)
    order = [first_cx, n] + list(range(n - 1, -1, -1))
    return list(dict.fromkeys(order))


def bind_lines(plan) -> list:
    """Lines binding ``v0..v<n-1>`` from ``args``/``kwargs`` (exactly the parameters,
    no defaults, no extra keywords) or returning ``slow(...)``."""
    n = len(plan)
    lines = ["    nargs = len(args)"]
    for j, p in enumerate(_split_order(plan)):
        kw = "if" if j == 0 else "elif"
        lines.append(f"    {kw} nargs == {p} and len(kwargs) == {n - p}:")
        if p:
            lines.append(f"        {''.join(f'v{i}, ' for i in range(p))}= args")
        elif p == n:
            lines.append("        pass")
        if p < n:
            lines.append("        try:")
            lines += [f"            v{i} = kwargs[{plan[i][0]!r}]" for i in range(p, n)]
            lines.append("        except KeyError: return slow(args, kwargs, grid)")
    lines.append("    else: return slow(args, kwargs, grid)")
    return lines


def grid_lines(plan) -> list:
    """Lines setting ``gx, gy, gz`` (every one >= 1, within every backend's limits)
    from ``grid``: a tuple, or a callable taking the meta-parameters."""
    meta = ", ".join(f"{name!r}: v{i}" for i, (name, _cx, _s) in enumerate(plan))
    return [
        "    if type(grid) is not tuple:",
        "        if not callable(grid): return slow(args, kwargs, grid)",
        f"        grid = grid({{{meta}}})",
        "        if type(grid) is not tuple: return slow(args, kwargs, grid)",
        "    if len(grid) == 1:",
        "        gx = grid[0]; gy = gz = 1",
        f"        if type(gx) is not int or not 0 < gx <= {_I32_MAX}: return slow(args, kwargs, grid)",
        "    else:",
        "        g = simple_grid(grid)",
        "        if g is None or not (g[0] and g[1] and g[2]) or needs_grid_check(g):",
        "            return slow(args, kwargs, grid)",
        "        gx, gy, gz = g",
    ]


def _source(plan, guarded=False) -> str:
    n = len(plan)
    keys = "".join(f"k{i}, " for i in range(n))
    values = "".join(f"a{i}, " for i, p in enumerate(plan) if not p[1])
    vals = "".join(f"v{i}, " for i in range(n))
    body = ["    if options._current is not state[0]: return reset(args, kwargs, grid)",
            *(["    if guard.changed(): return slow(args, kwargs, grid)"] if guarded else []),
            *bind_lines(plan), *key_lines(plan),
            f"    key = ({keys})",
            "    run = express.get(key)",
            f"    if run is None: return miss(args, kwargs, grid, key, ({vals}))",
            *grid_lines(plan),
            f"    return run([{values}], ({vals}), gx, gy, gz)"]
    # the launch's entry point: errors in the user's kernel or setup end here (for_user)
    lines = ["def go(grid, /, *args, **kwargs):", "  try:", *("  " + line for line in body),
             "  except USER_ERRORS as e:",
             f"    raise user_error(e)  # the error is in your kernel or setup: see below ({TRACEBACK_HINT})"]
    return "\n".join(lines)


def make_key_function(plan):
    """``key_of(vals)``: the express key of one value per parameter, or None where
    the lane would hand the launch to the launcher (tests compare it with the cache key)."""
    n = len(plan)
    src = "\n".join(["def key_of(vals):", f"    ({''.join(f'v{i}, ' for i in range(n))}) = vals",
                     "    args = kwargs = grid = None", *key_lines(plan),
                     f"    return ({''.join(f'k{i}, ' for i in range(n))})"])
    ns = {"slow": lambda *a: None, "ndarray": np.ndarray, "Tensor": torch_tensor_type(),
          **{f"W{i}": False for i in range(n)},
          "read": ctypes.c_size_t.from_address, "head": ARRAY_HEAD,
          "addressof": ctypes.addressof, "from_buffer": ctypes.c_char.from_buffer}
    exec(compile(src, "<tilejit express key>", "exec"), ns)
    return ns["key_of"]


def make_express(launcher):
    """``go(grid, *args, **kwargs)`` for ``launcher`` (a runtime.launcher.Launcher):
    the express lane, falling back to ``launcher(args, kwargs, grid)``."""
    from .launcher import _simple_grid
    from .validate import needs_grid_check
    ns = {"options": _options, "state": launcher.express_state, "express": launcher.express,
          "slow": launcher, "reset": launcher.express_reset, "miss": launcher.express_miss,
          "ndarray": np.ndarray, "read": ctypes.c_size_t.from_address, "head": ARRAY_HEAD,
          "addressof": ctypes.addressof, "from_buffer": ctypes.c_char.from_buffer,
          "simple_grid": _simple_grid, "needs_grid_check": needs_grid_check,
          "guard": launcher.guard, "Tensor": torch_tensor_type(),
          "USER_ERRORS": USER_ERRORS, "user_error": user_error}
    ns.update({f"W{i}": False for i in range(len(launcher.plan))})
    launcher.express_ns = ns
    source = _source(launcher.plan, bool(launcher.guard.entries))
    filename = f"<tilejit express lane: {launcher.name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks
    exec(compile(source, filename, "exec"), ns)
    return ns["go"]
