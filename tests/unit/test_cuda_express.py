"""kernel[grid](...) with torch CUDA tensors through the express lane (CUDA runner):
repeated launches stay right while dtype, alignment, int specialization, constexprs,
streams and sanitize mode change.  Skipped without a CUDA GPU (CI)."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.runtime.options import use_options

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")


@tilejit.jit
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, a * tl.load(x_ptr + i, m) + tl.load(y_ptr + i, m), m)


def _check(dtype, n, a, offset=0, block=256):
    x = torch.randn(n + offset, device="cuda").to(dtype)[offset:]
    y = torch.randn(n + offset, device="cuda").to(dtype)[offset:]
    out = torch.full_like(x, float("nan"))
    for _ in range(4):                       # first launch: general path; then the lane
        out.fill_(float("nan"))
        axpy[(triton_cdiv(n, block),)](x, y, out, a, n, BLOCK=block)
        torch.testing.assert_close(out.float(), (a * x.float() + y.float()).to(dtype).float(),
                                   rtol=2e-3 if dtype != torch.float32 else 1e-6, atol=1e-3)


def triton_cdiv(a, b):
    return -(-a // b)


def test_repeated_launches_follow_every_change():
    with use_options(backend="cuda"):
        for dtype in (torch.float32, torch.float16, torch.float32):
            for n, a, offset, block in ((1000, 2.0, 0, 256), (1000, 2.0, 1, 256), (1, 1.0, 0, 64),
                                        (4096, -0.5, 0, 1024), (1000, 2.0, 0, 256)):
                _check(dtype, n, a, offset, block)


def test_launches_on_a_side_stream():
    with use_options(backend="cuda"):
        s = torch.cuda.Stream()
        x = torch.randn(1 << 20, device="cuda")
        out = torch.empty_like(x)
        _check(torch.float32, 100, 3.0)       # fill the lane
        with torch.cuda.stream(s):
            for _ in range(3):
                axpy[(1024,)](x, x, out, 1.0, x.numel(), BLOCK=1024)
        s.synchronize()
        torch.testing.assert_close(out, 2 * x)


def test_sanitize_mode_is_not_taken_by_the_lane():
    with use_options(backend="cuda"):
        _check(torch.float32, 100, 3.0)
    with use_options(backend="cuda", sanitize=True):
        x = torch.randn(100, device="cuda")
        out = torch.empty_like(x)
        for _ in range(3):
            axpy[(1,)](x, x, out, 1.0, 100, BLOCK=128)
        torch.testing.assert_close(out, 2 * x)
        with pytest.raises(tilejit.OutOfBoundsError):
            axpy[(1,)](x, x, out, 1.0, 128, BLOCK=128)
