"""CPU tier of the cuda backend: kernels built in tile IR compile to PTX for sm_80 and
sm_90, and ptxas (when installed) assembles that PTX.  No GPU needed."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from tilejit.backends.cuda import target as tgt
from tilejit.backends.cuda.layout import make_layout
from tilejit.backends.cuda.types import bf16_bits, pack_param
from tilejit.ir import (Builder, Function, PointerType, TileType, bfloat16, dtype_from_name,
                        float16, float32, int1, int32, int64, ops)


class KB:
    """Tiny kernel builder: ``k = KB('name', x=('*fp32', 16), n='i32')``."""

    def __init__(self, name, **params):
        self.f = Function(name)
        self.b = Builder(self.f)
        self.a = {}
        for pname, spec in params.items():
            tname, div = spec if isinstance(spec, tuple) else (spec, 1)
            self.a[pname] = self.f.add_argument(pname, TileType(dtype_from_name(tname)), div)

    def v(self, cls, **kw):
        return self.b.create(cls, **kw).result

    def op(self, cls, **kw):
        return self.b.create(cls, **kw)

    def typed(self, cls, operands, result_types):
        """Ops whose attribute is called result_types (Builder.create's own keyword)."""
        op = cls(operands, {"result_types": list(result_types)}, list(result_types))
        self.b.block.append(op)
        return op

    def c(self, value, dt=int32, shape=()):
        return self.v(ops.ConstantOp, value=value, type=TileType(dt, tuple(shape)))

    def splat(self, x, shape):
        return self.v(ops.SplatOp, src=x, shape=tuple(shape))

    def bin(self, cls, x, y):
        return self.v(cls, lhs=x, rhs=y)

    def ptrs(self, p, offs):
        return self.v(ops.AddPtrOp, ptr=self.splat(p, offs.type.shape), offset=offs)

    def pid_offsets(self, n):
        pid = self.v(ops.ProgramIdOp, axis=0)
        start = self.bin(ops.MulOp, pid, self.c(n))
        return self.bin(ops.AddOp, self.splat(start, (n,)), self.v(ops.ArangeOp, start=0, end=n))

    def lt(self, x, y):
        return self.v(ops.CmpOp, lhs=x, rhs=y, pred="lt")

    def done(self):
        self.op(ops.ReturnOp)
        return self.f


# ---------------------------------------------------------------------------
# kernels (each returns an ir.Function; the GPU tier runs the same ones)
# ---------------------------------------------------------------------------
def copy_kernel(B=1024, dtype="fp32"):
    k = KB("copy", x=(f"*{dtype}", 16), y=(f"*{dtype}", 16), n=("i32", 16))
    offs = k.pid_offsets(B)
    mask = k.lt(offs, k.splat(k.a["n"], (B,)))
    v = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], offs), mask=mask)
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["y"], offs), value=v, mask=mask)
    return k.done()


def add_kernel(B=1024):
    k = KB("add", x=("*fp32", 16), y=("*fp32", 16), o=("*fp32", 16), n="i32")
    offs = k.pid_offsets(B)
    mask = k.lt(offs, k.splat(k.a["n"], (B,)))
    xv = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], offs), mask=mask)
    yv = k.v(ops.LoadOp, ptr=k.ptrs(k.a["y"], offs), mask=mask)
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["o"], offs), value=k.bin(ops.AddOp, xv, yv), mask=mask)
    return k.done()


def k741(XBLOCK=1024, reassign=True):
    """triton-lang/triton#741: the scattered store must never be vectorised."""
    k = KB("k741", in_ptr0=("*i64", 16), in_ptr1=("*fp32", 16), out_ptr0=("*fp32", 16), xnumel="i32")
    xnumel = k.c(2000) if reassign else k.a["xnumel"]
    xindex = k.pid_offsets(XBLOCK)
    xmask = k.lt(xindex, k.splat(xnumel, (XBLOCK,)))
    x0 = k.bin(ops.RemOp, xindex, k.c(1000, shape=(XBLOCK,)))
    x1 = k.bin(ops.IDivOp, xindex, k.c(1000, shape=(XBLOCK,)))
    tmp0 = k.v(ops.LoadOp, ptr=k.ptrs(k.a["in_ptr0"], xindex), mask=xmask)
    tmp1 = k.v(ops.LoadOp, ptr=k.ptrs(k.a["in_ptr1"], xindex), mask=xmask)
    x0l = k.v(ops.CastOp, src=x0, to=int64)
    x1l = k.v(ops.CastOp, src=x1, to=int64)
    idx = k.bin(ops.AddOp, x0l, k.bin(ops.MulOp, k.c(1000, int64, (XBLOCK,)), tmp0))
    idx = k.bin(ops.AddOp, idx, k.bin(ops.MulOp, k.c(196000, int64, (XBLOCK,)), x1l))
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["out_ptr0"], idx), value=tmp1, mask=xmask)
    return k.done()


def softmax_kernel(B=1024):
    """One row per program: y = exp(x - max) / sum(exp(x - max))."""
    k = KB("softmax", x=("*fp32", 16), y=("*fp32", 16), stride=("i32", 16), n="i32")
    row = k.v(ops.ProgramIdOp, axis=0)
    base = k.bin(ops.MulOp, row, k.a["stride"])
    cols = k.v(ops.ArangeOp, start=0, end=B)
    offs = k.bin(ops.AddOp, k.splat(base, (B,)), cols)
    mask = k.lt(cols, k.splat(k.a["n"], (B,)))
    ninf = k.c(float("-inf"), float32, (B,))
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], offs), mask=mask, other=ninf)
    m = k.v(ops.ReduceOp, src=x, kind="max", axis=0)
    e = k.v(ops.MathExpOp, src=k.bin(ops.SubOp, x, k.splat(m, (B,))))
    s = k.v(ops.ReduceOp, src=e, kind="sum", axis=0)
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["y"], offs), value=k.bin(ops.TrueDivOp, e, k.splat(s, (B,))),
         mask=mask)
    return k.done()


def _grid2d(k, M, N, stride_name):
    """2-D offsets i*stride + j for a (M, N) tile (broadcasts through expand_dims)."""
    rows = k.v(ops.ExpandDimsOp, src=k.v(ops.ArangeOp, start=0, end=M), axis=1)
    cols = k.v(ops.ExpandDimsOp, src=k.v(ops.ArangeOp, start=0, end=N), axis=0)
    rs = k.bin(ops.MulOp, rows, k.splat(k.a[stride_name], (M, 1)) if stride_name else k.c(N, shape=(M, 1)))
    return k.bin(ops.AddOp, k.v(ops.BroadcastOp, src=rs, shape=(M, N)),
                 k.v(ops.BroadcastOp, src=cols, shape=(M, N)))


def reduce2d_kernel(M=16, N=64, axis=1, kind="sum", dtype="fp32"):
    k = KB(f"reduce_{kind}_{axis}", x=f"*{dtype}", y="*i32" if kind.startswith("arg") else f"*{dtype}")
    offs = _grid2d(k, M, N, None)
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], offs))
    r = k.v(ops.ReduceOp, src=x, kind=kind, axis=axis)
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["y"], k.v(ops.ArangeOp, start=0, end=r.type.shape[0])), value=r)
    return k.done()


def argmax1d_kernel(B=256):
    k = KB("argmax1d", x="*fp32", y="*i32")
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], k.v(ops.ArangeOp, start=0, end=B)))
    r = k.v(ops.ReduceOp, src=x, kind="argmax", axis=0)
    k.op(ops.StoreOp, ptr=k.a["y"], value=r)
    return k.done()


def print_kernel(B=4):
    k = KB("printer", x="*i32")
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], k.v(ops.ArangeOp, start=0, end=B)))
    k.op(ops.DevicePrintOp, args=[x], prefix=" x: ")
    k.op(ops.DeviceAssertOp, cond=k.lt(x, k.c(100, shape=(B,))), msg="x must stay below 100")
    return k.done()


def outer_trans_kernel(M=32, N=16):
    """o[j, i] = a[i] * b[j]  (broadcast, then trans)."""
    k = KB("outer_trans", a="*fp32", b="*fp32", o="*fp32")
    av = k.v(ops.LoadOp, ptr=k.ptrs(k.a["a"], k.v(ops.ArangeOp, start=0, end=M)))
    bv = k.v(ops.LoadOp, ptr=k.ptrs(k.a["b"], k.v(ops.ArangeOp, start=0, end=N)))
    a2 = k.v(ops.BroadcastOp, src=k.v(ops.ExpandDimsOp, src=av, axis=1), shape=(M, N))
    b2 = k.v(ops.BroadcastOp, src=k.v(ops.ExpandDimsOp, src=bv, axis=0), shape=(M, N))
    t = k.v(ops.TransOp, src=k.bin(ops.MulOp, a2, b2), perm=(1, 0))
    offs = _grid2d(k, N, M, None)
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["o"], offs), value=t)
    return k.done()


def matmul_kernel(BM=32, BN=32, BK=16, dtype="fp16"):
    """C[M, N] = A[M, K] @ B[K, N], row-major, one (BM, BN) tile per program (axis 0: m, 1: n)."""
    k = KB("matmul", a=(f"*{dtype}", 16), b=(f"*{dtype}", 16), c=("*fp32", 16),
           M="i32", N=("i32", 16), K=("i32", 16))
    pm, pn = k.v(ops.ProgramIdOp, axis=0), k.v(ops.ProgramIdOp, axis=1)
    om = k.bin(ops.AddOp, k.splat(k.bin(ops.MulOp, pm, k.c(BM)), (BM,)), k.v(ops.ArangeOp, start=0, end=BM))
    on = k.bin(ops.AddOp, k.splat(k.bin(ops.MulOp, pn, k.c(BN)), (BN,)), k.v(ops.ArangeOp, start=0, end=BN))
    ok = k.v(ops.ArangeOp, start=0, end=BK)
    col = lambda v: k.v(ops.ExpandDimsOp, src=v, axis=1)
    row = lambda v: k.v(ops.ExpandDimsOp, src=v, axis=0)
    bc = lambda v, s: k.v(ops.BroadcastOp, src=v, shape=s)
    a_off = k.bin(ops.AddOp, bc(k.bin(ops.MulOp, col(om), k.splat(k.a["K"], (BM, 1))), (BM, BK)), bc(row(ok), (BM, BK)))
    b_off = k.bin(ops.AddOp, bc(k.bin(ops.MulOp, col(ok), k.splat(k.a["N"], (BK, 1))), (BK, BN)), bc(row(on), (BK, BN)))
    a_ptr, b_ptr = k.ptrs(k.a["a"], a_off), k.ptrs(k.a["b"], b_off)
    acc0 = k.c(0.0, float32, (BM, BN))
    loop = k.op(ops.ForOp, lb=k.c(0), ub=k.a["K"], step=k.c(BK), inits=[acc0, a_ptr, b_ptr])
    body = loop.body
    iv = body.add_arg(TileType(int32), "k")
    acc = body.add_arg(acc0.type, "acc")
    ap = body.add_arg(a_ptr.type, "ap")
    bp = body.add_arg(b_ptr.type, "bp")
    with k.b.at_end(body):
        av = k.v(ops.LoadOp, ptr=ap)
        bv = k.v(ops.LoadOp, ptr=bp)
        acc2 = k.v(ops.DotOp, a=av, b=bv, acc=acc)
        ap2 = k.v(ops.AddPtrOp, ptr=ap, offset=k.c(BK, int32, (BM, BK)))
        bstep = k.bin(ops.MulOp, k.splat(k.a["N"], (BK, BN)), k.c(BK, int32, (BK, BN)))
        bp2 = k.v(ops.AddPtrOp, ptr=bp, offset=bstep)
        k.op(ops.YieldOp, values=[acc2, ap2, bp2])
    c_off = k.bin(ops.AddOp, bc(k.bin(ops.MulOp, col(om), k.splat(k.a["N"], (BM, 1))), (BM, BN)), bc(row(on), (BM, BN)))
    mask = k.bin(ops.AndOp, bc(k.lt(col(om), k.splat(k.a["M"], (BM, 1))), (BM, BN)),
                 bc(k.lt(row(on), k.splat(k.a["N"], (1, BN))), (BM, BN)))
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["c"], c_off), value=loop.results[0], mask=mask)
    return k.done()


def control_kernel():
    """y[0] = collatz steps of n (scf.while); y[1] = n odd ? 3 : 7 (scf.if)."""
    k = KB("control", y="*i32", n="i32")
    i32 = TileType(int32)
    w = k.typed(ops.WhileOp, {"inits": [k.a["n"], k.c(0)]}, [i32, i32])
    before = w.regions[0].block
    x, c = before.add_arg(i32, "x"), before.add_arg(i32, "c")
    with k.b.at_end(before):
        k.op(ops.ConditionOp, cond=k.v(ops.CmpOp, lhs=x, rhs=k.c(1), pred="gt"), values=[x, c])
    after = w.regions[1].block
    x2, c2 = after.add_arg(i32, "x"), after.add_arg(i32, "c")
    with k.b.at_end(after):
        odd = k.v(ops.CmpOp, lhs=k.bin(ops.AndOp, x2, k.c(1)), rhs=k.c(1), pred="eq")
        nxt = k.v(ops.SelectOp, cond=odd, true_value=k.bin(ops.AddOp, k.bin(ops.MulOp, x2, k.c(3)), k.c(1)),
                  false_value=k.bin(ops.IDivOp, x2, k.c(2)))
        k.op(ops.YieldOp, values=[nxt, k.bin(ops.AddOp, c2, k.c(1))])
    k.op(ops.StoreOp, ptr=k.a["y"], value=w.results[1])
    odd = k.v(ops.CmpOp, lhs=k.bin(ops.RemOp, k.a["n"], k.c(2)), rhs=k.c(1), pred="eq")
    iff = k.typed(ops.IfOp, {"cond": odd}, [i32])
    with k.b.at_end(iff.regions[0].block):
        k.op(ops.YieldOp, values=[k.c(3)])
    with k.b.at_end(iff.regions[1].block):
        k.op(ops.YieldOp, values=[k.c(7)])
    k.op(ops.StoreOp, ptr=k.v(ops.AddPtrOp, ptr=k.a["y"], offset=k.c(1)), value=iff.results[0])
    return k.done()


def _warps(func, n):
    func.attrs["num_warps"] = n
    return func


MATH_FNS = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil", "erf", "tanh")


def math_kernel(fn, dtype="fp32", B=256):
    k = KB(f"math_{fn}", x=f"*{dtype}", y=f"*{dtype}")
    offs = k.v(ops.ArangeOp, start=0, end=B)
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], offs))
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["y"], offs), value=k.v(ops.MATH_OPS[fn], src=x))
    return k.done()


INT_BINOPS = (ops.AddOp, ops.SubOp, ops.MulOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp,
              ops.XorOp, ops.ShrOp, ops.MinOp, ops.MaxOp, ops.UmulhiOp)


def binop_kernel(opcls, dtype, B=128):
    k = KB(f"bin_{opcls.__name__}_{dtype}", a=f"*{dtype}", b=f"*{dtype}", o=f"*{dtype}")
    offs = k.v(ops.ArangeOp, start=0, end=B)
    a = k.v(ops.LoadOp, ptr=k.ptrs(k.a["a"], offs))
    b = k.v(ops.LoadOp, ptr=k.ptrs(k.a["b"], offs))
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["o"], offs), value=k.bin(opcls, a, b))
    return k.done()


def cast_kernel(src, dst, B=128):
    k = KB(f"cast_{src}_{dst}", x=f"*{src}", y=f"*{dst}")
    offs = k.v(ops.ArangeOp, start=0, end=B)
    x = k.v(ops.LoadOp, ptr=k.ptrs(k.a["x"], offs))
    k.op(ops.StoreOp, ptr=k.ptrs(k.a["y"], offs), value=k.v(ops.CastOp, src=x, to=dtype_from_name(dst)))
    return k.done()


KERNELS = {
    "copy": copy_kernel, "copy_small": lambda: copy_kernel(64), "copy_fp16": lambda: copy_kernel(2048, "fp16"),
    "add": add_kernel, "k741": k741, "k741_arg": lambda: k741(reassign=False),
    "softmax": softmax_kernel, "softmax_4096": lambda: softmax_kernel(4096),
    "reduce_rows": reduce2d_kernel, "reduce_cols": lambda: reduce2d_kernel(axis=0),
    "argmin_rows": lambda: reduce2d_kernel(kind="argmin"), "max_i32": lambda: reduce2d_kernel(kind="max", dtype="i32"),
    "argmax1d": argmax1d_kernel, "max_rows": lambda: reduce2d_kernel(kind="max"), "print": print_kernel, "outer_trans": outer_trans_kernel,
    "matmul_fp16": matmul_kernel, "matmul_fp32": lambda: matmul_kernel(dtype="fp32"),
    "matmul_bf16": lambda: matmul_kernel(dtype="bf16"), "control": control_kernel,
    "matmul_fp16_mma": lambda: _warps(matmul_kernel(128, 128, 32), 8),
    **{f"math_{f}": (lambda f=f: math_kernel(f)) for f in MATH_FNS},
    "math_exp_fp16": lambda: math_kernel("exp", "fp16"), "math_sqrt_fp64": lambda: math_kernel("sqrt", "fp64"),
    **{f"math_{f}_fp64": (lambda f=f: math_kernel(f, "fp64")) for f in ("sin", "cos", "exp", "log", "tanh")},
    **{f"i32_{c.__name__}": (lambda c=c: binop_kernel(c, "i32")) for c in INT_BINOPS},
    "u8_shr": lambda: binop_kernel(ops.ShrOp, "u8"), "fp32_rem": lambda: binop_kernel(ops.RemOp, "fp32"),
    "fp16_max": lambda: binop_kernel(ops.MaxOp, "fp16"), "i64_div": lambda: binop_kernel(ops.IDivOp, "i64"),
    **{f"cast_{s}_{d}": (lambda s=s, d=d: cast_kernel(s, d)) for s, d in (
        ("fp32", "i32"), ("i32", "fp32"), ("fp32", "fp16"), ("fp32", "bf16"), ("bf16", "fp32"),
        ("fp16", "bf16"), ("i8", "i64"), ("u8", "fp32"), ("fp32", "i1"), ("i1", "i32"), ("i64", "i16"))},
}


def compile_cuda(func, arch=90, num_warps=None):
    import tilejit
    return tilejit.compile(func, target=f"cuda:{arch}", num_warps=num_warps or func.attrs.get("num_warps", 4))


needs_ptxas = pytest.mark.skipif(tgt.find_ptxas() is None, reason="ptxas not installed")


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_compiles_and_assembles(name, arch):
    ker = compile_cuda(KERNELS[name](), arch)
    ptx = ker.asm["ptx"]
    assert f".target sm_{arch}" in ptx
    assert re.search(r"\.entry\s+\w+", ptx)
    assert "ret;" in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)


@needs_ptxas
@pytest.mark.parametrize("warps", [1, 2, 8])
def test_num_warps_variants_assemble(warps):
    for name in ("softmax", "reduce_rows", "matmul_fp16", "argmax1d"):
        ker = compile_cuda(KERNELS[name](), 90, warps)
        assert ker.num_warps == warps
        tgt.ptxas(ker.asm["ptx"], 90)


def test_asm_stages_and_kernel_abi():
    ker = compile_cuda(add_kernel(), 80)
    assert {"ttir", "llir", "ptx"} <= set(ker.asm)
    assert "ptx_kernel" in ker.asm["llir"]
    # four parameters: three global pointers and an i32
    params = re.findall(r"\.param \.(\w+)", ker.asm["ptx"])
    assert params == ["u64", "u64", "u64", "u32"]
    assert "%tid.x" in ker.asm["ptx"] and "%ctaid.x" in ker.asm["ptx"]


def _stores(ptx):
    return re.findall(r"st\.global(?:\.\w+)*", ptx)


def test_741_scattered_store_is_never_vectorised():
    for reassign in (True, False):
        ptx = compile_cuda(k741(reassign=reassign)).asm["ptx"]
        stores = _stores(ptx)
        assert stores, "the kernel must store"
        assert not any(".v2" in s or ".v4" in s for s in stores), stores


def test_contiguous_copy_uses_16_byte_vectors():
    ptx = compile_cuda(copy_kernel()).asm["ptx"]
    assert re.search(r"ld\.global(\.\w+)*\.v4\.(b32|f32|u32)", ptx), ptx
    assert re.search(r"st\.global(\.\w+)*\.v4\.(b32|f32|u32)", ptx), ptx


def test_741_loads_of_contiguous_input_are_vectorised():
    ptx = compile_cuda(k741()).asm["ptx"]
    assert re.search(r"ld\.global(\.\w+)*\.v[24]\.", ptx), ptx


def test_scalar_accesses_without_vectorize_option():
    from tilejit.runtime.options import Options
    import tilejit
    ker = tilejit.compile(copy_kernel(), target="cuda:90", options=Options(vectorize=False))
    assert not re.search(r"\.global(\.\w+)*\.v[24]", ker.asm["ptx"])


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_dot_uses_mma_sync_for_half_inputs(dtype):
    ptx = compile_cuda(matmul_kernel(64, 64, 32, dtype), 80).asm["ptx"]
    kind = "f16" if dtype == "fp16" else "bf16"
    assert f"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32" in ptx
    assert "mma.sync" not in compile_cuda(matmul_kernel(64, 64, 32, "fp32"), 80).asm["ptx"]


def test_dot_and_reductions_use_shared_memory_and_shuffles():
    assert compile_cuda(matmul_kernel()).shared >= (32 * 16 + 16 * 32) * 2
    ptx = compile_cuda(softmax_kernel()).asm["ptx"]
    assert "shfl.sync.bfly" in ptx and "bar.sync" in ptx
    assert "ex2.approx" in ptx


# ---------------------------------------------------------------------------
# layout and ABI helpers
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape,threads", [((1024,), 128), ((64,), 128), ((32, 64), 128),
                                           ((4096,), 256), ((3,), 32), ((200,), 128), ((16, 2), 32)])
def test_layout_covers_every_element_exactly_once(shape, threads):
    lay = make_layout(shape, threads)
    n = int(np.prod(shape))
    seen = []
    for t in range(threads):
        for s in range(lay.nslots):
            raw = lay.slot_base(s) + t * lay.vec
            if raw < n:
                seen.append(raw)
            assert raw < lay.reps * lay.vec * threads
    assert sorted(seen) == list(range(n))
    assert shape[-1] % lay.vec == 0 and lay.vec <= 4
    assert lay.exact == (lay.reps * lay.vec * threads == n)


def test_pack_param_matches_numpy():
    assert pack_param(dtype_from_name("i32"), -5) == np.int32(-5).tobytes()
    assert pack_param(dtype_from_name("u64"), 2**64 - 1) == np.uint64(2**64 - 1).tobytes()
    assert pack_param(dtype_from_name("fp16"), 1.5) == np.float16(1.5).tobytes()
    assert pack_param(dtype_from_name("*fp32"), 0x1000) == np.uint64(0x1000).tobytes()
    assert pack_param(int1, True) == b"\x01"


def test_bf16_rounds_to_nearest_even():
    for x in (1.0, -2.5, 3.14159, 1e-3, 65504.0, 1.00390625, 1.01171875):
        f32 = np.array([x], np.float32).view(np.uint32)[0]
        exp = ((int(f32) + 0x7FFF + ((int(f32) >> 16) & 1)) >> 16) & 0xFFFF
        assert bf16_bits(x) == exp
    assert bf16_bits(1.00390625) == 0x3F80        # tie goes to even
    assert bf16_bits(float("nan")) & 0x7F80 == 0x7F80


def test_parse_target():
    assert tgt.parse_target("cuda:80") == 80
    assert tgt.parse_target("cuda:90") == 90
    assert tgt.parse_target("sm_90a") == 90
    with pytest.raises(ValueError):
        tgt.parse_target("rocm")


def test_backend_registered_and_unavailable_without_gpu():
    from tilejit.backends import get_backend
    be = get_backend("cuda")
    assert be.name == "cuda"
    assert isinstance(be.is_available(), bool)


# ---------------------------------------------------------------------------
# tilejit.compile from Python source (needs the frontend)
# ---------------------------------------------------------------------------
import tilejit  # noqa: E402
import tilejit.language as tl  # noqa: E402


def _jit_kernels():
    @tilejit.jit
    def copy(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y + offs, tl.load(x + offs, mask=m), mask=m)

    @tilejit.jit
    def scatter741(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
        xnumel = 2000
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
        xmask = xindex < xnumel
        x2 = xindex
        x0 = xindex % 1000
        x1 = (xindex // 1000)
        tmp0 = tl.load(in_ptr0 + x2, xmask)
        tmp1 = tl.load(in_ptr1 + x2, xmask)
        tl.store(out_ptr0 + x0 + (1000 * tmp0) + (196000 * x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)
    return copy, scatter741


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_compile_api_741_from_source(target):
    import tilejit
    _, k741src = _jit_kernels()
    ker = tilejit.compile(k741src, signature={0: "*i64", 1: "*fp32", 2: "*fp32", 3: "i32"},
                          constexprs={"XBLOCK": 1024}, divisible_by_16=(0, 1, 2), target=target)
    ptx = ker.asm["ptx"]
    assert {"ttir", "llir", "ptx"} <= set(ker.asm)
    assert not any(".v2" in s or ".v4" in s for s in _stores(ptx))
    # in_ptr0 + x2 and in_ptr1 + x2 are contiguous and aligned
    assert re.search(r"ld\.global(\.\w+)*\.v2\.b64", ptx), ptx
    assert re.search(r"ld\.global(\.\w+)*\.v4\.b32", ptx), ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, int(target.split(":")[1]))


def test_compile_api_copy_vectorises_only_when_specialised():
    import tilejit
    copy, _ = _jit_kernels()
    sig = {"x": "*fp32", "y": "*fp32", "n": "i32"}
    spec = tilejit.compile(copy, signature=sig, constexprs={"BLOCK": 1024}, divisible_by_16=("x", "y", "n"),
                           target="cuda:90").asm["ptx"]
    plain = tilejit.compile(copy, signature=sig, constexprs={"BLOCK": 1024}, target="cuda:90").asm["ptx"]
    assert not re.search(r"\.global(\.\w+)*\.v[24]", plain)      # alignment unknown: scalar
    assert re.search(r"ld\.global(\.\w+)*\.v4\.b32", spec) and re.search(r"st\.global(\.\w+)*\.v4\.b32", spec)


def test_fp64_transcendentals_use_no_fp32_approximation():
    """fp64 sin/cos/exp/log/tanh are computed in fp64 (backends/llvm/f64math.py), not
    through the fp32 ``.approx`` units; libdevice's float64 compositions rely on it."""
    for fn in ("sin", "cos", "exp", "log", "tanh"):
        ptx = compile_cuda(KERNELS[f"math_{fn}_fp64"]()).asm["ptx"]
        assert ".approx" not in ptx and "cvt.rn.f32.f64" not in ptx, fn


def test_loop_free_dot_loads_fp16_operands_in_16_byte_chunks():
    """Triton's test_dot shape (a dot outside any loop, row-major fp16 operands through
    runtime strides specialised to 1 and multiples of 16): every operand load is
    ``ld.global.v4`` (8 halves), the fp32 result is stored with ``st.global.v4``: the
    plan's widths (tests/golden/cuda_plan/dot_loop_free.py) as emitted."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
    import tilejit
    from test_dot_loop_free import dot_epilogue
    sig = {"X": "*fp16", "sxm": "i32", "sxk": "i32", "Y": "*fp16", "syk": "i32", "syn": "i32",
           "W": "*fp32", "Z": "*fp32"}
    ptx = tilejit.compile(dot_epilogue, signature=sig, constexprs=dict(BM=128, BN=128, BK=64, SCALE=False),
                          divisible_by_16=("X", "Y", "W", "Z", "sxm", "syk"), equal_to_1=("sxk", "syn"),
                          target="cuda:90", num_warps=4).asm["ptx"]
    loads = re.findall(r"ld\.global\.[\w.]+", ptx)
    assert loads and set(loads) == {"ld.global.v4.b32"}, sorted(set(loads))
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert set(re.findall(r"st\.global\.[\w.]+", ptx)) == {"st.global.v4.b32"}
    if tgt.find_ptxas():
        tgt.ptxas(ptx, 90)

    # a dot with an fp16 result (rules_mma.lower_dot_mma_half_acc, planned by plan_half_acc: mma with fp32
    # accumulation, one rounding; its widths: tests/golden/cuda_plan/dot_loop_free_narrow.py) assembles
    from test_dot_loop_free import dot_fp16_out
    ptx = tilejit.compile(dot_fp16_out, signature={"X": "*fp16", "Y": "*fp16", "Z": "*fp16"},
                          constexprs=dict(B=64), divisible_by_16=("X", "Y", "Z"), target="cuda:90").asm["ptx"]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx and "fma.rn" not in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, 90)


def test_loop_free_dot_chunks_are_16_bytes_of_the_narrowest_tile():
    """rules_mma.widen_operand_chunks: each loaded or stored shape of a loop-free dot
    kernel gets 16-byte chunks of its narrowest element (1-byte tiles 16 elements,
    2-byte 8); the plan's widths (int8 operands 16 per access, the fp16 result 8, as
    Triton's test_dot / test_scaled_dot assert) are checked in
    tests/golden/cuda_plan/dot_loop_free_narrow.py; here the PTX assembles."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
    import tilejit
    from tilejit.backends.cuda.rules_mma import chunk_element_sizes, widened_layout
    from tilejit.runtime.compiler import build
    from test_dot_loop_free import dot_int8_operands
    sig = {"X": "*i8", "Y": "*i8", "Z": "*fp16"}
    consts = dict(M=128, N=64, K=64)
    func, _ = build(dot_int8_operands, sig, consts, ("X", "Y", "Z"))
    sizes = chunk_element_sizes(func)
    assert sizes == {(128, 64): 1, (64, 64): 1}                  # the x, y and z tiles
    lay = widened_layout((128, 64), 128, 1, make_layout((128, 64), 128))
    assert (lay.vec, lay.reps) == (16, 4)
    assert widened_layout((8, 16), 128, 1, make_layout((8, 16), 128)) is None   # not exact
    consts = dict(M=128, N=128, K=64)                              # only z is (128, 128)
    func, _ = build(dot_int8_operands, sig, consts, ("X", "Y", "Z"))
    assert chunk_element_sizes(func)[(128, 128)] == 2
    if tgt.find_ptxas():
        for n in (64, 128):
            ptx = tilejit.compile(dot_int8_operands, signature=sig, constexprs=dict(M=128, N=n, K=64),
                                  divisible_by_16=("X", "Y", "Z"), target="cuda:90").asm["ptx"]
            tgt.ptxas(ptx, 90)
