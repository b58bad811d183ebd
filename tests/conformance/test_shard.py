"""``scripts/conformance.py --shard I/N``: the N parts partition any selection, the split
does not depend on order, and ``--merge`` of the parts' results counts every test once
(a test not reached in one run and run in another counts with its outcome)."""
import importlib.util
import json
from pathlib import Path

import pytest

from tests.conformance import harness

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("tj_conformance_script_shard",
                                                  ROOT / "scripts" / "conformance.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parts_partition_the_selection():
    ids = [f"test_core.py::test_bin_op[int{w}-{i}]" for w in (8, 16, 32) for i in range(300)]
    parts = [[t for t in ids if harness.in_part(t, f"{i}/5")] for i in range(5)]
    assert sorted(sum(parts, [])) == sorted(ids)
    assert all(120 < len(p) < 240 for p in parts), [len(p) for p in parts]
    assert [t for t in reversed(ids) if harness.in_part(t, "3/5")] == parts[3][::-1]
    assert all(harness.in_part(t, "0/1") for t in ids)
    with pytest.raises(ValueError, match="I/N"):
        harness.in_part(ids[0], "5/5")


def test_merge_counts_each_test_once(tmp_path):
    conf = _script()

    def part(shard, outcomes):
        return {"command": f"run {shard}", "backend": "cuda", "device": "cuda", "sample": 1,
                "shard": shard, "seconds": 10.0,
                "outcomes": {t: {"id": t, "outcome": o} for t, o in outcomes.items()}}
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    rerun = tmp_path / "c.json"
    a.write_text(json.dumps(part("0/2", {"t1": "pass", "t2": "not_run"})))
    b.write_text(json.dumps(part("1/2", {"t3": "fail", "t4": "pass"})))
    rerun.write_text(json.dumps(part("0/2", {"t2": "pass", "t1": "not_run"})))
    out = tmp_path / "merged.json"
    assert conf.main(["--merge", str(a), str(b), str(rerun), "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["counts"] == {"fail": 1, "pass": 3}
    assert res["applicable"] == 4 and not res["partial"]
    assert res["shard"] == "0/2+1/2+0/2"
