"""The Liger plugin installs the ``triton`` alias before pytest imports the tested
project's root ``conftest.py`` (``pytest_load_initial_conftests``).  Liger's conftest
imports ``liger_kernel`` and so ``torch._inductor``, which probes for Triton once at
import; probed before the alias, Inductor's kernels for ``torch.compile`` named an
``AttrsDescriptor`` they never imported (a NameError on cpu, a SyntaxError on the H200:
26 of Liger's chunked-loss tests and 2 ``test_torch_compile_matches_eager`` failed).  A
stand-in project whose conftest records what it sees at import, run through the plugin
in a child pytest; the same project run without the plugin is the control."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = '''
import json, os, sys
import torch._inductor.runtime.hints as hints
from torch.utils._triton import has_triton_package
json.dump({"triton_found": has_triton_package(),
           "wrapper_is_function": callable(hints.AttrsDescriptorWrapper)
                                  and not isinstance(hints.AttrsDescriptorWrapper, type)},
          open(os.environ["PROBE_OUT"], "w"))
'''


def _probe(tmp_path, with_plugin):
    pytest.importorskip("torch")
    proj = tmp_path / ("with" if with_plugin else "without")
    (proj / "test").mkdir(parents=True)
    (proj / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (proj / "test" / "conftest.py").write_text(CONFTEST)
    (proj / "test" / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    out = proj / "probe.json"
    env = dict(os.environ, PROBE_OUT=str(out), PYTHONPATH=str(ROOT), TILEJIT_CACHE_DIR=str(tmp_path / "c"))
    plugin = ["-p", "tests.liger.plugin", "--conformance-backend", "cpu",
              "--conformance-log", str(proj / "log.jsonl")] if with_plugin else []
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin,
                           "--rootdir", str(proj), "-c", str(proj / "pyproject.toml"), str(proj / "test")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(out.read_text())


def test_conftest_sees_the_alias(tmp_path):
    assert _probe(tmp_path, True) == {"triton_found": True, "wrapper_is_function": True}


def test_control_without_the_plugin_sees_no_triton(tmp_path):
    pytest.importorskip("torch")
    try:
        import importlib.util
        if importlib.util.find_spec("triton") is not None and "tilejit" not in str(
                importlib.util.find_spec("triton").origin or ""):
            pytest.skip("a real Triton is installed: the control would find it")
    except (ImportError, ValueError):
        pass
    assert _probe(tmp_path, False)["triton_found"] is False
