"""Disk cache: checksums, atomic writes, concurrency, fallback, keys, CLI."""
import concurrent.futures as cf
import multiprocessing as mp
import os
import subprocess
import sys
import warnings

import pytest

import tilejit
from tilejit.runtime import cache as C
from tilejit.runtime.options import CudaTuning, Options, use_options


@pytest.fixture
def cache(tmp_path):
    return C.FileCache(str(tmp_path / "c"))


def test_roundtrip_and_layout(cache):
    key = C.make_key("a", 1)
    assert cache.get(key) is None
    cache.put(key, b"hello")
    assert cache.get(key) == b"hello"
    p = cache.path(key)
    assert p.startswith(cache.dir) and os.path.basename(p) == key
    raw = open(p, "rb").read()
    assert raw.endswith(b"hello") and raw.startswith(b"TJC2")
    assert cache.get(key, namespace="autotune") is None
    assert not [f for f in os.listdir(os.path.dirname(p)) if f.startswith(".tmp-")]


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage"])
def test_corrupt_entry_is_rebuilt(cache, damage):
    key = C.make_key("k", damage)
    cache.put(key, b"x" * 100)
    p = cache.path(key)
    raw = bytearray(open(p, "rb").read())
    if damage == "flip":
        raw[-5] ^= 0xFF
    elif damage == "truncate":
        raw = raw[:-10]
    elif damage == "empty":
        raw = b""
    else:
        raw = b"not a cache entry at all, longer than the header........."
    open(p, "wb").write(bytes(raw))
    assert cache.get(key) is None
    assert cache.stats["corrupt"] == 1 and not os.path.exists(p)
    cache.put(key, b"x" * 100)
    assert cache.get(key) == b"x" * 100


def test_info_and_clear(cache):
    for i in range(3):
        cache.put(C.make_key(i), b"abc")
    cache.put(C.make_key("t"), b"{}", namespace="autotune")
    info = cache.info()
    assert info["entries"] == 4 and info["namespaces"]["kernels"]["entries"] == 3
    assert cache.clear() == 4
    assert cache.info()["entries"] == 0 and cache.get(C.make_key(0)) is None


def test_bad_keys_rejected(cache):
    for k in ("", "../etc", "a/b", "a.b"):
        with pytest.raises(ValueError):
            cache.put(k, b"")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_dir_falls_back_to_memory_perm(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    os.chmod(d, 0o500)
    try:
        _check_fallback(str(d))
    finally:
        os.chmod(d, 0o700)


def test_unwritable_dir_falls_back_to_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    _check_fallback(str(blocker / "sub"))


def _check_fallback(d):
    c = C.FileCache(d)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c.put(C.make_key(1), b"one")
        c.put(C.make_key(2), b"two")
    msgs = [str(x.message) for x in w if "memory only" in str(x.message)]
    assert len(msgs) == 1
    assert c.get(C.make_key(1)) == b"one" and c.get(C.make_key(2)) == b"two"
    assert c.info()["memory_only"] is True


def _hammer(args):
    d, worker = args
    c = C.FileCache(d)
    out = []
    for i in range(40):
        key = C.make_key("shared", i % 5)
        payload = (f"payload-{i % 5}-" * 2000).encode()   # same key -> same bytes
        got = c.get(key)
        if got is None:
            c.put(key, payload)
            got = c.get(key)
        out.append(got == payload)
    return all(out), c.stats["corrupt"]


def test_concurrent_processes(tmp_path):
    d = str(tmp_path / "shared")
    ctx = mp.get_context("spawn")
    with cf.ProcessPoolExecutor(4, mp_context=ctx) as pool:
        results = list(pool.map(_hammer, [(d, w) for w in range(8)]))
    assert all(ok for ok, _ in results)
    assert sum(corrupt for _, corrupt in results) == 0
    c = C.FileCache(d)
    assert c.info()["entries"] == 5
    leftovers = [f for r, _, fs in os.walk(d) for f in fs if f.startswith(".tmp-")]
    assert leftovers == []


def test_make_key_is_deterministic_and_discriminating():
    assert C.make_key({"b": 1, "a": 2}) == C.make_key({"a": 2, "b": 1})
    assert C.make_key(1) != C.make_key("1")
    assert C.make_key((1, 2)) != C.make_key((2, 1))
    assert len(C.make_key()) == 64


@tilejit.jit
def _callee(x):
    return x + 1


@tilejit.jit
def _kernel(p, n):
    _callee(n)


@tilejit.jit
def _kernel_b(p, n):
    _callee(n)


def test_source_key_covers_callees(monkeypatch):
    k1 = C.kernel_source_key(_kernel)
    assert k1 == C.kernel_source_key(_kernel)
    monkeypatch.setattr(_callee, "src", _callee.src.replace("+ 1", "+ 2"))
    assert C.kernel_source_key(_kernel) != k1


def test_compile_key_parts():
    base = dict(jitfn=_kernel, signature={"p": "*fp32", "n": "i32"}, constexprs={},
                specialization={"p": (16, False), "n": (1, False)}, options=Options(),
                target="cpu")
    k = C.compile_key(**base)
    variants = [dict(signature={"p": "*fp16", "n": "i32"}), dict(constexprs={"B": 4}),
                dict(specialization={"p": (16, False), "n": (16, False)}),
                dict(options=Options(sanitize=True)), dict(target="cuda:sm_90"),
                dict(options=Options(cuda=CudaTuning(index_tiles=False))),
                dict(options=Options(cuda=CudaTuning(remat_min_saving=0))),
                dict(jitfn=_kernel_b)]
    for v in variants:
        assert C.compile_key(**{**base, **v}) != k, v
    # where the cache lives does not change what is compiled
    assert C.compile_key(**{**base, "options": Options(cache_dir="/x", dump_dir="/y")}) == k


def test_default_dir_from_options(tmp_path):
    with use_options(cache_dir=str(tmp_path / "here")):
        assert C.default_cache_dir() == str(tmp_path / "here")
        assert C.get_cache().dir == str(tmp_path / "here")
    with use_options(cache_dir=""):
        assert C.default_cache_dir().endswith(os.path.join(".cache", "tilejit"))


def test_cli_cache_info_clear(tmp_path):
    d = tmp_path / "cli"
    C.FileCache(str(d)).put(C.make_key(1), b"z")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TILEJIT_CACHE_DIR=str(d),
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "tilejit", "cache", "info"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert str(d) in r.stdout and "1 entries" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tilejit", "cache", "clear"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "removed 1" in r.stdout
    assert C.FileCache(str(d)).info()["entries"] == 0


def test_read_only_dir_still_serves_existing_entries(tmp_path, monkeypatch):
    c = C.FileCache(str(tmp_path / "ro2"))
    c.put(C.make_key("old"), b"from disk")

    def deny(*a, **k):
        raise PermissionError(13, "Read-only file system")
    monkeypatch.setattr(C.tempfile, "mkstemp", deny)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c.put(C.make_key("new"), b"in memory")
        c.put(C.make_key("new2"), b"in memory too")
    assert sum("memory only" in str(x.message) for x in w) == 1
    assert c.get(C.make_key("old")) == b"from disk"
    assert c.get(C.make_key("new")) == b"in memory"
    assert c.get(C.make_key("missing")) is None
