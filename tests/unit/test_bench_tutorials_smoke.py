"""bench/bench_tutorials_cuda.py: the AST filter that shares the tutorial kernels with
the bench, and ``--smoke``, which runs every tutorial row on the cpu backend (torch CPU
tensors, tiny shapes, tilejit only) and checks it against torch."""
import ast
import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "bench_tutorials_cuda.py")


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_tutorials_cuda_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod                 # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _run(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, BENCH, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=timeout)


def test_definitions_keep_kernels_at_their_lines():
    B = _bench_module()
    path = os.path.join(ROOT, "tests", "triton_scripts", "low_memory_dropout.py")
    orig = open(path).read().splitlines()
    kept = B.definitions_source(path).splitlines()
    assert len(kept) == len(orig)
    names = {n.name if hasattr(n, "name") else n.targets[0].id
             for n in ast.parse("\n".join(kept)).body if not isinstance(n, (ast.Import, ast.ImportFrom))}
    assert names == {"DEVICE", "_seeded_dropout", "seeded_dropout"}
    assert "import torch" in kept                         # lifted out of the try/except block
    for i, line in enumerate(kept):                        # what is kept is unchanged, in place
        assert line == "" or line == orig[i] or line == "import torch"
    assert not any(ln.startswith("output2 = ") for ln in kept)   # the script's own runs are gone


def test_smoke_every_tutorial_row_passes(tmp_path):
    pytest.importorskip("torch")
    B = _bench_module()
    out = tmp_path / "smoke.json"
    p = _run("--smoke", "--out", str(out))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    doc = json.loads(out.read_text())
    assert doc["meta"]["smoke"] and doc["meta"]["device"] == "cpu"
    rows = {r["key"]: r["tilejit"] for r in doc["results"]}
    assert set(rows) == set(B.BY_KEY)
    for key, r in rows.items():
        assert "error" not in r and r["ok"], (key, r)
        assert r["ms"] > 0 and r["err"] >= 0, (key, r)
    assert rows["vector_add"]["err"] == 0 and rows["dropout"]["err"] == 0
    assert abs(rows["dropout"]["kept"] - 0.5) < 0.03
    assert "| 09 persistent matmul |" in p.stdout            # the markdown table


def test_smoke_timeout_is_a_failure_row(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "t.json"
    p = _run("--smoke", "--only", "attention_causal", "--timeout", "1", "--out", str(out))
    assert p.returncode == 1
    (row,) = json.loads(out.read_text())["results"]
    assert not row["tilejit"]["ok"] and "timed out" in row["tilejit"]["error"]
    assert "FAIL: timed out" in p.stdout


def test_parent_compares_samples_and_tabulates(tmp_path):
    """The parent's two-implementation path on made-up child results: samples compared,
    ratio Triton ms / tilejit ms, failure rows in the table.  (``--smoke --pair`` runs
    the same path end to end with tilejit standing in for Triton.)"""
    torch = pytest.importorskip("torch")
    B = _bench_module()
    for impl, vals in (("tilejit", [1.0, 2.0, 3.5]), ("triton", [1.0, 2.25, 3.5])):
        (tmp_path / impl).mkdir()
        torch.save(torch.tensor(vals), tmp_path / impl / "vector_add.pt")
    tj = {"key": "vector_add", "shape": "fp32 n=3", "ms": 2.0, "kernel_ms": 1.0, "err": 0.0, "ok": True}
    tr = {"key": "vector_add", "shape": "fp32 n=3", "ms": 3.0, "kernel_ms": 1.25, "err": 0.0, "ok": True}
    row = B.combine("vector_add", tj, tr, B.compare(str(tmp_path), "vector_add"))
    assert row["max_abs_diff_vs_triton"] == 0.25 and row["triton_over_tilejit"] == 1.5
    assert row["triton_over_tilejit_kernels"] == 1.25
    assert B.compare(str(tmp_path), "dropout") is None
    bad = B.combine("dropout", {"key": "dropout", "ok": False, "error": "CompilationError: x"},
                    {"key": "dropout", "ok": False, "error": "timed out"}, None)
    table = B.markdown([row, bad], True).splitlines()
    assert table[0].startswith("| tutorial | shape; config | tilejit ms | Triton ms | Triton/tilejit |")
    assert table[2] == "| 01 vector add | fp32 n=3 | 2.0000 | 3.0000 | 1.50 | 1.25 | 0.25 | 0 | pass |"
    assert "FAIL: CompilationError: x" in table[3] and "Triton FAIL: timed out" in table[3]


def test_a_dead_child_fails_its_row_and_a_fresh_one_takes_the_rest(monkeypatch):
    """run_rows with made-up children: one hangs in b, one stops after c broke its CUDA
    context (exit status RESTART), one finishes; a child that dies before its first
    row (Triton not importable) fails every row once."""
    import time
    B = _bench_module()
    calls = []
    script = iter([({"a": {"key": "a", "ok": True}}, {"torch": "x"}, "timed out"),
                   ({"c": {"key": "c", "ok": False, "error": "CUDA error"}}, {"torch": "x"}, B.RESTART),
                   ({"d": {"key": "d", "ok": True}}, {"torch": "x"}, None),
                   ({}, {}, "child exited with status 1: ImportError")])

    def fake_child(impl, todo, ns, workdir, timeout):
        calls.append(list(todo))
        return next(script)
    monkeypatch.setattr(B, "run_child", fake_child)
    ns = type("NS", (), {"timeout": 90.0})()
    rows, versions = B.run_rows("tilejit", list("abcd"), ns, "/nonexistent", time.monotonic() + 100)
    assert calls == [list("abcd"), list("cd"), ["d"]]
    assert [rows[k]["ok"] for k in "abcd"] == [True, False, False, True]
    assert rows["b"]["error"] == "timed out" and rows["c"]["error"] == "CUDA error"
    rows, _ = B.run_rows("triton", list("ab"), ns, "/nonexistent", time.monotonic() + 100)
    assert len(calls) == 4 and all("ImportError" in rows[k]["error"] for k in "ab")
    rows, _ = B.run_rows("triton", list("ab"), ns, "/nonexistent", time.monotonic() + 1)
    assert len(calls) == 4 and all("budget" in rows[k]["error"] for k in "ab")
