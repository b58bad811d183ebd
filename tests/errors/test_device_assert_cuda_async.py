"""``tl.device_assert`` on device arrays, on the GPU (skipped without a CUDA GPU and
torch with CUDA): such launches do not synchronise; a failing assert calls CUDA's
``__assertfail``, which prints the assert's file:line, kernel, block and thread and
traps, so the user's next synchronisation raises ("device-side assert triggered") and
tilejit's next launch raises CUDA_ERROR_ASSERT with what happened.  A trap ends the
CUDA context, so the failing part runs in a subprocess.  (Host arrays and sanitize
mode keep the synchronous report: tests/errors/test_sanitize_cuda.py.)"""
import os
import subprocess
import sys
import textwrap
import time

import pytest
from test_device_assert import _line, masked_assert

from tilejit.backends import get_backend
from tilejit.runtime.options import use_options

pytestmark = [pytest.mark.skipif(not get_backend("cuda").is_available(), reason="no CUDA GPU")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


def test_passing_assert_on_device_arrays_does_not_wait_for_the_gpu():
    torch = _torch()
    x = torch.arange(50, dtype=torch.int32, device="cuda")
    with use_options(backend="cuda", interpret=False):
        masked_assert[(4,)](x, 50, BLOCK=16)              # compile and load outside the timing
        torch.cuda.synchronize()
        torch.cuda._sleep(2_000_000_000)                  # about a second of GPU work queued
        t0 = time.perf_counter()
        masked_assert[(4,)](x, 50, BLOCK=16)
        queued = time.perf_counter() - t0
        torch.cuda.synchronize()
        assert (x == torch.arange(50, dtype=torch.int32, device="cuda")).all()
    assert queued < 0.2, f"the launch waited {queued:.3f} s for the GPU"


def test_failing_assert_traps_and_names_file_line_kernel():
    _torch()
    script = textwrap.dedent('''
        import sys, torch
        import tilejit
        from test_device_assert import masked_assert
        from tilejit.runtime.options import use_options
        x = torch.arange(50, dtype=torch.int32, device="cuda")
        with use_options(backend="cuda", interpret=False):
            masked_assert[(4,)](x, 50, BLOCK=16)
            torch.cuda.synchronize()
            print("clean", (x >= 0).all().item(), flush=True)
            x[41] = -5
            masked_assert[(4,)](x, 50, BLOCK=16)
            print("queued", flush=True)
            try:
                torch.cuda.synchronize()
                print("no-error", flush=True)
            except RuntimeError as e:
                print("sync raised", "device-side assert" in str(e), flush=True)
            try:
                masked_assert[(4,)](x, 50, BLOCK=16)
                print("relaunch-ok", flush=True)
            except RuntimeError as e:
                print("relaunch raised", "tl.device_assert failed" in str(e), flush=True)
    ''')
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + HERE)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    out, both = r.stdout.split("\n"), r.stdout + r.stderr
    assert "clean True" in out and "queued" in out, both
    assert "sync raised True" in out and "relaunch raised True" in out, both
    line = _line(masked_assert, "device_assert")
    assert f"test_device_assert.py:{line}: masked_assert: block: [2,0,0]" in both, both
    assert "Assertion `negative input` failed." in both, both
