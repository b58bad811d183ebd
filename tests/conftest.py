"""Shared fixtures: ``backend`` runs a test body under every backend available here."""
import os

import numpy as np
import pytest

from tilejit.backends import available_backends
from tilejit.runtime.options import use_options

ALL_BACKENDS = ("interpreter", "cpu", "cuda")
# The CUDA backend's CPU tier: where no GPU runs the cuda parametrisation, every kernel a
# test compiles for the cpu backend is also compiled for sm_80 and sm_90 and its PTX
# assembled by ptxas where installed (tilejit/runtime/ptx_check.py).
# TILEJIT_PTX_CHECK=0 turns it off; another list of architectures replaces 80,90.
PTX_CHECK = os.environ.get("TILEJIT_PTX_CHECK", "80,90").strip()
if PTX_CHECK.lower() in ("0", "off", "no", "none"):
    PTX_CHECK = ""


@pytest.fixture(params=ALL_BACKENDS)
def backend(request):
    """Select each backend in turn for kernels launched inside the test."""
    name = request.param
    available = available_backends()
    if name not in available:
        pytest.skip(f"backend {name} not available on this machine")
    check = os.environ.get("TILEJIT_CHECK_ANALYSIS", "") == "1"
    ptx_check = PTX_CHECK if name == "cpu" and "cuda" not in available else ""
    # debug=True: every kernel a test compiles is verified after each pass and must
    # round-trip through the IR text form (tilejit.transforms.run_pipeline)
    with use_options(backend=name, interpret=(name == "interpreter"), check_analysis=check,
                     debug=True, ptx_check=ptx_check):
        yield name


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# ----------------------------------------------------------------- torch-less runs
# ``--record-torch-skips=FILE`` appends the node id of every test (or module) that skipped
# because torch is missing, one per line (duplicates possible across xdist workers).
# .ci/run runs the suite without torch first, then installs the CPU torch and runs only
# the recorded ids, so no test runs twice and none that needs torch goes unrun.
def pytest_addoption(parser):
    parser.addoption("--record-torch-skips", default="", metavar="FILE",
                     help="append the ids of tests skipped for lack of torch to FILE")


class _TorchSkipRecorder:
    def __init__(self, path):
        self.path = path

    def _record(self, report):
        if not report.skipped:
            return
        longrepr = report.longrepr
        reason = str(longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr)
        low = reason.lower()
        if "torch" in low and "cuda" not in low and "gpu" not in low:
            with open(self.path, "a") as f:
                f.write(report.nodeid + "\n")

    def pytest_runtest_logreport(self, report):
        self._record(report)

    def pytest_collectreport(self, report):
        self._record(report)


def pytest_configure(config):
    path = config.getoption("--record-torch-skips")
    if path:
        config.pluginmanager.register(_TorchSkipRecorder(path), "tilejit-torch-skips")


# ----------------------------------------------------------------- a poisoned CUDA context
# A kernel that faults (CUDA_ERROR_ILLEGAL_ADDRESS...) leaves the process's CUDA context
# unusable: every later launch in that process fails with the same error, far from the
# culprit.  After each test of a process that has used the GPU, the context is synchronised;
# if it is poisoned, the test that did it is named and the process ends (under xdist the
# worker is replaced by a fresh one, so the other tests still run), never a cascade.
def _cuda_context_error():
    """The error a synchronise of this process's CUDA contexts reports, or None (also
    when the process never used the GPU: nothing is initialised here)."""
    import sys
    drv = sys.modules.get("tilejit.backends.cuda.driver")
    err = drv.context_error() if drv is not None else None
    torch = sys.modules.get("torch")
    if err is None and torch is not None and torch.cuda.is_initialized():
        try:
            torch.cuda.synchronize()
        except RuntimeError as e:          # torch.AcceleratorError is one
            err = str(e).split("\n")[0]
    return err


@pytest.fixture(autouse=True)
def _cuda_context_guard(request):
    yield
    err = _cuda_context_error()
    if err is None:
        return
    msg = (f"{request.node.nodeid} left the CUDA context poisoned ({err}); every later GPU "
           "test in this process would fail, so the process stops here")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import sys
        sys.stderr.write("\n" + msg + "\n")
        sys.stderr.flush()
        os._exit(3)                      # xdist reports the crash and starts a fresh worker
    pytest.exit(msg, returncode=3)
