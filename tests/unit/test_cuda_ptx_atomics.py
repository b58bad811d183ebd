"""Atomic orderings on CUDA (rules_atomic.py).  A scalar atomic (thread 0 acting for
the CTA, as in the lock of layer-norm backward) is one PTX ``atom`` carrying the op's
``sem`` and ``scope`` (``atom.global.acq_rel.gpu.cas.b32``, ``atom.global.gpu.acq_rel.exch.b32``:
Triton's text, which Triton's own tests look for) between
CTA barriers, with no fences in the other threads; a tile atomic is made of fences at
``scope`` around relaxed ``atom`` instructions at ``scope``; atomics PTX has no
instruction for (float max/min) keep LLVM's CAS loop between fences.  No GPU needed."""
from __future__ import annotations

import re
import subprocess

import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt
from tests.cuda_switches import cuda_tuning


@pytest.fixture(autouse=True)
def ordered_asm():
    with cuda_tuning(ordered_atom_asm=True):
        yield


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


def _sass_free(ptx):
    return re.sub(r"//[^\n]*", "", ptx)


def test_lock_is_released_and_acquired_at_gpu_scope():
    ptx = _sass_free(_ptx(locked_add, LOCK_SIG, BLOCK=256))
    atoms = re.findall(r"(@%p\d+ )?(atom\.[\w.]+)", ptx)
    assert [a for _, a in atoms] == ["atom.global.acq_rel.gpu.cas.b32", "atom.global.gpu.acq_rel.exch.b32"]
    assert all(p for p, _ in atoms)              # predicated: one thread acts for the CTA
    assert "fence" not in ptx and "membar" not in ptx and ".sys" not in ptx
    # a CTA barrier before each (the CTA's earlier stores are released with it) and after
    # each (the CTA's later accesses follow the acquire)
    lines = [l.strip() for l in ptx.splitlines() if l.strip()]
    for k, l in enumerate(lines):
        if "atom." in l:
            assert any("bar.sync" in x for x in lines[max(0, k - 4):k]), lines[k - 4:k]
    # ... and one after each (the CAS's is the one that shares its old value)
    assert len(re.findall(r"bar\.sync", ptx)) == 4


@pytest.mark.parametrize("sem,scope,fences", [("relaxed", "gpu", []),
                                              ("acq_rel", "gpu", ["fence.acq_rel.gpu"] * 2),
                                              ("release", "cta", ["fence.acq_rel.cta"]),
                                              ("acquire", "sys", ["fence.acq_rel.sys"])])
def test_tile_atomics_sem_and_scope_become_fences(sem, scope, fences):
    ptx = _sass_free(_ptx(counted, COUNT_SIG, SEM=sem, SCOPE=scope, BLOCK=128))
    assert re.findall(r"fence\.[\w.]+", ptx) == fences
    # the atomics themselves are relaxed at the op's scope, predicated by the mask
    assert set(re.findall(r"atom\.[\w.]+", ptx)) == {f"atom.global.{scope}.relaxed.add.f32"}
    # the release fence comes before every atomic, the acquire fence after
    first, last = ptx.index("atom."), ptx.rindex("atom.")
    if sem in ("release", "acq_rel"):
        assert ptx.index("fence.") < first
    if sem in ("acquire", "acq_rel"):
        assert ptx.rindex("fence.") > last


@tilejit.jit
def scalar_op(Out, X, KIND: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    v = tl.load(X)
    if KIND == "add":
        old = tl.atomic_add(Out, v, sem=SEM, scope=SCOPE)
    elif KIND == "max":
        old = tl.atomic_max(Out, v, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_xchg(Out, v, sem=SEM, scope=SCOPE)
    tl.store(X + 1, old)


@pytest.mark.parametrize("kind,dt,sem,scope,want", [
    ("add", "fp32", "acq_rel", "gpu", "atom.global.gpu.acq_rel.add.f32"),
    ("add", "i64", "release", "sys", "atom.global.sys.release.add.u64"),
    ("add", "fp16", "acquire", "cta", "atom.global.cta.acquire.add.noftz.f16"),
    ("max", "i32", "relaxed", "gpu", "atom.global.gpu.relaxed.max.s32"),
    ("max", "u32", "acq_rel", "gpu", "atom.global.gpu.acq_rel.max.u32"),
    ("xchg", "fp64", "acq_rel", "sys", "atom.global.sys.acq_rel.exch.b64"),
])
def test_scalar_atomic_is_one_ordered_instruction(kind, dt, sem, scope, want):
    ptx = _sass_free(_ptx(scalar_op, {"Out": f"*{dt}", "X": f"*{dt}"}, KIND=kind, SEM=sem, SCOPE=scope))
    assert re.findall(r"atom\.[\w.]+", ptx) == [want]
    assert "fence" not in ptx
    # the old value reaches the other threads through shared memory
    assert "st.shared" in ptx and "ld.shared" in ptx


@pytest.mark.parametrize("dt,sem,bits", [("fp32", "acq_rel", 32), ("fp64", "relaxed", 64)])
def test_float_max_is_two_predicated_integer_atomics(dt, sem, bits):
    """Triton's lowering: atom.max.s on the bits for a value with its sign bit clear,
    atom.min.u for one with it set (one of the two executes); no CAS loop, no fence."""
    ptx = _sass_free(_ptx(scalar_op, {"Out": f"*{dt}", "X": f"*{dt}"}, KIND="max", SEM=sem, SCOPE="gpu"))
    assert re.findall(r"atom\.[\w.]+", ptx) == [f"atom.global.gpu.{sem}.max.s{bits}",
                                                f"atom.global.gpu.{sem}.min.u{bits}"]
    assert "cas" not in ptx and "fence" not in ptx
    assert len(re.findall(r"@%p\d+ atom", ptx)) == 2


def test_unused_result_is_not_shared():
    ptx = _sass_free(_ptx(locked_add, LOCK_SIG, BLOCK=256))
    # the CAS result (spin-loop condition) goes through shared memory; the release's does not
    assert len(re.findall(r"st\.shared", ptx)) == 1


def test_without_ordered_asm_every_thread_fences():
    """The plain lowering: relaxed LLVM atomics (the CAS system-scoped), a
    fence.acq_rel.gpu before and after each atomic in every thread."""
    with cuda_tuning(ordered_atom_asm=False):
        ptx = _sass_free(_ptx(locked_add, LOCK_SIG, BLOCK=256))
    assert re.findall(r"atom\.[\w.]*cas\.b32", ptx) == ["atom.relaxed.sys.global.cas.b32"]
    assert len(re.findall(r"atom\.global\.exch\.b32", ptx)) == 1
    fences = [m.start() for m in re.finditer(r"fence\.acq_rel\.gpu;", ptx)]
    assert len(fences) == 4
    for m in re.finditer(r"atom\.[\w.]+", ptx):
        assert any(f < m.start() for f in fences) and any(f > m.start() for f in fences)


@pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")
@pytest.mark.parametrize("kernel,sig,cex", [
    (locked_add, LOCK_SIG, {"BLOCK": 256}),
    (scalar_op, {"Out": "*fp16", "X": "*fp16"}, {"KIND": "add", "SEM": "acq_rel", "SCOPE": "gpu"}),
    (scalar_op, {"Out": "*u64", "X": "*u64"}, {"KIND": "max", "SEM": "release", "SCOPE": "sys"}),
    (counted, COUNT_SIG, {"SEM": "acq_rel", "SCOPE": "cta", "BLOCK": 128}),
])
def test_atomics_assemble(tmp_path, kernel, sig, cex):
    f = tmp_path / "k.ptx"
    f.write_text(_ptx(kernel, sig, **cex))
    r = subprocess.run([tgt.find_ptxas(), "-arch=sm_90", str(f), "-o", "/dev/null"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
