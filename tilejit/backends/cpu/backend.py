"""The compiled CPU backend ("cpu"): tile IR -> LLVM IR -> host machine code (MCJIT).

``CPUBackend().compile(func, options) -> CPUKernel``; ``CPUKernel.launch(grid3,
LaunchArgs)`` runs every program of the grid, on a thread pool when the grid has
more than one program (``options.num_threads``; 0 = all cores), the GIL released
during native calls.  ``CPUKernel.asm`` has 'llir', 'llir-opt' and 'asm' (the
latter computed on first access unless ``options.dump_dir`` is set).
"""
from __future__ import annotations

import ctypes
import struct
import threading
from time import perf_counter
from collections.abc import Mapping

from .. import Backend, CompiledKernel, LaunchArgs, register_backend
from ..llvm import binding
from . import streaming
from .codegen import CHUNK, build_module
from .vectorize import CPU_ACCESS, GRID_BOUND, choose_facts
from .sanitize import EXTRA_SLOTS, OOB_BASE, buffer_table, raise_oob
from ...runtime.validate import CUDA_MAX_YZ, MAX_PROGRAMS
from .pool import Sizing, choose_threads, get_pool
from ...errors import DeviceAssertionError
from .runner import (BIG_FRAME, ArgBuffer, arg_format, chunk_function,
                     coerce_values, default_threads, run_on_worker, run_parallel)

_LIBM_DONE = False
_COMPILE_LOCK = threading.Lock()


def _ensure_libm():
    """Make libm's symbols (erff, tanhf, ...) visible to the JIT's symbol lookup."""
    global _LIBM_DONE
    if _LIBM_DONE:
        return
    import llvmlite.binding as llvm
    if not llvm.address_of_symbol("erff"):
        import ctypes.util
        name = ctypes.util.find_library("m")
        if name:
            llvm.load_library_permanently(name)
    _LIBM_DONE = True


class _Asm(Mapping):
    """Stage texts; 'asm' is emitted on first access (it costs a codegen)."""

    def __init__(self, llir, llir_opt):
        self._d = {"llir": llir, "llir-opt": llir_opt}

    def __getitem__(self, key):
        if key == "asm" and key not in self._d:
            tm = binding.host_target_machine()
            self._d["asm"] = binding.emit_assembly(binding.parse_module(self._d["llir-opt"], tm), tm)
        return self._d[key]

    def __iter__(self):
        return iter(("llir", "llir-opt", "asm"))

    def __len__(self):
        return 3


def _native_runner(kernel):
    """The kernel's native pack-and-run builtin (native_run.py), or None (also when
    the options say ``native_call=False``)."""
    from ...runtime.options import get_options
    from .native_run import native_runner
    if not get_options().native_call:
        return None
    try:
        return native_runner(kernel._dtypes, kernel._fn_addr)
    except Exception:          # an optimisation: the ctypes path stays
        return None


class CPUKernel(CompiledKernel):
    def __init__(self, func, engine, fn_addr, asserts, llir, llir_opt, num_threads, frame_bytes=0,
                 stream_from=MAX_PROGRAMS + 1):
        super().__init__(func.name, func)
        self.stream_from = stream_from           # launches of this many programs run _streaming()
        self.frame_bytes = frame_bytes
        self.big_frame = frame_bytes > BIG_FRAME
        self.asm = _Asm(llir, llir_opt)
        self._engine = engine                    # keeps the machine code alive
        self._fn = chunk_function(fn_addr)
        self._fn_addr = fn_addr
        self._asserts = asserts
        self._dtypes = [a.value.type.element for a in func.arguments]
        self._nargs = len(self._dtypes)
        self._fmt = arg_format(self._dtypes)
        self._size = self._fmt.size + 16 + 8 * EXTRA_SLOTS
        self._accesses = []
        self.sanitize = False
        self._buf = ArgBuffer(self._size)
        self._busy = threading.Lock()
        self.num_threads = num_threads or default_threads()
        self.sizing = Sizing()                   # time per program, for the pool (pool.py)
        # [most programs the native lane runs on the calling thread, most cycles such a run may take]
        self._inline = (ctypes.c_int64 * 2)(self._inline_cap(MAX_PROGRAMS if self.num_threads <= 1 else 1), 2 ** 62)

    backend_name = "cpu"
    facts = None             # the analysis facts it was compiled with (TILEJIT_EXPLAIN)
    grid_bound = None        # (bx, by, bz) the code was compiled under (vectorize.py)
    _general = None          # () -> the variant compiled without a grid bound
    _streaming = None        # () -> the variant with streamed stores (streaming.py)

    def _inline_cap(self, limit):
        """The native lane runs no launch that must stream (it goes through launch())."""
        return min(limit, self.stream_from - 1)

    def launch(self, grid, args, **launch_options):
        gx, gy, gz = grid
        gb = self.grid_bound
        if gb is not None and (gx > gb[0] or gy > gb[1] or gz > gb[2]):
            return self._general().launch(grid, args, **launch_options)
        n = gx * gy * gz
        if n <= 0:
            return
        if n >= self.stream_from:
            return self._streaming().launch(grid, args, **launch_options)
        if n >= 2**31:
            raise ValueError(f"grid {grid} has too many programs ({n})")
        mine = self._busy.acquire(False)
        buf = self._buf if mine else ArgBuffer(self._size)
        try:
            try:
                self._fmt.pack_into(buf.raw, 0, *args.values, gx, gy, gz)
            except (struct.error, TypeError):
                self._fmt.pack_into(buf.raw, 0, *coerce_values(args.values, self._dtypes), gx, gy, gz)
            if self.sanitize:
                table, count = buffer_table(args.buffers)
                buf.set_table(self._nargs, table, count)
            status = self._run(buf, n, launch_options.get("num_threads") or self.num_threads)
            if status:
                self._fail(buf, args)
        finally:
            if mine:
                self._busy.release()

    def _run(self, buf, n, max_threads):
        """Run programs [0, n): on this thread when the pool's sizing says one thread
        (pool.py), else on the pool; the status."""
        if self.big_frame:
            if n == 1 or max_threads <= 1:
                return run_on_worker(self._fn, buf.ptr, n)
            return run_parallel(self._fn, buf.ptr, n, min(max_threads, n), True)
        if n == 1 or max_threads <= 1:
            return self._fn(buf.ptr, 0, n)
        pool = get_pool(max_threads - 1)
        k = choose_threads(n, self.sizing.ns_per_program, max_threads, pool.free_cores(), pool.wake_ns)
        t0 = perf_counter()
        if k == 1:
            status = self._fn(buf.ptr, 0, n)
        else:
            status, k = pool.run(self._fn_addr, buf.ptr.value, n, k)
        self.sizing.note(n, perf_counter() - t0, k)
        self._inline[0] = self._inline_cap(self.sizing.inline_limit(pool.wake_ns, MAX_PROGRAMS))
        self._inline[1] = int(8 * pool.wake_ns * pool.cycles_per_ns)
        return status

    def _fail(self, buf, args):
        """Raise the report of a launch whose status was nonzero."""
        rec = buf.error(self._nargs)
        if rec[0] >= OOB_BASE:
            raise_oob(self, rec, args.buffers)
        self._raise(rec)

    def fast_runner(self):
        """``run(values, vals, gx, gy, gz) -> self`` for the runtime's express lane
        (runtime/express.py), or None for sanitized kernels (they need buffers).

        A one-program launch packs ``values`` into an argument buffer taken from a
        free list (list pop/append are atomic under the GIL; a concurrent launch gets
        a fresh buffer) whose grid slots hold (1, 1, 1) already, and calls the native
        entry on this thread; every other launch goes through :meth:`launch`."""
        if self.sanitize or self.big_frame:
            return None
        fmt = self._fmt
        pack = struct.Struct(fmt.format[:-3]).pack_into      # the values, not the grid
        fn, dtypes, grid_at = self._fn, self._dtypes, fmt.size - 24
        native = _native_runner(self)

        def fresh():
            buf = ArgBuffer(self._size)
            struct.pack_into("<qqq", buf.raw, grid_at, 1, 1, 1)
            return buf.raw, buf.ptr, buf, buf.ptr.value
        free = [fresh()]

        def run(values, vals, gx, gy, gz):
            if gx != 1 or gy != 1 or gz != 1 or self.stream_from <= 1:
                self.launch((gx, gy, gz), LaunchArgs(values, None, vals))
                return self
            try:
                entry = free.pop()
            except IndexError:
                entry = fresh()
            try:
                status = None
                if native is not None:
                    try:                # pack + run in one native call (native_run.py)
                        status = native(entry[3], *values)
                    except TypeError:   # None pointers, odd scalars: packed in Python
                        pass
                if status is None:
                    try:
                        pack(entry[0], 0, *values)
                    except (struct.error, TypeError):
                        pack(entry[0], 0, *coerce_values(values, dtypes))
                    status = fn(entry[1], 0, 1)
                if status:
                    self._fail(entry[2], LaunchArgs(values, None, vals))
            finally:
                free.append(entry)
            return self
        return run

    def inline_programs(self):
        """What the native express lane (native_go.py) may run of this kernel on the
        calling thread: ``((1, 1, 1), grid maxima, address of [most programs, most
        cycles]`` (kept current by the pool's sizing), or None when it
        must not run it (sanitized kernels need their buffers; big frames a worker)."""
        if self.sanitize or self.big_frame:
            return None
        gb = self.grid_bound or (MAX_PROGRAMS,) * 3
        gmax = (min(gb[0], MAX_PROGRAMS), min(gb[1], CUDA_MAX_YZ), min(gb[2], CUDA_MAX_YZ))
        return (1, 1, 1), gmax, ctypes.addressof(self._inline)

    def native_block(self) -> ArgBuffer:
        """A fresh argument block for the native express lane."""
        return ArgBuffer(self._size)

    def native_report(self, block):
        """``report()`` raising the error record of a failed launch that used ``block``."""
        def report():
            self._fail(block, LaunchArgs([], [], ()))
            raise RuntimeError(f"{self.name}: a launch failed without an error record")
        return report

    def _raise(self, err):
        op = self._asserts[err[0] - 1]
        from ...transforms.sanitize import overflow_error     # sanitize mode's offset checks
        oe = overflow_error(op, kernel=self.name, loc=op.loc, program_id=(err[1], err[2], err[3]))
        if oe is not None:
            raise oe
        msg = op.msg if op.msg else "device assertion failed"
        raise DeviceAssertionError(f"device assertion failed: {msg}", kernel=self.name, loc=op.loc,
                                   program_id=(err[1], err[2], err[3]))


class CPUBackend(Backend):
    name = "cpu"

    def __init__(self):
        self._lock = threading.Lock()

    def is_available(self) -> bool:
        return True

    def compile(self, func, options, bounded: bool = True, stream: bool = False) -> CPUKernel:
        """``bounded``: the analysis may assume vectorize.GRID_BOUND programs per axis
        (the kernel then checks every launch's grid against it); ``stream``: the
        variant whose streamable stores are non-temporal (streaming.py)."""
        key = (options.sanitize, options.vectorize, options.align_version, options.num_threads,
               options.dump_dir, options.cpu_opt_level, options.cpu_loop_unroll, options.cpu_stream_bytes,
               GRID_BOUND if bounded else None, stream)
        # variants live on the IR function itself (a kernel refers to its function, so
        # a cache keyed weakly by the function would keep both alive forever); the
        # launcher dropping its kernel frees function, variants and machine code together
        per_func = func.__dict__.get("_cpu_variants")
        if per_func is not None and key in per_func:
            return per_func[key]
        from .. import reject_16bit_float_minmax
        reject_16bit_float_minmax(func, "the cpu backend")
        with _COMPILE_LOCK:          # LLVM contexts are not shared across threads safely
            kernel = self._compile(func, options, bounded, stream)
        with self._lock:
            func.__dict__.setdefault("_cpu_variants", {})[key] = kernel
        return kernel

    def _compile(self, func, options, bounded=True, stream=False) -> CPUKernel:
        tm = binding.host_target_machine()
        _ensure_libm()
        if options.vectorize and options.align_version and not options.sanitize:
            from ...transforms.align_version import align_version
            align_version(func, limits=CPU_ACCESS)   # dot loops on run-time range checks
        facts, bound = choose_facts(func, options, allow_bound=bounded)
        module, asserts = build_module(func, options, triple=tm.triple,
                                       data_layout=binding.data_layout_of(tm), facts=facts, stream=stream)
        llir = str(module)
        # parse + optimize + JIT; the optimized IR and the object code come from the
        # disk cache when an earlier process compiled the same module (runtime/cache.py)
        from ...runtime.cache import cpu_compile_cached
        engine, llir_opt = cpu_compile_cached(llir, tm, options)
        addr = engine.get_function_address(CHUNK)
        kernel = CPUKernel(func, engine, addr, asserts, llir, llir_opt, options.num_threads,
                           module.frame_bytes, _stream_from(module, options, stream))
        if kernel.stream_from <= MAX_PROGRAMS:
            kernel._streaming = lambda: self.compile(func, options, bounded, stream=True)
        kernel._accesses, kernel.sanitize = module.accesses, bool(options.sanitize)
        kernel.facts = facts
        if bound is not None:        # launches beyond the bound run the unbounded variant
            kernel.grid_bound = bound
            kernel._general = lambda: self.compile(func, options, bounded=False, stream=stream)
        return kernel     # stage dumps (TILEJIT_DUMP_DIR) are written by the runtime from .asm


def _stream_from(module, options, stream) -> int:
    """Programs from which a launch of ``module``'s kernel streams its stores (more
    than MAX_PROGRAMS: never; streaming.py)."""
    per_program, limit = streaming.program_bytes(module), streaming.threshold_bytes(options)
    if stream or not per_program or limit <= 0:
        return MAX_PROGRAMS + 1
    return max(1, -(-limit // per_program))


register_backend("cpu", CPUBackend)
