"""The launcher of a kernel compiled by ``triton.compile`` for a CUDA target
(compat/triton_api/launch.py), as TorchInductor calls it: ``run(grid_0, grid_1,
grid_2, stream, function, metadata, launch_metadata, enter_hook, exit_hook, *args)``.

No GPU: a ctypes callback with cuLaunchKernel's C signature stands in for libcuda
(tests/unit/test_cuda_native_launch.py's Recorder) and records each launch's handle,
grid, stream and parameter bytes; torch CPU tensors say they are on cuda:0 for the
test.  The first launch goes through the general path (``kernel.launch``: the device's
function handle 0xF00D); the steady state through the native builtin with the
``function`` handle and stream the caller passes (0xBEEF here), the same bytes."""
import ctypes

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import driver
from tilejit.backends.cuda import types as T
from tilejit.ir import types as IT

from test_cuda_native_launch import Recorder

torch = pytest.importorskip("torch")

DEVICE_FN, CALLER_FN, STREAM = 0xF00D, 0xBEEF, 0x5E00


@tilejit.jit
def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@tilejit.jit
def checked_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.device_assert(offs < n, "index out of range")
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "alpha": "fp32",
       "BLOCK": "constexpr"}
TYPES = [IT.PointerType(IT.float32)] * 3 + [IT.int32, IT.float32]


class _Device:
    ordinal = 0

    def function(self, kernel):
        return DEVICE_FN

    def make_current(self):
        pass


class _Cu:
    """cuda-bindings' names the general path uses to report a driver error."""
    CUresult = int

    @staticmethod
    def cuGetErrorName(err):
        return 0, b"CUDA_ERROR_STUB"


def _compile(fn, sig, constexprs):
    from tilejit.compat.triton_api.backends import GPUTarget
    from tilejit.compat.triton_api.compiler import ASTSource, compile
    return compile(ASTSource(fn, sig, constexprs), target=GPUTarget("cuda", 90, 32),
                   options={"num_warps": 4})


@pytest.fixture
def fake_gpu(monkeypatch):
    """(recorder, make) where make(ck) returns ck's launcher over the recorder."""
    rec = Recorder([len(T.pack_param(t, 0)) for t in TYPES])
    raw = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                           *[ctypes.c_void_p] * 3)(rec.address)
    monkeypatch.setattr(driver, "_RAW", {"fn": raw, "loaded": True, "ok": False})
    monkeypatch.setattr(driver, "_devices", {0: _Device()})
    monkeypatch.setattr(driver, "_cu", lambda: _Cu)
    monkeypatch.setattr(torch.Tensor, "is_cuda", True)
    monkeypatch.setattr(torch.Tensor, "get_device", lambda self: 0)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda idx: 0, raising=False)

    def make(ck):
        from tilejit.compat.triton_api.launch import make_launcher
        ck.function = CALLER_FN                  # what load() returns on a GPU: an int handle
        ck.kernel._launcher = driver.Launcher(ck.kernel)
        ck.kernel._launcher.cu = _Cu
        return make_launcher(ck)
    return rec, make


def _tensors():
    return torch.zeros(64), torch.zeros(64), torch.zeros(64)


def _expected(x, y, out, n, alpha):
    return [T.pack_param(t, v) for t, v in zip(TYPES, [x.data_ptr(), y.data_ptr(), out.data_ptr(), n, alpha])]


def test_steady_state_is_the_native_launch_with_the_callers_handle_and_stream(fake_gpu):
    rec, make = fake_gpu
    ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    run = make(ck)
    x, y, out = _tensors()
    head = (4, 2, 1, STREAM, CALLER_FN, ck.packed_metadata, None, None, None)
    run(*head, x, y, out, 1000, 0.5, 64)
    assert type(run.__globals__["NATIVE"]).__name__ == "builtin_function_or_method"
    run(*head, x, y, out, 999, -2.25, 64)
    run(*head, x, y, out, -7, 3e38, 64)
    first, second, third = rec.calls
    assert first["fn"] == DEVICE_FN                                 # general path: the device's
    assert second["fn"] == third["fn"] == CALLER_FN                 # native: the caller's handle
    assert {c["stream"] for c in rec.calls} == {STREAM}
    assert {c["grid"] for c in rec.calls} == {(4, 2, 1)}
    assert {c["block"] for c in rec.calls} == {(128, 1, 1)}
    assert first["params"] == _expected(x, y, out, 1000, 0.5)
    assert second["params"] == _expected(x, y, out, 999, -2.25)
    assert third["params"] == _expected(x, y, out, -7, 3e38)


def test_values_the_builtin_does_not_take_go_the_general_path(fake_gpu):
    rec, make = fake_gpu
    ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    run = make(ck)
    x, y, out = _tensors()
    meta = ck.packed_metadata
    run(1, 1, 1, STREAM, CALLER_FN, meta, None, None, None, x, y, out, 8, 1.0, 64)
    run(1, 1, 1, None, CALLER_FN, meta, None, None, None, x, y, out, 8, 1.0, 64)   # no stream
    run(1, 1, 1, STREAM, CALLER_FN, meta, None, None, None, x, y, out, 8, 2, 64)   # int for fp32
    _, no_stream, int_alpha = rec.calls
    assert no_stream["fn"] == DEVICE_FN and no_stream["stream"] is None
    assert int_alpha["fn"] == CALLER_FN and int_alpha["params"][4] == T.pack_param(IT.float32, 2.0)
    with pytest.raises(TypeError, match="scaled_add: argument 'n' must be an int for i32"):
        run(1, 1, 1, STREAM, CALLER_FN, meta, None, None, None, x, y, out, 8.0, 1.0, 64)
    assert len(rec.calls) == 3                                      # nothing launched


def test_a_driver_error_from_the_native_launch_is_reported(fake_gpu):
    rec, make = fake_gpu
    ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    run = make(ck)
    x, y, out = _tensors()
    args = (2, 1, 1, STREAM, CALLER_FN, ck.packed_metadata, None, None, None, x, y, out, 8, 1.0, 64)
    run(*args)
    rec.result = 719                                                # CUDA_ERROR_LAUNCH_FAILED
    with pytest.raises(RuntimeError, match="CUDA driver error 719"):
        run(*args)
    # the native launch failed, then the general path launched again and reported
    assert [c["fn"] for c in rec.calls] == [DEVICE_FN, CALLER_FN, DEVICE_FN]


def test_grids_over_the_grid_bound_take_the_unbounded_variant(fake_gpu):
    rec, make = fake_gpu
    ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    general = []

    class Unbounded:
        def launch(self, grid, args, **kw):
            general.append((grid, list(args.values)))
    ck.kernel.grid_bound, ck.kernel._general = (4, 1, 1), Unbounded
    run = make(ck)
    x, y, out = _tensors()
    head = (CALLER_FN, ck.packed_metadata, None, None, None, x, y, out, 8, 1.0, 64)
    run(4, 1, 1, STREAM, *head)
    run(4, 1, 1, STREAM, *head)
    run(5, 1, 1, STREAM, *head)
    run(4, 2, 1, STREAM, *head)
    assert [c["fn"] for c in rec.calls] == [DEVICE_FN, CALLER_FN]
    assert [g for g, _ in general] == [(5, 1, 1), (4, 2, 1)]
    assert general[0][1] == [x.data_ptr(), y.data_ptr(), out.data_ptr(), 8, 1.0]


def test_native_call_off_keeps_the_general_path(fake_gpu):
    from tilejit.runtime.options import use_options
    rec, make = fake_gpu
    ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    run = make(ck)
    x, y, out = _tensors()
    args = (1, 1, 1, STREAM, CALLER_FN, ck.packed_metadata, None, None, None, x, y, out, 8, 1.0, 64)
    with use_options(native_call=False):
        run(*args)
        run(*args)
    assert [c["fn"] for c in rec.calls] == [DEVICE_FN, DEVICE_FN]
    assert rec.calls[0]["params"] == rec.calls[1]["params"] == _expected(x, y, out, 8, 1.0)


def test_sanitize_mode_never_takes_the_native_launch(fake_gpu):
    from tilejit.runtime.options import use_options
    _, make = fake_gpu
    with use_options(sanitize=True):
        ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    assert ck.kernel.reports and ck.kernel.sanitize
    run = make(ck)
    assert "NATIVE" not in run.__globals__


def test_device_asserts_launch_natively_with_a_null_table_and_record(fake_gpu):
    """Once the kernel's launcher has a native builtin (it takes the table and record
    after the kernel's values), the steady state passes null ones: a failing assert
    traps (sanitize.py) instead of writing a record that nobody reads."""
    from tilejit.backends.cuda import native_launch as NL
    rec, make = fake_gpu
    ck = _compile(checked_copy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                  {"BLOCK": 16})
    assert ck.kernel.reports and not ck.kernel.sanitize
    run = make(ck)
    p32, p64 = IT.PointerType(IT.float32), IT.PointerType(IT.int64)
    types = [p32, p32, IT.int32, p64, p64]
    rec.sizes = [len(T.pack_param(t, 0)) for t in types]
    ck.kernel._launcher.native = NL.native_launcher(types, 128, ck.kernel.shared, rec.address)
    run.__globals__["arm"]()
    x, y, _ = _tensors()
    run(1, 1, 1, STREAM, CALLER_FN, ck.packed_metadata, None, None, None, x, y, 16, 16)
    call, = rec.calls
    assert call["fn"] == CALLER_FN and call["stream"] == STREAM
    assert call["params"] == [T.pack_param(t, v) for t, v in zip(types, [x.data_ptr(), y.data_ptr(), 16, 0, 0])]


def test_a_grid_outside_32_bits_is_never_wrapped(fake_gpu):
    """2**32 + 1 programs must not become 1: the builtin launches nothing (CUDA's
    INVALID_VALUE) and the general path raises, naming the kernel."""
    from tilejit.backends.cuda import native_launch as NL
    rec, make = fake_gpu
    fn = NL.native_launcher(TYPES, 128, 0, rec.address)
    values = [4096, 8192, 12288, 8, 1.0]
    for grid in ((2 ** 32 + 1, 1, 1), (1, 2 ** 32, 1), (1, 1, -1)):
        assert fn(CALLER_FN, *grid, 0, *values) == NL.INVALID_VALUE
    assert not rec.calls
    ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    run = make(ck)
    x, y, out = _tensors()
    head = (CALLER_FN, ck.packed_metadata, None, None, None, x, y, out, 8, 1.0, 64)
    run(1, 1, 1, STREAM, *head)                                    # arms the native launch
    for grid in ((2 ** 32 + 1, 1, 1), (1, 1, 2 ** 33 + 2)):
        with pytest.raises(ValueError, match=r"kernel 'scaled_add': grid \(.*\) is outside CUDA's grid"):
            run(*grid, STREAM, *head)
    assert len(rec.calls) == 1


def test_no_launch_synchronises(fake_gpu, monkeypatch):
    """The first launch (general path, which builds the native builtin) and the steady
    state neither synchronise a stream or context nor call torch's synchronize: a launch
    queued behind other work on the caller's stream returns at once."""
    rec, make = fake_gpu
    syncs = []
    for name in ("cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize", "cuMemcpyDtoH"):
        monkeypatch.setattr(_Cu, name, staticmethod(lambda *a, _n=name: syncs.append(_n) or (0,)),
                            raising=False)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: syncs.append("torch.cuda.synchronize"))
    ck = _compile(scaled_add, SIG, {"BLOCK": 64})
    run = make(ck)
    x, y, out = _tensors()
    for i in range(3):
        run(4, 1, 1, STREAM, CALLER_FN, ck.packed_metadata, None, None, None, x, y, out, 64, float(i), 64)
    assert [c["fn"] for c in rec.calls] == [DEVICE_FN, CALLER_FN, CALLER_FN]
    assert syncs == []


def test_no_launch_of_a_kernel_with_device_asserts_synchronises(fake_gpu, monkeypatch):
    """As above for a kernel with ``tl.device_assert`` (Inductor's index asserts: the
    embedding and gather rows): its first launch passes a null table and record and
    builds the native builtin, the steady state launches natively; nothing reads an
    error record, so nothing synchronises or copies back."""
    rec, make = fake_gpu
    syncs = []
    for name in ("cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize", "cuMemcpyDtoH",
                 "cuMemAlloc", "cuMemcpyHtoDAsync", "cuMemsetD8Async"):
        monkeypatch.setattr(_Cu, name, staticmethod(lambda *a, _n=name: syncs.append(_n) or (0,)),
                            raising=False)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: syncs.append("torch.cuda.synchronize"))
    ck = _compile(checked_copy, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                  {"BLOCK": 16})
    assert ck.kernel.reports and not ck.kernel.sanitize
    p32, p64 = IT.PointerType(IT.float32), IT.PointerType(IT.int64)
    types = [p32, p32, IT.int32, p64, p64]
    rec.sizes = [len(T.pack_param(t, 0)) for t in types]
    run = make(ck)
    x, y, _ = _tensors()
    for _ in range(3):
        run(1, 1, 1, STREAM, CALLER_FN, ck.packed_metadata, None, None, None, x, y, 16, 16)
    assert [c["fn"] for c in rec.calls] == [DEVICE_FN, CALLER_FN, CALLER_FN]
    want = [T.pack_param(t, v) for t, v in zip(types, [x.data_ptr(), y.data_ptr(), 16, 0, 0])]
    assert all(c["params"] == want for c in rec.calls)
    assert syncs == []
