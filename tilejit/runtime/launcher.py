"""The per-kernel :class:`Launcher`: argument binding, the in-memory cache of
compiled kernels, compilation (frontend -> passes -> backend) and stage dumps."""
from __future__ import annotations

import ctypes
import hashlib
from collections import OrderedDict
import inspect
import os

import numpy as np

from ..backends import Buffer, LaunchArgs, get_backend
from .launch import LAUNCH_OPTIONS, binder_for, choose_backend, normalize_grid
from . import recompile as _recompile
from .options import get_options
from .validate import (check_devices, check_grid, check_launch_options, needs_grid_check,
                       with_sanitize)
from .fastpath import make_fast_binder, torch_is_imported
from . import express as _express
from . import launch_checks as _checks
from .express import LazyArgs
from .globals_guard import GlobalsGuard
from .descriptors import bind_descriptor, descriptor_arg_from_key, is_descriptor_key
from .tuples import bind_tuple, is_tuple_key, tuple_arg
from ..tools.tensor_descriptor import TensorDescriptor
from ..analysis.explain import print_explanation
from . import options as _options_mod

_EMPTY = inspect.Parameter.empty
_LAUNCH_OPTION_SET = frozenset(LAUNCH_OPTIONS)   # the keywords of a launch that are not parameters
_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_OPTION_TOKENS: dict = {}       # Options -> small int (hashing the dataclass per launch is slow)
_EXPRESS_MAX = 256              # express entries per kernel before the lane starts over
_NATIVE_REOFFERS = 64           # grids (and bound integer arguments) per express entry offered to the native lane


class _PtrNames(dict):
    """numpy dtype -> '*<tilejit dtype name>' (None when unsupported)."""

    def __missing__(self, dt):
        from ..ir.types import dtype_from_numpy
        try:
            name = "*" + dtype_from_numpy(dt).name
        except TypeError:
            name = None
        self[dt] = name
        return name


_NP_PTR = _PtrNames()
_new = object.__new__


def _buffer(name, address, nbytes, itemsize):
    """``Buffer(...)`` without the frozen dataclass's slow ``__init__``."""
    b = _new(Buffer)
    b.__dict__.update(name=name, address=address, nbytes=nbytes, itemsize=itemsize)
    return b


def _simple_grid(grid):
    """A tuple of 1..3 non-negative plain ints -> 3 ints, else None (the slow path)."""
    n = len(grid)
    if n == 1:
        a = grid[0]
        if type(a) is int and a >= 0:
            return (a, 1, 1)
    elif n == 2:
        a, b = grid
        if type(a) is int and type(b) is int and a >= 0 and b >= 0:
            return (a, b, 1)
    elif n == 3:
        a, b, c = grid
        if type(a) is int and type(b) is int and type(c) is int and a >= 0 and b >= 0 and c >= 0:
            return grid
    return None


class _KernelCache(OrderedDict):
    """The launcher's key -> kernel dict; any change empties the express lane
    (whose entries were derived from it).

    At most ``limit`` kernels (``Options.kernel_cache_size``; 0: no limit): adding one
    more drops the least recently used, where "used" is a launch through the general
    path (:meth:`touch`) or through the express lane since the last change
    (``in_lane()``: ids of the kernels the lane runs), so dropped kernels free their
    machine code and IR (``clear()`` frees them all).  Reordering uses OrderedDict's
    ``move_to_end`` (a key is never missing meanwhile, for concurrent launches)."""

    def __init__(self, on_change, in_lane=lambda: ()):
        super().__init__()
        self._on_change = on_change
        self._in_lane = in_lane
        self.limit = 0

    def __setitem__(self, key, value):
        if self.limit and key not in self and len(self) >= self.limit:
            self._evict(len(self) - self.limit + 1)
        self._on_change()
        super().__setitem__(key, value)

    def touch(self, key, value=None):
        """``key`` was just used: make it the most recent (no change to the lane)."""
        try:
            self.move_to_end(key)
        except KeyError:          # dropped by another thread meanwhile
            pass

    def _evict(self, n):
        lane = set(self._in_lane())
        for k, v in list(self.items()):
            if id(v) in lane:
                self.touch(k)
        for k in list(self.keys())[:n]:
            OrderedDict.pop(self, k, None)

    def __delitem__(self, key):
        self._on_change()
        super().__delitem__(key)

    def clear(self):
        self._on_change()
        super().clear()

    def pop(self, *a):
        self._on_change()
        return super().pop(*a)

    def popitem(self, *a):
        self._on_change()
        return super().popitem(*a)

    def setdefault(self, key, default=None):
        self._on_change()
        return super().setdefault(key, default)

    def update(self, *a, **kw):
        self._on_change()
        super().update(*a, **kw)

    def __ior__(self, other):
        self._on_change()
        return super().__ior__(other)


class Launcher:
    """Binds launches of one JITFunction; ``cache`` maps keys to compiled kernels.
    ``go(grid, *args, **kwargs)`` is the express lane (runtime/express.py) in front of it."""

    def __init__(self, jitfn):
        self.fn = jitfn
        self.name = jitfn.__name__
        self.params = list(jitfn.params)
        self.names = [p.name for p in self.params]
        self.index = {p.name: i for i, p in enumerate(self.params)}
        self.is_constexpr = [p.is_constexpr for p in self.params]
        self.specialize = [not p.do_not_specialize for p in self.params]
        self.defaults = [p.default for p in self.params]
        self.cache: dict = _KernelCache(self._express_clear, self._lane_kernels)
        self.nparams = len(self.params)
        self.param_set = frozenset(self.names)
        self.tail_sets = [set(self.names[i:]) for i in range(len(self.names) + 1)]
        self.plan = [(p.name, p.is_constexpr, not p.do_not_specialize) for p in self.params]
        self._options = None
        self._opt_token = None
        self._backend = None
        self._fast = None          # generated binder (runtime/fastpath.py), made on first launch
        self._fast_torch = False   # whether that binder knows torch.Tensor
        self._gpu_backend = None
        self.express: dict = {}        # express key -> runner (runtime/express.py)
        self.express_state = [None]    # the Options object the express entries hold under
        self._express_keep: list = []  # dtypes whose ids are in express keys (ids stay unique)
        self._lane_ids: set = set()    # ids of the kernels express entries run (LRU recency)
        self.guard = GlobalsGuard(jitfn)     # module-level values the kernel folds in
        self.native = None                   # the native lane (backends/cpu/native_go.py)
        self.go = self.go_python = _express.make_express(self)

    # ------------------------------------------------------------ express lane
    def _express_clear(self):
        if self.native is not None:
            self.native.clear()
        self.express.clear()
        self._express_keep.clear()
        self._lane_ids.clear()

    def _lane_kernels(self):
        """ids of the kernels the express lane has run since it was last emptied."""
        return self._lane_ids

    def express_reset(self, args, kwargs, grid):
        """The options changed: empty the lane, note the current options, launch."""
        self._express_clear()
        self.express_state[0] = get_options()
        return self(args, kwargs, grid)

    def express_miss(self, args, kwargs, grid, key, vals):
        """Launch by the general rules; then let ``key`` reach the kernel they chose
        (when the options stayed the lane's all along)."""
        opts = _options_mod._current
        kernel = self(args, kwargs, grid)
        if opts is self.express_state[0] is _options_mod._current and kernel is not None:
            if len(self.express) >= _EXPRESS_MAX:     # e.g. ever new equal dtype objects
                self._express_clear()
            dtypes = [v.dtype for v in vals if type(v) is np.ndarray]
            if any(id(d) & 1 for d in dtypes):       # the key ors the alignment bit into ids
                return kernel
            if _checks.huge_arrays(LazyArgs([], vals, self.names).buffers):
                return kernel                        # may be the sanitized variant
            if getattr(kernel, "sanitize", False) and not opts.sanitize:
                return kernel                        # the checked variant of a launch
            for name in _checks.written_params(kernel, self.names):
                self.express_ns[f"W{self.index[name]}"] = True     # check writability there
            run = _express.runner_for(kernel, self.names, vals)
            if run is None:
                return kernel
            if _checks.has_bounds(kernel):
                run = self._bounds_checked(kernel, run, (len(args), tuple(kwargs)), opts)
            self._express_keep.extend(dtypes)
            self._lane_ids.add(id(kernel))
            self.express[key] = run
            if opts.native_call:
                self._offer_native(kernel, args, kwargs, vals, opts, grid)
        return kernel

    def _offer_native(self, kernel, args, kwargs, vals, opts, grid):
        """Point the native lane at the entry just filed (plain tuple grids only; a
        kernel with bounded accesses only for this grid, as launch_checks computes)."""
        g = _simple_grid(grid) if type(grid) is tuple else None
        if g is None or not all(g) or self.guard.entries or not hasattr(kernel, "inline_programs"):
            return
        if self.native is None:              # made at the first entry it can run
            from ..backends.cpu import native_go
            if not native_go.AVAILABLE:
                return
            self.native = native_go.NativeLane(self.go_python)
            self.go = self.native.go
            self.fn._last_launch = None      # kernel[grid] now calls the native lane
        bounds, pinned = {}, frozenset()
        if _checks.has_bounds(kernel):     # exact for this grid and these integer arguments
            bounds = _checks.param_bounds(kernel, g, self.names, vals)
            pinned = _checks.bounds_scalars(kernel, self.names)
        written = _checks.written_params(kernel, self.names)
        try:
            self.native.offer(kernel, self.plan, args, kwargs, vals, opts, g, written, bounds, pinned)
        except Exception:      # noqa: BLE001 - an optimisation: the Python lane stays
            self.native.clear()

    def _bounds_checked(self, kernel, run, call_shape, opts):
        """``run`` checking the arrays against the kernel's access bounds for each grid
        and integer-argument values first (runtime/arg_bounds.py); a launch whose
        arrays may not cover them goes through the general path (launch_checks).

        The native lane runs such a kernel only for the grid and integer arguments
        its spec was offered with, so a launch with others arrives here: it offers the
        lane a spec for those too, once per grid and values (the lane keeps the last
        few; a kernel launched at 2^16 and then at 2^20 elements took 13 us more per
        launch at 2^20 in the Python lane).  ``call_shape``: (positional count,
        keyword names) of the call that filed the entry."""
        checked = _checks.express_bounds(kernel, self.names, run, self.call_general)
        if not opts.native_call:
            return checked
        pinned = tuple(sorted(_checks.bounds_scalars(kernel, self.names)))
        npos, kwnames = call_shape
        offered = set()

        def offering(values, vals, gx, gy, gz):
            got = checked(values, vals, gx, gy, gz)
            key = (gx, gy, gz) + tuple(vals[i] for i in pinned)
            if (key not in offered and len(offered) < _NATIVE_REOFFERS and self.native is not None
                    and _options_mod._current is opts):
                offered.add(key)
                self._offer_native(kernel, (None,) * npos, dict.fromkeys(kwnames), vals, opts, (gx, gy, gz))
            return got
        return offering

    # ------------------------------------------------------------ binding
    def bind(self, args, kwargs) -> list:
        """Positional + keyword arguments -> one value per parameter (defaults filled)."""
        n = len(self.params)
        if len(args) > n:
            raise TypeError(f"{self.name}() takes {n} argument{'s' if n != 1 else ''} "
                            f"but {len(args)} were given")
        vals = list(args)
        if len(vals) < n:
            vals.extend([_EMPTY] * (n - len(vals)))
        for k, v in kwargs.items():
            i = self.index.get(k)
            if i is None:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{k}'")
            if i < len(args):
                raise TypeError(f"{self.name}() got multiple values for argument '{k}'")
            vals[i] = v
        for i, v in enumerate(vals):
            if v is _EMPTY:
                d = self.defaults[i]
                if d is _EMPTY:
                    raise TypeError(f"{self.name}() missing required argument '{self.names[i]}'"
                                    f"{' (a tl.constexpr)' if self.is_constexpr[i] else ''}")
                vals[i] = d
        return vals

    def globals_changed(self) -> bool:
        """A global the kernels were compiled with has a new value: forget them all."""
        if self.guard.entries and self.guard.changed():
            self.cache.clear()
            self.guard.refresh()
            return True
        return False

    def _fast_bind(self, args, kwargs):
        """(values by parameter, launch options) for the fast path's call shapes: a run of
        positional arguments, the rest by keyword, launch options (``num_warps=8``, as
        Triton's tutorials and Liger-Kernel pass them) among the keywords; None otherwise.
        The options come in the general path's order, so the cache key is the same."""
        nargs = len(args)
        if not kwargs:
            return args, ()
        if nargs > self.nparams:
            return None
        tail = self.tail_sets[nargs]
        if kwargs.keys() == tail:
            return args + tuple([kwargs[k] for k in self.names[nargs:]]), ()
        extra = kwargs.keys() - tail
        if len(kwargs) - len(extra) != len(tail) or not extra <= _LAUNCH_OPTION_SET or extra & self.param_set:
            return None
        lopts = tuple([(k, kwargs[k]) for k in LAUNCH_OPTIONS if k in extra])
        return args + tuple([kwargs[k] for k in self.names[nargs:]]), lopts

    def __call__(self, args, kwargs, grid, warmup=False):
        """Fast path first: a cached kernel, common argument kinds, a tuple grid."""
        if self.guard.entries:
            self.globals_changed()
        if (self._fast is not None and not warmup and type(grid) is tuple
                and get_options() is self._options):
            bound = self._fast_bind(args, kwargs)
            vals, lopts = bound if bound is not None else (None, ())
            if vals is not None and len(vals) == self.nparams:
                bound = self._fast(vals)
                if bound is not None:
                    keys, consts, values, raw, on_gpu = bound
                    backend = self._gpu_backend if on_gpu else self._backend
                    kernel = self.cache.get((keys, consts, lopts, self._opt_token, backend))
                    g = _simple_grid(grid)
                    if kernel is not None and g is not None and (
                            not _checks.has_bounds(kernel)
                            or _checks.bounds_fit(kernel, g, self.names, vals)):
                        if g[0] and g[1] and g[2]:
                            if needs_grid_check(g):
                                check_grid(g, self.name, backend)
                            la = LaunchArgs(values, None, vals, raw)
                            kernel.launch(g, la, **dict(lopts)) if lopts else kernel.launch(g, la)
                        return kernel
        return self.call_general(args, kwargs, grid, warmup)

    def call_general(self, args, kwargs, grid, warmup=False):
        """Every launch the fast path does not take: binding by the general rules."""
        self.globals_changed()
        if self._fast is None or (not self._fast_torch and torch_is_imported()):
            self._fast = make_fast_binder(self.plan)
            self._fast_torch = torch_is_imported()
            self.express_ns["Tensor"] = _express.torch_tensor_type()
        lopts = ()
        sanitize = None
        if kwargs and not kwargs.keys() <= self.param_set:
            kwargs = dict(kwargs)
            if "sanitize" in kwargs and "sanitize" not in self.index:   # sanitize=True: checked variant
                sanitize = kwargs.pop("sanitize")
            lopts = tuple((k, kwargs.pop(k)) for k in LAUNCH_OPTIONS
                          if k in kwargs and k not in self.index)   # a kernel parameter wins
            if lopts:
                check_launch_options(lopts, self.name)
            for k in ("stream", "device", "warmup"):   # accepted for Triton scripts, no effect here
                if k not in self.index:
                    kwargs.pop(k, None)
        nargs = len(args)
        if nargs == self.nparams and not kwargs:
            vals = args
        elif nargs + len(kwargs) == self.nparams and kwargs.keys() == self.tail_sets[nargs]:
            vals = args + tuple([kwargs[k] for k in self.names[nargs:]])
        else:
            vals = self.bind(args, kwargs)
        keys, values, buffers, consts, device = self.bind_values(vals)
        options = get_options()
        if sanitize is not None:
            options = with_sanitize(options, sanitize)
        if options is not self._options:
            self._options = options
            self._opt_token = _OPTION_TOKENS.setdefault(options, len(_OPTION_TOKENS))
            self._backend = choose_backend(options, "cpu")
            self.cache.limit = options.kernel_cache_size
            gpu = choose_backend(options, "cuda")
            self._gpu_backend = gpu if gpu == "cuda" else None   # else: the general path errs
        if device == "cpu":
            backend = self._backend
        else:
            check_devices(self.names, self.is_constexpr, vals, keys, self.name)
            backend = choose_backend(options, device)
            if backend != "cuda":
                raise ValueError(f"{self.name}: CUDA arrays were passed but the backend is "
                                 f"'{backend}'; host backends cannot read device memory")
            from ..backends.cuda.driver import require_bindings
            require_bindings(self.name)
        key = (tuple(keys), tuple(consts), lopts, self._opt_token, backend)
        kernel = self.cache.get(key)
        if kernel is None:
            if self.cache and _recompile.ENABLED:      # TILEJIT_LOG_RECOMPILES=1
                _recompile.log_recompile(self, key)
            kernel = self.cache[key] = self.compile(vals, keys, consts, lopts, options, backend, key)
        else:
            self.cache.touch(key, kernel)
        if warmup:
            return kernel
        g = _simple_grid(grid) if type(grid) is tuple else None
        if g is None:
            g = normalize_grid(grid, self._meta(vals, lopts) if callable(grid) else None, self.name)
        if g[0] and g[1] and g[2] and needs_grid_check(g):
            check_grid(g, self.name, backend)          # before the checks that read the grid
        kernel = self._checked(kernel, vals, keys, consts, lopts, options, backend, buffers, g)
        if g[0] and g[1] and g[2]:
            keep = vals        # the arrays themselves (the CUDA driver stages host ones)
            if TensorDescriptor in map(type, vals):
                keep = [v.base if type(v) is TensorDescriptor else v for v in vals]
            kernel.launch(g, LaunchArgs(values, buffers, keep), **dict(lopts))
        return kernel

    def _checked(self, kernel, vals, keys, consts, lopts, options, backend, buffers, grid):
        """The kernel to run after the launch checks (runtime/launch_checks.py): a
        read-only array for an argument the kernel writes is refused; arrays longer
        than 2**31-1 elements with int32 offset arithmetic the analysis does not prove
        in range run the sanitize-mode variant (OffsetOverflowError before the access,
        never a wild one); an access bounded by the grid and the integer arguments
        with a lane certainly outside every array raises OutOfBoundsError before the
        launch (an unmasked one bounded by the grid alone whose bound does not fit
        runs the sanitize-mode variant)."""
        _checks.check_writable(kernel, self.name, self.names, vals)
        if backend == "interpreter" or options.sanitize:
            return kernel
        huge = (_checks.huge_arrays(buffers, True)
                and _checks.huge_arrays(buffers, _checks.casts_pointers(kernel))
                and _checks.offset_ops(kernel)
                and not _checks.offsets_fit(kernel, grid, self.names, vals))
        if not huge and not (_checks.has_bounds(kernel) and all(grid) and
                             _checks.check_bounds(kernel, self.name, grid, self.names, vals,
                                                  buffers)):
            return kernel
        options = with_sanitize(options, True)
        token = _OPTION_TOKENS.setdefault(options, len(_OPTION_TOKENS))
        key = (tuple(keys), tuple(consts), lopts, token, backend)
        checked = self.cache.get(key)
        if checked is None:
            checked = self.cache[key] = self.compile(vals, keys, consts, lopts, options, backend, key)
        return checked

    def bind_values(self, vals):
        """Per-parameter binding: (type keys, launch values, buffers, constexprs, device)."""
        keys, values, buffers, consts = [], [], [], []
        device = "cpu"
        for v, (name, is_cx, spec) in zip(vals, self.plan):
            if is_cx or v is None:
                consts.append((name, _constexpr_key(v)))
                continue
            tp = type(v)
            if tp is np.ndarray:                       # the common case, inlined
                dt = _NP_PTR[v.dtype]
                try:     # contiguous, writable, non-empty arrays export a simple buffer
                    addr = _addressof(_from_buffer(v)) if dt is not None else None
                except (TypeError, ValueError, BufferError):
                    addr = None
                if addr is not None:
                    keys.append((dt, 16 if spec and not addr & 15 else 0, "cpu"))
                    values.append(addr)
                    buffers.append(_buffer(name, addr, v.nbytes, v.itemsize))
                    continue
            if isinstance(v, tuple):                   # one IR argument per element
                key, lvs, infos = self._bind_one(bind_tuple, v, spec, name)
                keys.append(key)
                values.extend(lvs)
                for path, info in infos:
                    buffers.append(_buffer(f"{name}{list(path)}", info.lo, info.nbytes,
                                           info.itemsize))
                    if info.device != "cpu":
                        device = info.device
                continue
            if tp is TensorDescriptor:                 # several IR arguments
                key, lvs, info = self._bind_one(bind_descriptor, v, spec, name)
            else:
                b = binder_for(tp)
                if b is None:
                    raise TypeError(f"{self.name}: argument '{name}' has unsupported type "
                                    f"{tp.__module__}.{tp.__qualname__} (expected an int, "
                                    "float, bool, None or an array)")
                key, lv, info = self._bind_one(b, v, spec, name)
                lvs = (lv,)
            keys.append(key)
            values.extend(lvs)
            if info is not None:
                buffers.append(_buffer(name, info.lo, info.nbytes, info.itemsize))
                if info.device != "cpu":
                    device = info.device
        return keys, values, buffers, consts, device

    def _bind_one(self, binder, v, spec, name):
        """``binder(v, spec)``, its TypeError/ValueError naming the kernel and argument."""
        try:
            return binder(v, spec)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{self.name}: argument '{name}': {e}") from None

    def _meta(self, vals, lopts) -> dict:
        meta = {n: (getattr(v, "value", v) if type(v).__name__ == "constexpr" else v)
                for n, v in zip(self.names, vals)}
        meta.update(lopts)
        return meta

    # ------------------------------------------------------------ compile
    def compile(self, vals, keys, consts, lopts, options, backend, key):
        dump = _dumper(options, self.fn, key)
        func = self.build_func(vals, keys, lopts, options, dump)
        kernel = get_backend(backend).compile(func, options)
        if getattr(self.fn, "repr", None) is not None:    # @jit(repr=f): the kernel's name
            kernel.name = str(self.fn.repr(self.specialization(vals, keys)))
        if options.explain:                               # TILEJIT_EXPLAIN=1
            print_explanation(kernel, func)
        if dump:
            for stage, text in (getattr(kernel, "asm", None) or {}).items():
                dump(stage, text if isinstance(text, str) else repr(text))
        if options.ptx_check and backend != "cuda":      # TILEJIT_PTX_CHECK=80,90
            from .ptx_check import check_cuda_ptx
            check_cuda_ptx(lambda: self.build_func(vals, keys, lopts, options, None),
                           options, self.name)
        return kernel

    def specialization(self, vals, keys):
        """Triton's view of one specialization, for ``@jit(repr=...)``: ``signature``
        (parameter -> type name, 'constexpr' for constexprs) and ``constants``."""
        import types
        sig, consts, it = {}, {}, iter(keys)
        for i, v in enumerate(vals):
            n = self.names[i]
            if self.is_constexpr[i] or v is None:
                sig[n], consts[n] = "constexpr", constexpr_value(v)
                continue
            k = next(it)
            plain = not (is_descriptor_key(k) or is_tuple_key(k))
            sig[n] = k[0] if plain else ("tensordesc" if is_descriptor_key(k) else "tuple")
            if plain and k[1] == 1:
                consts[n] = 1
        return types.SimpleNamespace(signature=sig, constants=consts)

    def build_func(self, vals, keys, lopts, options, dump):
        """The kernel's tile IR for this specialization, after the pass pipeline."""
        from ..frontend import build_ir
        from ..ir.types import dtype_from_name
        arg_types, spec = {}, {}
        it = iter(keys)
        for i, v in enumerate(vals):
            if self.is_constexpr[i] or v is None:
                continue
            k = next(it)
            if is_descriptor_key(k):
                arg_types[self.names[i]] = descriptor_arg_from_key(k)
                continue
            if is_tuple_key(k):
                arg_types[self.names[i]] = tuple_arg(k, v)
                continue
            arg_types[self.names[i]] = dtype_from_name(k[0])
            spec[self.names[i]] = (16 if k[1] == 16 else 1, k[1] == 1)
        constexprs = {n: constexpr_value(v) for n, v in zip(self.names, vals)
                      if self.is_constexpr[self.index[n]] or v is None}
        func = build_ir(self.fn, arg_types, constexprs, spec, dict(lopts),
                        keep_frames=options.traceback)
        for a in func.arguments:       # record the specialization on the IR arguments
            d, one = spec.get(a.name, (1, False))
            a.divisibility = max(a.divisibility, d)
            a.equal_to_1 = a.equal_to_1 or one
        for k, v in lopts:
            func.attrs[k] = v
        if dump:
            dump("ttir", _print(func))
        from ..transforms import run_pipeline
        return run_pipeline(func, options, dump=dump)


_EQUAL_TO_INTS = (bool, float, np.bool_, np.float32, np.float64)


def constexpr_value(v):
    """A constexpr argument's value: ``tl.constexpr`` unwrapped, a numpy scalar
    (``np.int32(16)``, ``np.float32``, ``np.bool_``) as the Python number it holds."""
    if type(v).__name__ == "constexpr":
        v = getattr(v, "value", v)
    if isinstance(v, np.generic) and v.dtype.kind in "biuf":
        v = v.item()
    return v


def _constexpr_key(v):
    v = constexpr_value(v)
    if type(v) is float:              # repr keeps -0.0 from 0.0 and makes nan equal to nan
        return ("float", repr(v))
    if type(v) in _EQUAL_TO_INTS:     # True == 1 == 1.0 hash alike: keep them apart
        return (type(v).__name__, v)
    try:
        hash(v)
        return v
    except TypeError:
        return ("unhashable", type(v).__qualname__, repr(v))


def _print(func) -> str:
    from ..ir.printer import print_function
    return print_function(func)


def _dumper(options, fn, key):
    """``dump(stage, text)`` writing <dump_dir>/<kernel>-<hash>/<NN-stage>.txt, or None."""
    if not options.dump_dir:
        return None
    h = hashlib.sha256((fn.src + repr(key)).encode()).hexdigest()[:12]
    directory = os.path.join(options.dump_dir, f"{fn.__name__}-{h}")
    counter = [0]

    def dump(stage: str, text: str) -> None:
        os.makedirs(directory, exist_ok=True)
        counter[0] += 1
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stage)
        path = os.path.join(directory, f"{counter[0]:02d}-{safe}.txt")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return dump
