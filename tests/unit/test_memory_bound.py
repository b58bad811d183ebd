"""Compiled kernels held in memory are bounded (Options.kernel_cache_size, least
recently used dropped) and ``kernel.cache.clear()`` frees them: resident memory
over 2,000 specializations of one kernel stays flat."""
import os
import subprocess
import sys

import pytest

from tilejit.backends import available_backends
from tilejit.runtime.launcher import _KernelCache
from tilejit.runtime.options import Options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = '''
import gc, os, weakref
import numpy as np
import tilejit, tilejit.language as tl

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20

@tilejit.jit
def k(out, C: tl.constexpr):       # every C compiles the same LLVM IR: disk-cache hits
    tl.store(out, 7 + C * 0)

out = np.zeros(1, np.int64)
hot = k.warmup(out, C=-1, grid=(1,))
for i in range(100):               # warm up allocators and caches
    k[(1,)](out, C=i)
    k[(1,)](out, C=-1)             # the hot kernel, through the express lane
gc.collect()
r0 = rss_mib()
first = weakref.ref(k.warmup(out, C=100, grid=(1,)))
for i in range(100, 2000):
    k[(1,)](out, C=i)
    k[(1,)](out, C=-1)
    assert out[0] == 7
gc.collect()
r1 = rss_mib()
assert len(k.cache) <= 16, len(k.cache)
assert first() is None, "a dropped kernel stayed alive"
assert k.warmup(out, C=-1, grid=(1,)) is hot, "the most used kernel was dropped"
last = weakref.ref(k.warmup(out, C=1999, grid=(1,)))
k.cache.clear()
gc.collect()
assert len(k.cache) == 0 and last() is None, "cache.clear() kept a kernel alive"
print(f"{r1 - r0:.1f}")
'''


@pytest.mark.skipif("cpu" not in available_backends(), reason="cpu backend unavailable")
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc for RSS")
def test_rss_stays_flat_over_2000_specializations(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               TILEJIT_CACHE_DIR=str(tmp_path / "cache"), TILEJIT_BACKEND="cpu",
               TILEJIT_KERNEL_CACHE_SIZE="16")
    env.pop("TILEJIT_INTERPRET", None)
    script = tmp_path / "specs.py"
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    grown = float(r.stdout.split()[-1])
    # before the bound: ~0.8-1.8 MiB per specialization (over 1.4 GiB here)
    assert grown < 64, f"RSS grew {grown} MiB over 1,900 specializations"


def test_kernel_cache_drops_least_recently_used():
    lane: set = set()
    changes = []
    c = _KernelCache(lambda: changes.append(1), lambda: lane)
    c.limit = 3
    objs = {k: object() for k in "abcde"}
    for k in "abc":
        c[k] = objs[k]
    c.touch("a", objs["a"])          # used through the general path
    c["d"] = objs["d"]               # drops b
    assert list(c) == ["c", "a", "d"]
    lane.add(id(objs["c"]))          # c ran through the express lane since
    c["e"] = objs["e"]               # drops a, not c
    assert sorted(c) == ["c", "d", "e"] and len(changes) == 5
    c.limit = 0                      # no limit
    for i in range(10):
        c[i] = i
    assert len(c) == 13


def test_limit_is_an_option():
    assert Options.from_env({}).kernel_cache_size == 1024
    assert Options.from_env({"TILEJIT_KERNEL_CACHE_SIZE": "64"}).kernel_cache_size == 64
