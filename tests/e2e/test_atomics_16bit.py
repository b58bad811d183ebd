"""Atomics on 16-bit elements, with Triton 3.6's rules: ``atomic_add`` on fp16 and bf16
(a compare-and-swap loop where the target has no instruction), ``atomic_cas`` on every
16-bit type, and the narrow read-modify-writes Triton rejects rejected here too."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.errors import CompilationError

torch = pytest.importorskip("torch", reason="bf16 arrays are torch tensors")
TORCH = {"fp16": torch.float16, "bf16": torch.bfloat16, "int16": torch.int16, "uint16": torch.uint16,
         "fp32": torch.float32}


@tilejit.jit
def add_many_programs(Z, X):
    tl.atomic_add(Z, tl.load(X + tl.program_id(0)))


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
def test_scalar_add_from_many_programs(backend, dt):
    x = torch.tensor([1.0, 2.0, -4.0, 8.0, 16.0, 0.5, 3.0, -7.0], dtype=TORCH[dt])
    z = torch.tensor([2.0], dtype=TORCH[dt])
    add_many_programs[(8,)](z, x)
    assert z.item() == 2.0 + float(x.double().sum())         # every partial sum is exact


@tilejit.jit
def add_tile(Z, X, OLD, N, NZ: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < N
    old = tl.atomic_add(Z + offs % NZ, tl.load(X + offs, mask=m), mask=m)
    tl.store(OLD + offs, old, mask=m & (offs < NZ))


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("n,nz", [(64, 64), (64, 4), (50, 8), (3, 8)])
def test_tile_add_duplicates_masks_and_old_values(backend, dt, n, nz):
    """Duplicate addresses accumulate, masked-off lanes add nothing; where every lane
    has its own address the old values are the initial ones."""
    g = torch.Generator().manual_seed(n * nz)
    x = torch.randint(-8, 9, (64,), generator=g).to(TORCH[dt])     # small integers: exact sums
    z0 = torch.randint(-8, 9, (nz,), generator=g).to(TORCH[dt])
    z, old = z0.clone(), torch.zeros(64, dtype=TORCH[dt])
    add_tile[(1,)](z, x, old, n, NZ=nz, BLOCK=64)
    want = z0.double().clone()
    for i in range(n):
        want[i % nz] += float(x[i])
    assert torch.equal(z.double(), want)
    if n >= nz and nz == 64:
        assert torch.equal(old[:nz], z0)


def test_bf16_add_rounds_to_nearest_even(backend):
    """One atomic bf16 add is the float32 sum rounded to bf16, ties to even."""
    z0 = torch.tensor([1.0, 1.0, 256.0, -3.0, 1e30], dtype=torch.bfloat16)
    x = torch.tensor([2.0 ** -8, 3 * 2.0 ** -8, 1.0, 2.0 ** -7, 1e28], dtype=torch.bfloat16)
    z, old = z0.clone(), torch.zeros(64, dtype=torch.bfloat16)
    add_tile[(1,)](z, x, old, 5, NZ=5, BLOCK=8)
    assert torch.equal(z, (z0.float() + x.float()).to(torch.bfloat16))


@tilejit.jit
def cas_kernel(X, BLOCK: tl.constexpr, DT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    t1 = tl.full((BLOCK,), 0, dtype=DT)
    t2 = tl.full((BLOCK,), 2, dtype=DT)
    tl.atomic_cas(X + offs, t1, t2, sem="acq_rel")


@tilejit.jit
def cas_scalar_kernel(X, OLD):
    old = tl.atomic_cas(X + tl.program_id(0), 0, 3)
    tl.store(OLD + tl.program_id(0), old)


@pytest.mark.parametrize("dt", ["fp16", "bf16", "int16", "uint16"])
def test_cas_16bit(backend, dt):
    """Triton's test_tensor_atomic_cas on 16-bit types, and a scalar CAS's old value."""
    x = torch.zeros(64, dtype=TORCH[dt])
    x[1::2] = 1
    want = x.clone()
    want[0::2] = 2
    cas_kernel[(2,)](x, BLOCK=32, DT=getattr(tl, {"fp16": "float16", "bf16": "bfloat16"}.get(dt, dt)))
    assert torch.equal(x, want)
    y = torch.tensor([0, 5, 0], dtype=TORCH[dt])
    old = torch.full((3,), 9, dtype=TORCH[dt])
    cas_scalar_kernel[(3,)](y, old)
    assert y.tolist() == [3, 5, 3] and old.tolist() == [0, 5, 0]


@tilejit.jit
def rmw_kind_kernel(I, O, KIND: tl.constexpr):
    x = tl.load(I)
    if KIND == "add":
        tl.atomic_add(O, x)
    elif KIND == "max":
        tl.atomic_max(O, x)
    elif KIND == "xchg":
        tl.atomic_xchg(O, x)
    else:
        tl.atomic_cas(O, x, x)


@pytest.mark.parametrize("dt,kind", [("int8", "add"), ("int16", "add"), ("uint8", "add"), ("uint16", "add"),
                                     ("float8_e4m3fn", "add"), ("fp16", "max"), ("bf16", "xchg"),
                                     ("int8", "cas"), ("int16", "max")])
def test_unsupported_atomics_are_compile_errors(backend, dt, kind):
    tdt = TORCH.get(dt) or getattr(torch, dt)
    i, o = torch.zeros(1, dtype=tdt), torch.zeros(1, dtype=tdt)
    with pytest.raises(CompilationError, match="does not support|16, 32 or 64 bits"):
        rmw_kind_kernel[(1,)](i, o, KIND=kind)
