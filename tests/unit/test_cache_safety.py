"""Faults injected into the disk cache: entries copied between keys, garbage object
files inside valid frames, directories other users can write to, the size cap and
XDG_CACHE_HOME.  Each ends in a correct result or a clear warning, never a crash."""
import os
import shutil
import subprocess
import sys
import warnings

import pytest

from tilejit.runtime import cache as C
from tilejit.runtime.objcheck import check_object
from tilejit.runtime.options import Options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = '''
import sys, warnings
import numpy as np
warnings.simplefilter("always")
from tilejit.runtime import cache as C
C._FINGERPRINT[:] = ["pinned"]
import tilejit, tilejit.language as tl

@tilejit.jit
def scale(x_ptr, y_ptr, n, F: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * F, mask=m)

x = np.arange(1000, dtype=np.float32)
y = np.zeros_like(x)
f = float(sys.argv[1])
scale[(8,)](x, y, 1000, F=f, BLOCK=128)
assert np.array_equal(y, x * np.float32(f)), y[:4]
c = C.get_cache()
print("OK", c.stats["hits"], c.stats["corrupt"])
'''


def _run(tmp_path, factor, cache_dir):
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TILEJIT_CACHE_DIR=str(cache_dir), TILEJIT_BACKEND="cpu")
    env.pop("TILEJIT_INTERPRET", None)
    r = subprocess.run([sys.executable, str(worker), str(factor)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    _, hits, corrupt = r.stdout.split()
    return int(hits), int(corrupt), r.stderr


def _entries(cache_dir, ns):
    root = os.path.join(cache_dir, ns)
    return {f: os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def test_entries_copied_between_keys_and_garbage_objects_are_rebuilt(tmp_path):
    """Kernel A's entries planted under kernel B's keys (a SIGSEGV or the wrong kernel
    before entries carried their key), then garbage inside a valid frame (an LLVM
    abort before objects were checked): each run still computes B, reporting once."""
    d = tmp_path / "c"
    _run(tmp_path, 2.0, d)
    a_obj, a_ir = _entries(d, "obj"), _entries(d, "llir-opt")
    _run(tmp_path, 3.0, d)
    b_obj = {k: v for k, v in _entries(d, "obj").items() if k not in a_obj}
    b_ir = {k: v for k, v in _entries(d, "llir-opt").items() if k not in a_ir}
    assert b_obj and b_ir
    src_obj, src_ir = next(iter(a_obj.values())), next(iter(a_ir.values()))
    for p in b_obj.values():
        shutil.copyfile(src_obj, p)
    for p in b_ir.values():
        shutil.copyfile(src_ir, p)
    hits, corrupt, err = _run(tmp_path, 3.0, d)
    assert corrupt >= 1 and "written for another key" in err
    assert err.count("is unusable") == corrupt           # one report per damaged entry
    for key, p in b_obj.items():                           # right key, checksum, garbage inside
        with open(p, "wb") as f:
            f.write(C._encode(b"\x7fELF" + os.urandom(400), key, "obj"))
    hits, corrupt, err = _run(tmp_path, 3.0, d)
    assert corrupt == len(b_obj) and err.count("is unusable") == corrupt, err
    hits, corrupt, _ = _run(tmp_path, 3.0, d)                # rebuilt: plain hits again
    assert corrupt == 0 and hits >= 2


def _object():
    """A real relocatable object for this host (llvmlite)."""
    from llvmlite import ir
    from tilejit.backends.llvm import binding
    m = ir.Module(name="m")
    g = ir.GlobalVariable(m, ir.IntType(64), "g")
    g.initializer = ir.Constant(ir.IntType(64), 5)
    f = ir.Function(m, ir.FunctionType(ir.IntType(64), []), name="f")
    b = ir.IRBuilder(f.append_basic_block())
    b.ret(b.load(g))
    tm = binding.host_target_machine()
    return tm.emit_object(binding.parse_module(str(m), tm))


def test_check_object_accepts_real_objects_and_rejects_damage():
    obj = _object()
    assert check_object(obj) is None
    bad = [b"", b"junk", obj[:40], obj[:len(obj) // 2], b"\x7fELF" + bytes(200)]
    for i in (16, 18, 40, 58, 60, 62):          # e_type, e_machine, e_shoff, sizes, counts
        mutated = bytearray(obj)
        mutated[i] ^= 0x5A
        bad.append(bytes(mutated))
    for blob in bad:
        assert check_object(blob) is not None, blob[:64]


def test_key_bound_entries(tmp_path):
    c = C.FileCache(str(tmp_path / "k"))
    ka, kb = C.make_key("a"), C.make_key("b")
    c.put(ka, b"payload of a")
    shutil.copyfile(c.path(ka), _mkparent(c.path(kb)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert c.get(kb) is None and c.get(kb) is None
        assert c.get(ka) == b"payload of a"
        shutil.copyfile(c.path(ka), _mkparent(c.path(ka, "obj")))    # another namespace
        assert c.get(ka, "obj") is None
    msgs = [str(x.message) for x in w]
    assert sum("written for another key" in m for m in msgs) == 2, msgs
    assert not os.path.exists(c.path(kb))


def _mkparent(p):
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_directory_writable_by_others_is_refused(tmp_path, mode):
    d = tmp_path / "shared"
    good = C.FileCache(str(d))
    key = C.make_key("planted")
    good.put(key, b"planted by someone else")
    os.chmod(d, mode)
    c = C.FileCache(str(d))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert c.get(key) is None                  # never read from the shared directory
        c.put(C.make_key("mine"), b"mine")
        assert c.get(C.make_key("mine")) == b"mine"
    msgs = [str(x.message) for x in w if "memory only" in str(x.message)]
    assert len(msgs) == 1 and "writable by other users" in msgs[0] and oct(mode) in msgs[0]
    assert c.info()["memory_only"] is True
    assert not os.path.exists(c.path(C.make_key("mine")))


def test_new_directories_are_private(tmp_path):
    c = C.FileCache(str(tmp_path / "new" / "deep"))
    c.put(C.make_key(1), b"x")
    assert c.get(C.make_key(1)) == b"x" and not c.info()["memory_only"]


def test_size_cap_evicts_least_recently_used(tmp_path):
    cap = 20_000
    c = C.FileCache(str(tmp_path / "cap"), max_bytes=cap)
    keep = C.make_key("keep")
    c.put(keep, b"k" * 1000)
    for i in range(60):
        c.put(C.make_key(i), bytes(1000))
        assert c.get(keep) is not None           # used all along: never the oldest
        os.utime(c.path(C.make_key(i)), (i, i))  # mtimes ordered without sleeping
    info = c.info()
    assert info["bytes"] <= cap and info["max_bytes"] == cap and c.stats["evicted"] > 30
    assert c.get(keep) == b"k" * 1000 and c.get(C.make_key(59)) is not None
    assert c.get(C.make_key(0)) is None


def test_options_cache_dir_and_size_from_env():
    assert Options.from_env({"XDG_CACHE_HOME": "/x/y"}).cache_dir == "/x/y/tilejit"
    assert Options.from_env({"XDG_CACHE_HOME": "rel"}).cache_dir == ""      # XDG: absolute only
    assert Options.from_env({"XDG_CACHE_HOME": "/x", "TILEJIT_CACHE_DIR": "/t"}).cache_dir == "/t"
    assert Options.from_env({}).cache_max_bytes == 1 << 30
    assert Options.from_env({"TILEJIT_CACHE_SIZE": "500M"}).cache_max_bytes == 500 << 20
    assert Options.from_env({"TILEJIT_CACHE_SIZE": "0"}).cache_max_bytes == 0
    with pytest.raises(ValueError, match="TILEJIT_CACHE_SIZE"):
        Options.from_env({"TILEJIT_CACHE_SIZE": "lots"})


def test_cli_info_shows_xdg_dir_and_limit(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), TILEJIT_CACHE_SIZE="64M",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TILEJIT_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-m", "tilejit", "cache", "info"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert str(tmp_path / "tilejit") in r.stdout and f"limit {64 << 20} bytes" in r.stdout
    assert "location from XDG_CACHE_HOME" in r.stdout
