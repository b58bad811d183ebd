"""CUDA driver glue (cuda-bindings, imported lazily): availability, per-device module
cache, argument packing, the arrays' device and stream, and host-array staging.

Arrays may be torch CUDA tensors, CuPy arrays, anything with
``__cuda_array_interface__`` or DLPack (the runtime turns them into addresses);
numpy (host) arrays are copied to the device around the launch, so the same tests
run under every backend.
"""
from __future__ import annotations

import ctypes
import functools
import struct
import sys
import threading

from . import types as T
from ...ir.types import int64 as _int64

_lock = threading.Lock()


def _cu():
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise missing_bindings(e) from None
    return driver


def missing_bindings(cause, kernel: str = "") -> Exception:
    """The error for a CUDA launch without cuda-bindings: what to install."""
    from ...errors import MissingDependencyError
    who = f"kernel '{kernel}': " if kernel else ""
    return MissingDependencyError(
        f"{who}CUDA arrays need the cuda backend, which launches through cuda-bindings, and "
        f"it cannot be imported ({cause}). Install it with: pip install \"tilejit[cuda]\" "
        "(or pip install cuda-bindings). Host arrays (numpy, torch CPU tensors) run on the "
        "cpu backend without it.")


def require_bindings(kernel: str) -> None:
    """Raise :func:`missing_bindings` unless cuda-bindings imports."""
    try:
        from cuda.bindings import driver  # noqa: F401
    except ImportError as e:
        raise missing_bindings(e, kernel) from None


def check(result):
    """Unpack a cuda-bindings result tuple, raising on any error."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        cu = _cu()
        _, name = cu.cuGetErrorName(err)
        from .sanitize import assert_hint
        raise RuntimeError(f"CUDA driver error {int(err)} ({name.decode() if name else '?'})"
                           + assert_hint(int(err)))
    return rest[0] if len(rest) == 1 else (tuple(rest) if rest else None)


@functools.lru_cache(maxsize=None)
def cuda_available() -> bool:
    """True when cuda-bindings imports, the driver initialises and a GPU is present."""
    try:
        cu = _cu()
        check(cu.cuInit(0))
        return check(cu.cuDeviceGetCount()) > 0
    except Exception:
        return False


class Device:
    """One GPU: its primary context and the modules loaded on it."""

    def __init__(self, ordinal: int):
        cu = _cu()
        self.ordinal = ordinal
        self.dev = check(cu.cuDeviceGet(ordinal))
        self.ctx = check(cu.cuDevicePrimaryCtxRetain(self.dev))
        self.ctx_int = int(self.ctx)
        a = cu.CUdevice_attribute
        major = check(cu.cuDeviceGetAttribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        minor = check(cu.cuDeviceGetAttribute(a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        self.arch = major * 10 + minor
        self.functions: dict = {}

    def make_current(self):
        cu = _cu()
        cur = check(cu.cuCtxGetCurrent())
        if cur is None or int(cur) != self.ctx_int:
            check(cu.cuCtxSetCurrent(self.ctx))

    def function(self, kernel):
        key = id(kernel)
        fn = self.functions.get(key)
        if fn is None:
            cu = _cu()
            self.make_current()
            mod = check(cu.cuModuleLoadData(kernel.ptx.encode() + b"\0"))
            fn = check(cu.cuModuleGetFunction(mod, (getattr(kernel, "entry", None) or kernel.name).encode()))
            if kernel.shared > 48 * 1024:
                attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                check(cu.cuFuncSetAttribute(fn, attr, kernel.shared))
            self.functions[key] = (mod, fn, kernel)   # keep the kernel alive with its id
            fn = self.functions[key]
        return fn[1]


_devices: dict = {}


def get_device(ordinal: int) -> Device:
    d = _devices.get(ordinal)
    if d is None:
        with _lock:
            d = _devices.get(ordinal) or Device(ordinal)
            _devices[ordinal] = d
    return d


def context_error() -> str | None:
    """The error a synchronise of each device context this process used reports (a
    faulted kernel leaves it there for every later call: CUDA_ERROR_ILLEGAL_ADDRESS...),
    or None; initialises nothing."""
    if not _devices:
        return None
    cu = _cu()
    for dev in list(_devices.values()):
        err, = cu.cuCtxPushCurrent(dev.ctx)
        if int(err) == 0:
            err, = cu.cuCtxSynchronize()
            cu.cuCtxPopCurrent()
        if int(err) != 0:
            _, name = cu.cuGetErrorName(err)
            return (f"CUDA driver error {int(err)} ({name.decode() if name else '?'}) "
                    f"on device {dev.ordinal}")
    return None


def current_device_arch() -> int | None:
    if not cuda_available():
        return None
    try:
        return get_device(_default_ordinal()).arch
    except Exception:
        return None


def _default_ordinal() -> int:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.current_device()
    return 0


def _array_device_stream(obj):
    """(device ordinal, stream handle) for a device array, or None for others."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        if obj.device.type != "cuda":
            return None
        return obj.device.index, torch.cuda.current_stream(obj.device).cuda_stream
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return obj.device.id, cupy.cuda.get_current_stream().ptr
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        ptr = cai["data"][0]
        cu = _cu()
        attr = cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        ordinal = check(cu.cuPointerGetAttribute(attr, ptr)) if ptr else _default_ordinal()
        return int(ordinal), cai.get("stream") or 0
    return None


_FMT = {("int", 8): "b", ("int", 16): "h", ("int", 32): "i", ("int", 64): "q",
        ("uint", 8): "B", ("uint", 16): "H", ("uint", 32): "I", ("uint", 64): "Q",
        ("float", 32): "f", ("float", 64): "d"}


def _struct_code(t):
    """struct code of a parameter, or None when it needs T.pack_param (fp16, bf16, bool)."""
    if isinstance(t, T.PointerType):
        return "Q"
    return _FMT.get((t.kind, t.bits))


class Launcher:
    """Launches one compiled kernel; packs parameters into a reused buffer with one
    precompiled ``struct`` format (the fast path for pointers, ints and floats)."""

    def __init__(self, kernel):
        import struct
        self.kernel = kernel
        self.types = kernel.arg_types
        sizes = [len(T.pack_param(t, 0)) for t in self.types]
        self.offsets, off, fmt = [], 0, "<"
        for s, t in zip(sizes, self.types):
            pad = (off + s - 1) // s * s - off
            fmt += "x" * pad
            off += pad
            self.offsets.append(off)
            off += s
            fmt += _struct_code(t) or f"{s}s"
        if kernel.reports:      # buffer table and error record pointers (sanitize.py)
            pad = (off + 7) // 8 * 8 - off
            fmt, off = fmt + "x" * pad + "QQ", off + pad
            self.offsets += [off, off + 8]
            sizes, off = sizes + [8, 8], off + 16
        self.slow = [i for i, t in enumerate(self.types) if _struct_code(t) is None]
        self.ptr_mask = [(1 << 64) - 1 if isinstance(t, T.PointerType) else None for t in self.types]
        self.packer = struct.Struct(fmt)
        self.buf = ctypes.create_string_buffer(max(off, 8))
        base = ctypes.addressof(self.buf)
        self.ptrs = (ctypes.c_void_p * max(1, len(sizes)))(*[base + o for o in self.offsets])
        self.params_addr = ctypes.addressof(self.ptrs)
        self.block = kernel.num_warps * 32
        self.cu = None
        self.cache = {}       # device ordinal -> (CUfunction, raw handle)
        self.native = None    # native_launch builtin once a raw launch succeeded (False: none)

    def _load_cu(self):
        self.cu = _cu()
        return self.cu

    def _pack(self, values):
        if self.slow:
            values = list(values)
            for i in self.slow:
                values[i] = T.pack_param(self.types[i], values[i])
        try:
            self.packer.pack_into(self.buf, 0, *values)
        except Exception:     # negative pointers, out-of-range ints: wrap as the ABI does
            vals = [T.pack_param(t, v) for t, v in zip(self.types, values)]
            vals += [struct.pack("<Q", v) for v in values[len(self.types):]]    # report params
            for o, b in zip(self.offsets, vals):
                ctypes.memmove(ctypes.addressof(self.buf) + o, b, len(b))

    def __call__(self, grid, args, stream=None, device=None, **_ignored):
        ordinal, stream0, host = _placement(args, device)
        if host:
            rec, bufs = _staged_launch(self, grid, args, host)
        else:
            bufs = args.buffers if self.kernel.sanitize else ()   # asserts alone: no record read
            rec = self.run(get_device(ordinal), grid, args.values,
                           stream if stream is not None else stream0, bufs)
        if rec is not None and rec[0]:
            from .sanitize import raise_record
            raise_record(self.kernel, rec, bufs)

    def run(self, dev, grid, values, stream, buffers=(), sync=False):
        """Launch; with reports in sanitize mode or ``sync`` (staged launches), synchronise
        and return the error record; else None (asserts trap: sanitize.py)."""
        entry = self.cache.get(dev.ordinal)
        if entry is None:
            fn = dev.function(self.kernel)
            entry = self.cache[dev.ordinal] = (fn, _handle(fn))
        gx, gy, gz = grid
        if not (gx and gy and gz):
            return None
        if (gx | gy | gz) >> 32 or gx < 0 or gy < 0 or gz < 0:      # would wrap in cuLaunchKernel
            raise ValueError(f"kernel '{self.kernel.name}': grid {tuple(grid)} is outside CUDA's "
                             "grid limits (x < 2**31, y and z < 65536)")
        if self.cu is None:
            self._load_cu()
        vals = values
        if self.kernel.reports:
            if self.kernel.sanitize or sync:
                return _reported_run(self, dev, entry[0], grid, values, stream, buffers)
            vals = (*values, 0, 0)    # null table and record: a failing assert traps
        err = None
        if self.native and entry[1] is not None:
            try:
                err = self.native(entry[1], gx, gy, gz, stream or 0, *vals)
            except (TypeError, OverflowError):      # None pointers, odd scalars, stream objects
                err = None
        if err is None:
            with _lock:
                self._pack(vals)
                err = _launch(self.cu, entry, grid, self.block, self.kernel.shared, stream, self.params_addr)
            if self.native is None and _RAW["ok"]:
                self.native = _native_for(self)
        if err != 0:
            if err == 201:           # CUDA_ERROR_INVALID_CONTEXT: make ours current, retry
                dev.make_current()
                return self.run(dev, grid, values, stream)
            check((self.cu.CUresult(err),))
        return None


def native_of(kernel):
    """The native launch builtin ``kernel``'s launcher confirmed (native_launch.py:
    ``launch(function, gx, gy, gz, stream, *values, *null_reports(kernel)) -> CUresult``),
    False where it has none for good (parameters Python must pack, ``native_call=False``,
    sanitize mode: every launch synchronises and reads its record), or None while not
    known yet (no native launch through the launcher so far).  Launchers that take the
    caller's function handle and stream use it for their steady state
    (compat/triton_api/launch.py)."""
    if kernel.sanitize:
        return False
    launcher = getattr(kernel, "_launcher", None)
    return None if launcher is None else launcher.native


def null_reports(kernel) -> tuple:
    """The values after a kernel's own in a launch that does not read an error record:
    a null buffer table and record for kernels with ``reports`` (a failing device
    assert traps instead, sanitize.py), else none."""
    return (0, 0) if kernel.reports else ()


def _native_for(launcher):
    """The native launch builtin calling the ctypes-confirmed ``cuLaunchKernel``
    (native_launch.py), or False where the kernel's parameters need Python packing
    or the options say ``native_call=False``."""
    from ...runtime.options import get_options
    from .native_launch import native_launcher
    if not get_options().native_call:
        return False
    try:
        addr = ctypes.cast(_RAW["fn"], ctypes.c_void_p).value
        types = [*launcher.types, *((_NULL_PARAM,) * 2 if launcher.kernel.reports else ())]
        fn = native_launcher(types, launcher.block, launcher.kernel.shared, addr)
    except Exception:         # no usable host JIT: the ctypes path stays
        fn = None
    return fn or False


_NULL_PARAM = T.PointerType(_int64)    # the table and record of a launch whose asserts trap


def _handle(fn):
    """The CUfunction's raw handle (an int), or None for objects that have none."""
    try:
        return int(fn)
    except (TypeError, ValueError):
        return None


def _raw_launch():
    """libcuda's ``cuLaunchKernel`` called through ctypes: a plain C call per launch
    (cuda-bindings wraps every argument); None where libcuda cannot be opened."""
    try:
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    except (OSError, AttributeError):
        return None
    f.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    f.restype = ctypes.c_int
    return f


_RAW = {"fn": None, "loaded": False, "ok": False}


def _launch(cu, entry, grid, block, shared, stream, params) -> int:
    """One cuLaunchKernel, through ctypes when libcuda opens, else through cuda-bindings.
    If the very first raw launch fails, the raw path is turned off for good and the
    bindings launch again (and report), so a wrong handle can never hide an error."""
    fn, handle = entry
    gx, gy, gz = grid
    if not _RAW["loaded"]:
        _RAW["fn"], _RAW["loaded"] = _raw_launch(), True
    raw = _RAW["fn"]
    if raw is not None and handle is not None:
        err = raw(handle, gx, gy, gz, block, 1, 1, shared, stream or None, params, None)
        if err == 0 or err == 201 or _RAW["ok"]:
            _RAW["ok"] = _RAW["ok"] or err == 0
            return err
        _RAW["fn"] = None
    err, = cu.cuLaunchKernel(fn, gx, gy, gz, block, 1, 1, shared, stream, params, 0)
    return int(err)


_SCALARS = (int, float, bool, type(None))


def _leaves(objs):
    """The launch's argument objects with tuple arguments (plain, nested, namedtuples)
    replaced by their elements: arrays inside a tuple are staged like any other."""
    for obj in objs:
        if isinstance(obj, tuple):
            yield from _leaves(obj)
        else:
            yield obj


def _placement(args, device):
    """(device ordinal, stream, host ranges) for a launch's arrays; host ranges are the
    (address, nbytes) of host arrays (numpy, torch CPU tensors) that must be staged."""
    torch = sys.modules.get("torch")
    tensor = torch.Tensor if torch is not None else ()
    ordinal, stream, host, first = device, 0, [], None
    for obj in _leaves(args.keepalive):
        tp = type(obj)
        if tp in _SCALARS:
            continue
        if isinstance(obj, tensor):
            if not obj.is_cuda:
                st = obj.untyped_storage()
                host.append((st.data_ptr(), st.nbytes()))
                continue
            idx = obj.get_device()
            if first is None:
                first = idx
                stream = torch._C._cuda_getCurrentRawStream(idx)
            elif idx != first and device is None:
                _mixed(args, first, idx)
            continue
        iface = getattr(obj, "__array_interface__", None)
        if iface is not None and tp.__module__ == "numpy" and not getattr(obj, "ndim", 1):
            continue                                    # a numpy scalar
        if iface is not None and not hasattr(obj, "__cuda_array_interface__"):
            nbytes = getattr(obj, "nbytes", 0)
            base = getattr(obj, "base", None)
            host.append((iface["data"][0], nbytes))
            if base is not None and hasattr(base, "__array_interface__"):
                host.append((base.__array_interface__["data"][0], getattr(base, "nbytes", 0)))
            continue
        ds = _array_device_stream(obj)
        if ds is None:
            continue
        if first is not None and ds[0] != first and device is None:
            _mixed(args, first, ds[0])
        if first is None:
            first, stream = ds
    if ordinal is None:
        ordinal = first if first is not None else _default_ordinal()
    return ordinal, stream or 0, host


def _mixed(args, a, b):
    names = ", ".join(x.name for x in args.buffers)
    raise ValueError(f"arrays on different CUDA devices ({a} and {b}) among the arguments: {names}")


def _merge(ranges):
    out = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def _staged_launch(launcher, grid, args, hosts):
    """Copy host buffers (numpy arrays, torch CPU tensors) to the device, launch,
    synchronise, copy back.  ``hosts`` are (address, nbytes) ranges of host memory."""

    def is_host(addr):
        return any(lo <= addr < lo + n for lo, n in hosts)
    ranges = _merge((b.address, b.address + b.nbytes) for b in args.buffers
                    if b.nbytes and is_host(b.address))
    dev = get_device(_default_ordinal())
    dev.make_current()
    cu = _cu()
    staged = []
    try:
        for lo, hi in ranges:
            d = check(cu.cuMemAlloc(hi - lo))
            staged.append((lo, hi, d))
            check(cu.cuMemcpyHtoD(d, lo, hi - lo))
        values = list(args.values)
        for i, t in enumerate(launcher.types):
            if isinstance(t, T.PointerType) and isinstance(values[i], int):
                for lo, hi, d in staged:
                    if lo <= values[i] < hi or (values[i] == hi and lo < hi):
                        values[i] = int(d) + (values[i] - lo)
                        break
        bufs = [_moved(b, staged) for b in args.buffers] if launcher.kernel.reports else ()
        rec = launcher.run(dev, grid, values, 0, bufs, sync=True)
        check(cu.cuCtxSynchronize())
        for lo, hi, d in staged:
            check(cu.cuMemcpyDtoH(lo, d, hi - lo))
        return rec, bufs
    finally:
        for _lo, _hi, d in staged:
            cu.cuMemFree(d)


def _moved(buf, staged):
    """``buf`` at its staged device address (unchanged when not staged)."""
    import dataclasses
    for lo, hi, d in staged:
        if lo <= buf.address < hi or (buf.address == hi and lo < hi):
            return dataclasses.replace(buf, address=int(d) + (buf.address - lo))
    return buf


class _Reports:
    """Per launcher and device: the device buffer table and error record (sanitize.py)."""

    def __init__(self):
        self.rec, self.table, self.table_bytes = None, None, 0
        self.lock = threading.Lock()


def _reported_run(launcher, dev, fn, grid, values, stream, buffers):
    """Launch with the buffer table and a cleared error record, synchronise the stream
    and return the record (a tuple of 6 ints; ``rec[0] == 0``: no failure)."""
    from .sanitize import REC_WORDS, table_bytes
    cu = launcher.cu
    dev.make_current()
    state = launcher.__dict__.setdefault("_reports", {}).setdefault(dev.ordinal, _Reports())
    raw = table_bytes(buffers)
    table = ctypes.create_string_buffer(raw, len(raw))
    with state.lock:
        if state.rec is None:
            state.rec = check(cu.cuMemAlloc(REC_WORDS * 8))
        if state.table_bytes < len(raw):
            if state.table is not None:
                cu.cuMemFree(state.table)
            state.table_bytes = max(len(raw), 1024)
            state.table = check(cu.cuMemAlloc(state.table_bytes))
        check(cu.cuMemcpyHtoDAsync(state.table, ctypes.addressof(table), len(raw), stream))
        check(cu.cuMemsetD8Async(state.rec, 0, REC_WORDS * 8, stream))
        with _lock:
            launcher._pack(list(values) + [int(state.table), int(state.rec)])
            gx, gy, gz = grid
            err, = cu.cuLaunchKernel(fn, gx, gy, gz, launcher.block, 1, 1, launcher.kernel.shared,
                                     stream, launcher.params_addr, 0)
        check((err,))
        check(cu.cuStreamSynchronize(stream))
        out = (ctypes.c_uint64 * REC_WORDS)()
        check(cu.cuMemcpyDtoH(ctypes.addressof(out), state.rec, REC_WORDS * 8))
    return tuple(int(v) for v in out)
