"""On-disk cache of compiled kernels and autotuning results.

Location: ``Options.cache_dir`` (``TILEJIT_CACHE_DIR``) or ``~/.cache/tilejit``.

Entries live in ``<dir>/<namespace>/<key[:2]>/<key>``.  Each file is a small header
(magic, payload length, SHA-256 of the payload) followed by the payload bytes.  A
reader verifies the checksum; a corrupt or truncated entry is deleted and reported
as a miss, so the caller rebuilds it instead of trusting it.  Writes go to a temp
file in the same directory and are published with ``os.replace`` (atomic on POSIX),
so concurrent processes compiling the same kernel never see half-written entries:
the last writer wins with identical content.

If the directory cannot be created or written (read-only file system, permissions),
the cache falls back to an in-memory dict and warns once.

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

_MAGIC = b"TJC1"
_HEADER = struct.Struct("<4sQ32s")      # magic, payload length, sha256(payload)
# Options fields that only say where things go, not what is produced.
_NON_SEMANTIC_OPTIONS = frozenset({"cache_dir", "dump_dir", "num_threads"})


def default_cache_dir() -> str:
    from .options import get_options
    d = get_options().cache_dir
    return os.path.expanduser(d) if d else os.path.join(os.path.expanduser("~"), ".cache", "tilejit")


def _encode(payload: bytes) -> bytes:
    return _HEADER.pack(_MAGIC, len(payload), hashlib.sha256(payload).digest()) + payload


def _decode(blob: bytes) -> bytes | None:
    """The payload of a stored entry, or None when it is corrupt."""
    if len(blob) < _HEADER.size:
        return None
    magic, n, digest = _HEADER.unpack_from(blob)
    payload = blob[_HEADER.size:]
    if magic != _MAGIC or n != len(payload) or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


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
    """A directory of checksummed entries; safe under concurrent processes."""

    def __init__(self, directory: str):
        self.dir = os.path.abspath(directory)
        self.stats = {"hits": 0, "misses": 0, "corrupt": 0, "writes": 0}
        self._fallback: MemoryCache | None = None
        self._lock = threading.Lock()

    # -- paths -------------------------------------------------------------
    def path(self, key: str, namespace: str = "kernels") -> str:
        if not key or any(c in key for c in "/\\.") :
            raise ValueError(f"invalid cache key {key!r}")
        return os.path.join(self.dir, namespace, key[:2], key)

    # -- API -----------------------------------------------------------------
    def get(self, key: str, namespace: str = "kernels") -> bytes | None:
        """The payload stored under ``key``, or None (missing or corrupt)."""
        if self._fallback is not None:       # written since the fall-back: memory first
            v = self._fallback.get(key, namespace)
            if v is not None:
                return v
        p = self.path(key, namespace)
        try:
            with open(p, "rb") as f:
                blob = f.read()
        except OSError:
            self.stats["misses"] += 1
            return None
        payload = _decode(blob)
        if payload is None:
            self.stats["corrupt"] += 1
            self.stats["misses"] += 1
            self._remove(p)
            return None
        self.stats["hits"] += 1
        return payload

    def put(self, key: str, data: bytes, namespace: str = "kernels") -> None:
        """Store ``data`` under ``key`` atomically (temp file + ``os.replace``)."""
        if self._fallback is not None:
            return self._fallback.put(key, data, namespace)
        p = self.path(key, namespace)
        try:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(p))
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(_encode(bytes(data)))
                os.replace(tmp, p)
            except BaseException:
                self._remove(tmp)
                raise
        except OSError as e:
            self._fall_back(f"cannot write to the cache directory {self.dir}: {e}")
            self._fallback.put(key, data, namespace)
            return
        self.stats["writes"] += 1

    def delete(self, key: str, namespace: str = "kernels") -> None:
        if self._fallback is not None:
            return self._fallback.delete(key, namespace)
        self._remove(self.path(key, namespace))

    def info(self) -> dict:
        out = {"dir": self.dir, "memory_only": self._fallback is not None, "namespaces": {},
               "entries": 0, "bytes": 0}
        if self._fallback is not None:
            out["reason"] = self._fallback.reason
        if not os.path.isdir(self.dir):
            return out
        for ns in sorted(os.listdir(self.dir)):
            n = size = 0
            for root, _, files in os.walk(os.path.join(self.dir, ns)):
                for fn in files:
                    if not fn.startswith(".tmp-"):
                        n += 1
                        size += os.path.getsize(os.path.join(root, fn))
            out["namespaces"][ns] = {"entries": n, "bytes": size}
            out["entries"] += n
            out["bytes"] += size
        return out

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        import shutil
        n = self.info()["entries"]
        if os.path.isdir(self.dir):
            for ns in os.listdir(self.dir):
                full = os.path.join(self.dir, ns)
                if os.path.isdir(full):
                    shutil.rmtree(full, ignore_errors=True)
                else:
                    self._remove(full)
        if self._fallback is not None:
            n += self._fallback.clear()
        return n

    # -- helpers -----------------------------------------------------------
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
                              RuntimeWarning, stacklevel=3)
                self._fallback = MemoryCache(reason)


_caches: dict[str, FileCache] = {}
_caches_lock = threading.Lock()


def get_cache(directory: str | None = None) -> FileCache:
    """The cache for ``directory`` (default: :func:`default_cache_dir`), one per dir."""
    d = os.path.abspath(directory or default_cache_dir())
    with _caches_lock:
        if d not in _caches:
            _caches[d] = FileCache(d)
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
    from .jit import JITFunction
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
        if isinstance(v, JITFunction):
            out.append(v)
    for n in sorted(names):
        v = g.get(n)
        if isinstance(v, JITFunction):
            out.append(v)
        elif v is not None and type(v).__name__ == "module":
            for attr in sorted(names):
                w = getattr(v, attr, None)
                if isinstance(w, JITFunction):
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
    return f"{llvm.get_process_triple()}:{llvm.get_host_cpu_name()}:" \
           f"{llvm.get_host_cpu_features().flatten()}"


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
    (MCJIT's object cache); entries are checksummed, so a damaged one is rebuilt.
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
        binding.optimize(mod, tm)
        llir_opt = str(mod)
        cache.put(key, llir_opt.encode(), namespace="llir-opt")
    obj = cache.get(key, namespace="obj") if stored is not None else None
    engine = llvm.create_mcjit_compiler(mod, binding.new_host_target_machine())
    engine.set_object_cache(lambda _m, buf: cache.put(key, bytes(buf), namespace="obj"),
                            lambda _m: obj)
    engine.finalize_object()
    engine.run_static_constructors()
    return engine, llir_opt
