# The cuda plan of tutorial 09's persistent matmul (tests/triton_scripts/persistent_matmul.py,
# the bench config: 128x128x64, 8 warps, 3 stages, fp16, the strides specialised as the
# launch does): the tile loop holds the K loop, whose dot takes the cp.async ring on
# wgmma; the tile loop's body reads %tid.x again per tile (fresh_tid) and the kernel gets
# no register cap (one program per SM: a second CTA slot would stay empty).
# RUN: cuda-plan --arch=90 --warps=8 --kernel=matmul_kernel_persistent
# RUN: cuda-plan --arch=90 --warps=8 --kernel=matmul_kernel_persistent --tuning=fresh_tid=0 --check-prefix=OFF
# RUN: cuda-plan --arch=80 --warps=8 --kernel=matmul_kernel_persistent --check-prefix=SM80
# ARGS: a_ptr=*fp16:16 b_ptr=*fp16:16 c_ptr=*fp16:16 M=i32:16 N=i32:16 K=i32:16
# ARGS: stride_am=i32:16 stride_ak=i32:eq1 stride_bk=i32:16 stride_bn=i32:eq1 stride_cm=i32:16 stride_cn=i32:eq1
# CONSTEXPRS: BLOCK_SIZE_M=128 BLOCK_SIZE_N=128 BLOCK_SIZE_K=64 GROUP_SIZE_M=8 NUM_SMS=132
from tests.shared_kernels import script_kernels

matmul_kernel_persistent = script_kernels("persistent_matmul.py")["matmul_kernel_persistent"]

# CHECK-LABEL: cuda-plan @matmul_kernel_persistent (sm_90, 8 warps)
# CHECK-NEXT: layout 128x64: 8-element chunks
# CHECK-NEXT: layout 64x128: 8-element chunks
# CHECK-NEXT: scf.for at persistent_matmul.py:{{[0-9]+}}:4: plain
# CHECK-NEXT: scf.for body: %tid.x read again at the top of each iteration
# CHECK-NEXT: scf.for at persistent_matmul.py:{{[0-9]+}}:8: cp.async ring
# CHECK-NEXT: ring: wgmma, 3 stages of 32768 B, 2 ahead, 1 group(s) in flight, A (128, 64) B (64, 128) f16
# CHECK-NEXT: copy: tt.load <128x64xfp16> at {{.*}} (computed pointer)
# CHECK-NEXT: copy: tt.load <64x128xfp16> at {{.*}} (computed pointer)
# CHECK: tt.dot 128x128x64 fp16 at {{.*}}: in the loop's cp.async ring (wgmma)
# CHECK-NOT: register cap

# OFF-LABEL: cuda-plan @matmul_kernel_persistent (sm_90, 8 warps)
# OFF-NOT: %tid.x read again

# On sm_80 the K loop's ring feeds mma.sync.
# SM80-LABEL: cuda-plan @matmul_kernel_persistent (sm_80, 8 warps)
# SM80: scf.for at persistent_matmul.py:{{[0-9]+}}:8: cp.async ring
# SM80-NEXT: ring: mma, 3 stages of 32768 B, 2 ahead, 0 group(s) in flight
# SM80-NOT: register cap
