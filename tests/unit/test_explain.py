"""``TILEJIT_EXPLAIN=1`` / ``python -m tilejit explain`` (tilejit/analysis/explain.py): the
path of each load, store, dot and reduction, and where a faster one was not taken, the
fact not proven and the source location it was lost at.  No GPU needed (cuda: PTX only)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import tilejit
import tilejit.language as tl
from tilejit.analysis.explain import explain
from tilejit.runtime.options import Options, use_options

from test_range_version import _gelu, _t03_cuda

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T03 = os.path.join(ROOT, "tests", "triton_scripts", "matmul_tutorial03.py")


def _where(path, needle):
    """``path:line:col`` of the expression starting after ``needle``'s ``=`` on its line."""
    for i, line in enumerate(open(path).read().splitlines(), 1):
        if needle in line:
            return f"{path}:{i}:{line.index('=', line.index(needle)) + 2}"
    raise AssertionError(needle)


@tilejit.jit
def rows(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + row * BLOCK + offs, tl.sum(x, axis=0) + x)


ROWS_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "stride": "i32", "n": "i32"}


def test_option_is_read_from_the_environment():
    assert Options.from_env({"TILEJIT_EXPLAIN": "1"}).explain
    assert not Options.from_env({}).explain


def test_compile_prints_the_report_when_on(capsys):
    tilejit.compile(rows, ROWS_SIG, dict(BLOCK=256), ["x_ptr", "y_ptr", "stride", "n"], target="cuda:90",
                    options=Options(explain=True))
    err = capsys.readouterr().err
    assert err.startswith("tilejit explain: rows (cuda)")
    assert err.count("4 lanes x 4 B per access (16-byte aligned)") == 2
    assert "reduce sum over axis 0 of <256>" in err
    tilejit.compile(rows, ROWS_SIG, dict(BLOCK=256), ["x_ptr", "y_ptr"], target="cuda:90")
    assert capsys.readouterr().err == ""


def test_unspecialised_arguments_are_named():
    k = tilejit.compile(rows, ROWS_SIG, dict(BLOCK=256), ["x_ptr", "y_ptr"], target="cuda:90")
    load = [ln for ln in explain(k, k.func).splitlines() if "tl.load" in ln][0]
    assert "1 lane x 4 B per access" in load
    assert "16-byte alignment not proven: `stride` not specialised" in load
    assert "the mask is not proven constant over 4 lanes, lost at arith.cmp" in load
    assert "`n` not specialised as one" in load


def test_bias_load_blames_the_remainder_without_the_grid_bound():
    k = _gelu()
    bounded = explain(k, k.func)
    assert "(cuda, facts for grids of at most (1048576, 65535, 65535) programs)" in bounded
    assert bounded.count("8 lanes x 2 B per access (16-byte aligned)") == 3
    free = explain(k._general(), k.func)
    here = _where(os.path.join(ROOT, "tests", "shared_kernels.py"), "b = tl.load(bias_ptr")
    line = [ln for ln in free.splitlines() if "1 lane" in ln]
    assert len(line) == 1
    path, lineno, _col = here.rsplit(":", 2)
    assert f"lost at arith.rem at {path}:{lineno}:" in line[0]
    assert "x may be negative (range [-2147483648, 2147483647])" in line[0]


def test_tutorial03_reports_the_ring_and_the_fallback():
    k = _t03_cuda()
    text = explain(k, k.func)
    assert text.count("tl.dot 128x128x64: cp.async ring") == 1
    assert "register path: an operand pointer is not proved 16-byte contiguous and aligned " \
           "(the run-time fallback of a versioned loop)" in text
    assert "1 dot loop(s) versioned at run time" in text


def test_launch_prints_once_per_compiled_kernel(capsys):
    x = np.arange(2 * 256, dtype=np.float32)
    y = np.zeros_like(x)
    with use_options(backend="cpu", explain=True):
        rows[(2,)](x, y, 256, 256, BLOCK=256)
        rows[(2,)](x, y, 256, 256, BLOCK=256)
    err = capsys.readouterr().err
    assert err.count("tilejit explain: rows (cpu") == 1


SCRIPT = """
import numpy as np
import triton
import triton.language as tl


@triton.jit
def add_bias(x_ptr, bias_ptr, out_ptr, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    col = offs % C
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(bias_ptr + col))


x = np.arange(256, dtype=np.float32)
bias = np.arange(48, dtype=np.float32)
out = np.zeros_like(x)
add_bias[(4,)](x, bias, out, 48, BLOCK=64)
assert (out == x + bias[np.arange(256) % 48]).all()
print("PASS add_bias")
"""


def test_explain_command_runs_the_script_and_points_at_the_remainder(tmp_path):
    script = tmp_path / "add_bias.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TILEJIT_BACKEND="cpu")
    p = subprocess.run([sys.executable, "-m", "tilejit", "explain", str(script)], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "PASS add_bias" in p.stdout
    assert "tilejit explain: add_bias (cpu" in p.stderr
    # the cpu backend's bounded compile proves `offs % C` non-negative: 16-byte bias loads
    loads = [ln for ln in p.stderr.splitlines() if "tl.load" in ln]
    assert len(loads) == 2 and all("4 lanes x 4 B per access (16-byte aligned)" in ln for ln in loads)


def test_cuda_plan_reasons_for_dots_and_accesses():
    """On cuda the report gives each dot loop's planned strategy (backends/cuda/plan.py)
    and, where the plan's width is narrower than the proven one, why."""
    from tests.e2e.test_attention_rows import attn_rows
    sig = dict(Q="*fp16", K="*fp16", V="*fp16", sm_scale="fp32", Out="*fp16", M="*fp32", N_CTX="i32")
    cx = dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, CAUSAL=False, BF16=False)
    aligned = tilejit.compile(attn_rows, signature=sig, constexprs=cx, divisible_by_16=tuple(sig),
                              target="cuda:90", num_warps=8)
    text = explain(aligned, aligned.func)
    assert text.count("row ring (softmax rows in the accumulator layout, the dots' B tiles in a "
                      "3-stage cp.async ring, wgmma)") == 2
    loose = tilejit.compile(attn_rows, signature=sig, constexprs=cx, target="cuda:90", num_warps=8)
    text = explain(loose, loose.func)
    assert text.count("row region, softmax rows in the accumulator layout, 2 load(s) rotated a tile "
                      "ahead") == 2
    q = [ln for ln in text.splitlines() if "test_attention_rows.py:27:" in ln]
    assert len(q) == 1 and "8 lanes x 2 B per access (1-byte aligned); planned: 1 per access " \
                           "(a vector access needs an address aligned to its size)" in q[0]


def test_cuda_plan_notes_for_the_layer_norm_backward():
    """Tutorial 05's dx kernel on cuda: the hoisted branch loads and the remat plan."""
    from tests.shared_kernels import script_kernels
    fn = script_kernels("layer_norm.py")["_layer_norm_bwd_dx_fused"]
    sig = {"DX": "*fp16", "DY": "*fp16", "DW": "*fp16", "DB": "*fp16", "X": "*fp16", "W": "*fp16",
           "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"}
    k = tilejit.compile(fn, signature=sig, constexprs={"GROUP_SIZE_M": 64, "BLOCK_SIZE_N": 8192},
                        divisible_by_16=tuple(sig), target="cuda:90", num_warps=8)
    text = explain(k, k.func)
    assert "  2 load(s) of a branch issued before it" in text
    assert "values recomputed after 2 reduction(s) instead of held across them" in text
    assert ".minnctapersm 2" in text
