"""CI: a deterministic sample of Triton 3.6's own language tests through the alias, cpu.

Runs ``scripts/conformance.py --sample CI_SAMPLE`` in a subprocess and fails on a
regression against ``expected.json``: a test outside its known failures that does not
pass, a wrong result not listed there, or fewer passes than its recorded floor.  Tests
listed in ``known_hangs`` (a compile that hangs) are not run: each would cost its timeout.  A known
failure that now passes is printed, to be removed from the list
(``--write-expected tests/conformance/expected.json`` rewrites it from a run).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import harness

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXPECTED = HERE / "expected.json"


def _upstream_present() -> bool:
    try:
        return harness.upstream_dir().is_dir()
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not _upstream_present(), reason="Triton's upstream tests not found "
                    "(../shared/conformance/triton-3.6 or $TILEJIT_CONFORMANCE_DIR)")
def test_conformance_sample(tmp_path):
    pytest.importorskip("torch", reason="the upstream tests need torch")
    exp = json.loads(EXPECTED.read_text())
    out = tmp_path / "result.json"
    env = dict(os.environ, TILEJIT_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TILEJIT_BACKEND", None)
    env.pop("TILEJIT_INTERPRET", None)
    cmd = [sys.executable, str(ROOT / "scripts" / "conformance.py"), "--backend", "cpu",
           "--sample", str(exp["sample"]),
           "--stride", str(exp["stride"]), "--jobs", "2", "--timeout", "120", "--quiet",
           "--out", str(out), "--check", str(EXPECTED),
           "--exclude", *exp.get("known_hangs", [])]     # each would cost its whole timeout
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    print(proc.stdout[-6000:])
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, "conformance regression:\n" + "\n".join(
        ln for ln in proc.stdout.splitlines() if ln.startswith("CONFORMANCE REGRESSION"))
