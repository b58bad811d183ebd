"""Loop-free dots of column-major fp16/bf16 operands (Triton's test_dot with COL_A /
COL_B, and the bench's batched form: one tile per program, the base moved by the program
id) on every backend, against float64 torch.  On CUDA such an operand, read only by the
dot, is loaded in 16-byte vectors along its contiguous dim 0 and staged transposed (A
read by ``ldmatrix.trans``, B by plain ``ldmatrix``: rules_mma.plan_kmajor_loads); the
switch ``kmajor_operands`` off loads it per element (tests/cuda_switches.py: on cuda, and
on cpu with the PTX check)."""
import pytest

import tilejit
import tilejit.language as tl
from tests.cuda_switches import switched

torch = pytest.importorskip("torch")   # the references and the operands' dtypes

SWITCHES = {"per element": {"kmajor_operands": False}}


@pytest.fixture(params=["default", *SWITCHES])
def switches(request, backend):
    """As shipped (column-major operands loaded transposed) and with that switched off."""
    yield from switched(request.param, SWITCHES, backend)


@tilejit.jit
def dot_tiles(X, sxm, sxk, Y, syk, syn, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
              STORE_Y: tl.constexpr):
    pid = tl.program_id(0)
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    X += pid * M * K
    Y += pid * K * N
    x = tl.load(X + m[:, None] * sxm + k[None, :] * sxk)
    y = tl.load(Y + k[:, None] * syk + n[None, :] * syn)
    tl.store(Z + pid * M * N + m[:, None] * N + n[None, :], tl.dot(x, y))
    if STORE_Y:         # the operand read by something else too: not loaded transposed
        tl.store(Z + pid * M * N + k[:, None] + n[None, :] * K, y.to(tl.float32) * 0.5,
                 mask=(k[:, None] < M) & (n[None, :] < 1))


def _batch(g, progs, rows, cols, dtype, col):
    a = torch.rand((progs, rows, cols), generator=g, dtype=torch.float64) * 2 - 1
    a = a.to(dtype)
    return a.transpose(1, 2).contiguous().transpose(1, 2) if col else a


@pytest.mark.parametrize("M,N,K,warps,col_a,col_b,dtype", [
    (64, 64, 64, 4, True, True, torch.float16), (128, 64, 32, 4, True, False, torch.float16),
    (64, 128, 64, 4, False, True, torch.bfloat16), (32, 64, 128, 2, True, True, torch.bfloat16),
    (16, 32, 16, 1, True, True, torch.float16), (64, 32, 64, 8, True, True, torch.float16)])
def test_column_major_dot(backend, switches, M, N, K, warps, col_a, col_b, dtype):
    g = torch.Generator().manual_seed(M * 7 + N * 3 + K + warps)
    progs = 3
    x = _batch(g, progs, M, K, dtype, col_a)
    y = _batch(g, progs, K, N, dtype, col_b)
    z = torch.full((progs, M, N), float("nan"), dtype=torch.float32)
    dot_tiles[(progs,)](x, x.stride(1), x.stride(2), y, y.stride(1), y.stride(2), z, M=M, N=N, K=K,
                        STORE_Y=False, num_warps=warps)
    want = torch.bmm(x.double(), y.double())
    torch.testing.assert_close(z.double(), want, rtol=1e-3, atol=1e-3 * K ** 0.5)


def test_column_major_operand_read_twice(backend, switches):
    """The column-major B also stored: its tile stays in the blocked layout."""
    M, N, K = 64, 32, 64
    g = torch.Generator().manual_seed(3)
    x = _batch(g, 2, M, K, torch.float16, True)
    y = _batch(g, 2, K, N, torch.float16, True)
    z = torch.full((2, M, N), float("nan"), dtype=torch.float32)
    dot_tiles[(2,)](x, x.stride(1), x.stride(2), y, y.stride(1), y.stride(2), z, M=M, N=N, K=K,
                    STORE_Y=True)
    want = torch.bmm(x.double(), y.double())
    want.view(2, -1)[:, :K] = y[:, :, 0].double() * 0.5     # the first K results: y's column 0 / 2
    torch.testing.assert_close(z.double(), want, rtol=1e-3, atol=1e-3 * K ** 0.5)
