"""CPU tier of sanitize mode / device_assert reports on the CUDA backend (no GPU).

* PTX: sanitized kernels (and kernels holding a ``tt.assert``) take a buffer table and
  an error record after their own parameters, check every masked-in access, claim the
  record with ``atom.cas`` and leave through a CTA vote (``bar.red.or``), never a trap;
  ptxas (when installed) assembles them for sm_80 and sm_90.  Plain kernels have none
  of it.
* Host: with a stand-in for the CUDA driver whose "device memory" is host memory, the
  launcher passes the table and record, and turns a record written by the "kernel"
  into the CPU backend's errors (line, program id, lane, address, nearest buffer).
"""
import ctypes
import os
import re
import struct
import sys

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import Buffer, LaunchArgs
from tilejit.backends.cpu.sanitize import OOB_BASE
from tilejit.backends.cuda import driver
from tilejit.backends.cuda import target as tgt
from tilejit.runtime.options import Options

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))
from test_device_assert import masked_assert, scalar_assert  # noqa: E402
from test_sanitize import (_line, fill_rows, histogram, row_sum, shifted_copy,  # noqa: E402
                           store_past)

SIGS = {
    "shifted_copy": (shifted_copy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "shift": "i32"},
                     {"BLOCK": 128}),
    "store_past": (store_past, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "extra": "i32"},
                   {"BLOCK": 128}),
    "row_sum": (row_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32",
                          "stride": "i32"}, {"BLOCK": 16}),
    "histogram": (histogram, {"idx_ptr": "*i32", "hist_ptr": "*i32", "n": "i32"}, {"BLOCK": 8}),
    "fill_rows": (fill_rows, {"y_ptr": "*fp32", "row": "i32", "stride": "i32"}, {"BLOCK": 8}),
    "masked_assert": (masked_assert, {"x_ptr": "*i32", "n": "i32"}, {"BLOCK": 16}),
    "scalar_assert": (scalar_assert, {"x_ptr": "*i32", "n": "i32"}, {}),
}
CHECKS = ("bar.red.or.pred", "atom.relaxed.sys.global.cas.b64")


def _compile(name, sanitize, arch=90, **sig_over):
    fn, sig, consts = SIGS[name]
    return tilejit.compile(fn, signature=sig, constexprs=consts, target=f"cuda:{arch}",
                           options=Options(sanitize=sanitize))


def _nparams(ptx, name):
    entry = ptx[ptx.index(f".entry {name}"):]
    return len(re.findall(rf"\b{name}_param_\d+", entry.split(")")[0]))


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", sorted(SIGS))
def test_sanitized_ptx_has_checks_and_assembles(name, arch):
    k = _compile(name, True, arch)
    ptx = k.asm["ptx"]
    nargs = len(SIGS[name][1])
    assert k.reports and _nparams(ptx, name) == nargs + 2
    for check in CHECKS:
        assert check in ptx, check
    assert "trap;" not in ptx
    assert len(k._accesses) == sum(op.name in ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")
                                   for op in k.func.walk())
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)


@pytest.mark.parametrize("name", ["shifted_copy", "store_past", "row_sum", "histogram", "fill_rows"])
def test_plain_ptx_has_no_checks_and_no_extra_params(name):
    k = _compile(name, False)
    ptx = k.asm["ptx"]
    assert not k.reports and _nparams(ptx, name) == len(SIGS[name][1])
    for check in CHECKS + ("trap;", "tj_inbounds", "tj_report"):
        assert check not in ptx, check
    assert "bar.red" not in ptx


def test_assert_reports_without_sanitize_and_no_bounds_checks():
    k = _compile("masked_assert", False)
    ptx = k.asm["ptx"]
    assert k.reports and not k.sanitize and _nparams(ptx, "masked_assert") == 2 + 2
    assert "bar.red.or.pred" in ptx and "atom.relaxed.sys.global.cas.b64" in ptx
    # launched with a null table (device arrays, no synchronisation): CUDA's assert
    assert "call.uni __assertfail" in ptx and "trap;" in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, 90)
    msg = ", ".join(str(c) for c in b"negative input")
    assert f"{{{msg}, 0}}" in ptx or f"{{{msg}}}" in ptx          # the message, as a C string
    assert "__assertfail" not in _compile("masked_assert", True).asm["ptx"]   # sanitize: never traps
    assert k._accesses == [] and [op.msg for op in k._asserts] == ["negative input"]


def test_sanitized_accesses_are_not_vectorised():
    fn, sig, consts = SIGS["store_past"]
    div = ("x_ptr", "y_ptr", "n", "extra")
    consts = {"BLOCK": 1024}                     # 8 elements per thread
    plain = tilejit.compile(fn, signature=sig, constexprs=consts, target="cuda:90",
                            divisible_by_16=div, options=Options())
    checked = tilejit.compile(fn, signature=sig, constexprs=consts, target="cuda:90",
                              divisible_by_16=div, options=Options(sanitize=True))
    assert ".v4" in plain.asm["ptx"]
    assert ".v4" not in checked.asm["ptx"] and ".v2" not in checked.asm["ptx"]


# ---------------------------------------------------------------- host side, fake driver
class FakeDriver:
    """Device memory is host memory; ``cuLaunchKernel`` calls ``self.kernel(table,
    record_address)`` with the table read from the packed parameters."""

    def __init__(self, kernel, nargs):
        self.kernel, self.nargs = kernel, nargs
        self.mem, self.launches, self.syncs = [], 0, 0

    def cuMemAlloc(self, n):
        buf = ctypes.create_string_buffer(n)
        self.mem.append(buf)
        return 0, ctypes.addressof(buf)

    def cuMemFree(self, d):
        return (0,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        ctypes.memmove(int(dst), src, n)
        return (0,)

    def cuMemsetD8Async(self, dst, v, n, stream):
        ctypes.memset(int(dst), v, n)
        return (0,)

    def cuStreamSynchronize(self, stream):
        self.syncs += 1
        return (0,)

    def cuMemcpyDtoH(self, dst, src, n):
        ctypes.memmove(dst, int(src), n)
        return (0,)

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.launches += 1
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        table_p = ctypes.c_uint64.from_address(ptrs[self.nargs]).value
        rec_p = ctypes.c_uint64.from_address(ptrs[self.nargs + 1]).value
        if table_p == 0:                 # a launch whose asserts trap (no table, no record)
            self.kernel(None, rec_p)
            return (0,)
        count = ctypes.c_uint64.from_address(table_p).value
        table = [ctypes.c_uint64.from_address(table_p + 8 * i).value for i in range(1, 1 + 2 * count)]
        self.kernel([tuple(table[i:i + 2]) for i in range(0, len(table), 2)], rec_p)
        return (0,)


class FakeDevice:
    ordinal = 0

    def function(self, kernel):
        return "fn"

    def make_current(self):
        pass


def _launch(monkeypatch, k, arrays, device_kernel, sync=False):
    """Launch ``k`` on "device" arrays through the fake driver (``sync``: as a staged
    launch of host arrays, which synchronises and reads the record)."""
    fake = FakeDriver(device_kernel, len(k.func.arguments))
    monkeypatch.setattr(driver, "_placement", lambda args, device: (0, 0, []))
    monkeypatch.setattr(driver, "get_device", lambda ordinal: FakeDevice())
    launcher = driver.Launcher(k)
    launcher.cu = fake
    values, bufs = [], []
    for a, x in zip(k.func.arguments, arrays):
        if isinstance(x, np.ndarray):
            values.append(x.ctypes.data)
            bufs.append(Buffer(a.name, x.ctypes.data, x.nbytes, x.itemsize))
        else:
            values.append(x)
    if not sync:
        launcher((4, 1, 1), LaunchArgs(values, bufs, list(arrays)))
        return fake
    rec = launcher.run(FakeDevice(), (4, 1, 1), values, 0, bufs, sync=True)
    if rec[0]:
        from tilejit.backends.cuda.sanitize import raise_record
        raise_record(k, rec, bufs)
    return fake


def _write(rec_p, words):
    for i, w in enumerate(words):
        ctypes.c_uint64.from_address(rec_p + 8 * i).value = w


def test_host_passes_the_buffer_table_and_raises_the_recorded_access(monkeypatch):
    k = _compile("shifted_copy", True)
    x, y = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    seen = []

    def device(table, rec_p):
        seen.append(table)
        _write(rec_p, [OOB_BASE + 0, 3, 0, 0, 3, x.ctypes.data + 400])   # x[100], lane 3 of program 3

    with pytest.raises(tilejit.OutOfBoundsError) as ei:
        _launch(monkeypatch, k, [x, y, 100, 1], device)
    assert seen == [[(x.ctypes.data, x.ctypes.data + 400), (y.ctypes.data, y.ctypes.data + 400)]]
    e = ei.value
    assert e.program_id == (3, 0, 0) and e.lane == 3 and e.address == x.ctypes.data + 400
    msg = str(e)
    assert f"test_sanitize.py:{_line(shifted_copy, 'tl.load')}" in msg
    assert "shifted_copy" in msg and "out-of-bounds load of fp32" in msg
    assert "nearest buffer 'x_ptr'" in msg and "0 bytes past its end" in msg


def test_host_clean_record_raises_nothing_and_is_cleared_each_launch(monkeypatch):
    k = _compile("shifted_copy", True)
    x, y = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    records = []

    def device(table, rec_p):
        records.append([ctypes.c_uint64.from_address(rec_p + 8 * i).value for i in range(6)])
        if len(records) == 1:
            _write(rec_p, [OOB_BASE + 1, 1, 2, 0, 7, y.ctypes.data + 400])  # first launch fails

    with pytest.raises(tilejit.OutOfBoundsError) as ei:
        _launch(monkeypatch, k, [x, y, 100, 0], device)
    assert "out-of-bounds store" in str(ei.value) and ei.value.program_id == (1, 2, 0)
    assert f":{_line(shifted_copy, 'tl.store')}" in str(ei.value)
    _launch(monkeypatch, k, [x, y, 100, 0], device)             # cleared record: no error
    assert records[1] == [0] * 6


def test_host_raises_device_assert_and_offset_overflow(monkeypatch):
    k = _compile("masked_assert", False)
    x = np.arange(50, dtype=np.int32)
    with pytest.raises(tilejit.interpreter.DeviceAssertError) as ei:
        _launch(monkeypatch, k, [x, 50], lambda t, r: _write(r, [1, 2, 0, 0, 0, 0]), sync=True)
    assert ei.value.program_id == (2, 0, 0) and isinstance(ei.value, AssertionError)
    assert "negative input" in str(ei.value)
    assert f":{_line(masked_assert, 'device_assert')}" in str(ei.value)
    k = _compile("fill_rows", True)
    y = np.zeros(16, np.float32)
    code = 1 + next(i for i, op in enumerate(k._asserts) if op.msg.startswith("int32 offset"))
    with pytest.raises(tilejit.OffsetOverflowError) as ei:
        _launch(monkeypatch, k, [y, 65536, 65536], lambda t, r: _write(r, [code, 0, 0, 0, 0, 0]))
    assert f":{_line(fill_rows, 'tl.store')}" in str(ei.value) and "'*' wrapped" in str(ei.value)


def test_assert_launch_on_device_arrays_does_not_synchronise(monkeypatch):
    """Outside sanitize mode, a launch on device arrays passes a null table and record
    (a failing assert calls __assertfail and traps) and neither clears, copies nor
    waits: the next launch is queued at once."""
    k = _compile("masked_assert", False)
    x = np.arange(50, dtype=np.int32)
    seen = []
    fake = _launch(monkeypatch, k, [x, 50], lambda t, r: seen.append((t, r)))
    assert seen == [(None, 0)] and fake.launches == 1
    assert fake.syncs == 0 and fake.mem == []          # no record allocated, nothing waited on


def test_assert_error_from_the_driver_says_what_happened(monkeypatch):
    class Names:
        def cuGetErrorName(self, err):
            return 0, b"CUDA_ERROR_ASSERT" if int(err) == 710 else b"CUDA_ERROR_UNKNOWN"
    monkeypatch.setattr(driver, "_cu", lambda: Names())
    with pytest.raises(RuntimeError) as ei:
        driver.check((710,))
    msg = str(ei.value)
    assert "CUDA_ERROR_ASSERT" in msg and "tl.device_assert failed" in msg
    assert "file:line" in msg and "TILEJIT_SANITIZE=1" in msg
    with pytest.raises(RuntimeError) as ei:
        driver.check((999,))
    assert "device_assert" not in str(ei.value)


def test_record_layout_matches_the_lowering():
    from tilejit.backends.cuda.sanitize import REC_WORDS, table_bytes
    assert REC_WORDS == 6
    raw = table_bytes([Buffer("a", 16, 8), Buffer("b", 64, 4)])
    assert struct.unpack("<5Q", raw) == (2, 16, 24, 64, 68)


@tilejit.jit
def _const_assert(x_ptr, n, BLOCK: tl.constexpr):
    tl.device_assert(BLOCK > 0, "never fails")
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


def test_assert_that_always_holds_keeps_the_plain_kernel():
    sig = {"x_ptr": "*fp32", "n": "i32"}
    k = tilejit.compile(_const_assert, signature=sig, constexprs={"BLOCK": 32}, target="cuda:90",
                        options=Options())
    assert any(op.name == "tt.assert" for op in k.func.walk())
    assert not k.reports and _nparams(k.asm["ptx"], "_const_assert") == 2
    for check in CHECKS + ("trap;",):
        assert check not in k.asm["ptx"]


def _ptx_kernels():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_cuda_ptx
    return test_cuda_ptx.KERNELS


@pytest.mark.parametrize("name", sorted(_ptx_kernels()))
def test_every_ptx_suite_kernel_compiles_checked(name):
    """The PTX suite's kernels (dots with mma, reductions, loops, atomics, prints) with
    bounds checks: every access is checked, the PTX assembles for sm_90."""
    from tilejit.backends.cuda.backend import CudaBackend
    f = _ptx_kernels()[name]()
    f.attrs["target"] = "cuda:90"
    k = CudaBackend().compile(f, Options(sanitize=True))
    n_access = sum(op.name in ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")
                   for op in f.walk())
    assert len(k._accesses) == n_access
    assert ("bar.red.or.pred" in k.ptx) == bool(n_access or k._asserts)
    assert "trap;" not in k.ptx
    if tgt.find_ptxas():
        tgt.ptxas(k.ptx, 90)


def test_native_launch_of_an_assert_kernel_passes_two_null_parameters(monkeypatch):
    """The launcher's native builtin of a kernel with asserts (not sanitized) takes the
    null table and record after the kernel's own parameters, on every launch."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_cuda_native_launch import P32, Recorder, _Device
    from tilejit.backends.cuda import types as CT
    from tilejit.ir import types as IT

    class AssertKernel:
        arg_types, reports, sanitize, num_warps, shared = [P32, IT.int32], True, False, 4, 0
    sizes = [len(CT.pack_param(t, 0)) for t in AssertKernel.arg_types] + [8, 8]
    rec = Recorder(sizes)
    raw = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                           *[ctypes.c_void_p] * 3)(rec.address)
    monkeypatch.setattr(driver, "_RAW", {"fn": raw, "loaded": True, "ok": False})
    la = driver.Launcher(AssertKernel())
    la.cu = object()
    la.run(_Device(), (2, 1, 1), [4096, 50], 0)                  # ctypes packing, raw launch
    assert la.native and type(la.native).__name__ == "builtin_function_or_method"
    la.run(_Device(), (2, 1, 1), [4096, 50], 0)                  # the native builtin
    nulls = [bytes(8), bytes(8)]
    expected = [CT.pack_param(P32, 4096), CT.pack_param(IT.int32, 50)] + nulls
    assert [c["params"] for c in rec.calls] == [expected, expected]
