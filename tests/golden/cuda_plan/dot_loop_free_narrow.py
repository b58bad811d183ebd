# Loop-free dots with 1- and 2-byte tiles (tests/e2e/test_dot_loop_free.py): each loaded
# or stored shape gets 16-byte chunks of its narrowest element (rules_mma.
# widen_operand_chunks): int8 operand tiles 16 elements per access, an fp16 result 8;
# with N=128 only the result's shape (128, 128) is 2-byte (8 per access), the operands'
# (128, 64) and (64, 128) stay 1-byte (16).  An fp16 result of fp16 operands is an
# fp16-accumulator dot on mma (fp32 accumulation, one rounding: plan_half_acc).
# RUN: cuda-plan --arch=90 --warps=4 --kernel=dot_int8_n64 --check-prefix=N64
# RUN: cuda-plan --arch=90 --warps=4 --kernel=dot_int8_n128 --check-prefix=N128
# RUN: cuda-plan --arch=90 --warps=4 --kernel=dot_fp16_result --check-prefix=HALF
# ARGS: X=*i8:16 Y=*i8:16 Z=*fp16:16 X16=*fp16:16 Y16=*fp16:16
import tilejit
import tilejit.language as tl
from tests.e2e.test_dot_loop_free import dot_fp16_out, dot_int8_operands


@tilejit.jit
def dot_int8_n64(X, Y, Z):
    dot_int8_operands(X, Y, Z, 128, 64, 64)


@tilejit.jit
def dot_int8_n128(X, Y, Z):
    dot_int8_operands(X, Y, Z, 128, 128, 64)


@tilejit.jit
def dot_fp16_result(X16, Y16, Z):
    dot_fp16_out(X16, Y16, Z, 64)

# N64-LABEL: cuda-plan @dot_int8_n64 (sm_90, 4 warps)
# N64: layout 128x64: 16-element chunks
# N64-NEXT: layout 64x64: 16-element chunks
# N64-NEXT: tt.load <128x64xint8> at {{.*}}: width 16
# N64-NEXT: tt.load <64x64xint8> at {{.*}}: width 16
# N64-NEXT: tt.dot 128x64x64 fp16 at {{.*}}: mma (128, 64)
# N64-NEXT: tt.store <128x64xfp16> at {{.*}}: width 8

# N128-LABEL: cuda-plan @dot_int8_n128 (sm_90, 4 warps)
# N128: layout 128x128: 8-element chunks
# N128-NEXT: layout 128x64: 16-element chunks
# N128-NEXT: layout 64x128: 16-element chunks
# N128-NEXT: tt.load <128x64xint8> at {{.*}}: width 16
# N128-NEXT: tt.load <64x128xint8> at {{.*}}: width 16
# N128-NEXT: tt.dot 128x128x64 fp16 at {{.*}}: mma (128, 128)
# N128-NEXT: tt.store <128x128xfp16> at {{.*}}: width 8

# HALF-LABEL: cuda-plan @dot_fp16_result (sm_90, 4 warps)
# HALF: layout 64x64: 8-element chunks
# HALF-NEXT: tt.load <64x64xfp16> at {{.*}}: width 8
# HALF-NEXT: tt.load <64x64xfp16> at {{.*}}: width 8
# HALF-NEXT: tt.dot 64x64x64 fp16 at {{.*}}: mma (64, 64) warps 2x2, the fp16 accumulator widened to fp32
# HALF-NEXT: tt.store <64x64xfp16> at {{.*}}: width 8
