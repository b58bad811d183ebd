"""bench/bench_corpus_cuda.py ``--device cpu --smoke``: Liger-Kernel's kernels, imported from
the installed package, run forward and backward on the cpu backend (tiny shapes, tilejit
only) and agree with eager torch in float64; Triton's tutorial rows and an Inductor row
(the output module Inductor writes for tests/torch_compile/models.py's embedding case)
agree with torch.  Skips without torch or liger-kernel 0.8.5."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "bench_corpus_cuda.py")
ROWS = ("liger_rms_norm", "liger_swiglu", "liger_cross_entropy", "liger_jsd", "liger_layer_norm_bwd",
        "tutorial_matmul_03", "tutorial_layer_norm_fwd", "inductor_embedding")


def test_smoke_liger_rows_pass(tmp_path):
    pytest.importorskip("torch")
    from importlib.metadata import PackageNotFoundError, version
    try:
        if version("liger-kernel") != "0.8.5":
            pytest.skip("liger-kernel 0.8.5 is not installed")
    except PackageNotFoundError:
        pytest.skip("liger-kernel 0.8.5 is not installed")
    out = tmp_path / "smoke.json"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TILEJIT_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, BENCH, "--device", "cpu", "--smoke", "--only", ",".join(ROWS),
                        "--timeout", "600", "--out", str(out)],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    doc = json.loads(out.read_text())
    assert doc["meta"]["smoke"] and doc["meta"]["device"] == "cpu"
    assert doc["meta"]["liger-kernel"] == "0.8.5"
    rows = {r["key"]: r for r in doc["results"]}
    assert set(rows) == set(ROWS)
    for key, r in rows.items():
        assert r["tilejit"]["ok"] and r["tilejit"]["ms"] > 0, (key, r)
        upstream = {"tutorial": "triton 3.6: python/tutorials/", "liger": "liger-kernel 0.8.5: liger_kernel/ops/",
                    "inductor": "TorchInductor output (torch "}[key.split("_")[0]]
        assert r["script"].startswith(upstream), r["script"]
    # no Triton in a smoke run: the Inductor row's code was captured under tilejit, and says so
    emb = rows["inductor_embedding"]["tilejit"]
    assert emb["inductor_source"] == "captured under tilejit (no Triton capture)" and emb["kernels"] >= 1
    assert "| Liger SwiGLU fwd+bwd |" in p.stdout
    assert "| Triton 03 matmul (% M, no hints) |" in p.stdout
