"""Compile-time paths: stage texts that cost a code generation are made only when read,
rule tables resolve each op class once and notice changes, and the compile-time bench
runs (bench/bench_compile_time.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends import available_backends
from tilejit.backends.llvm import binding
from tilejit.ir import ops
from tilejit.ir.core import RuleTable
from tilejit.runtime.options import use_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
needs_cpu = pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")


@tilejit.jit
def _axpy(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@needs_cpu
@pytest.mark.parametrize("via", ["tilejit", "triton"])
def test_cpu_assembly_made_only_when_read(via, monkeypatch, tmp_path):
    emitted = []
    real = binding.emit_assembly
    monkeypatch.setattr(binding, "emit_assembly", lambda mod, tm: emitted.append(1) or real(mod, tm))
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "a": "fp32"}
    with use_options(cache_dir=str(tmp_path)):
        k = tilejit.compile(tilejit.jit(_axpy.fn), signature=sig, constexprs={"BLOCK": 64}, target="cpu")
        if via == "triton":
            from tilejit.compat.triton_api.compiler import CompiledKernel
            k = CompiledKernel(None, k, type("M", (), {"name": "axpy", "hash": ""})(), sig)
    assert emitted == []
    assert {"ttir", "ttir_opt", "llir", "llir-opt", "asm"} <= set(k.asm) and emitted == []
    assert "define" in k.asm["llir"] and emitted == []
    asm = k.asm["asm"]                                  # read: made now, once
    assert len(emitted) == 1 and "run_chunk" in asm
    assert k.asm["asm"] == asm and len(emitted) == 1
    if via == "tilejit":                                # and the kernel it came with runs
        x, y = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
        from tilejit.backends import LaunchArgs
        vals = [x.ctypes.data, y.ctypes.data, 100, 2.0]
        k.launch((2, 1, 1), LaunchArgs(vals, None, vals))
        np.testing.assert_array_equal(y, 2 * np.arange(100, dtype=np.float32) + 1)


def test_rule_table_resolves_once_and_notices_changes():
    t = RuleTable("test rules")
    t.register(ops.BinaryOp)(lambda: "binary")
    assert t.lookup(ops.AddOp)() == "binary"
    assert t.lookup(ops.AddOp)() == "binary"           # from the memo
    t.register(ops.AddOp)(lambda: "add")                # a more specific rule, registered later
    assert t.lookup(ops.AddOp)() == "add" and t.lookup(ops.MulOp)() == "binary"
    t.rules[ops.MulOp] = lambda: "mul"                  # direct edits (monkeypatch.setitem) too
    assert t.lookup(ops.MulOp)() == "mul"
    del t.rules[ops.MulOp]
    assert t.lookup(ops.MulOp)() == "binary"
    with pytest.raises(NotImplementedError, match="test rules: no rule for op"):
        t.lookup(ops.ProgramIdOp)


@needs_cpu
def test_compile_time_bench_runs(tmp_path):
    pytest.importorskip("torch")     # the bench loads the tutorials, whose modules import torch
    env = dict(os.environ, PYTHONPATH=ROOT, TILEJIT_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_compile_time.py"), "--reps", "1",
                        "--no-inductor", "--targets", "cpu,cuda:90", "--only", "vector add",
                        "--out", str(tmp_path)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    (path,) = [p for p in os.listdir(tmp_path) if p.startswith("compile-time-")]
    rows = json.load(open(tmp_path / path))["results"]
    assert [(x["target"], x["case"]) for x in rows] == [("cpu", "01 vector add"), ("cuda:90", "01 vector add")]
    for x in rows:
        assert x["cpu_s"] > 0 and x["warm_cache_cpu_s"] > 0
        assert x["stages_cpu_s"]["frontend"] > 0 and x["stages_cpu_s"]["llvm_opt"] > 0
        assert abs(sum(x["stages_cpu_s"].values()) - x["cpu_s"]) < 0.2 * x["cpu_s"] + 0.01
