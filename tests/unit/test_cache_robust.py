"""Cache and runtime robustness end to end (real kernels, the CPU backend, the disk
cache in a temp dir): kernels redefined notebook-style with the same name, every
cache entry damaged between processes, several processes compiling the same
kernels at once.  (tests/unit/test_cache.py covers the FileCache itself: corrupt
and truncated entries, read-only directories, concurrent writers.)"""
import linecache
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilejit
from tilejit.runtime.options import use_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNEL = '''
import tilejit
import tilejit.language as tl


@tilejit.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * FACTOR, mask=m)
'''

WORKER = '''
import importlib.util, sys
import numpy as np
from tilejit.runtime import cache as C
C._FINGERPRINT[:] = ["pinned"]     # other engineers' edits must not change it mid-test
spec = importlib.util.spec_from_file_location("kmod", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
from tilejit.runtime.cache import get_cache
x = np.arange(1000, dtype=np.float32)
y = np.zeros_like(x)
for _ in range(int(sys.argv[2])):
    mod.scale[(8,)](x, y, 1000, BLOCK=128)
factor = float(y[1])
ok = np.array_equal(y, x * np.float32(factor))
c = get_cache()
print(factor, ok, c.stats.get("hits", 0), c.stats.get("corrupt", 0))
'''


def _kernel_source(factor):
    return KERNEL.replace("FACTOR", repr(float(factor)))


def _run(tmp_path, module_path, repeats=1, cache_dir=None):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TILEJIT_CACHE_DIR=str(cache_dir or tmp_path / "cache"), TILEJIT_BACKEND="cpu")
    env.pop("TILEJIT_INTERPRET", None)
    return subprocess.Popen([sys.executable, str(worker), str(module_path), str(repeats)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _result(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    factor, ok, hits, corrupt = out.split()
    return float(factor), ok == "True", int(hits), int(corrupt)


def test_notebook_redefinition_in_one_process(tmp_path):
    """Same cell file name, same kernel name, new source: the new kernel runs."""
    fname = "<ipython-input-7-cafe>"
    x = np.arange(64, dtype=np.float32)
    results = []
    with use_options(backend="cpu", interpret=False, cache_dir=str(tmp_path / "cache")):
        for factor in (2.0, 3.0, 2.0):
            src = _kernel_source(factor)
            linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
            ns: dict = {}
            exec(compile(src, fname, "exec"), ns)
            y = np.zeros_like(x)
            ns["scale"][(1,)](x, y, 64, BLOCK=64)
            results.append(y.copy())
    np.testing.assert_array_equal(results[0], x * 2)
    np.testing.assert_array_equal(results[1], x * 3)
    np.testing.assert_array_equal(results[2], x * 2)


def test_redefined_module_file_across_processes(tmp_path):
    """A later process with a rewritten file (same path, same kernel name) must not
    get the earlier process's compiled code from the disk cache."""
    path = tmp_path / "kernels.py"
    path.write_text(_kernel_source(2.0))
    f1, ok1, _, _ = _result(_run(tmp_path, path))
    path.write_text(_kernel_source(5.0))
    f2, ok2, _, _ = _result(_run(tmp_path, path))
    path.write_text(_kernel_source(2.0))
    f3, ok3, hits3, _ = _result(_run(tmp_path, path))
    assert (f1, f2, f3) == (2.0, 5.0, 2.0) and ok1 and ok2 and ok3
    assert hits3 >= 1                     # the first variant came back from the disk cache


@pytest.mark.parametrize("damage", ["truncate", "empty"])
def test_damaged_cache_entries_are_rebuilt_by_the_next_process(tmp_path, damage):
    path = tmp_path / "kernels.py"
    path.write_text(_kernel_source(4.0))
    cache = tmp_path / "cache"
    assert _result(_run(tmp_path, path))[:2] == (4.0, True)
    files = [os.path.join(r, f) for r, _, fs in os.walk(cache) for f in fs]
    assert files, "the first process stored nothing"
    for p in files:
        raw = open(p, "rb").read()
        with open(p, "wb") as f:
            if damage == "truncate":
                f.write(raw[: len(raw) // 3])
            elif damage == "garbage":
                f.write(bytes((b * 7 + 13) & 0xFF for b in raw))
    factor, ok, _, corrupt = _result(_run(tmp_path, path))
    assert (factor, ok) == (4.0, True)
    assert corrupt >= 1
    factor, ok, hits, corrupt = _result(_run(tmp_path, path))   # and it was rebuilt
    assert (factor, ok, corrupt) == (4.0, True, 0) and hits >= 1


def test_concurrent_compilation_from_several_processes(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(_kernel_source(6.0))
    procs = [_run(tmp_path, path, repeats=3) for _ in range(4)]
    results = [_result(p) for p in procs]
    assert all(r[:2] == (6.0, True) and r[3] == 0 for r in results), results
    leftovers = [f for r, _, fs in os.walk(tmp_path / "cache") for f in fs if f.startswith(".tmp")]
    assert leftovers == []
    assert _result(_run(tmp_path, path))[2] >= 1        # a later process hits


def test_cache_dir_that_is_a_file_falls_back_with_one_warning(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    script = textwrap.dedent(f'''
        import warnings, numpy as np, importlib.util
        warnings.simplefilter("always")
        spec = importlib.util.spec_from_file_location("kmod", {str(tmp_path / "kernels.py")!r})
        mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
        x = np.arange(100, dtype=np.float32); y = np.zeros_like(x)
        with warnings.catch_warnings(record=True) as w:
            for b in (32, 64):
                mod.scale[(4,)](x, y, 100, BLOCK=b)
        print(np.array_equal(y, x * 7), sum("memory only" in str(m.message) for m in w))
    ''')
    (tmp_path / "kernels.py").write_text(_kernel_source(7.0))
    env = dict(os.environ, PYTHONPATH=ROOT, TILEJIT_CACHE_DIR=str(blocker / "sub"),
               TILEJIT_BACKEND="cpu")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "1"]


def test_jit_without_source_says_why():
    ns: dict = {}
    exec("import tilejit\ndef k(x_ptr):\n    pass\n", ns)
    with pytest.raises(tilejit.CompilationError) as ei:
        tilejit.jit(ns["k"])
    assert "source" in str(ei.value) and "'k'" in str(ei.value)
