"""TILEJIT_LOG_RECOMPILES explanations (tilejit.runtime.recompile)."""
import io
import types

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.runtime import recompile as R

NAMES = ["x_ptr", "n", "scale", "BLOCK"]


def key(args, consts, lopts=(), opt=0, backend="cpu"):
    return (tuple(args), tuple(consts), tuple(lopts), opt, backend)


BASE = key([("*fp32", 16, "cpu"), ("i32", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)])


def test_each_kind_of_change_is_named():
    cases = {
        "x_ptr: dtype *fp32 -> *fp16": key([("*fp16", 16, "cpu"), ("i32", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)]),
        "x_ptr: 16-byte aligned -> not 16-byte aligned": key([("*fp32", 0, "cpu"), ("i32", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)]),
        "n: divisible by 16 -> == 1": key([("*fp32", 16, "cpu"), ("i32", 1, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)]),
        "n: divisible by 16 -> not divisible by 16, != 1": key([("*fp32", 16, "cpu"), ("i32", 0, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)]),
        "n: dtype i32 -> i64": key([("*fp32", 16, "cpu"), ("i64", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)]),
        "BLOCK: constexpr 64 -> 128": key([("*fp32", 16, "cpu"), ("i32", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 128)]),
        "scale: fp32 -> None": key([("*fp32", 16, "cpu"), ("i32", 16, "cpu")], [("scale", None), ("BLOCK", 64)]),
        "launch options {} -> {'num_warps': 8}": key([("*fp32", 16, "cpu"), ("i32", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)], [("num_warps", 8)]),
        "backend cpu -> interpreter": key([("*fp32", 16, "cpu"), ("i32", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)], backend="interpreter"),
    }
    for want, new in cases.items():
        assert R.describe_changes(NAMES, BASE, new) == [want]


def test_closest_previous_key_and_ordinal():
    k2 = key([("*fp32", 16, "cpu"), ("i32", 0, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)])
    k3 = key([("*fp32", 0, "cpu"), ("i32", 0, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 64)])
    msg = R.explain("add", NAMES, [BASE, k2], k3)
    assert msg == "[tilejit] recompiling add (3rd specialization): x_ptr: 16-byte aligned -> not 16-byte aligned"


def test_log_recompile_only_after_the_first_compile():
    out = io.StringIO()
    launcher = types.SimpleNamespace(name="k", names=NAMES, cache={})
    R.log_recompile(launcher, BASE, file=out)
    assert out.getvalue() == ""
    launcher.cache[BASE] = object()
    new = key([("*fp32", 16, "cpu"), ("i32", 16, "cpu"), ("fp32", 0, "cpu")], [("BLOCK", 32)])
    R.log_recompile(launcher, new, file=out)
    assert out.getvalue() == "[tilejit] recompiling k (2nd specialization): BLOCK: constexpr 64 -> 32\n"


def test_keys_match_the_launcher():
    """The documented key layout is the launcher's: compile twice and compare."""
    pytest.importorskip("tilejit.runtime.launcher")

    @tilejit.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    x = np.zeros(64, np.float32)
    k[(1,)](x, 32, BLOCK=64)
    k[(1,)](x, 33, BLOCK=64)
    keys = list(k._launcher.cache)
    assert len(keys) == 2
    assert R.describe_changes(["x_ptr", "n", "BLOCK"], keys[0], keys[1]) == [
        "n: divisible by 16 -> not divisible by 16, != 1"]


def test_env_flag_end_to_end(tmp_path):
    pytest.importorskip("tilejit.runtime.launcher")
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = tmp_path / "s.py"
    script.write_text(
        "import numpy as np, tilejit, tilejit.language as tl\n"
        "@tilejit.jit\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n"
        "x = np.zeros(64, np.float32)\n"
        "k[(1,)](x, 32, BLOCK=64)\n"
        "k[(1,)](x, 32, BLOCK=64)\n"
        "k[(1,)](x, 1, BLOCK=64)\n"
        "k[(1,)](x.astype(np.float16), 1, BLOCK=64)\n"
        "k[(1,)](x, 32, BLOCK=32)\n")
    env = dict(os.environ, TILEJIT_LOG_RECOMPILES="1", TILEJIT_CACHE_DIR=str(tmp_path / "c"),
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [ln for ln in r.stderr.splitlines() if "recompiling" in ln]
    assert lines == [
        "[tilejit] recompiling k (2nd specialization): n: divisible by 16 -> == 1",
        "[tilejit] recompiling k (3rd specialization): x_ptr: dtype *fp32 -> *fp16",
        "[tilejit] recompiling k (4th specialization): BLOCK: constexpr 64 -> 32",
    ]
