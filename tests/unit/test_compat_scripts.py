"""The corpus in tests/triton_scripts/, each run through `python -m tilejit run`.

Every script checks its own results against numpy and prints ``PASS <name>`` (or
``SKIP ...`` when an optional dependency is missing); ``unsupported_*`` scripts must
fail with exit status 2 and a message naming the missing feature; the #741
reproducers must print the correct answer for both kernels.
"""
import concurrent.futures as cf
import glob
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "tests", "triton_scripts", "*.py")))
NAMES = [os.path.basename(s)[:-3] for s in SCRIPTS]


def _cuda_ready() -> bool:
    try:
        import torch
        from tilejit.backends import available_backends
        return torch.cuda.is_available() and "cuda" in available_backends()
    except ImportError:
        return False


def _run(path, cache_dir, extra_env=None):
    env = dict(os.environ, TILEJIT_CACHE_DIR=cache_dir, TILEJIT_COMPILE_WORKERS="0",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **(extra_env or {}))
    return subprocess.run([sys.executable, "-m", "tilejit", "run", path], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    """Run the scripts of the selected tests (the whole corpus in a full run) once, two
    at a time."""
    cache_dir = str(tmp_path_factory.mktemp("cache"))
    selected = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is request.module and callspec is not None and "name" in callspec.params:
            selected.add(callspec.params["name"])
    with cf.ThreadPoolExecutor(2) as pool:
        futs = {n: pool.submit(_run, p, cache_dir) for n, p in zip(NAMES, SCRIPTS)
                if n in selected and (n != "issue741_cuda" or _cuda_ready())}
        return {n: f.result() for n, f in futs.items()}


def _expect_741(out: str):
    dev = r"(?:,\s*device='[^']*')?"
    tensors = re.findall(r"tensor\(\[([^\]]*)\]" + dev + r"\)", out)
    sums = re.findall(r"tensor\(([0-9.e+]+)" + dev + r"\)", out)
    assert len(tensors) == 3 and len(sums) == 2, out
    want = [float(v) for v in range(981, 991)]
    for t in tensors:   # scatter reference, kernel1, kernel2 (the one Triton got wrong)
        assert [float(v) for v in t.split(",")] == want, out
    assert [float(s) for s in sums] == [2001000.0, 2001000.0], out


@pytest.mark.parametrize("name", NAMES)
def test_script(results, name):
    if name == "issue741_cuda" and not _cuda_ready():
        pytest.skip("needs torch with CUDA and the cuda backend")
    r = results[name]
    if name.startswith("unsupported_"):
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert "unsupported Triton feature" in r.stderr and "tilejit does not support `" in r.stderr
        assert "Traceback" not in r.stderr
        return
    if name == "issue741_torch_cpu" and importlib.util.find_spec("torch") is None:
        assert r.returncode != 0 and "No module named 'torch'" in r.stderr, (r.stdout, r.stderr)
        pytest.skip("needs torch (the script imports tilejit.compat.cputorch)")
    assert r.returncode == 0, r.stderr[-3000:]
    if name.startswith("issue741"):
        _expect_741(r.stdout)
        return
    skipped = re.search(rf"^SKIP {re.escape(name)}: (.*)$", r.stdout, re.M)
    if skipped and f"PASS {name}" not in r.stdout:
        pytest.skip(f"the script skipped itself: {skipped.group(1)}")
    assert f"PASS {name}" in r.stdout, r.stdout


def test_issue741_on_interpreter(tmp_path):
    r = _run(os.path.join(ROOT, "tests", "triton_scripts", "issue741_numpy.py"), str(tmp_path),
             {"TILEJIT_INTERPRET": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    _expect_741(r.stdout)


def test_issue741_scripts_differ_from_the_seed_only_in_imports():
    seed_path = os.path.join(ROOT, "..", "shared", "seed", "triton-issue-741.txt")
    if not os.path.exists(seed_path):
        pytest.skip("seed text not present")
    seed = open(seed_path).read()
    start = seed.index("from ctypes import c_void_p")
    end = seed.index("    call(arg4_1, arg7_1)") + len("    call(arg4_1, arg7_1)")
    strip = lambda lines: [ln for ln in lines if not ln.strip().startswith(("import ", "from "))
                           and not ln.startswith("#")]
    want = strip(seed[start:end].splitlines())
    for name in ("issue741_numpy", "issue741_torch_cpu", "issue741_cuda"):
        got = strip(open(os.path.join(ROOT, "tests", "triton_scripts", name + ".py")).read().splitlines())
        assert got == want, name
