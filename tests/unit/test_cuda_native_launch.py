"""The native launch builtin (backends/cuda/native_launch.py), with no GPU: a ctypes
callback with cuLaunchKernel's C signature stands in for the driver and records what
it was given; the parameter bytes must be exactly what ``types.pack_param`` packs."""
import ctypes
import math

import pytest

from tilejit.backends.cuda import native_launch as NL
from tilejit.backends.cuda import types as T
from tilejit.ir import types as IT

_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                           ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


class Recorder:
    """A C function recording each call's launch numbers and parameter bytes."""

    def __init__(self, sizes, result=0):
        self.sizes, self.result, self.calls = sizes, result, []
        self.cfunc = _LAUNCH(self._call)
        self.address = ctypes.cast(self.cfunc, ctypes.c_void_p).value

    def _call(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        blobs = [ctypes.string_at(params[i], n) for i, n in enumerate(self.sizes)]
        self.calls.append(dict(fn=fn, grid=(gx, gy, gz), block=(bx, by, bz), shared=shared,
                               stream=stream, params=blobs, extra=extra))
        return self.result


def _launcher(types, block=128, shared=0, result=0):
    rec = Recorder([len(T.pack_param(t, 0)) for t in types], result)
    fn = NL.native_launcher(types, block, shared, rec.address)
    assert fn is not None
    return fn, rec


P32 = IT.PointerType(IT.float32)
CASES = [
    (P32, 0x7F12_3456_7890), (P32, 0), (IT.int32, 1024), (IT.int32, -7), (IT.int32, 2 ** 31 - 1),
    (IT.int64, -2 ** 63), (IT.int64, 2 ** 40 + 3), (IT.uint32, 2 ** 32 - 1), (IT.int8, -128),
    (IT.int16, 300), (IT.uint64, 2 ** 64 - 1), (IT.int1, True), (IT.int1, False),
    (IT.float32, 0.1), (IT.float32, -3.4e38), (IT.float32, 1e-45), (IT.float64, math.pi),
    (IT.float64, -0.0), (IT.float32, float("inf")),
]


def test_parameters_are_packed_as_pack_param_packs_them():
    types = [t for t, _ in CASES]
    values = [v for _, v in CASES]
    fn, rec = _launcher(types, block=256, shared=4096)
    assert fn(0xABCDEF, 7, 3, 2, 0x5000, *values) == 0
    call, = rec.calls
    assert call["fn"] == 0xABCDEF and call["grid"] == (7, 3, 2) and call["block"] == (256, 1, 1)
    assert call["shared"] == 4096 and call["stream"] == 0x5000 and call["extra"] is None
    assert call["params"] == [T.pack_param(t, v) for t, v in CASES]


def test_null_stream_and_result_code_come_back():
    fn, rec = _launcher([P32, IT.int32], result=719)
    assert fn(1, 1, 1, 1, 0, 4096, 5) == 719
    assert rec.calls[0]["stream"] is None and rec.calls[0]["params"][1] == T.pack_param(IT.int32, 5)


def test_ints_wrap_as_the_abi_does():
    fn, rec = _launcher([IT.int32, P32])
    fn(1, 1, 1, 1, 0, 2 ** 32 + 5, -16)
    assert rec.calls[0]["params"] == [T.pack_param(IT.int32, 2 ** 32 + 5), T.pack_param(P32, -16)]


def test_wrong_value_type_raises_before_launching():
    fn, rec = _launcher([P32, IT.int32])
    with pytest.raises(TypeError):
        fn(1, 1, 1, 1, 0, 4096, 2.5)
    with pytest.raises(TypeError):
        fn(1, 1, 1, 1, 0, "x", 5)
    assert not rec.calls


def test_wrong_argument_count_is_reported_not_launched():
    fn, rec = _launcher([P32, IT.int32])
    assert fn(1, 1, 1, 1, 0, 4096) == NL.BAD_CALL
    assert fn(1, 1, 1, 1, 0, 4096, 5, 6) == NL.BAD_CALL
    assert not rec.calls


def test_same_signature_shares_one_function_and_odd_types_get_none():
    rec = Recorder([8, 4])
    a = NL.native_launcher([P32, IT.int32], 128, 0, rec.address)
    b = NL.native_launcher([IT.PointerType(IT.int8), IT.int32], 128, 0, rec.address)
    assert a is b
    assert NL.native_launcher([P32, IT.int32], 256, 0, rec.address) is not a
    for odd in (IT.float16, IT.bfloat16, IT.float8e4nv):
        assert NL.native_launcher([P32, odd], 128, 0, rec.address) is None


def test_no_parameters():
    fn, rec = _launcher([])
    assert fn(9, 1, 1, 1, 0) == 0 and rec.calls[0]["params"] == []


# ---------------------------------------------------------------- in the driver's Launcher
class _Kernel:
    def __init__(self, types):
        self.arg_types, self.reports, self.num_warps, self.shared = types, False, 4, 1024


class _Device:
    ordinal = 0

    def function(self, kernel):
        return 0xF00D


def test_launcher_switches_to_native_after_a_confirmed_raw_launch(monkeypatch):
    from tilejit.backends.cuda import driver
    types = [P32, P32, IT.int32, IT.float32]
    rec = Recorder([len(T.pack_param(t, 0)) for t in types])
    raw = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                           *[ctypes.c_void_p] * 3)(rec.address)
    monkeypatch.setattr(driver, "_RAW", {"fn": raw, "loaded": True, "ok": False})
    la = driver.Launcher(_Kernel(types))
    la.cu = object()
    values = [4096, 8192, 77, 0.5]
    la.run(_Device(), (3, 1, 1), values, 0)
    assert la.native and type(la.native).__name__ == "builtin_function_or_method"
    la.run(_Device(), (3, 1, 1), values, 0x77)                      # through the native builtin
    la.run(_Device(), (3, 1, 1), [4096, 8192, 78.0, 0.5], 0)        # float for an int: Python packing
    first, second, third = rec.calls
    expected = [T.pack_param(t, v) for t, v in zip(types, values)]
    assert first["params"] == second["params"] == expected
    assert third["params"][2] == T.pack_param(IT.int32, 78)
    assert second["fn"] == 0xF00D and second["grid"] == (3, 1, 1) and second["block"] == (128, 1, 1)
    assert second["shared"] == 1024 and second["stream"] == 0x77
