"""Atomic orderings on CUDA (rules_atomic.py): NVPTX drops the ordering of
``atomicrmw`` and makes an ordered ``cmpxchg`` system-scoped, so the backend emits
the atomics relaxed and makes ``sem`` with fences at ``scope``.  The lock of
layer-norm backward must get a release fence before and an acquire fence after
each atomic, at GPU scope; relaxed atomics get none.  No GPU needed."""
from __future__ import annotations

import re
import subprocess

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def locked_add(Lock, Data, X, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(X + cols, mask=m)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.store(Data + cols, tl.load(Data + cols, mask=m) + x, mask=m)
    tl.atomic_xchg(Lock, 0)


@tilejit.jit
def counted(Counts, X, N, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    m = cols < N
    tl.atomic_add(Counts + cols, tl.load(X + cols, mask=m), mask=m, sem=SEM, scope=SCOPE)


def _ptx(kernel, sig, **constexprs):
    return tilejit.compile(kernel, signature=sig, constexprs=constexprs, divisible_by_16=(),
                           target="cuda:90", num_warps=4).asm["ptx"]


LOCK_SIG = {"Lock": "*i32", "Data": "*fp32", "X": "*fp32", "N": "i32"}
COUNT_SIG = {"Counts": "*fp32", "X": "*fp32", "N": "i32"}


def test_lock_is_released_and_acquired_at_gpu_scope():
    ptx = _ptx(locked_add, LOCK_SIG, BLOCK=256)
    assert ".sys" not in ptx.replace("atom.relaxed.sys.global.cas", "")
    cas = re.findall(r"atom\.[\w.]*cas\.b32", ptx)
    assert cas == ["atom.relaxed.sys.global.cas.b32"]
    assert len(re.findall(r"atom\.global\.exch\.b32", ptx)) == 1
    # every atomic sits between a release fence and an acquire fence (both acq_rel.gpu)
    fences = [m.start() for m in re.finditer(r"fence\.acq_rel\.gpu;", ptx)]
    for m in re.finditer(r"atom\.[\w.]+", ptx):
        assert any(f < m.start() for f in fences) and any(f > m.start() for f in fences)
    assert len(fences) == 4


@pytest.mark.parametrize("sem,scope,fences", [("relaxed", "gpu", []),
                                              ("acq_rel", "gpu", ["fence.acq_rel.gpu"] * 2),
                                              ("release", "cta", ["fence.acq_rel.cta"]),
                                              ("acquire", "sys", ["fence.acq_rel.sys"])])
def test_sem_and_scope_become_fences(sem, scope, fences):
    ptx = _ptx(counted, COUNT_SIG, SEM=sem, SCOPE=scope, BLOCK=128)
    assert re.findall(r"fence\.[\w.]+", ptx) == fences
    assert "atom.global.add.f32" in ptx


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
def test_fenced_atomics_assemble(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(_ptx(locked_add, LOCK_SIG, BLOCK=256))
    r = subprocess.run([tgt.find_ptxas(), "-arch=sm_90", str(f), "-o", "/dev/null"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
