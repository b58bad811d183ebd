"""The CPU backend's cache hook: optimized LLVM IR and object code reused across processes."""
import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("llvmlite")
from llvmlite import ir  # noqa: E402

from tilejit.runtime import cache as C  # noqa: E402


def _module(k: int) -> str:
    """i64 f(i64 n): sum_{i<n} (i * k) as a loop (something for the optimizer to do)."""
    i64 = ir.IntType(64)
    m = ir.Module(name="m")
    f = ir.Function(m, ir.FunctionType(i64, [i64]), name="f")
    entry, loop, done = f.append_basic_block("entry"), f.append_basic_block("loop"), f.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(i64)
    acc = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    acc.add_incoming(ir.Constant(i64, 0), entry)
    acc2 = b.add(acc, b.mul(i, ir.Constant(i64, k)))
    i2 = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(i2, loop)
    acc.add_incoming(acc2, loop)
    b.cbranch(b.icmp_signed("<", i2, f.args[0]), loop, done)
    b.position_at_end(done)
    b.ret(acc2)
    return str(m)


def _call(engine, n):
    return ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(engine.get_function_address("f"))(n)


def test_hit_skips_optimisation_and_codegen(tmp_path, monkeypatch):
    from tilejit.backends.llvm import binding
    tm = binding.host_target_machine()
    c = C.FileCache(str(tmp_path))
    eng, opt = C.cpu_compile_cached(_module(3), tm, cache=c)
    assert _call(eng, 10) == 3 * 45
    assert c.info()["namespaces"]["llir-opt"]["entries"] == 1
    assert c.info()["namespaces"]["obj"]["entries"] == 1
    calls = []
    monkeypatch.setattr(binding, "optimize", lambda *a: calls.append(a))
    c2 = C.FileCache(str(tmp_path))
    eng2, opt2 = C.cpu_compile_cached(_module(3), tm, cache=c2)
    assert calls == [] and opt2 == opt
    assert c2.stats["hits"] == 2
    assert _call(eng2, 100) == 3 * 4950
    eng3, _ = C.cpu_compile_cached(_module(5), tm, cache=c2)   # different IR: a miss
    assert len(calls) == 1


def test_corrupt_object_is_rebuilt(tmp_path):
    from tilejit.backends.llvm import binding
    tm = binding.host_target_machine()
    c = C.FileCache(str(tmp_path))
    C.cpu_compile_cached(_module(7), tm, cache=c)
    key = C.llvm_key(_module(7))
    for ns in ("obj", "llir-opt"):
        p = c.path(key, ns)
        raw = bytearray(open(p, "rb").read())
        raw[len(raw) // 2] ^= 0x55
        open(p, "wb").write(bytes(raw))
    c2 = C.FileCache(str(tmp_path))
    eng, _ = C.cpu_compile_cached(_module(7), tm, cache=c2)
    assert c2.stats["corrupt"] >= 1
    assert _call(eng, 4) == 7 * 6


def test_reused_by_another_process(tmp_path, monkeypatch):
    from tilejit.backends.llvm import binding
    # pin the compiler fingerprint: other engineers' edits must not change it mid-test
    monkeypatch.setattr(C, "_FINGERPRINT", ["pinned"])
    C.cpu_compile_cached(_module(11), binding.host_target_machine(), cache=C.FileCache(str(tmp_path)))
    script = textwrap.dedent(f'''
        import ctypes, sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_cache_llvm import _module, _call
        from tilejit.runtime import cache as C
        from tilejit.backends.llvm import binding
        binding.optimize = None          # would raise if called
        C._FINGERPRINT[:] = ["pinned"]
        c = C.FileCache({str(tmp_path)!r})
        eng, _ = C.cpu_compile_cached(_module(11), binding.host_target_machine(), cache=c)
        print(_call(eng, 3), c.stats["hits"])
    ''')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(11 * 3), "2"]
