"""A bounded soak: random kernels from the source fuzzer (test_fuzz_analysis_source),
launched from several threads with random arrays (fresh, offset for other alignments,
read-only inputs, read-only outputs that must be refused), with an in-memory kernel
cache small enough to keep evicting; every result is checked against the reference
interpreter.  ``TILEJIT_SOAK_LAUNCHES=N`` runs N launches per thread (default 150)."""
import os
import random
import threading

import numpy as np
import pytest

from tilejit.backends import available_backends
from tilejit.runtime.options import use_options
from test_fuzz_analysis_source import make_kernel

LAUNCHES = int(os.environ.get("TILEJIT_SOAK_LAUNCHES", "150") or 150)
THREADS = 4
KERNELS = 10


def _cases(tmp_dir):
    """(kernel, block, args, grid, src, reference) with the reference from the interpreter."""
    cases = []
    for seed in range(KERNELS):
        kernel, expr, block, args, grid, src = make_kernel(1000 + seed, tmp_dir)
        with use_options(backend="interpreter", interpret=True):
            ref = np.zeros(grid * block, np.int64)
            kernel[(grid,)](src, ref, *args, BLOCK=block)
        cases.append((kernel, expr, block, args, grid, src, ref))
    return cases


def _src_view(src, r):
    """``src``'s values at a random offset into a larger buffer (another alignment,
    another specialization), sometimes read-only (the kernels only read it)."""
    off = r.randrange(4)
    buf = np.zeros(len(src) + 8, np.int32)
    view = buf[off:off + len(src)]
    view[:] = src
    if r.random() < 0.25:
        view.flags.writeable = False
    return view


def _worker(cases, seed, failures):
    r = random.Random(seed)
    try:
        for _ in range(LAUNCHES):
            kernel, expr, block, args, grid, src, ref = r.choice(cases)
            view = _src_view(src, r)
            dst = np.zeros(grid * block, np.int64)
            if r.random() < 0.1:
                dst.flags.writeable = False
                try:
                    kernel[(grid,)](view, dst, *args, BLOCK=block)
                except ValueError as e:
                    assert "'dst_ptr' is a read-only array" in str(e), e
                else:
                    raise AssertionError(f"a read-only output was accepted: {expr}")
                assert not dst.any()
                continue
            kernel[(grid,)](view, dst, *args, BLOCK=block)
            if not np.array_equal(dst, ref):
                raise AssertionError(f"wrong result for {expr} with {args}, grid {grid}")
    except BaseException as e:          # reported by the main thread
        failures.append(e)


@pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")
def test_soak_threads_random_kernels_and_arrays(tmp_path):
    cases = _cases(str(tmp_path))
    failures: list = []
    with use_options(backend="cpu", interpret=False, kernel_cache_size=1):
        threads = [threading.Thread(target=_worker, args=(cases, s, failures))
                   for s in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
    assert not any(t.is_alive() for t in threads)
    if failures:
        raise failures[0]
