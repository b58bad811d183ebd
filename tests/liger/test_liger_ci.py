"""CI: a fixed sample of Liger-Kernel 0.8.5's own tests through the ``triton`` alias, cpu.

Runs ``scripts/liger_tests.py`` over the tests listed in ``ci_sample.json`` (one small
test per kernel family: RMSNorm, LayerNorm, SwiGLU, GeGLU, RoPE, cross entropy, JSD,
fused linear cross entropy, GroupNorm, fused add+RMSNorm, Llama4 RoPE) and fails on a
regression: a test outside ``known_failing`` that does not pass, a wrong result, fewer
passes than ``pass_floor``.  Skips when liger-kernel 0.8.5, transformers or Liger's
test sources (the sdist, ``$TILEJIT_LIGER_SRC``) are missing.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAMPLE = HERE / "ci_sample.json"
sys.path.insert(0, str(ROOT / "scripts"))


def _liger_src():
    from liger_tests import LIGER_VERSION, find_src
    try:
        from importlib.metadata import PackageNotFoundError, version
        if version("liger-kernel") != LIGER_VERSION:
            pytest.skip(f"liger-kernel {LIGER_VERSION} is not installed")
    except PackageNotFoundError:
        pytest.skip(f"liger-kernel {LIGER_VERSION} is not installed")
    try:
        return find_src(None)
    except SystemExit as e:
        pytest.skip(str(e))


def test_liger_ci_sample(tmp_path):
    pytest.importorskip("torch", reason="Liger's tests need torch")
    pytest.importorskip("transformers", reason="Liger's tests import transformers")
    src = _liger_src()
    exp = json.loads(SAMPLE.read_text())
    out = tmp_path / "result.json"
    env = dict(os.environ, TILEJIT_CACHE_DIR=str(tmp_path / "cache"))
    for k in ("TILEJIT_BACKEND", "TILEJIT_INTERPRET"):
        env.pop(k, None)
    cmd = [sys.executable, str(ROOT / "scripts" / "liger_tests.py"), "--src", str(src),
           "--backend", "cpu", "--jobs", "1", "--timeout", "300", "--quiet", "--out", str(out),
           "--check", str(SAMPLE), "--dirs", *exp["tests"]]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    print(proc.stdout[-6000:])
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert len(result["outcomes"]) == len(exp["tests"]), sorted(result["outcomes"])
    assert proc.returncode == 0, "Liger regression:\n" + "\n".join(
        ln for ln in proc.stdout.splitlines() if ln.startswith("LIGER REGRESSION"))
