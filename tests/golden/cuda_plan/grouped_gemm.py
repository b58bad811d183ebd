# The cuda plan of Triton's grouped GEMM tutorial (tests/triton_scripts/grouped_gemm.py, the
# table pointers specialised as the launcher does, 128x128x64 tiles, 8 warps): its operand
# pointers and leading dimensions are read from memory, so transforms/align_version.py
# versions the dot loop at run time -- the fast copy (16-byte aligned roots) a cp.async
# ring on wgmma (sm_90) or mma.sync (sm_80), the fallback the register path; with the
# align_version option off there is one loop, on the register path, its operands loaded
# per element.  The dot loop sits in
# loops around it, whose bodies read %tid.x again.
# RUN: cuda-plan --arch=90 --warps=8 --kernel=grouped_matmul_kernel
# RUN: cuda-plan --arch=80 --warps=8 --kernel=grouped_matmul_kernel --check-prefix=SM80
# RUN: cuda-plan --arch=90 --warps=8 --kernel=grouped_matmul_kernel --align-version=0 --check-prefix=OFF
# ARGS: group_a_ptrs=*i64:16 group_b_ptrs=*i64:16 group_c_ptrs=*i64:16 group_gemm_sizes=*i32:16 g_lds=*i32:16 group_size=i32
# CONSTEXPRS: NUM_SM=4 BLOCK_SIZE_M=128 BLOCK_SIZE_N=128 BLOCK_SIZE_K=64
from tests.shared_kernels import script_kernels

grouped_matmul_kernel = script_kernels("grouped_gemm.py")["grouped_matmul_kernel"]

# CHECK-LABEL: cuda-plan @grouped_matmul_kernel (sm_90, 8 warps)
# CHECK: scf.for at grouped_gemm.py:{{[0-9]+}}:4: plain
# CHECK-NEXT: scf.for body: %tid.x read again at the top of each iteration
# CHECK-NEXT: scf.while body: %tid.x read again at the top of each iteration
# CHECK: scf.for at grouped_gemm.py:[[L:[0-9]+]]:12: the fast copy of a versioned loop: cp.async ring
# CHECK-NEXT: ring: wgmma, 3 stages of 32768 B, 2 ahead, 1 group(s) in flight, A (128, 64) B (64, 128) f16
# CHECK: tt.dot 128x128x64 fp16 at {{.*}}: in the loop's cp.async ring (wgmma)
# CHECK: scf.for at grouped_gemm.py:[[L]]:12: the run-time fallback of a versioned loop: plain (no cp.async ring: an operand pointer is not proved 16-byte contiguous and aligned)
# CHECK: tt.dot 128x128x64 fp16 at {{.*}}: mma (128, 128) warps 2x4

# SM80-LABEL: cuda-plan @grouped_matmul_kernel (sm_80, 8 warps)
# SM80: the fast copy of a versioned loop: cp.async ring
# SM80-NEXT: ring: mma, 3 stages of 32768 B, 2 ahead, 0 group(s) in flight
# SM80: the run-time fallback of a versioned loop: plain
# SM80-NOT: wgmma

# OFF-LABEL: cuda-plan @grouped_matmul_kernel (sm_90, 8 warps)
# OFF-NOT: versioned
# OFF-NOT: cp.async ring:
# OFF: scf.for at grouped_gemm.py:{{[0-9]+}}:12: plain (no cp.async ring: an operand pointer is not proved 16-byte contiguous and aligned)
# OFF-NEXT: tt.load <128x64xfp16> at {{.*}}: width 1
# OFF-NEXT: tt.load <64x128xfp16> at {{.*}}: width 1
# OFF-NEXT: tt.dot 128x128x64 fp16 at {{.*}}: mma (128, 128) warps 2x4
# OFF-NOT: versioned
