"""Streaming (non-temporal) stores of the CPU backend (backends/cpu/streaming.py): a
vector store with a known-true mask, 16-byte aligned, in contiguous runs of >= 256
bytes is streamable; a launch whose streamable stores write at least
``Options.cpu_stream_bytes`` runs the kernel's variant with those stores non-temporal.
Results stay bit-exact vs the interpreter (which checks the analysis facts) on both
sides of the threshold, with masked tails; 0 turns it off."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.backends.cpu import streaming
from tilejit.runtime.options import Options, use_options
from test_cpu_vectorize import COPY_T, SPEC, both, compile_ir, copy_kernel

pytestmark = pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")

NT = "!nontemporal"


@tilejit.jit
def add_rows_kernel(x, y, out, n_rows, stride, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    m = r < n_rows
    v = tl.load(x + r * stride + c, mask=m, other=0.0) + tl.load(y + r * stride + c, mask=m, other=0.0)
    tl.store(out + r * stride + c, v, mask=m)


ROWS_T = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n_rows": "i32", "stride": "i32"}
ROWS_SPEC = {"x": (16, False), "y": (16, False), "out": (16, False), "stride": (16, False)}


def _streams(kernel) -> bool:
    """The kernel has a streaming variant, and only that variant streams."""
    if kernel._streaming is None:
        return False
    assert NT not in kernel.asm["llir"]
    llir = kernel._streaming().asm["llir"]
    return NT in llir and "llvm.x86.sse.sfence" in llir


def _launched(kernel, f, grid, arrays, scalars):
    """``both`` (compiled == interpreted), and whether the launch ran the streaming variant."""
    seen = []
    if kernel._streaming is not None:
        real = kernel._streaming
        kernel._streaming = lambda: seen.append(1) or real()
    out = both(f, kernel, grid, arrays, scalars)
    return out, bool(seen)


@pytest.mark.parametrize("n", [4096, 4000, 37])
@pytest.mark.parametrize("threshold", [1, 4096 * 4, 1 << 52])
def test_copy_streams_bit_exact(n, threshold):
    """1: every launch streams; 16 KiB: the 16-program launches stream (1 KiB per
    program), the 1-program one does not; 2^52: never (no variant: more than 2^31 programs)."""
    spec = dict(SPEC, n=(16, False)) if n % 16 == 0 else SPEC
    f, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, spec, cpu_stream_bytes=threshold)
    assert _streams(k) == (threshold < 1 << 52)
    x = np.arange(4096, dtype=np.float32) * 1.5 - 7
    y = np.zeros(4096 + 64, np.float32)
    grid = (-(-n // 256),)
    out, streamed = _launched(k, f, grid, [x, y], [n])
    assert streamed == (threshold <= grid[0] * 1024)
    np.testing.assert_array_equal(out[1][:n], x[:n])
    assert (out[1][n:] == 0).all()


def test_zero_turns_streaming_off():
    assert Options.from_env({}).cpu_stream_bytes == -1
    assert Options.from_env({"TILEJIT_CPU_STREAM_BYTES": "64M"}).cpu_stream_bytes == 64 << 20
    assert Options.from_env({"TILEJIT_CPU_STREAM_BYTES": "0"}).cpu_stream_bytes == 0
    f, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, dict(SPEC, n=(16, False)), cpu_stream_bytes=0)
    assert not _streams(k) and k.stream_from > 2**31 - 1
    f, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, dict(SPEC, n=(16, False)))     # default: by the LLC
    assert _streams(k)
    limit = streaming.threshold_bytes(Options())
    assert limit == streaming.last_level_cache_bytes() * 3 // 4 > 0
    assert k.stream_from == -(-limit // 1024)


@pytest.mark.parametrize("bc, streams", [(64, True), (32, False)])
def test_rows_stream_only_when_runs_are_long(bc, streams):
    """Rows of 64 fp32 (256 bytes, 4 lines) stream; rows of 32 (128 bytes) do not."""
    f, k = compile_ir(add_rows_kernel, ROWS_T, {"BR": 8, "BC": bc}, ROWS_SPEC, cpu_stream_bytes=1)
    assert _streams(k) == streams
    rows, stride = 21, 80                          # masked last block; gaps between rows kept
    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal(rows * stride).astype(np.float32) for _ in range(2))
    out = np.full(rows * stride, 3.0, np.float32)
    outs, streamed = _launched(k, f, (-(-rows // 8),), [x, y, out], [rows, stride])
    assert streamed == streams
    got = outs[2].reshape(rows, stride)
    np.testing.assert_array_equal(got[:, :bc], (x + y).reshape(rows, stride)[:, :bc])
    assert (got[:, bc:] == 3.0).all()


def test_unaligned_pointers_do_not_stream():
    f, k = compile_ir(copy_kernel, COPY_T, {"BLOCK": 256}, {}, cpu_stream_bytes=1)
    assert not _streams(k)


def test_jit_launch_streams_and_matches_numpy():
    """Through kernel[grid](...): a launch over the threshold, a masked tail, 2 threads."""
    n = (1 << 16) + 5
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    with use_options(backend="cpu", cpu_stream_bytes=1 << 16, num_threads=2):
        copy_kernel[(-(-n // 1024),)](x, y, n, BLOCK=1024)
    np.testing.assert_array_equal(y, x)
