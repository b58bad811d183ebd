"""On-disk cache of compiled kernels and autotuning results.

Location: ``Options.cache_dir`` (``TILEJIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/tilejit``)
or ``~/.cache/tilejit``.  Size: at most ``Options.cache_max_bytes`` (``TILEJIT_CACHE_SIZE``,
default 1 GiB); past it the least recently used entries are removed.

Entries live in ``<dir>/<namespace>/<key[:2]>/<key>``.  Each file is a small header
(magic, a digest of its namespace and key, payload length, SHA-256 of key digest and
payload) followed by the payload bytes.  A reader checks that the entry was written
for the key and namespace it asked for and that the checksum matches, then runs the
namespace's validator (object files: :func:`check_object`); a corrupt, truncated,
misplaced or invalid entry is deleted, reported once (RuntimeWarning) and treated
as a miss, so the caller rebuilds it instead of trusting it.  Writes go to a temp
file in the same directory and are published with ``os.replace`` (atomic on POSIX),
so concurrent processes compiling the same kernel never see half-written entries:
the last writer wins with identical content.

If the directory cannot be created or written (read-only file system, permissions),
or other users could write to it (not owned by this user, or group/world writable:
they could plant machine code), the cache falls back to an in-memory dict and warns once.

Keys are hex SHA-256 digests built by :func:`make_key` from everything that affects
the output: :func:`kernel_source_key` (the kernel's source and every ``@jit`` callee
it reaches), tilejit's version, :func:`options_key`, the target and the
specialization (see :func:`compile_key`).
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import tempfile
import threading
import warnings

_MAGIC = b"TJC2"
# magic, sha256(namespace, key), payload length, sha256(key digest + payload)
_HEADER = struct.Struct("<4s32sQ32s")
# Options fields that only say where things go, not what is produced.
_NON_SEMANTIC_OPTIONS = frozenset({"cache_dir", "dump_dir", "num_threads", "cache_max_bytes",
                                   "kernel_cache_size"})


def default_cache_dir() -> str:
    from .options import get_options
    d = get_options().cache_dir
    return os.path.expanduser(d) if d else os.path.join(os.path.expanduser("~"), ".cache", "tilejit")


def _key_digest(key: str, namespace: str) -> bytes:
    return hashlib.sha256(f"{namespace}\0{key}".encode()).digest()


def _encode(payload: bytes, key: str = "", namespace: str = "kernels") -> bytes:
    kd = _key_digest(key, namespace)
    return _HEADER.pack(_MAGIC, kd, len(payload), hashlib.sha256(kd + payload).digest()) + payload


def _decode(blob: bytes, key: str = "", namespace: str = "kernels"):
    """``(payload, None)`` of a stored entry, or ``(None, why)`` when it is corrupt or
    was written for another key or namespace."""
    if len(blob) < _HEADER.size:
        return None, "truncated"
    magic, kd, n, digest = _HEADER.unpack_from(blob)
    payload = blob[_HEADER.size:]
    if magic != _MAGIC:
        return None, "not a tilejit cache entry (or an older format)"
    if kd != _key_digest(key, namespace):
        return None, "written for another key"
    if n != len(payload):
        return None, "truncated"
    if hashlib.sha256(kd + payload).digest() != digest:
        return None, "checksum mismatch"
    return payload, None


def unsafe_dir_reason(directory: str) -> str | None:
    """Why ``directory`` must not hold machine code this process will run (other users
    can write to it), or None when only this user (or root) can."""
    try:
        st = os.stat(directory)
    except OSError:
        return None          # absent: it will be created private (mode 0o700)
    if hasattr(os, "geteuid") and st.st_uid not in (os.geteuid(), 0):
        return f"the cache directory {directory} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return (f"the cache directory {directory} is writable by other users "
                f"(mode {oct(st.st_mode & 0o777)}; chmod go-w it)")
    return None


_REPORTED: set = set()


def _report_bad_entry(path: str, why: str) -> None:
    """One RuntimeWarning per damaged entry and process."""
    if path in _REPORTED:
        return
    _REPORTED.add(path)
    warnings.warn(f"tilejit: cache entry {path} is unusable ({why}); removed it, "
                  "recompiling", RuntimeWarning, stacklevel=4)


class MemoryCache:
    """The fallback store: same API as :class:`FileCache`, kept in this process."""

    def __init__(self, reason: str = ""):
        self.dir = None
        self.reason = reason
        self._data: dict[tuple[str, str], bytes] = {}
        self.stats = {"hits": 0, "misses": 0, "corrupt": 0, "writes": 0}

    def get(self, key: str, namespace: str = "kernels") -> bytes | None:
        v = self._data.get((namespace, key))
        self.stats["hits" if v is not None else "misses"] += 1
        return v

    def put(self, key: str, data: bytes, namespace: str = "kernels") -> None:
        self._data[(namespace, key)] = bytes(data)
        self.stats["writes"] += 1

    def delete(self, key: str, namespace: str = "kernels") -> None:
        self._data.pop((namespace, key), None)

    def info(self) -> dict:
        ns: dict[str, list] = {}
        for (n, _), v in self._data.items():
            e = ns.setdefault(n, [0, 0])
            e[0] += 1
            e[1] += len(v)
        return {"dir": None, "memory_only": True, "reason": self.reason,
                "namespaces": {k: {"entries": a, "bytes": b} for k, (a, b) in ns.items()},
                "entries": len(self._data), "bytes": sum(len(v) for v in self._data.values())}

    def clear(self) -> int:
        n = len(self._data)
        self._data.clear()
        return n


class FileCache:
    """A directory of checksummed entries; safe under concurrent processes.
    ``max_bytes``: size cap (0: none); past it the least recently used entries go."""

    def __init__(self, directory: str, max_bytes: int = 0):
        self.dir = os.path.abspath(directory)
        self.max_bytes = max_bytes
        self.stats = {"hits": 0, "misses": 0, "corrupt": 0, "writes": 0, "evicted": 0}
        self._fallback: MemoryCache | None = None
        self._lock = threading.Lock()
        self._checked = False     # the directory's ownership and mode (see _check_dir)
        self._size: int | None = None      # bytes on disk, once counted

    # -- paths -------------------------------------------------------------
    def path(self, key: str, namespace: str = "kernels") -> str:
        if not key or any(c in key for c in "/\\.") :
            raise ValueError(f"invalid cache key {key!r}")
        return os.path.join(self.dir, namespace, key[:2], key)

    # -- API -----------------------------------------------------------------
    def get(self, key: str, namespace: str = "kernels", validate=None) -> bytes | None:
        """The payload stored under ``key``, or None (missing or corrupt).
        ``validate(payload)`` returns why a payload that passed the checksum is still
        unusable (e.g. :func:`check_object`), or None."""
        self._check_dir()
        if self._fallback is not None:       # written since the fall-back: memory first
            v = self._fallback.get(key, namespace)
            if v is not None or self._fallback.reason.startswith("unsafe"):
                return v
        p = self.path(key, namespace)
        try:
            with open(p, "rb") as f:
                blob = f.read()
        except OSError:
            self.stats["misses"] += 1
            return None
        payload, why = _decode(blob, key, namespace)
        if payload is not None and validate is not None:
            why = validate(payload)
            payload = None if why else payload
        if payload is None:
            self.stats["corrupt"] += 1
            self.stats["misses"] += 1
            self._remove(p)
            _report_bad_entry(p, why)
            return None
        self.stats["hits"] += 1
        if self.max_bytes:
            self._touch(p)
        return payload

    def put(self, key: str, data: bytes, namespace: str = "kernels") -> None:
        """Store ``data`` under ``key`` atomically (temp file + ``os.replace``)."""
        self._check_dir()
        if self._fallback is not None:
            return self._fallback.put(key, data, namespace)
        p = self.path(key, namespace)
        blob = _encode(bytes(data), key, namespace)
        try:
            os.makedirs(os.path.dirname(p), mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(p))
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                os.replace(tmp, p)
            except BaseException:
                self._remove(tmp)
                raise
        except OSError as e:
            self._fall_back(f"cannot write to the cache directory {self.dir}: {e}")
            self._fallback.put(key, data, namespace)
            return
        self.stats["writes"] += 1
        if self.max_bytes:
            self._account(len(blob))

    def delete(self, key: str, namespace: str = "kernels") -> None:
        if self._fallback is not None:
            return self._fallback.delete(key, namespace)
        self._remove(self.path(key, namespace))

    def info(self) -> dict:
        out = {"dir": self.dir, "memory_only": self._fallback is not None, "namespaces": {},
               "entries": 0, "bytes": 0, "max_bytes": self.max_bytes}
        self._check_dir()
        if self._fallback is not None:
            out["memory_only"] = True
            out["reason"] = self._fallback.reason
        if not os.path.isdir(self.dir):
            return out
        for ns in sorted(os.listdir(self.dir)):
            n = size = 0
            for _, size_i, _ in self._entries(os.path.join(self.dir, ns)):
                n += 1
                size += size_i
            out["namespaces"][ns] = {"entries": n, "bytes": size}
            out["entries"] += n
            out["bytes"] += size
        return out

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        import shutil
        n = self.info()["entries"]
        if os.path.isdir(self.dir) and not self._unsafe():
            for ns in os.listdir(self.dir):
                full = os.path.join(self.dir, ns)
                if os.path.isdir(full):
                    shutil.rmtree(full, ignore_errors=True)
                else:
                    self._remove(full)
        if self._fallback is not None:
            n += self._fallback.clear()
        self._size = None
        return n

    # -- size cap ------------------------------------------------------------
    @staticmethod
    def _entries(root: str):
        """(mtime, bytes, path) of every entry under ``root``."""
        for d, _, files in os.walk(root):
            for fn in files:
                if fn.startswith(".tmp-"):
                    continue
                full = os.path.join(d, fn)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                yield st.st_mtime, st.st_size, full

    def _account(self, nbytes: int) -> None:
        """Count a write; past ``max_bytes`` evict down to 3/4 of it (oldest first)."""
        with self._lock:
            if self._size is None:
                self._size = sum(sz for _, sz, _ in self._entries(self.dir))
            else:
                self._size += nbytes
            if self._size <= self.max_bytes:
                return
            entries = sorted(self._entries(self.dir))
            total = sum(sz for _, sz, _ in entries)
            for _, sz, full in entries:
                if total <= self.max_bytes * 3 // 4:
                    break
                self._remove(full)
                total -= sz
                self.stats["evicted"] += 1
            self._size = total

    @staticmethod
    def _touch(p: str) -> None:
        """Mark an entry used now (eviction drops the least recently used first)."""
        try:
            os.utime(p)
        except OSError:
            pass

    # -- helpers -----------------------------------------------------------
    def _unsafe(self) -> bool:
        return self._fallback is not None and self._fallback.reason.startswith("unsafe")

    def _check_dir(self) -> None:
        """Once: refuse a directory other users can write to (memory only, one warning)."""
        if self._checked:
            return
        self._checked = True
        try:              # made private now, so nobody can create it between check and use
            os.makedirs(self.dir, mode=0o700, exist_ok=True)
        except OSError:
            pass          # unwritable: put() falls back to memory
        why = unsafe_dir_reason(self.dir)
        if why is not None:
            self._fall_back(f"unsafe: {why}")

    @staticmethod
    def _remove(p: str) -> None:
        try:
            os.unlink(p)
        except OSError:
            pass

    def _fall_back(self, reason: str) -> None:
        with self._lock:
            if self._fallback is None:
                warnings.warn(f"tilejit: {reason}; caching compiled kernels in memory only",
                              RuntimeWarning, stacklevel=4)
                self._fallback = MemoryCache(reason)


_caches: dict[str, FileCache] = {}
_caches_lock = threading.Lock()


def get_cache(directory: str | None = None) -> FileCache:
    """The cache for ``directory`` (default: :func:`default_cache_dir`), one per dir."""
    from .options import get_options
    d = os.path.abspath(directory or default_cache_dir())
    with _caches_lock:
        if d not in _caches:
            _caches[d] = FileCache(d, get_options().cache_max_bytes)
        return _caches[d]


# ---------------------------------------------------------------------------
# keys
# ---------------------------------------------------------------------------
def _stable(obj):
    """A deterministic JSON-able form of ``obj`` for hashing."""
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, dict):
        return [[_stable(k), _stable(v)] for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0]))]
    if isinstance(obj, (list, tuple)):
        return [_stable(x) for x in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(repr(_stable(x)) for x in obj)
    return repr(obj)


_FINGERPRINT: list = []


def compiler_fingerprint() -> str:
    """Hash of tilejit's own source files (computed once per process), so a change to
    the compiler never reuses code it compiled before the change."""
    if not _FINGERPRINT:
        from .. import __version__
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256(__version__.encode())
        for d, dirs, files in sorted(os.walk(root)):
            dirs.sort()
            for fn in sorted(files):
                if fn.endswith(".py"):
                    full = os.path.join(d, fn)
                    h.update(os.path.relpath(full, root).encode())
                    with open(full, "rb") as f:
                        h.update(hashlib.sha256(f.read()).digest())
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def make_key(*parts) -> str:
    """Hex SHA-256 over a deterministic encoding of ``parts``."""
    text = json.dumps(_stable(list(parts)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _jit_callees(jitfn):
    """``@jit`` functions referenced by name (globals, ``mod.attr`` chains) in the kernel."""
    from ..language.jit_callable import JITCallable
    fn = getattr(jitfn, "fn", None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    names: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    g = getattr(jitfn, "__globals__", {}) or {}
    out = []
    for cell in (getattr(jitfn, "closure_cells", None) or {}).values():
        try:
            v = cell.cell_contents
        except ValueError:          # not assigned yet
            continue
        if isinstance(v, JITCallable):
            out.append(v)
    for n in sorted(names):
        v = g.get(n)
        if isinstance(v, JITCallable):
            out.append(v)
        elif v is not None and type(v).__name__ == "module":
            for attr in sorted(names):
                w = getattr(v, attr, None)
                if isinstance(w, JITCallable):
                    out.append(w)
    return out


def kernel_source_key(jitfn) -> str:
    """Hash of the kernel's source and of every ``@jit`` callee reachable from it."""
    seen: dict[int, str] = {}
    order = []
    stack = [jitfn]
    while stack:
        f = stack.pop()
        if id(f) in seen:
            continue
        src = getattr(f, "src", None)
        if src is None:
            import inspect
            try:
                src = inspect.getsource(getattr(f, "fn", f))
            except (OSError, TypeError):
                src = repr(f)
        seen[id(f)] = src
        order.append((getattr(f, "__qualname__", ""), src))
        stack.extend(_jit_callees(f))
    return make_key(order)


def options_key(options) -> dict:
    """The fields of ``options`` that affect compiled output."""
    import dataclasses
    if options is None:
        return {}
    if dataclasses.is_dataclass(options):
        d = dataclasses.asdict(options)
    else:
        d = dict(vars(options))
    return {k: v for k, v in d.items() if k not in _NON_SEMANTIC_OPTIONS}


def compile_key(jitfn, signature, constexprs, specialization, options, target, extra=None) -> str:
    """The cache key of one compiled kernel.

    ``signature``: argument name -> type string (``"*fp32"``, ``"i32"``);
    ``constexprs``: name -> value; ``specialization``: name -> (divisibility, equal_to_1);
    ``target``: e.g. ``"cpu:x86_64-unknown-linux-gnu:skylake"`` or ``"cuda:sm_90"``.
    """
    from .. import __version__
    from .globals_guard import values_key
    return make_key("tilejit-compile", __version__, compiler_fingerprint(), kernel_source_key(jitfn),
                    values_key(jitfn),
                    {k: str(v) for k, v in dict(signature).items()},
                    {k: repr(v) for k, v in dict(constexprs).items()},
                    dict(specialization or {}), options_key(options), str(target),
                    sys.version_info[:2], extra)


# ---------------------------------------------------------------------------
# the CPU backend's hook: optimized LLVM IR and object code from disk
# ---------------------------------------------------------------------------
def _host_cpu_id() -> str:
    import llvmlite.binding as llvm
    from ..backends.llvm import binding
    binding.host_target_machine()            # initialises the native target
    name, features = binding.host_cpu()
    return f"{llvm.get_process_triple()}:{name}:{features}"


def llvm_key(llir: str, options=None, target: str | None = None) -> str:
    """Key of an LLVM module: its unoptimized IR text (which embeds the kernel, its
    callees and its specialization), tilejit's and LLVM's versions, the options and
    the target (default: this host's triple, CPU name and features)."""
    import llvmlite
    from .. import __version__
    return make_key("tilejit-llvm", __version__, compiler_fingerprint(), llvmlite.__version__, llir,
                    options_key(options), target or _host_cpu_id())


def cpu_compile_cached(llir: str, tm, options=None, cache=None):
    """Parse, optimize and JIT ``llir`` for the host, reusing the optimized IR and the
    object code stored by an earlier process.  Returns ``(engine, llir_opt)``.

    The CPU backend calls this in place of ``parse_module`` + ``optimize`` +
    ``create_engine``.  A hit skips LLVM's optimisation pipeline and code generation
    (MCJIT's object cache); entries are checksummed and bound to their key, and
    object files are checked (runtime/objcheck.py) before LLVM sees them, so a
    damaged one is rebuilt.
    """
    import llvmlite.binding as llvm
    from ..backends.llvm import binding
    cache = cache or get_cache()
    key = llvm_key(llir, options)
    stored = cache.get(key, namespace="llir-opt")
    mod = None
    if stored is not None:
        try:
            llir_opt = stored.decode()
            mod = binding.parse_module(llir_opt, tm)
        except (RuntimeError, UnicodeDecodeError):   # unreadable: rebuild it
            cache.delete(key, namespace="llir-opt")
            mod = None
    if mod is None:
        mod = binding.parse_module(llir, tm)
        binding.optimize(mod, tm, binding.pipeline_for(llir, options))
        llir_opt = str(mod)
        cache.put(key, llir_opt.encode(), namespace="llir-opt")
    from .objcheck import check_object      # a malformed object would abort in LLVM
    obj = cache.get(key, namespace="obj", validate=check_object) if stored is not None else None
    engine = llvm.create_mcjit_compiler(mod, binding.new_host_target_machine())
    engine.set_object_cache(lambda _m, buf: cache.put(key, bytes(buf), namespace="obj"),
                            lambda _m: obj)
    engine.finalize_object()
    engine.run_static_constructors()
    return engine, llir_opt


# ---------------------------------------------------------------------------
# the CUDA backend's hook: optimized LLVM IR and PTX from disk
# ---------------------------------------------------------------------------
def ptx_compile_cached(llir: str, arch: int, arch_specific: bool = False, cache=None) -> tuple[str, str]:
    """``backends.cuda.target.llvm_to_ptx(llir, arch, arch_specific)`` -- (optimized LLVM
    IR, PTX) -- reusing the texts an earlier compile of the same module stored.

    The key is the unoptimized IR text (it embeds the kernel, its specialization and
    every lowering decision), the target, tilejit's source fingerprint and llvmlite's
    version: LLVM's O3 pipeline and the NVPTX code generator (most of a CUDA compile:
    0.1-2 s of CPU for the tutorial kernels) then run once per module and machine."""
    import llvmlite
    from .. import __version__
    from ..backends.cuda import target as tgt
    cache = cache or get_cache()
    key = make_key("tilejit-ptx", __version__, compiler_fingerprint(), llvmlite.__version__, llir,
                   int(arch), bool(arch_specific))
    stored = cache.get(key, namespace="ptx")
    if stored is not None:
        try:
            entry = json.loads(stored.decode())
            return entry["llir_opt"], entry["ptx"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):   # unreadable: rebuild it
            cache.delete(key, namespace="ptx")
    opt, ptx = tgt.llvm_to_ptx(llir, arch, arch_specific)
    cache.put(key, json.dumps({"llir_opt": opt, "ptx": ptx}).encode(), namespace="ptx")
    return opt, ptx
