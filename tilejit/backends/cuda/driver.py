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
import sys
import threading

from . import types as T

_lock = threading.Lock()


def _cu():
    from cuda.bindings import driver
    return driver


def check(result):
    """Unpack a cuda-bindings result tuple, raising on any error."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        cu = _cu()
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"CUDA driver error {int(err)} ({name.decode() if name else '?'})")
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
            fn = check(cu.cuModuleGetFunction(mod, kernel.name.encode()))
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


class Launcher:
    """Launches one compiled kernel; packs parameters into a reused buffer."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.types = kernel.arg_types
        sizes = [len(T.pack_param(t, 0)) for t in self.types]
        self.offsets, off = [], 0
        for s in sizes:
            off = (off + s - 1) // s * s
            self.offsets.append(off)
            off += s
        self.buf = ctypes.create_string_buffer(max(off, 8))
        base = ctypes.addressof(self.buf)
        self.ptrs = (ctypes.c_void_p * max(1, len(sizes)))(*[base + o for o in self.offsets])
        self.block = kernel.num_warps * 32

    def _pack(self, values):
        for t, off, v in zip(self.types, self.offsets, values):
            b = T.pack_param(t, v)
            ctypes.memmove(ctypes.addressof(self.buf) + off, b, len(b))

    def __call__(self, grid, args, stream=None, device=None, **_ignored):
        import numpy as np
        host = [o for o in args.keepalive if isinstance(o, np.ndarray)]
        if host:
            return _staged_launch(self, grid, args, host)
        ordinal, stream0 = device, None
        for obj in args.keepalive:
            ds = _array_device_stream(obj)
            if ds is None:
                continue
            if ordinal is not None and ds[0] != ordinal and device is None:
                names = ", ".join(b.name for b in args.buffers)
                raise ValueError(f"arrays on different CUDA devices ({ordinal} and {ds[0]}): {names}")
            ordinal, stream0 = ds
        ordinal = _default_ordinal() if ordinal is None else ordinal
        self.run(get_device(ordinal), grid, args.values, stream if stream is not None else (stream0 or 0))

    def run(self, dev, grid, values, stream):
        cu = _cu()
        fn = dev.function(self.kernel)
        dev.make_current()
        with _lock:
            self._pack(values)
            gx, gy, gz = (int(g) for g in grid)
            if gx * gy * gz == 0:
                return
            check(cu.cuLaunchKernel(fn, gx, gy, gz, self.block, 1, 1, self.kernel.shared,
                                    int(stream), ctypes.addressof(self.ptrs), 0))


def _merge(ranges):
    out = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def _staged_launch(launcher, grid, args, host_arrays):
    """Copy host (numpy) buffers to the device, launch, synchronise, copy back."""
    cu = _cu()
    hosts = [(a.__array_interface__["data"][0], a.nbytes) for a in host_arrays]

    def is_host(addr):
        return any(lo <= addr < lo + n for lo, n in hosts)
    ranges = _merge((b.address, b.address + b.nbytes) for b in args.buffers
                    if b.nbytes and is_host(b.address))
    dev = get_device(_default_ordinal())
    dev.make_current()
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
        launcher.run(dev, grid, values, 0)
        check(cu.cuCtxSynchronize())
        for lo, hi, d in staged:
            check(cu.cuMemcpyDtoH(lo, d, hi - lo))
    finally:
        for _lo, _hi, d in staged:
            cu.cuMemFree(d)
