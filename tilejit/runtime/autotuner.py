"""``@autotune``, ``@heuristics`` and ``Config``, with Triton's semantics.

``Autotuner.run`` benchmarks every (pruned) config the first time it sees a tuning
key (the values of the ``key`` arguments plus the dtypes of every array argument),
keeps the fastest in memory and on disk, and launches the kernel with it.  The disk
entry is keyed by the kernel's source (and its ``@jit`` callees'), the key values,
the config list and the backend, so a second process reuses the result without
benchmarking.  Tuning that takes more than a second reports progress on stderr;
``TILEJIT_PRINT_AUTOTUNING=1`` prints the chosen config and every config's timing.
``TILEJIT_AUTOTUNE_CACHE=0`` disables the disk entries.
"""
from __future__ import annotations

import builtins
import inspect
import json
import os
import sys
import time

from .entry import user_entry
from .jit import KernelInterface

_RESOURCE_ERRORS = ("OutOfResources", "CompileTimeAssertionFailure", "PTXASError")


class Config:
    """A set of meta-parameters and launch options for one autotuning candidate.

    ``kwargs``: constexpr values; ``num_warps``, ``num_stages``, ``num_ctas``,
    ``maxnreg``: launch options; ``pre_hook(nargs)`` runs before each launch with
    this config (``nargs``: argument name -> value, including the config's kwargs).
    """

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None,
                 pre_hook=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        out = dict(self.kwargs)
        for k in ("num_warps", "num_ctas", "num_stages", "maxnreg"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        return out

    def _ident(self):
        return (tuple(sorted((k, repr(v)) for k, v in self.kwargs.items())), self.num_warps,
                self.num_stages, self.num_ctas, self.maxnreg,
                getattr(self.pre_hook, "__qualname__", None))

    def __hash__(self):
        return hash(self._ident())

    def __eq__(self, other):
        return isinstance(other, Config) and self._ident() == other._ident() \
            and self.pre_hook is other.pre_hook

    def __str__(self):
        res = [f"{k}: {v}" for k, v in self.kwargs.items()]
        res += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}",
                f"num_stages: {self.num_stages}", f"maxnreg: {self.maxnreg}"]
        return ", ".join(res)

    __repr__ = __str__


# ---------------------------------------------------------------------------
# array helpers for reset_to_zero / restore_value (numpy, torch, anything with copy_)
# ---------------------------------------------------------------------------
def _zero(a):
    if hasattr(a, "zero_"):
        a.zero_()
    else:
        a[...] = 0


def _clone(a):
    if hasattr(a, "clone"):
        return a.clone()
    return a.copy()


def _restore(dst, src):
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        dst[...] = src


def _base_fn(fn):
    while not inspect.isfunction(fn) and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def _kernel_name(fn) -> str:
    return getattr(_base_fn(fn), "__name__", repr(fn))


class Autotuner(KernelInterface):
    """The object ``@autotune`` returns; launch it as ``kernel[grid](*args)``."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None,
                 pre_hook=None, post_hook=None, prune_configs_by=None, warmup=None, rep=None,
                 use_cuda_graph=False, do_bench=None, cache_results=True):
        self.fn = fn
        self.base_fn = _base_fn(fn)
        self.arg_names = list(arg_names)
        self.configs = list(configs) if configs else [Config({}, num_warps=4, num_stages=3)]
        self.keys = list(key)
        self.cache: dict[tuple, Config] = {}
        self.configs_timings = None
        self.bench_time = 0.0
        self.best_config = None
        self.nargs = None
        self.reset_to_zero = self._names(reset_to_zero, "reset_to_zero")
        self.restore_value = self._names(restore_value, "restore_value")
        self.user_pre_hook = pre_hook
        self.user_post_hook = post_hook
        self._restore_copies: dict = {}
        prune_configs_by = prune_configs_by or {}
        self.perf_model = prune_configs_by.get("perf_model")
        self.configs_top_k = prune_configs_by.get("top_k", 1.0)
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        self.num_warmups = 25 if warmup is None else warmup
        self.num_reps = 100 if rep is None else rep
        self.use_cuda_graph = use_cuda_graph
        self.user_do_bench = do_bench
        self.cache_results = cache_results
        self.__name__ = getattr(fn, "__name__", _kernel_name(fn))

    def _names(self, names, what):
        names = list(names or [])
        for n in names:
            if n not in self.arg_names:
                raise ValueError(f"{what}: {n!r} is not an argument of {_kernel_name(self.fn)}")
        return names

    # -- hooks ---------------------------------------------------------------
    def pre_hook(self, nargs, reset_only=False):
        for n in self.reset_to_zero:
            _zero(nargs[n])
        if not reset_only:
            self._restore_copies = {n: _clone(nargs[n]) for n in self.restore_value}
        if self.user_pre_hook is not None:
            self.user_pre_hook(nargs, reset_only=reset_only) if _accepts(self.user_pre_hook, "reset_only") \
                else self.user_pre_hook(nargs)

    def post_hook(self, nargs, exception):
        for n, saved in self._restore_copies.items():
            _restore(nargs[n], saved)
        self._restore_copies = {}
        if self.user_post_hook is not None:
            self.user_post_hook(nargs, exception)

    def do_bench(self, fn, quantiles=None):
        if self.user_do_bench is not None:
            return self.user_do_bench(fn, quantiles=quantiles)
        from ..testing import do_bench
        return do_bench(fn, warmup=self.num_warmups, rep=self.num_reps, quantiles=quantiles)

    # -- benchmarking --------------------------------------------------------
    def _bench(self, *args, config, **meta):
        conflicts = meta.keys() & config.kwargs.keys()
        if conflicts:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(sorted(conflicts))}. "
                             "Make sure that you don't re-define auto-tuned symbols.")
        current = dict(meta, **config.all_kwargs())
        full_nargs = {**self.nargs, **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            try:
                self.fn.run(*args, **current)
            except Exception as e:
                try:
                    self.post_hook(full_nargs, exception=e)
                finally:
                    raise
            self.post_hook(full_nargs, exception=None)

        try:
            return self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        except Exception as e:
            if type(e).__name__ in _RESOURCE_ERRORS:
                return [float("inf")] * 3
            raise

    def prune_configs(self, kwargs):
        pruned = self.configs
        if self.early_config_prune:
            pruned = self.early_config_prune(self.configs, self.nargs, **kwargs)
            if not pruned:
                raise ValueError(f"early_config_prune removed every config of {self.__name__}")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(self.configs) * top_k))
            elif not isinstance(top_k, int):
                raise TypeError("top_k must be an int, or a float <= 1.0")
            if len(pruned) > top_k:
                est = {c: self.perf_model(**self.nargs, **kwargs, **c.all_kwargs()) for c in pruned}
                pruned = sorted(est, key=lambda c: est[c])[:top_k]
        return list(pruned)

    @staticmethod
    def _on_host(args, kwargs) -> bool:
        """Whether this launch runs on a host backend (cpu, interpreter)."""
        from .arrays import describe
        from .launch import choose_backend
        from .options import get_options
        device = "cpu"
        for a in (*args, *kwargs.values()):
            a = getattr(a, "base", a) if type(a).__name__ == "TensorDescriptor" else a
            info = None if isinstance(a, (bool, int, float, str, type(None))) else describe(a)
            if info is not None and info.device != "cpu":
                device = info.device
                break
        return choose_backend(get_options(), device) in ("cpu", "interpreter")

    def _tuning_key(self, kwargs):
        all_args = {**self.nargs, **kwargs}
        _args = {k: v for k, v in all_args.items() if k in self.arg_names}
        key = [_args[k] for k in self.keys if k in _args]
        for _, arg in _args.items():
            if hasattr(arg, "dtype"):
                key.append(str(arg.dtype))
        return tuple(key)

    def _benchmark_all(self, args, kwargs, pruned):
        timings = {}
        start = time.perf_counter()
        shown = False
        name = self.__name__
        for i, config in enumerate(pruned):
            timings[config] = self._bench(*args, config=config, **kwargs)
            elapsed = time.perf_counter() - start
            if elapsed > 1.0 and len(pruned) > 1:
                tty = getattr(sys.stderr, "isatty", lambda: False)()
                shown = shown or tty
                line = f"[tilejit] autotuning {name}: {i + 1}/{len(pruned)} configs, {elapsed:.1f}s"
                sys.stderr.write("\r" + line if tty else line + "\n")
                sys.stderr.flush()
        if shown:
            sys.stderr.write("\n")
        self.bench_time = time.perf_counter() - start
        return timings

    @user_entry
    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        used_cached_result = True
        timings = None
        if len(self.configs) > 1:
            key = self._tuning_key(kwargs)
            if key not in self.cache:
                disk = self._disk_lookup(key)
                if disk is not None:
                    self.cache[key] = disk
                else:
                    used_cached_result = False
                    pruned = self.prune_configs(kwargs)
                    if self._on_host(args, kwargs):
                        pruned = distinct_on_host(pruned)
                    timings = self._benchmark_all(args, kwargs, pruned)
                    self.cache[key] = builtins.min(timings, key=lambda c: _first(timings[c]))
                    full_nargs = {**self.nargs, **kwargs, **self.cache[key].all_kwargs()}
                    self.pre_hook(full_nargs, reset_only=True)
                    self.configs_timings = timings
                    self._disk_store(key, self.cache[key], timings)
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        if not used_cached_result and os.environ.get("TILEJIT_PRINT_AUTOTUNING", "") == "1":
            self._print_result(config, timings)
        if config.pre_hook is not None:
            config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return ret

    def _print_result(self, config, timings):
        print(f"tilejit autotuning for function {self.__name__} finished after "
              f"{self.bench_time:.2f}s; best config selected: {config};")
        for c, t in (timings or {}).items():
            print(f"  {_first(t):10.4f} ms  {c}")

    @user_entry
    def warmup(self, *args, **kwargs):
        """Compile (without launching) every pruned config, when the kernel supports it."""
        self.nargs = dict(zip(self.arg_names, args))
        ret = []
        for config in self.prune_configs(kwargs):
            if hasattr(self.fn, "warmup"):
                ret.append(self.fn.warmup(*args, **kwargs, **config.all_kwargs()))
        self.nargs = None
        return ret

    # -- disk persistence ------------------------------------------------------
    def _disk_key(self, key):
        from .cache import compiler_fingerprint, kernel_source_key, make_key
        from .options import get_options
        from .. import __version__
        opts = get_options()
        backend = "interpreter" if opts.interpret else (opts.backend or "default")
        return make_key("tilejit-autotune", __version__, compiler_fingerprint(),
                        kernel_source_key(self.base_fn_jit),
                        [repr(k) for k in key], [str(c) for c in self.configs], backend,
                        [str(n) for n in self.keys])

    @property
    def base_fn_jit(self):
        f = self.fn
        while not hasattr(f, "src") and hasattr(f, "fn") and not inspect.isfunction(f):
            f = f.fn
        return f

    def _disk_enabled(self):
        return self.cache_results and os.environ.get("TILEJIT_AUTOTUNE_CACHE", "1") != "0"

    def _disk_lookup(self, key):
        if not self._disk_enabled():
            return None
        from .cache import get_cache
        try:
            blob = get_cache().get(self._disk_key(key), namespace="autotune")
            if blob is None:
                return None
            entry = json.loads(blob)
            cfg = self.configs[entry["index"]]
            return cfg if str(cfg) == entry["config"] else None
        except (ValueError, KeyError, IndexError, TypeError):
            return None

    def _disk_store(self, key, config, timings):
        if not self._disk_enabled():
            return
        from .cache import get_cache
        entry = {"index": self.configs.index(config), "config": str(config),
                 "key": [repr(k) for k in key],
                 "timings": [[str(c), _first(t)] for c, t in timings.items()]}
        get_cache().put(self._disk_key(key), json.dumps(entry).encode(), namespace="autotune")


def distinct_on_host(configs) -> list:
    """The configs that differ on a host backend (cpu, interpreter), where the launch
    options (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``) change nothing:
    the first of each group with the same meta-parameters and pre_hook."""
    kept = {}
    for c in configs:
        kept.setdefault((tuple(sorted((k, repr(v)) for k, v in c.kwargs.items())), c.pre_hook), c)
    return list(kept.values())


def _first(t):
    return float(t[0]) if isinstance(t, (list, tuple)) else float(t)


def _accepts(fn, name) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False,
             do_bench=None, cache_results=True):
    """Decorator for auto-tuning a ``@jit`` kernel (Triton's ``triton.autotune``).

    ``configs``: list of :class:`Config`; ``key``: argument names whose change
    triggers re-tuning; ``prune_configs_by``: dict with ``perf_model``, ``top_k``,
    ``early_config_prune``; ``reset_to_zero`` / ``restore_value``: argument names
    zeroed before / restored after each benchmark run; ``pre_hook(nargs,
    reset_only)`` / ``post_hook(nargs, exception)``; ``warmup``/``rep`` in ms;
    ``do_bench(fn, quantiles)``: a replacement benchmarking function.
    """
    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook=pre_hook, post_hook=post_hook,
                         prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench,
                         cache_results=cache_results)
    return decorator


class Heuristics(KernelInterface):
    """The object ``@heuristics`` returns: computes meta-parameters from the arguments."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.values = values
        self.arg_names = list(arg_names)
        self.__name__ = getattr(fn, "__name__", _kernel_name(fn))

    @user_entry
    def run(self, *args, **kwargs):
        for v, heur in self.values.items():
            kwargs[v] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, **kwargs)

    @user_entry
    def warmup(self, *args, **kwargs):
        for v, heur in self.values.items():
            kwargs[v] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.warmup(*args, **kwargs)


def heuristics(values):
    """Decorator: ``@heuristics({"BLOCK": lambda args: ...})`` sets meta-parameters
    from a function of the bound arguments (Triton's ``triton.heuristics``)."""
    def decorator(fn):
        return Heuristics(fn, fn.arg_names, values)
    return decorator
