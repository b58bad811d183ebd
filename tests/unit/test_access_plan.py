"""The access plan (analysis/access.py), one decision for the cpu and cuda backends:
the same facts give each target the grouping its limits allow -- widths, alignment,
per-lane masks, pointer tiles.  No GPU needed."""
import pytest

import tilejit
import tilejit.language as tl
from tilejit.analysis import analyze
from tilejit.analysis.access import SCALAR, AccessPlan, plan_access
from tilejit.backends.cpu.vectorize import CPU_ACCESS
from tilejit.backends.cuda.rules_memory import CUDA_ACCESS
from tilejit.ir import ops
from tilejit.runtime.compiler import build


@tilejit.jit
def shifted(X, Y, Z, F, N, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs + SHIFT)                   # contiguous; aligned unless SHIFT
    y = tl.load(Y + offs, mask=offs < N)            # the mask varies within groups
    f = tl.load(F + offs)                           # bool tile
    tl.store(Z + offs, x + y + f.to(tl.float32))


SIG = {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "F": "*i1", "N": "i32"}


def _plans(shift, limits, max_lanes=None):
    func, _ = build(shifted, SIG, {"SHIFT": shift, "BLOCK": 256}, ("X", "Y", "Z", "F"))
    facts = analyze(func)
    accesses = [o for o in func.walk() if isinstance(o, (ops.LoadOp, ops.StoreOp))]
    return [plan_access(facts, o.ptr, o.mask, limits, max_lanes) for o in accesses]


def test_aligned_fp32_rows():
    x, y, f, z = _plans(0, CPU_ACCESS)
    assert x == z == AccessPlan(16, 16, False)       # 64 bytes from a 16-byte aligned base
    assert y == AccessPlan(16, 16, True)             # N unknown: masked per lane
    assert f == AccessPlan(64, 16, False)            # i1 in memory: one byte each
    x, y, f, z = _plans(0, CUDA_ACCESS)
    assert x == z == AccessPlan(4, 16, False)        # ld.global.v4.b32
    assert y == SCALAR                               # no per-lane masks: one predicate per access
    assert f == AccessPlan(16, 16, False)
    assert _plans(0, CUDA_ACCESS, max_lanes=2)[0] == AccessPlan(2, 8, False)


@pytest.mark.parametrize("shift,cpu_align,cuda_width", [(1, 4, 1), (2, 8, 2), (4, 16, 4)])
def test_misaligned_rows(shift, cpu_align, cuda_width):
    """X + 1: contiguous but only 4-byte aligned.  The cpu target takes unaligned vectors;
    PTX vectors need natural alignment, so the cuda width falls to what the address
    allows."""
    assert _plans(shift, CPU_ACCESS)[0] == AccessPlan(16, cpu_align, False)
    w = _plans(shift, CUDA_ACCESS)[0].width
    assert w == cuda_width


@tilejit.jit
def table(P, Out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = tl.load(P + offs)                        # a tile of pointers
    tl.store(Out + offs, tl.load(ptrs))


def test_pointer_tiles():
    func, _ = build(table, {"P": "**fp32", "Out": "*fp32"}, {"BLOCK": 64}, ("P", "Out"))
    facts = analyze(func)
    first = next(o for o in func.walk() if isinstance(o, ops.LoadOp))
    assert plan_access(facts, first.ptr, None, CUDA_ACCESS) == AccessPlan(2, 16, False)   # 8-byte words
    assert plan_access(facts, first.ptr, None, CPU_ACCESS) == SCALAR      # loaded per lane
    gather = [o for o in func.walk() if isinstance(o, ops.LoadOp)][1]
    assert plan_access(facts, gather.ptr, None, CUDA_ACCESS) == SCALAR
    assert plan_access(facts, gather.ptr, None, CPU_ACCESS) == SCALAR
    assert plan_access(None, first.ptr, None, CPU_ACCESS) == SCALAR
