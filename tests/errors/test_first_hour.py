"""The mistakes of a Triton user's first hour: each is an error at the user's
file:line:col that says what to do, and the traceback ends at the user's own call
(TILEJIT_TRACEBACK=1 brings tilejit's frames back)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.runtime.options import use_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_script(tmp_path, body, **env):
    """Run ``body`` as a script (its own process: an uncaught error's printed traceback)."""
    path = tmp_path / "user_script.py"
    path.write_text(textwrap.dedent(body))
    full_env = {k: v for k, v in os.environ.items() if k != "TILEJIT_TRACEBACK"}
    full_env.update(PYTHONPATH=ROOT, TILEJIT_CACHE_DIR=str(tmp_path / "cache"), **env)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=full_env,
                       cwd=str(tmp_path), timeout=120)
    return path, r


NOT_CONSTEXPR = """
    import numpy as np
    import tilejit
    import tilejit.language as tl

    @tilejit.jit
    def k(x_ptr, n, BLOCK):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, offs, mask=offs < n)

    k[(1,)](np.zeros(16, np.int32), 16, 16)
"""


def test_compile_error_shows_only_user_frames(tmp_path):
    path, r = _run_script(tmp_path, NOT_CONSTEXPR)
    assert r.returncode == 1
    err = r.stderr
    assert f"{path}:8:11: error in kernel 'k'" in err, err
    assert "declare it `BLOCK: tl.constexpr`" in err, err
    frames = [line for line in err.splitlines() if line.startswith('  File "')]
    # the user's call, then the launch's entry point; no frame inside tilejit's sources
    assert len(frames) == 2, err
    assert str(path) in frames[0] and "tilejit express lane" in frames[1], err
    assert os.path.join("tilejit", "") not in err.replace("tilejit express", ""), err


def test_traceback_env_brings_internal_frames_back(tmp_path):
    path, r = _run_script(tmp_path, NOT_CONSTEXPR, TILEJIT_TRACEBACK="1")
    assert r.returncode == 1
    assert os.path.join("tilejit", "language", "semantic_tile.py") in r.stderr, r.stderr
    assert os.path.join("tilejit", "runtime", "launcher.py") in r.stderr, r.stderr
    assert "declare it `BLOCK: tl.constexpr`" in r.stderr


def test_run_entry_point_trims_too():
    @tilejit.jit
    def k(x_ptr, BLOCK):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1)

    with use_options(traceback=False):
        with pytest.raises(tilejit.CompilationError) as info:
            k.run(np.zeros(8, np.int32), 8, grid=(1,))
    frames = [f for f in info.traceback if "tilejit" + os.sep in str(f.path)]
    assert len(frames) <= 1, frames       # JITFunction.run itself, nothing below it
    cause = info.value.__cause__          # kept for Triton's API (e.__cause__), frameless
    assert info.value.__suppress_context__
    assert cause is None or (cause.__traceback__ is None and cause.__cause__ is None)


def test_non_constexpr_block_shape_names_the_parameter():
    @tilejit.jit
    def k(x_ptr, R, C: tl.constexpr):
        z = tl.zeros((R, C), tl.float32)
        tl.store(x_ptr + tl.arange(0, C), tl.sum(z, 0))

    with pytest.raises(tilejit.CompilationError) as info:
        k[(1,)](np.zeros(8, np.float32), 4, C=8)
    msg = str(info.value)
    assert "declare it `R: tl.constexpr`" in msg
    assert "tl.zeros((R, C), tl.float32)" in msg


def test_fstring_of_a_tensor_is_rejected_with_the_fix():
    @tilejit.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        print(f"x={x}")

    with pytest.raises(tilejit.CompilationError) as info:
        k[(1,)](np.zeros(8, np.float32), BLOCK=8)
    msg = str(info.value)
    assert 'print(f"x={x}")' in msg and "tl.device_print" in msg and "tl.static_print" in msg
    assert info.value.line == k.first_line + 3


def test_fstring_of_constexpr_values_still_formats(capsys):
    @tilejit.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.static_print(f"BLOCK={BLOCK}")
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    x = np.zeros(8, np.float32)
    k[(1,)](x, BLOCK=8)
    assert "BLOCK=8" in capsys.readouterr().out
    np.testing.assert_array_equal(x, np.ones(8, np.float32))


@pytest.mark.parametrize("make", [np.int32, np.int64, np.uint16], ids=lambda f: f.__name__)
def test_numpy_int_constexpr(backend, make):
    @tilejit.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, offs * 3, mask=offs < n)

    x = np.full(16, -1, np.int32)
    k[(1,)](x, 12, BLOCK=make(16))
    want = np.where(np.arange(16) < 12, np.arange(16) * 3, -1).astype(np.int32)
    np.testing.assert_array_equal(x, want)


def test_jit_rejects_unknown_keywords_with_a_suggestion():
    with pytest.raises(TypeError, match=r"'do_not_specialise' \(did you mean 'do_not_specialize'\?\)"):
        @tilejit.jit(do_not_specialise=["n"])
        def k(x_ptr, n):
            pass
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'; it accepts"):
        tilejit.jit(colour="red")


def test_jit_accepts_tritons_keywords():
    @tilejit.jit(do_not_specialize=["n"], launch_metadata=None, repr=None, version=None,
                 do_not_specialize_on_alignment=["n"])
    def k(x_ptr, n):
        tl.store(x_ptr + tl.arange(0, 4), n + 0 * tl.arange(0, 4))

    x = np.zeros(4, np.int32)
    k[(1,)](x, 7)
    np.testing.assert_array_equal(x, [7] * 4)


def test_cuda_arrays_without_cuda_bindings_say_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda", None)          # as if cuda-bindings were absent
    monkeypatch.delitem(sys.modules, "cuda.bindings", raising=False)
    monkeypatch.delitem(sys.modules, "cuda.bindings.driver", raising=False)

    class DeviceArray:      # a CUDA array as CuPy/torch export it (never dereferenced here)
        __cuda_array_interface__ = {"shape": (16,), "typestr": "<f4", "version": 3,
                                    "data": (0x7F0000000000, False), "strides": None}

    @tilejit.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    with use_options(backend="", interpret=False, traceback=False):
        with pytest.raises(ImportError) as info:
            k[(1,)](DeviceArray(), BLOCK=16)
    msg = str(info.value)
    assert "kernel 'k'" in msg and 'pip install "tilejit[cuda]"' in msg
    assert isinstance(info.value, tilejit.MissingDependencyError)
    assert not [f for f in info.traceback if "tilejit" + os.sep in str(f.path)]
