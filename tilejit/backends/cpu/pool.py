"""The CPU backend's thread pool and how many of its threads a launch uses.

A grid runs as chunks of programs handed out by an atomic counter in native code
(``work(state)``, compiled once per process): the calling thread takes chunks
from the start, the workers woken for the launch take chunks when they get a
core, and the caller waits only for workers that are running a chunk -- a worker
that starts after the last chunk was taken does nothing, so a launch is never held
up by threads the machine has no core for (an oversubscribed machine).

How many threads (:func:`choose_threads`), per launch, from

* the launch's work: programs times the kernel's measured time per program
  (:class:`Sizing`, a running estimate kept on the compiled kernel; unknown before
  the first launch, which then uses every thread it may);
* the cost of waking a worker (measured when the pool starts, then kept up to date
  from how late the woken workers start -- which grows with the machine's load);
* the cores actually free: the process's CPU affinity less the other runnable
  tasks (``/proc/loadavg``'s runnable count, else the load average, sampled at most
  every ``SAMPLE_S`` seconds, less this process's own share);
* the most threads the options allow (``Options.num_threads``, 0: the affinity).

A launch whose work is less than twice a wake-up runs on the calling thread alone;
the k-th thread is added only while the work is at least ``2 * k * (k - 1)``
wake-ups.  Nothing here is a switch: the inputs are measured, the maximum is the
options' ``num_threads``.
"""
from __future__ import annotations

import ctypes
import os
import queue
import threading
import time

from llvmlite import ir

CHUNKS_PER_THREAD = 8
SAMPLE_S = 0.2               # how often the load is read again
WORKER_STACK = 256 << 20     # per-program tiles live on the worker's stack


def affinity() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def choose_threads(programs: int, ns_per_program, max_threads: int, free_cores: int,
                   wake_ns: float) -> int:
    """Threads (the caller included) for a launch of ``programs`` programs: 1 when the
    work is under two wake-ups, else the most threads k <= min(max_threads, programs,
    free_cores) with ``2 * k * (k - 1)`` wake-ups of work; every allowed thread
    while the time per program is unknown (None)."""
    k_max = max(1, min(max_threads, programs, free_cores))
    if programs <= 1 or k_max == 1:
        return 1
    if ns_per_program is None:
        return k_max
    budget = ns_per_program * programs / max(wake_ns, 1.0)
    k = 1
    while k < k_max and 2 * (k + 1) * k <= budget:
        k += 1
    return k


class Sizing:
    """A kernel's running estimate of its time per program (ns), from its launches:
    ``note(programs, seconds, threads)`` after each one that ran ``threads`` threads
    for ``seconds``; ``inline_limit(wake_ns)``: the most programs a launch runs on
    the calling thread (1 while the estimate is unknown).

    A faster launch lowers the estimate at once, a slower one raises it by at most
    ``RISE`` per launch: what inflates a launch's time (preemption on a busy machine,
    the pool's wake-ups, a first launch's cold caches) is noise on top of the work,
    and an average would carry it into the next launches' choice (a 2^16 vector add
    kept on the pool for ~10 launches after its first: 37 GB/s there, 80 after)."""

    __slots__ = ("ns_per_program",)
    RISE = 1.25

    def __init__(self):
        self.ns_per_program = None

    def note(self, programs: int, seconds: float, threads: int) -> None:
        if programs <= 0:
            return
        ns = seconds * 1e9 * threads / programs
        old = self.ns_per_program
        self.ns_per_program = ns if old is None else min(ns, old * self.RISE)

    def inline_limit(self, wake_ns: float, cap: int) -> int:
        ns = self.ns_per_program
        if ns is None:
            return 1
        return max(1, min(cap, int(2 * wake_ns / max(ns, 1e-3))))


# ---------------------------------------------------------------- native chunk loop
def _build_work():
    """``i64 work(i64 *state)``: take chunks until none is left (or one failed);
    the number taken.  state: [entry, args, programs, chunk size, chunks, next
    chunk, status]."""
    i64, i32, i8p = ir.IntType(64), ir.IntType(32), ir.IntType(8).as_pointer()
    module = ir.Module(name="tilejit_pool")
    fn = ir.Function(module, ir.FunctionType(i64, [i64.as_pointer()]), name="work")
    state = fn.args[0]
    entry_b, loop, body, done = (fn.append_basic_block(n) for n in ("entry", "loop", "body", "done"))
    b = ir.IRBuilder(entry_b)
    slot = lambda i: b.gep(state, [ir.Constant(i64, i)])     # noqa: E731
    b.branch(loop)
    b.position_at_end(loop)
    taken = b.phi(i64)
    taken.add_incoming(ir.Constant(i64, 0), entry_b)
    c = b.atomic_rmw("add", slot(5), ir.Constant(i64, 1), "monotonic")
    failed = b.icmp_unsigned("!=", b.load_atomic(slot(6), "monotonic", 8), ir.Constant(i64, 0))
    more = b.icmp_signed("<", c, b.load(slot(4)))
    b.cbranch(b.and_(more, b.not_(failed)), body, done)
    b.position_at_end(body)
    n, size = b.load(slot(2)), b.load(slot(3))
    start = b.mul(c, size)
    end = b.add(start, size)
    end = b.select(b.icmp_signed("<", end, n), end, n)
    ety = ir.FunctionType(i32, [i8p, i32, i32])
    entry = b.inttoptr(b.load(slot(0)), ety.as_pointer())
    st = b.call(entry, [b.inttoptr(b.load(slot(1)), i8p), b.trunc(start, i32), b.trunc(end, i32)])
    nz = b.icmp_signed("!=", st, ir.Constant(i32, 0))
    with b.if_then(nz):
        b.cmpxchg(slot(6), ir.Constant(i64, 0), b.sext(st, i64), "monotonic", "monotonic")
    taken.add_incoming(b.add(taken, ir.Constant(i64, 1)), b.block)
    b.branch(loop)
    b.position_at_end(done)
    b.ret(taken)
    cycles = ir.Function(module, ir.FunctionType(i64, []), name="cycles")
    b = ir.IRBuilder(cycles.append_basic_block())
    b.ret(b.call(ir.Function(module, ir.FunctionType(i64, []), name="llvm.readcyclecounter"), []))
    return module


_work = None
_work_lock = threading.Lock()


def _work_fn():
    """The compiled chunk loop, as a ctypes function (the GIL is released while it runs)."""
    global _work
    with _work_lock:
        if _work is None:
            from ..llvm import binding
            tm = binding.new_host_target_machine()
            engine = binding.create_engine(binding.parse_module(str(_build_work()), tm), tm)
            fn = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)(engine.get_function_address("work"))
            cycles = ctypes.CFUNCTYPE(ctypes.c_int64)(engine.get_function_address("cycles"))
            _work = (fn, engine, cycles)
    return _work[0]


def cycles_per_ns() -> float:
    """The cycle counter's rate (what ``llvm.readcyclecounter`` counts per ns)."""
    _work_fn()
    cycles = _work[2]
    t0, c0 = time.perf_counter(), cycles()
    while time.perf_counter() - t0 < 0.005:
        pass
    t1, c1 = time.perf_counter(), cycles()
    return max((c1 - c0) / ((t1 - t0) * 1e9), 1e-3)


# ---------------------------------------------------------------- the pool
class _Job:
    __slots__ = ("state", "addr", "lock", "active", "closed", "waiting", "done", "posted",
                 "late_ns", "helped", "helpers")

    def __init__(self, entry, argp, n, size, chunks):
        self.state = (ctypes.c_int64 * 7)(entry, argp, n, size, chunks, 0, 0)
        self.addr = ctypes.addressof(self.state)
        self.lock = threading.Lock()
        self.active = self.helped = self.helpers = 0
        self.closed = self.waiting = False
        self.done = threading.Lock()
        self.done.acquire()
        self.posted = time.perf_counter()
        self.late_ns = []


class Pool:
    """Worker threads (big stacks) that take chunks of posted jobs, and the machine's
    state the sizing reads (:meth:`free_cores`, ``wake_ns``)."""

    def __init__(self, workers: int):
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.workers = 0
        self.cores = affinity()
        self.wake_ns = 50_000.0
        self._free = self.cores
        self._others = 0.0
        self.busy_workers = 0     # workers running a job's chunks now
        self._sampled = 0.0
        self._cpu = (time.perf_counter(), time.process_time())
        self.base_wake_ns = self.wake_ns
        self.cycles_per_ns = cycles_per_ns()
        self.grow(workers)
        if workers:
            self.wake_ns = self._measure_wake()

    def grow(self, workers: int) -> None:
        """Start workers until there are ``workers``."""
        with self.lock:
            if self.workers >= workers:
                return
            old = threading.stack_size(WORKER_STACK)
            try:
                for _ in range(workers - self.workers):
                    threading.Thread(target=self._loop, name="tilejit-cpu", daemon=True).start()
                    self.workers += 1
            finally:
                threading.stack_size(old)

    def _measure_wake(self) -> float:
        """The least of a few wake-ups of an idle worker (ns)."""
        best = self.wake_ns
        for _ in range(5):
            job = _Job(0, 0, 0, 1, 0)
            self.queue.put(job)
            deadline = time.perf_counter() + 1.0
            while not job.late_ns and time.perf_counter() < deadline:
                time.sleep(0)
            if job.late_ns:
                best = min(best, job.late_ns[0])
        self.base_wake_ns = max(best, 1000.0)
        return self.base_wake_ns

    def _loop(self):
        work = _work_fn()
        while True:
            job = self.queue.get()
            start = time.perf_counter()
            with job.lock:
                job.late_ns.append((start - job.posted) * 1e9)
                if job.closed:
                    continue
                job.active += 1
            self.busy_workers += 1            # under the GIL: an estimate, not a lock
            taken = work(job.addr)
            self.busy_workers -= 1
            with job.lock:
                job.active -= 1
                job.helped += taken
                job.helpers += taken > 0
                if job.closed and job.active == 0 and job.waiting:
                    job.waiting = False
                    job.done.release()

    def run(self, entry: int, argp: int, n: int, threads: int) -> tuple:
        """Run programs [0, n) of ``entry`` with the caller and up to ``threads - 1``
        workers: (the first nonzero status (0: all succeeded), the threads that ran
        programs)."""
        chunks = min(n, threads * CHUNKS_PER_THREAD)
        size = -(-n // chunks)
        chunks = -(-n // size)
        job = _Job(entry, argp, n, size, chunks)
        if self.workers < threads - 1:
            self.grow(threads - 1)
        for _ in range(threads - 1):
            self.queue.put(job)
        _work_fn()(job.addr)
        with job.lock:
            job.closed = True
            job.waiting = job.active > 0
        if job.waiting:
            job.done.acquire()
        self._learn(job, threads)
        return int(job.state[6]), 1 + job.helpers

    def _learn(self, job, threads):
        """Keep the wake-up cost current from how late this job's workers started
        (one that had not started by the end counts the job's whole time)."""
        now = time.perf_counter()
        with job.lock:
            late = list(job.late_ns)
        waited = (now - job.posted) * 1e9
        late += [waited] * (threads - 1 - len(late))
        if late:
            self.wake_ns = 0.8 * self.wake_ns + 0.2 * max(1000.0, min(late))

    def free_cores(self) -> int:
        """The cores not taken by other processes' runnable tasks (sampled every
        ``SAMPLE_S`` seconds)."""
        now = time.perf_counter()
        if now - self._sampled >= SAMPLE_S:
            self._sampled = now
            self._free = self._sample(now)
        return self._free

    def _sample(self, now) -> int:
        """Free cores: the affinity less the other tasks that are runnable now (this
        thread and the pool's busy workers not counted; without /proc/loadavg, the
        load average less this process's CPU use since the last sample), smoothed."""
        cpu = time.process_time()
        wall0, cpu0 = self._cpu
        self._cpu = (now, cpu)
        runnable = _runnable_tasks()
        if runnable is not None:
            others = max(0.0, runnable - 1 - self.busy_workers)
        else:
            own = (cpu - cpu0) / max(now - wall0, 1e-6)
            others = max(0.0, os.getloadavg()[0] - own)
        self._others = others = 0.5 * self._others + 0.5 * others
        if others < 0.5:          # a quiet machine: wake-ups cost what they did at the start
            self.wake_ns = max(self.base_wake_ns, 0.5 * self.wake_ns)
        return max(1, min(self.cores, int(self.cores - others + 0.5)))


def _runnable_tasks():
    """The number of runnable tasks on the machine now (``/proc/loadavg``), or None."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


_POOL = None
_POOL_LOCK = threading.Lock()


def _forget_pool():
    """In a forked child the workers are gone: start a new pool on its first launch."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def get_pool(workers: int) -> Pool:
    """The process's pool with at least ``workers`` workers."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = Pool(workers)
    if _POOL.workers < workers:
        _POOL.grow(workers)
    return _POOL
