"""tl.inline_asm_elementwise: PTX on the cuda backend (assembled by ptxas here; run
where a GPU is present); the interpreter and the CPU backend report it clearly."""
import numpy as np
import pytest

import tilejit
import tilejit.language as tl
from tilejit.backends.cuda import target as tgt


@tilejit.jit
def shl3_kernel(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    lo, hi = tl.inline_asm_elementwise("mov.b64 {$0, $1}, $2;", "=r,=r,l", [x.to(tl.int64) * 4294967296 + 5],
                                       dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)
    tl.store(z_ptr + offs, hi - lo)


def test_inline_asm(backend, rng):
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    y, z = np.zeros(64, np.int32), np.zeros(64, np.int32)
    if backend != "cuda":
        with pytest.raises(Exception, match="elementwise_inline_asm"):
            shl3_kernel[(1,)](x, y, z, BLOCK=64)
        return
    shl3_kernel[(1,)](x, y, z, BLOCK=64)
    np.testing.assert_array_equal(y, x << 3)
    np.testing.assert_array_equal(z, x - 5)


@pytest.mark.parametrize("arch", [80, 90])
def test_inline_asm_ptx_assembles(arch):
    ker = tilejit.compile(shl3_kernel, signature={0: "*i32", 1: "*i32", 2: "*i32"}, constexprs={"BLOCK": 64},
                          target=f"cuda:{arch}")
    ptx = ker.asm["ptx"]
    assert "shl.b32" in ptx and "mov.b64" in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)


@tilejit.jit
def packed_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # four int8 lanes of one 32-bit register at a time
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;", "=r,r", [x],
                                  dtype=tl.int8, is_pure=True, pack=4)
    tl.store(y_ptr + offs, y)


@tilejit.jit
def packed_multi_kernel(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c, d = tl.inline_asm_elementwise(
        """{
        .reg .b8 t<4>;
        mov.b32 {t0, t1, t2, t3}, $8;
        cvt.u32.u8 $0, t0; cvt.u32.u8 $1, t1; cvt.u32.u8 $2, t2; cvt.u32.u8 $3, t3;
        }
        cvt.rn.f32.s32 $4, $0; cvt.rn.f32.s32 $5, $1; cvt.rn.f32.s32 $6, $2; cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9; max.f32 $5, $5, $10; max.f32 $6, $6, $11; max.f32 $7, $7, $12;""",
        "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r", [a, b], dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@pytest.mark.parametrize("block,warps", [(512, 4), (64, 4), (8, 1)])
def test_inline_asm_packed(backend, rng, block, warps):
    """pack=4 (Triton's test_inline_asm_packed): int8 lanes four to a register; blocks
    whose per-thread slots are not a multiple of 4 too."""
    x = rng.integers(0, 256, block).astype(np.uint8)
    y = np.zeros(block, np.uint8)
    if backend != "cuda":
        with pytest.raises(Exception, match="elementwise_inline_asm"):
            packed_kernel[(1,)](x, y, BLOCK=block, num_warps=warps)
        return
    packed_kernel[(1,)](x, y, BLOCK=block, num_warps=warps)
    np.testing.assert_array_equal(y, x << 3)


def test_inline_asm_packed_multiple_outputs(backend, rng):
    a = rng.integers(0, 256, 64).astype(np.uint8)
    b = rng.uniform(0, 255, 64).astype(np.float32)
    c, d = np.zeros(64, np.int32), np.zeros(64, np.float32)
    if backend != "cuda":
        with pytest.raises(Exception, match="elementwise_inline_asm"):
            packed_multi_kernel[(1,)](a, b, c, d, BLOCK=64)
        return
    packed_multi_kernel[(1,)](a, b, c, d, BLOCK=64)
    np.testing.assert_array_equal(c, a.astype(np.int32))
    np.testing.assert_array_equal(d, np.maximum(a.astype(np.float32), b))


@pytest.mark.parametrize("arch", [80, 90])
def test_inline_asm_packed_ptx_assembles(arch):
    for kern, sig, cx in [(packed_kernel, {0: "*u8", 1: "*u8"}, {"BLOCK": 512}),
                          (packed_kernel, {0: "*u8", 1: "*u8"}, {"BLOCK": 64}),
                          (packed_multi_kernel, {0: "*u8", 1: "*fp32", 2: "*i32", 3: "*fp32"}, {"BLOCK": 64})]:
        ptx = tilejit.compile(kern, signature=sig, constexprs=cx, target=f"cuda:{arch}").asm["ptx"]
        assert ("shl.b32" in ptx) or ("max.f32" in ptx)
        if tgt.find_ptxas():
            tgt.ptxas(ptx, arch)


def test_inline_asm_pack_must_be_power_of_two():
    with pytest.raises(Exception, match="power of two"):
        tilejit.compile(shl3_bad_pack, signature={0: "*i32", 1: "*i32"}, constexprs={"BLOCK": 64}, target="cuda:90")


@tilejit.jit
def shl3_bad_pack(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [tl.load(x_ptr + offs)], dtype=tl.int32,
                                  is_pure=True, pack=3)
    tl.store(y_ptr + offs, y)


@tilejit.jit
def timer_kernel(out1, out2, func: tl.constexpr):
    start = func()
    off = tl.arange(0, 128)
    for i in range(1000):
        tl.store(out1 + off, tl.load(out1 + off) + 1)
    end = func()
    tl.store(out2, start)
    tl.store(out2 + 1, end)
    tl.store(out2 + 2, tl.extra.cuda.smid().to(tl.int64))


def test_globaltimer_smid(backend):
    """tl.extra.cuda.globaltimer / smid (Triton's test_globaltimer): PTX special
    registers, read twice around a loop; the timer advances."""
    out1, out2 = np.zeros(128, np.int64), np.zeros(3, np.int64)
    if backend != "cuda":
        with pytest.raises(Exception, match="elementwise_inline_asm"):
            timer_kernel[(1,)](out1, out2, tl.extra.cuda.globaltimer)
        return
    timer_kernel[(1,)](out1, out2, tl.extra.cuda.globaltimer)
    assert out2[1] - out2[0] > 0
    assert 0 <= out2[2] < 1024
    np.testing.assert_array_equal(out1, np.full(128, 1000))


@pytest.mark.parametrize("arch", [80, 90])
def test_globaltimer_ptx(arch):
    ptx = tilejit.compile(timer_kernel, signature={0: "*i64", 1: "*i64"},
                          constexprs={"func": tl.extra.cuda.globaltimer}, target=f"cuda:{arch}").asm["ptx"]
    assert ptx.count("%globaltimer") == 2 and "%smid" in ptx
    if tgt.find_ptxas():
        tgt.ptxas(ptx, arch)


@tilejit.jit
def _num_threads_kernel(out):
    n: tl.constexpr = tl.extra.cuda.num_threads()
    tl.store(out + tl.arange(0, n), tl.full((n,), tl.extra.cuda.num_warps(), tl.int32))


@pytest.mark.parametrize("warps", [None, 1, 8])
def test_num_threads_follows_num_warps(backend, warps):
    """tl.extra.cuda.num_threads() / num_warps() (Triton's test_num_threads): the
    launch's num_warps (default 4) as constexprs, each value its own kernel."""
    w = 4 if warps is None else warps
    out = np.zeros(32 * 8 + 1, np.int32)
    if warps is None:
        _num_threads_kernel[(1,)](out)
    else:
        _num_threads_kernel[(1,)](out, num_warps=warps)
    want = np.zeros_like(out)
    want[:32 * w] = w
    np.testing.assert_array_equal(out, want)
