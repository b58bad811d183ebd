"""Tensor-core building blocks for pipelined dots: 128-byte-swizzled shared-memory
tiles, ``cp.async`` copies, Hopper ``wgmma`` (sm_90a) and ``ldmatrix`` + ``mma.sync``
(sm_80+) reading those tiles.

Shared-memory tile layout (both operands, ``async_pipeline`` fills it with 16-byte
``cp.async``): an (R, C) tile of 2-byte elements, C contiguous in global memory, is
stored as C/64 *panels* of R rows x 128 bytes; the 16-byte chunk ``c`` of row ``r``
sits at chunk ``c ^ (r % 8)`` of that row (the hardware's 128B swizzle,
``Swizzle<3,4,3>``: address bits [4:6] ^= bits [7:9] of a 1024-aligned tile).

* A (M, K) is K-major: a wgmma descriptor with SBO = 1024 (8 rows of 128 bytes);
  a k16 step inside a panel adds 32 bytes to the start address.
* B (K, N) is N-major (``imm-trans-b`` = 1): LBO = the panel stride (K*128 bytes,
  the next 64 columns), SBO = 1024 (the next 8 k-rows).

The wgmma accumulator of ``m64nNk16`` is, per warp, the mma.sync m16n8 fragment
layout, so a program of W warps (W/4 warpgroups of 64 rows) holds an (16W, N)
accumulator as ``MmaLayout((16W, N), wm=W, wn=1)``.
"""
from __future__ import annotations

from llvmlite import ir

from . import types as T
from .rules_mma import MmaLayout

PANEL = 64          # 2-byte elements per 128-byte swizzled row
ROW_BYTES = 128

# Per-thread shared-memory addresses that differ by constants (a thread's chunks of a
# ring stage, its fragments of a staged tile, its accumulator slots) are one register
# plus immediates written into the instructions, not one register each: LLVM hoists such
# sums out of loops and, in a kernel whose dot loop sits in an outer loop (grouped GEMM,
# persistent matmul), ptxas then spills them.  On after an H200 run (grouped GEMM 0.091 ->
# 0.085 ms; bench/results/matmul_tutorial_notes.md).  ``CudaTuning.imm_offsets`` (False: one
# register per address).

# The warpgroup index of the wgmma A descriptors read through ``shfl.sync.idx`` from lane 0
# (as Triton does): ptxas then builds the descriptors in uniform registers instead of
# moving each one from a vector register before its wgmma (R2UR; tutorial 03's loop 112 ->
# 101 SASS instructions, 116 -> 112 registers).  On after an H200 run: ``CudaTuning.uniform_wg``.


def swizzled_offset(lw, r, cc, rows: int):
    """Byte offset of 16-byte chunk ``cc`` (along the contiguous dim) of row ``r``
    in a swizzled (rows, C) tile (i32 values in, i32 out)."""
    b = lw.b
    panel, ccl = b.lshr(cc, lw.i32(3)), b.and_(cc, lw.i32(7))
    sw = b.xor(ccl, b.and_(r, lw.i32(7)))
    off = b.add(b.mul(panel, lw.i32(rows * ROW_BYTES)), b.mul(r, lw.i32(ROW_BYTES)))
    return b.add(off, b.shl(sw, lw.i32(4)))


def tile_bytes(shape) -> int:
    return shape[0] * shape[1] * 2


def shared_addr(lw, base):
    """32-bit shared-window address of a ``ptr addrspace(3)``."""
    return lw.b.ptrtoint(base, T.I32)


# ---- cp.async -------------------------------------------------------------------
def cp_async16(lw, dst_addr, src_ptr, pred, src_bytes=None, imm: int = 0):
    """``@pred cp.async.cg.shared.global [dst+imm], [src], 16{, src_bytes}``: a constant
    ``imm`` goes into the instruction's address (no register per offset)."""
    src = lw.b.ptrtoint(src_ptr, T.I64)
    dst = f"[$0+{int(imm)}]" if imm else "[$0]"
    if src_bytes is None:
        fty = ir.FunctionType(T.VOID, [T.I32, T.I64, T.I1])
        lw.b.asm(fty, f"@$2 cp.async.cg.shared.global {dst}, [$1], 16;", "r,l,b,~{memory}",
                 [dst_addr, src, pred], True)
        return
    fty = ir.FunctionType(T.VOID, [T.I32, T.I64, T.I32, T.I1])
    lw.b.asm(fty, f"@$3 cp.async.cg.shared.global {dst}, [$1], 16, $2;", "r,l,r,b,~{memory}",
             [dst_addr, src, src_bytes, pred], True)


def _void_asm(lw, text):
    lw.b.asm(ir.FunctionType(T.VOID, []), text, "~{memory}", [], True)


def cp_async_commit(lw):
    _void_asm(lw, "cp.async.commit_group;")


def cp_async_wait(lw, n: int):
    _void_asm(lw, f"cp.async.wait_group {int(n)};")


def fence_async_shared(lw):
    _void_asm(lw, "fence.proxy.async.shared::cta;")


# ---- wgmma ------------------------------------------------------------------------
def wgmma_fits(lw, M, N, K) -> bool:
    W = lw.num_warps
    return (lw.arch == 90 and W in (4, 8) and M == 16 * W and K % PANEL == 0
            and N % PANEL == 0 and N <= 256)


def wgmma_layout(lw, M, N) -> MmaLayout:
    return MmaLayout((M, N), lw.num_warps, 1)


def _desc_hi(lbo: int, sbo: int) -> int:
    """Constant fields of a matrix descriptor: LBO, SBO (bytes), 128B swizzle."""
    return ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (1 << 62)


def _desc(lw, addr, hi: int):
    lo = lw.b.zext(lw.b.and_(lw.b.lshr(addr, lw.i32(4)), lw.i32(0x3FFF)), T.I64)
    return lw.b.or_(lo, ir.Constant(T.I64, hi))


def desc_at(lw, base, offset: int):
    """The descriptor of the tile ``offset`` bytes (a multiple of 16) past the one whose
    descriptor is ``base`` (:func:`_desc`): one 64-bit add of ``offset >> 4`` to its start
    field.  Exact: shared-memory addresses are below 2**18 bytes (228 KB on sm_90), so
    ``addr >> 4`` and ``(addr + offset) >> 4`` both fit the 14-bit field, ``addr`` being
    16-byte aligned, and the add carries into no other field."""
    assert offset % 16 == 0, offset
    return base if not offset else lw.b.add(base, ir.Constant(T.I64, offset >> 4))


def wgmma(lw, kind: str, n: int, da, db, regs):
    """One ``wgmma.mma_async m64n{n}k16`` (A K-major, B N-major, D += A*B)."""
    nreg = n // 2
    outs = ",".join(f"${i}" for i in range(nreg))
    asm = (f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{kind}.{kind} "
           f"{{{outs}}}, ${nreg}, ${nreg + 1}, 1, 1, 1, 0, 1;")
    cons = ",".join(["=f"] * nreg + ["l", "l"] + [str(i) for i in range(nreg)])
    fty = ir.FunctionType(ir.LiteralStructType([T.F32] * nreg), [T.I64, T.I64] + [T.F32] * nreg)
    res = lw.b.asm(fty, asm, cons, [da, db] + list(regs), True)
    return [lw.b.extract_value(res, i) for i in range(nreg)]


def wgmma_wait(lw, n: int, regs):
    """``wgmma.wait_group n`` with the accumulators threaded through (so no use of
    them can be scheduled before the wait)."""
    regs = list(regs)
    if not regs:
        _void_asm(lw, f"wgmma.wait_group.sync.aligned {int(n)};")
        return regs
    k = len(regs)
    cons = ",".join(["=f"] * k + [str(i) for i in range(k)] + ["~{memory}"])
    fty = ir.FunctionType(ir.LiteralStructType([T.F32] * k), [T.F32] * k)
    res = lw.b.asm(fty, f"wgmma.wait_group.sync.aligned {int(n)};", cons, regs, True)
    return [lw.b.extract_value(res, i) for i in range(k)]


def fence_operands(lw, regs):
    """``regs`` passed through an empty asm with side effects (CUTLASS's
    ``warpgroup_fence_operand``): a wgmma accumulator's initial value is then made once
    where this is called, never rematerialised by LLVM on other paths.  A constant
    initial value duplicated into a loop's zero-trip path reaches the in-flight group's
    wait without a wgmma: ptxas then serialises every wgmma of the kernel (C7515)."""
    regs = list(regs)
    k = len(regs)
    cons = ",".join(["=f"] * k + [str(i) for i in range(k)])
    fty = ir.FunctionType(ir.LiteralStructType([T.F32] * k), [T.F32] * k)
    res = lw.b.asm(fty, "", cons, regs, True)
    return [lw.b.extract_value(res, i) for i in range(k)]


def wgmma_consume(lw, plan, stage_addr, regs):
    """acc += A @ B for the ring stage at shared address ``stage_addr`` (i32)."""
    (M, K), N = plan.a_shape, plan.b_shape[1]
    b = lw.b
    wg = b.lshr(lw.warp, lw.i32(2))
    if lw.tuning.uniform_wg:      # lane 0's value: ptxas then knows it is warp-uniform
        wg = lw.call("llvm.nvvm.shfl.sync.idx.i32", T.I32, [lw.i32(-1), wg, lw.i32(0), lw.i32(31)])
    a0 = b.add(stage_addr, b.mul(wg, lw.i32(64 * ROW_BYTES)))
    b0 = b.add(stage_addr, lw.i32(tile_bytes(plan.a_shape)))
    hi_a = _desc_hi(16, 8 * ROW_BYTES)
    hi_b = _desc_hi(K * ROW_BYTES, 8 * ROW_BYTES)
    _void_asm(lw, "wgmma.fence.sync.aligned;")
    regs = list(regs)
    base_a, base_b = _desc(lw, a0, hi_a), _desc(lw, b0, hi_b)   # the k-steps': constant adds
    for kk in range(K // 16):
        k0 = kk * 16
        da = desc_at(lw, base_a, (k0 // PANEL) * M * ROW_BYTES + (k0 % PANEL) * 2)
        db = desc_at(lw, base_b, k0 * ROW_BYTES)
        regs = wgmma(lw, plan.kind, N, da, db, regs)
    _void_asm(lw, "wgmma.commit_group.sync.aligned;")
    return wgmma_wait(lw, plan.inflight, regs)


# ---- ldmatrix + mma.sync ---------------------------------------------------------
def _ldmatrix_x4(lw, addr, trans: bool, imm: int = 0):
    """``ldmatrix.sync.aligned.m8n8.x4`` at shared address ``addr`` (+ the constant ``imm``,
    written into the instruction)."""
    t = ".trans" if trans else ""
    at = f"[$4+{int(imm)}]" if imm else "[$4]"
    fty = ir.FunctionType(ir.LiteralStructType([T.I32] * 4), [T.I32])
    res = lw.b.asm(fty, f"ldmatrix.sync.aligned.m8n8.x4{t}.shared.b16 {{$0,$1,$2,$3}}, {at};",
                   "=r,=r,=r,=r,r", [addr], True)
    return [lw.b.extract_value(res, i) for i in range(4)]


def at_imm(lw, addr, imm: int):
    """(register, immediate) operands for address ``addr + imm`` of an asm access: the
    constant stays out of the register when ``CudaTuning.imm_offsets`` is on."""
    if lw.tuning.imm_offsets or not imm:
        return addr, int(imm)
    return lw.b.add(addr, lw.i32(imm)), 0


def ldmatrix_at(lw, addr, imm: int, trans: bool):
    """``_ldmatrix_x4`` at ``addr + imm`` (``imm`` constant; see :func:`at_imm`)."""
    a, i = at_imm(lw, addr, imm)
    return _ldmatrix_x4(lw, a, trans, i)


def mma_consume(lw, plan, stage_addr, regs):
    """acc += A @ B with ``mma.sync.m16n8k16``; fragments read from the swizzled ring
    stage by ``ldmatrix.x4`` (``.trans`` for the N-major B)."""
    from .rules_mma import _mma
    ml = plan.layout
    (M, K), N = plan.a_shape, plan.b_shape[1]
    b = lw.b
    lane = lw.lane
    wr, wc = b.udiv(lw.warp, lw.i32(ml.wn)), b.urem(lw.warp, lw.i32(ml.wn))
    # ldmatrix.x4: lanes 8q..8q+7 give the row addresses of matrix q.
    q, lr = b.lshr(lane, lw.i32(3)), b.and_(lane, lw.i32(7))
    # A (m16 x k16): matrices (rows 0-7, k0-7), (rows 8-15, k0-7), (rows 0-7, k8-15), (rows 8-15, k8-15)
    a_row = b.add(b.add(b.mul(wr, lw.i32(M // ml.wm)), lr), b.mul(b.and_(q, lw.i32(1)), lw.i32(8)))
    a_kc = b.lshr(q, lw.i32(1))                                # 0/1: which 8-wide k chunk
    # B (k16 x n16, N-major, .trans): matrices (k0-7, n0-7), (k8-15, n0-7), (k0-7, n8-15), (k8-15, n8-15)
    b_k = b.add(lr, b.mul(b.and_(q, lw.i32(1)), lw.i32(8)))
    b_nc = b.add(b.mul(wc, lw.i32(N // ml.wn // 8)), b.lshr(q, lw.i32(1)))
    boff = tile_bytes(plan.a_shape)
    kind = plan.kind
    regs = list(regs)
    for ks in range(K // 16):
        afr = []
        for mi in range(ml.mt):
            r = b.add(a_row, lw.i32(mi * 16))
            off = swizzled_offset(lw, r, b.add(a_kc, lw.i32(ks * 2)), M)
            afr.append(_ldmatrix_x4(lw, b.add(stage_addr, off), False))
        bfr = []
        k = b.add(b_k, lw.i32(ks * 16))
        for nj in range(0, ml.nt, 2):
            off = swizzled_offset(lw, k, b.add(b_nc, lw.i32(nj)), K)
            r4 = _ldmatrix_x4(lw, b.add(stage_addr, b.add(off, lw.i32(boff))), True)
            bfr.append(r4[0:2])
            bfr.append(r4[2:4])
        for mi in range(ml.mt):
            for ni in range(ml.nt):
                i = (mi * ml.nt + ni) * 4
                regs[i:i + 4] = _mma(lw, kind, afr[mi], bfr[ni], regs[i:i + 4])
    return regs
