"""Shared fixtures: ``backend`` runs a test body under every backend available here."""
import os

import numpy as np
import pytest

from tilejit.backends import available_backends
from tilejit.runtime.options import use_options

ALL_BACKENDS = ("interpreter", "cpu", "cuda")


@pytest.fixture(params=ALL_BACKENDS)
def backend(request):
    """Select each backend in turn for kernels launched inside the test."""
    name = request.param
    if name not in available_backends():
        pytest.skip(f"backend {name} not available on this machine")
    check = os.environ.get("TILEJIT_CHECK_ANALYSIS", "") == "1"
    # debug=True: every kernel a test compiles is verified after each pass and must
    # round-trip through the IR text form (tilejit.transforms.run_pipeline)
    with use_options(backend=name, interpret=(name == "interpreter"), check_analysis=check,
                     debug=True):
        yield name


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
