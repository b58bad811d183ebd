"""The launcher of a :class:`~.compiler.CompiledKernel`, generated per kernel.

``run(grid_0, grid_1, grid_2, stream, function, metadata, launch_metadata,
enter_hook, exit_hook, *args)`` takes one value per kernel parameter (Triton >= 3.3
passes constexpr ones too; they are skipped).  Per runtime parameter it reads a
tensor's data pointer after checking its dtype and device against the signature
(another dtype or device is an error naming the kernel and parameter: a wrong
pointer type would read the wrong bytes), checks ints against their signature
width and arguments promised divisible by 16 (``tt.divisibility``) against that
promise, then calls the tilejit backend's launch.
"""
from __future__ import annotations

import sys

from ...backends import Buffer, LaunchArgs
from ...ir.types import PointerType, dtype_from_name

_INT_RANGE = {"i1": (0, 1), "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1),
              "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1),
              "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}


class _Args(LaunchArgs):
    """Launch values with buffers described from the arrays only when a backend asks
    (the interpreter, sanitize mode, host arrays staged for a GPU)."""

    __slots__ = ("_names",)

    def __init__(self, values, arrays, names):
        super().__init__(values, None, arrays)
        self._names = names

    @property
    def buffers(self) -> list:
        if self._buffers is None:
            from ...runtime.arrays import describe
            out = []
            for name, v in zip(self._names, self.keepalive):
                info = describe(v) if v is not None and not isinstance(v, (int, float)) else None
                if info is not None:
                    out.append(Buffer(name, info.lo, info.nbytes, info.itemsize))
            self._buffers = out
        return self._buffers

    @buffers.setter
    def buffers(self, value) -> None:
        self._buffers = value


def load(ck):
    """(module, function, n_regs, n_spills, n_max_threads) of a compiled kernel."""
    k = ck.kernel
    if ck.metadata.backend != "cuda":
        # the host runs a program as straight-line code on one core: no register file
        # budget or spill count applies (0: Inductor never drops a config for spilling)
        return None, getattr(k, "_fn_addr", None) or k, 0, 0, 1
    from ...backends.cuda import driver as cud
    if not cud.cuda_available():
        return None, None, None, None, None     # compile-only host: nothing loaded
    dev = cud.get_device(_current_device())
    fn = dev.function(k)
    cu = cud._cu()
    attr = cu.CUfunction_attribute
    regs = cud.check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_NUM_REGS, fn))
    local = cud.check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn))
    threads = cud.check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn))
    # ``function`` is the raw CUfunction handle (an int), as Triton's; Inductor passes it
    # back to ``run``, whose native launch uses it (see _gpu_launch_lines)
    return dev.functions[id(k)][0], int(fn), int(regs), int(local) // 4, int(threads)


def _current_device() -> int:
    torch = sys.modules.get("torch")
    return torch.cuda.current_device() if torch is not None and torch.cuda.is_available() else 0


def _torch_dtypes() -> dict:
    """tilejit pointee dtype -> torch dtype (empty while torch is not imported)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    from ...runtime.arrays import _TORCH_DTYPES
    out = {}
    for tname, name in _TORCH_DTYPES.items():
        t = getattr(torch, tname.split(".")[1], None)
        if t is not None:
            out[dtype_from_name(name)] = t
    return out


class _Checks:
    """The slow path of one parameter: other array kinds, and the errors."""

    def __init__(self, ck):
        self.ck = ck
        self.kname = ck.name

    def pointer(self, name, ty, on_gpu, v):
        from ...runtime.arrays import describe
        info = describe(v) if v is not None else None
        if info is None:
            raise TypeError(f"{self.kname}: argument '{name}' must be an array for {ty}, "
                            f"got {type(v).__name__}")
        want = dtype_from_name(ty[1:])
        if info.dtype != want:
            raise TypeError(f"{self.kname}: argument '{name}' has dtype {getattr(v, 'dtype', info.dtype)} "
                            f"but the compiled signature says {ty}")
        if (info.device == "cuda") != on_gpu:
            raise ValueError(f"{self.kname}: argument '{name}' is on {info.device} but the kernel "
                             f"was compiled for the {self.ck.metadata.backend} backend")
        return info.address

    def scalar(self, name, ty, v):
        lo_hi = _INT_RANGE.get(ty)
        if lo_hi is not None:
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise TypeError(f"{self.kname}: argument '{name}' must be an int for {ty}, got {v!r}")
            v = int(v)
            if not lo_hi[0] <= v <= lo_hi[1]:
                raise ValueError(f"{self.kname}: argument '{name}' = {v} does not fit {ty}")
            return v
        if ty.startswith(("fp", "bf")):
            return float(v)
        raise TypeError(f"{self.kname}: argument '{name}' has unsupported signature type {ty!r}")

    def misaligned(self, name, v):
        raise ValueError(f"{self.kname}: argument '{name}' ({v:#x}) was compiled as divisible by "
                         "16 (tt.divisibility) but is not; recompile without that attribute")


def _param_lines(i, name, ty, div16, on_gpu):
    """Lines binding parameter ``i`` into ``p{i}``."""
    if ty.startswith("*"):
        dev = "v.is_cuda" if on_gpu else "not v.is_cuda"
        lines = [f"    v = a{i}",
                 f"    if type(v) in TENSORS and v.dtype is D{i} and {dev}: p{i} = v.data_ptr()",
                 f"    else: p{i} = chk.pointer({name!r}, {ty!r}, {on_gpu}, v)"]
    elif ty in _INT_RANGE and ty != "i1":
        lo, hi = _INT_RANGE[ty]
        lines = [f"    p{i} = a{i} if type(a{i}) is int and {lo} <= a{i} <= {hi} "
                 f"else chk.scalar({name!r}, {ty!r}, a{i})"]
    elif ty == "i1":
        lines = [f"    p{i} = bool(a{i})"]
    else:
        lines = [f"    p{i} = chk.scalar({name!r}, {ty!r}, a{i})"]
    if div16:
        lines.append(f"    if p{i} & 15: chk.misaligned({name!r}, p{i})")
    return lines


def make_launcher(ck):
    """The generated ``run`` of ``ck`` (see the module docstring)."""
    names = list(ck.src.fn.arg_names)
    div16 = set(ck.src.divisible_by_16())
    on_gpu = ck.metadata.backend == "cuda"
    torch_of = _torch_dtypes()
    torch = sys.modules.get("torch")
    ns = {"chk": _Checks(ck),      # tensors and parameters (nn.Parameter is a Tensor subclass)
          "TENSORS": (torch.Tensor, torch.nn.Parameter) if torch is not None else ()}
    args = [f"a{i}" for i in range(len(names))]
    lines = ["def run(grid_0, grid_1, grid_2, stream, function, metadata, launch_metadata, "
             f"enter_hook, exit_hook{''.join(', ' + a for a in args)}):",
             "    if enter_hook is not None: enter_hook(launch_metadata)"]
    runtime = []
    for i, name in enumerate(names):
        ty = ck.signature.get(name)
        if ty is None:
            continue
        if ty.startswith("*"):
            ns[f"D{i}"] = torch_of.get(dtype_from_name(ty[1:]), _NoTensor)
        lines += _param_lines(i, name, ty, i in div16, on_gpu)
        runtime.append(i)
    params = [f"p{i}" for i in runtime]
    values = "[" + ", ".join(params) + "]"
    arrays = "(" + "".join(f"a{i}, " for i in runtime) + ")"
    ns["rt_names"] = [names[i] for i in runtime]
    if on_gpu:
        lines += _gpu_launch_lines(ck, ns, params, values, arrays)
    else:
        ns["go"] = _host_runner(ck.kernel)
        lines.append(f"    go({values}, {arrays}, grid_0, grid_1, grid_2)")
    lines.append("    if exit_hook is not None: exit_hook(launch_metadata)")
    exec(compile("\n".join(lines), f"<tilejit launcher of {ck.name}>", "exec"), ns)
    return ns["run"]


def _unarmed(*_args):
    """Stands for the native launch until the general path has confirmed it: 1 (the
    driver's "not launched"), so the general path runs."""
    return 1


def _gpu_launch_lines(ck, ns, params, values, arrays):
    """The CUDA launch lines of ``run``.  Steady state: one call of the kernel's native
    launch builtin (cuda/native_launch.py: packs the values on the stack and calls
    cuLaunchKernel) with the ``function`` handle Inductor passes back and its stream,
    as Triton's C launcher does.  The first launch, and any the builtin does not take
    (a driver error code, a value of another type, a grid over the kernel's
    ``grid_bound``), go through ``kernel.launch`` (device placement, context, errors),
    which after its first native launch arms the builtin (``driver.native_of``; device
    asserts: with a null table and record, ``driver.null_reports``).  Sanitize mode
    always takes the general path (each launch synchronises and reads its record)."""
    k = ck.kernel
    ns["launch"], ns["Args"] = k.launch, _Args
    general = (f"launch((grid_0, grid_1, grid_2), Args({values}, {arrays}, rt_names), "
               "stream=stream or None)")
    if k.sanitize or not isinstance(ck.function, int):
        return ["    " + general]
    from ...backends.cuda.driver import native_of, null_reports
    params = params + [str(v) for v in null_reports(k)]

    def arm():
        native = native_of(k)
        if native is not None:        # known: the builtin, or False (never: stay general)
            ns["NATIVE"], ns["ARM"] = native or _unarmed, False
    ns.update(NATIVE=_unarmed, ARM=True, arm=arm)
    call = f"NATIVE(function, grid_0, grid_1, grid_2, stream{''.join(', ' + p for p in params)})"
    gb = getattr(k, "grid_bound", None)
    if gb is not None:
        call = f"1 if grid_0 > {gb[0]} or grid_1 > {gb[1]} or grid_2 > {gb[2]} else {call}"
    return ["    try:", f"        slow = {call}", "    except (TypeError, OverflowError):",
            "        slow = 1", "    if slow:", "        " + general, "        if ARM: arm()"]


def _host_runner(kernel):
    """``go(values, arrays, gx, gy, gz)`` for a host kernel: the CPU backend's fast
    runner where it has one, else ``kernel.launch`` with lazily described buffers."""
    make = getattr(kernel, "fast_runner", None)
    fast = make() if make is not None else None
    if fast is not None:
        return fast
    names = [a.name for a in kernel.func.arguments] if hasattr(kernel, "func") else []

    def go(values, arrays, gx, gy, gz):
        kernel.launch((gx, gy, gz), _Args(values, arrays, names))
    return go


class _NoTensor:
    """Stands for torch.Tensor / a torch dtype while torch is not imported."""
