"""Fuzz the CPU backend's vector loads/stores: random index-expression kernels
(analysis_fuzzkit) and random memory-access patterns (contiguous, shifted, modulo,
divided, flipped, strided, constant; masks constant per group or per lane; `other`
values) compiled with vectorisation on must agree bit-exactly with the interpreter,
which checks every claim of the facts the backend compiled with (grid bound included).
Deterministic seeds; TILEJIT_FUZZ_EXAMPLES=N runs N kernels per test."""
import os
import random

import numpy as np

from analysis_fuzzkit import build_kernel, dst_size
from test_cpu_vectorize import VLOAD, VSTORE, both
from tilejit.analysis import analyze
from tilejit.analysis.checker import ClaimChecker
from tilejit.backends import get_backend
from tilejit.backends.cpu.irgen import KB
from tilejit.ir import ops
from tilejit.ir.types import float32, int8, int32, int64
from tilejit.runtime.options import Options

EXAMPLES = int(os.environ.get("TILEJIT_FUZZ_EXAMPLES", "0") or 0)


def _compile(f):
    return get_backend("cpu").compile(f, Options())


def _vectorised(k) -> bool:
    llir = k.asm["llir"]
    return bool(VLOAD.search(llir) or VSTORE.search(llir))


def test_fuzzkit_kernels_vectorised_match_interpreter():
    hits = 0
    for seed in range(EXAMPLES or 40):
        fk = build_kernel(seed)
        k = _compile(fk.func)
        dst = np.zeros(dst_size(fk), np.int64)
        both(fk.func, k, fk.grid, [fk.src, dst], fk.values)
        hits += _vectorised(k)
    assert hits >= (EXAMPLES or 40) // 2          # the contiguous stores at least


def test_grid_bound_claims_hold():
    """Facts computed under a grid bound hold for every launch within the bound."""
    from irkit import launch
    for seed in range(EXAMPLES or 60):
        fk = build_kernel(seed)
        checker = ClaimChecker(fk.func, None, facts=analyze(fk.func, grid_bound=(3, 2, 1)))
        launch(fk.func, fk.grid, fk.src, np.zeros(dst_size(fk), np.int64), *fk.values, observer=checker)
        assert checker.checked > 0


SRC = 256
DTYPES = [float32, int32, int8, int64]
NP = {float32: np.float32, int32: np.int32, int8: np.int8, int64: np.int64}


def _index(k, r, xi, ar, base, B):
    kind = r.choice(["id", "id", "mod", "div", "flip", "mul2", "andm4", "plus", "pid", "shr"])
    c = lambda v: k.c(v, int32, (B,))     # noqa: E731
    if kind == "mod":
        return k.bin(ops.RemOp, xi, c(r.choice([4, 8, 16, 3, 32])))
    if kind == "div":
        return k.bin(ops.IDivOp, xi, c(r.choice([2, 4, 16])))
    if kind == "flip":
        return k.bin(ops.AddOp, k.bin(ops.SubOp, c(B - 1), ar), base)
    if kind == "mul2":
        return k.bin(ops.MulOp, xi, c(2))
    if kind == "andm4":
        return k.bin(ops.AndOp, xi, c(-4))
    if kind == "plus":
        return k.bin(ops.AddOp, xi, c(r.choice([1, 3, 4, 16, 17])))
    if kind == "pid":
        return k.splat(k.pid(), (B,))
    if kind == "shr":
        return k.bin(ops.ShrOp, xi, c(1))
    return xi


def _mask(k, r, xi, ar, n, B):
    kind = r.choice(["none", "lt_n", "lt_n", "even", "pid", "lt_c"])
    if kind == "lt_n":
        return k.cmp("lt", xi, n)
    if kind == "even":
        return k.cmp("eq", k.bin(ops.AndOp, ar, k.c(1, int32, (B,))), k.c(0, int32, (B,)))
    if kind == "pid":
        return k.cmp("lt", k.splat(k.pid(), (B,)), k.c(2, int32, (B,)))
    if kind == "lt_c":
        return k.cmp("lt", ar, k.c(r.choice([8, 16, 5]), int32, (B,)))
    return None


def build_mem_kernel(seed):
    r = random.Random(seed)
    dt, B = r.choice(DTYPES), r.choice([16, 32, 64])
    k = KB("memfuzz")
    src, dst, n = k.ptr_arg("src", dt), k.ptr_arg("dst", dt), k.arg("n", int32)
    nval = r.choice([16 * r.randint(0, 16), r.randint(0, 300)])
    if nval % 16 == 0 and r.random() < 0.7:
        k.f.arguments[-1].divisibility = 16
    for a in k.f.arguments[:2]:
        a.divisibility = 16
    base = k.bin(ops.MulOp, k.pid(), k.c(B, int32))
    ar = k.arange(B)
    xi = k.bin(ops.AddOp, ar, base)
    li = k.bin(ops.AndOp, _index(k, r, xi, ar, base, B), k.c(SRC - 1, int32, (B,)))
    m = _mask(k, r, xi, ar, n, B)
    other = None
    if m is not None and r.random() < 0.6:
        other = (k.c(r.choice([0, 7, -1]), dt, (B,)) if r.random() < 0.5
                 else k.cast(k.bin(ops.MulOp, ar, k.c(3, int32, (B,))), dt))
    v = k.load(k.addptr(src, li), m, other)
    perm = r.choice(["id", "flip", "odd"])
    si = ar if perm == "id" else (k.bin(ops.SubOp, k.c(B - 1, int32, (B,)), ar) if perm == "flip"
                                  else k.bin(ops.AndOp, k.bin(ops.MulOp, ar, k.c(3, int32, (B,))),
                                             k.c(B - 1, int32, (B,))))
    sm = r.choice([None, m, _mask(k, r, xi, ar, n, B)])
    k.store(k.addptr(dst, k.bin(ops.AddOp, si, base)), v, sm)
    grid = (r.randint(1, 4),)
    srcv = (np.arange(SRC) * 7 - 300).astype(NP[dt])
    return k.done(), grid, srcv, np.zeros(4 * 64, NP[dt]), nval


def test_memory_patterns_vectorised_match_interpreter():
    hits = 0
    for seed in range(EXAMPLES or 80):
        f, grid, srcv, dstv, nval = build_mem_kernel(seed)
        k = _compile(f)
        both(f, k, grid, [srcv, dstv], [nval])
        hits += _vectorised(k)
    assert hits >= (EXAMPLES or 80) // 4
