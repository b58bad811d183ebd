"""``torch.compile(..., options={"cpu_backend": "triton"})`` on tilejit: the cases of
tests/torch_compile/models.py compiled by TorchInductor into Triton kernels, which
tilejit compiles and launches, compared with eager torch.

All cases run in one subprocess per backend (tests/torch_compile/runner.py), so the
``triton`` alias it installs never leaks into other tests and Inductor is imported
once.  The cpu backend runs every case; the interpreter a sample (it is slow on
20,000-long rows); cuda, where a GPU is present, every case on CUDA tensors.
"""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch.compile tests need torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "tests", "torch_compile", "runner.py")
sys.path.insert(0, os.path.dirname(RUNNER))
from models import CASES  # noqa: E402

INTERPRETER_SAMPLE = ("elementwise_broadcast", "softmax", "argmax_argmin", "issue741_scatter", "erf_family",
                      "mlp_training_step")
_RESULTS: dict = {}


def _run(backend, names, tmp):
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1", TORCHINDUCTOR_CACHE_DIR=tmp,
               TILEJIT_BACKEND=backend, TILEJIT_INTERPRET="1" if backend == "interpreter" else "0",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [sys.executable, RUNNER, *(["--device=cuda"] if backend == "cuda" else []), *names]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1500)
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("TORCH_COMPILE_CASE "):
            rec = json.loads(line.split(" ", 1)[1])
            out[rec["name"]] = rec
    missing = {n: {"ok": False, "error": f"runner exited {proc.returncode} before this case:\n"
                   f"{proc.stderr[-3000:]}"} for n in names if n not in out}
    return {**out, **missing}


def _results_once(backend, tmp_path_factory, shared):
    """Run the cases for ``backend`` once per session: under xdist the workers share one
    run through a file in the session's base directory (the first to ask runs it)."""
    names = list(INTERPRETER_SAMPLE) if backend == "interpreter" else list(CASES)
    if not shared:
        return _run(backend, names, str(tmp_path_factory.mktemp(f"inductor-{backend}")))
    from filelock import FileLock     # a dependency of torch
    path = tmp_path_factory.getbasetemp().parent / f"torch-compile-{backend}.json"
    with FileLock(str(path) + ".lock"):
        if not path.exists():
            got = _run(backend, names, str(tmp_path_factory.mktemp(f"inductor-{backend}")))
            path.write_text(json.dumps(got))
        return json.loads(path.read_text())


@pytest.fixture
def results(backend, tmp_path_factory, request):
    """The runner's record per case on ``backend``."""
    if backend not in _RESULTS:
        _RESULTS[backend] = _results_once(backend, tmp_path_factory,
                                          hasattr(request.config, "workerinput"))
    return _RESULTS[backend]


@pytest.mark.parametrize("name", list(CASES))
def test_torch_compile_matches_eager(backend, results, name):
    if backend == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")
    if name not in results:
        pytest.skip(f"{name} is not in the {backend} sample")
    if CASES[name].missing():
        pytest.skip(CASES[name].missing())
    rec = results[name]
    assert rec["ok"], f"{name} on {backend}:\n{rec['error']}"
