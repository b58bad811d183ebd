# A loop-free dot (Triton's test_dot shape: tests/e2e/test_dot_loop_free.dot_epilogue,
# row-major fp16 operands through runtime strides specialised to 1 and to multiples of
# 16): each loaded and stored shape gets 16-byte chunks of its narrowest element
# (rules_mma.widen_operand_chunks), so the operands load 8 halves per access and the
# fp32 epilogue tile and result move 4 floats per access; the dot runs on mma.
# RUN: cuda-plan --arch=90 --warps=4 --kernel=dot_epilogue
# ARGS: X=*fp16:16 sxm=i32:16 sxk=i32:eq1 Y=*fp16:16 syk=i32:16 syn=i32:eq1 W=*fp32:16 Z=*fp32:16
# CONSTEXPRS: BM=128 BN=128 BK=64 SCALE=False
from tests.e2e.test_dot_loop_free import dot_epilogue  # noqa: F401

# CHECK-LABEL: cuda-plan @dot_epilogue (sm_90, 4 warps)
# CHECK: layout 128x128: 4-element chunks
# CHECK-NEXT: layout 128x64: 8-element chunks
# CHECK-NEXT: layout 64x128: 8-element chunks
# CHECK-NEXT: tt.load <128x64xfp16> at {{.*}}: width 8
# CHECK-NEXT: tt.load <64x128xfp16> at {{.*}}: width 8
# CHECK-NEXT: tt.dot 128x128x64 fp16 at {{.*}}: mma (128, 128) warps 2x2
# CHECK-NEXT: tt.load <128x128xfp32> at {{.*}}: width 4
# CHECK-NEXT: tt.store <128x128xfp32> at {{.*}}: width 4
