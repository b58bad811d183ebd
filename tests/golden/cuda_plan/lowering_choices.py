# The cuda plan's choices that lowering rules used to make themselves: a 2-D tile
# contiguous along dim 0 only accessed per element (its transposed access, through shared
# memory, was slower on the H200 and deleted), the strategy of each tt.reduce (rules_reduce.reduce_strategy: rows
# over a group of lanes, rows over whole warps, a whole block, or through shared memory)
# a dot with an fp16 accumulator on mma.sync (rules_mma.plan_half_acc) and a scattered
# store moved to one element per thread first (scatter.wants_relayout).
# RUN: cuda-plan --arch=90 --warps=4 --kernel=transpose_copy
# RUN: cuda-plan --arch=90 --warps=4 --kernel=row_sums --check-prefix=ROWS
# RUN: cuda-plan --arch=90 --warps=4 --kernel=row_sums --tuning=row_butterflies=0 --check-prefix=NOBF
# RUN: cuda-plan --arch=90 --warps=4 --kernel=half_dot --check-prefix=HALF
# RUN: cuda-plan --arch=90 --warps=4 --kernel=scatter_store --check-prefix=SCAT
# ARGS: x_ptr=*fp32:16 y_ptr=*fp32:16
# CONSTEXPRS: R=64 C=32 W=4096
import tilejit
import tilejit.language as tl


@tilejit.jit
def transpose_copy(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr, W: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    offs = r[:, None] + c[None, :] * R          # contiguous along dim 0 only
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@tilejit.jit
def row_sums(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr, W: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(y_ptr + r, tl.sum(x, axis=1))                      # 8 lanes per row
    tl.store(y_ptr + R + c, tl.max(x, axis=0))                  # across rows: shared memory
    w = tl.arange(0, W)
    z = tl.load(x_ptr + r[:, None] * 0 + w[None, :], mask=r[:, None] < 1)
    tl.store(y_ptr + r, tl.sum(z, axis=1))                      # 1024 lanes per row
    one = tl.load(x_ptr + tl.arange(0, 1)[:, None] * W + w[None, :])
    tl.store(y_ptr + tl.arange(0, 1), tl.sum(one, axis=1))      # one row: the whole block


@tilejit.jit
def half_dot(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr, W: tl.constexpr):
    r = tl.arange(0, R)
    a = tl.load(x_ptr + r[:, None] * R + r[None, :]).to(tl.float16)
    acc = tl.zeros((R, R), dtype=tl.float16)
    acc = tl.dot(a, a, acc, out_dtype=tl.float16)
    tl.store(y_ptr + r[:, None] * R + r[None, :], acc.to(tl.float32))


@tilejit.jit
def scatter_store(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr, W: tl.constexpr):
    w = tl.arange(0, W)
    tl.store(y_ptr + w * 7, tl.load(x_ptr + w))                 # 7 elements apart


# CHECK-LABEL: cuda-plan @transpose_copy (sm_90, 4 warps)
# CHECK-NEXT: layout 64x32: 4-element chunks along dim 0, neighbouring threads along dim 0
# CHECK-NEXT: tt.load <64x32xfp32> at lowering_choices.py:23:27: width 4
# CHECK-NEXT: tt.store <64x32xfp32> at lowering_choices.py:23:4: width 4
# CHECK-NOT: transposed

# ROWS-LABEL: cuda-plan @row_sums (sm_90, 4 warps)
# ROWS: tt.reduce sum <64x32xfp32> axis 1 at lowering_choices.py:31:24: row lanes, 8 lanes per row
# ROWS: tt.reduce max <64x32xfp32> axis 0 at lowering_choices.py:32:28: general
# ROWS: tt.reduce sum <64x4096xfp32> axis 1 at lowering_choices.py:35:24: wide rows, 1024 lanes per row
# ROWS: tt.reduce sum <1x4096xfp32> axis 1 at lowering_choices.py:37:38: whole block

# NOBF-LABEL: cuda-plan @row_sums (sm_90, 4 warps)
# NOBF: tt.reduce sum <64x32xfp32> axis 1 at lowering_choices.py:31:24: row lanes, 8 lanes per row
# NOBF: tt.reduce sum <64x4096xfp32> axis 1 at lowering_choices.py:35:24: general
# NOBF: tt.reduce sum <1x4096xfp32> axis 1 at lowering_choices.py:37:38: general

# HALF-LABEL: cuda-plan @half_dot (sm_90, 4 warps)
# HALF: tt.dot 64x64x64 fp16 at lowering_choices.py:45:10: mma (64, 64) warps 2x2, the fp16 accumulator widened to fp32

# SCAT-LABEL: cuda-plan @scatter_store (sm_90, 4 warps)
# SCAT: tt.store <4096xfp32> at lowering_choices.py:{{[0-9]+}}:4: width 1
# SCAT-NEXT: scattered: moved to one element per thread first
