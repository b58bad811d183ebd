# A loop-free dot of column-major fp16 operands (Triton's test_dot with COL_A, COL_B): each
# operand tile, read only by the dot and contiguous along dim 0 only, is loaded transposed
# in 16-byte vectors along dim 0 and staged so (A M-major, B K-major:
# rules_mma.plan_kmajor_loads); a row-major operand keeps its usual access; a
# column-major tile that something else reads too stays per element; with
# CudaTuning.kmajor_operands off every column-major tile is per element.
# RUN: cuda-plan --arch=90 --warps=4 --kernel=dot_col
# RUN: cuda-plan --arch=90 --warps=4 --kernel=dot_col --tuning=kmajor_operands=0 --check-prefix=OFF
# RUN: cuda-plan --arch=80 --warps=4 --kernel=dot_mixed --check-prefix=MIX
# ARGS: x_ptr=*fp16:16 y_ptr=*fp16:16 z_ptr=*fp32:16
# CONSTEXPRS: M=64 N=32 K=64
import tilejit
import tilejit.language as tl


@tilejit.jit
def dot_col(x_ptr, y_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(x_ptr + m[:, None] + k[None, :] * M)          # column-major A
    y = tl.load(y_ptr + k[:, None] + n[None, :] * K)          # column-major B
    tl.store(z_ptr + m[:, None] * N + n[None, :], tl.dot(x, y))


@tilejit.jit
def dot_mixed(x_ptr, y_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(x_ptr + m[:, None] * K + k[None, :])          # row-major A
    y = tl.load(y_ptr + k[:, None] + n[None, :] * K)          # column-major B, also stored
    tl.store(z_ptr + m[:, None] * N + n[None, :], tl.dot(x, y))
    tl.store(z_ptr + k[:, None] + n[None, :] * K, y.to(tl.float32))


# CHECK-LABEL: cuda-plan @dot_col (sm_90, 4 warps)
# CHECK: tt.load <64x64xfp16> at dot_column_major.py:21:8: width 1
# CHECK-NEXT: transposed: 8 elements per access along dim 0, staged transposed for its dots
# CHECK: tt.load <64x32xfp16> at dot_column_major.py:22:8: width 1
# CHECK-NEXT: transposed: 8 elements per access along dim 0, staged transposed for its dots

# OFF-LABEL: cuda-plan @dot_col (sm_90, 4 warps)
# OFF-NOT: transposed:

# MIX-LABEL: cuda-plan @dot_mixed (sm_80, 4 warps)
# MIX: tt.load <64x64xfp16> at dot_column_major.py:31:8: width 8
# MIX-NEXT: tt.load <64x32xfp16> at dot_column_major.py:32:8: width 1
# MIX-NOT: transposed:
