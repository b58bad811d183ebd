# The cuda plan of tutorial 03's matmul as published (tests/triton_scripts/matmul_tutorial03.py:
# `% M` offsets, no hints) at the bench config (128x128x64, 8 warps): its dot loop is
# range-versioned (transforms/align_version.py) -- the fast copy a cp.async ring on wgmma,
# the fallback (run only when the launch's values fail the test) the register path -- and
# the kernel gets the register cap for two CTAs per SM (occupancy.py).  No cap with four
# stages (no shared memory for a second CTA), on sm_80 (mma.sync), nor for tutorial 09's
# hinted kernel (one ring, nothing else setting the registers).
# RUN: cuda-plan --arch=90 --warps=8 --kernel=matmul_kernel
# RUN: cuda-plan --arch=90 --warps=8 --stages=4 --kernel=matmul_kernel --check-prefix=NOCAP
# RUN: cuda-plan --arch=80 --warps=8 --kernel=matmul_kernel --check-prefix=NOCAP
# RUN: cuda-plan --arch=90 --warps=8 --kernel=hinted_matmul_kernel --check-prefix=HINTED
# ARGS: a_ptr=*fp16:16 b_ptr=*fp16:16 c_ptr=*fp16:16 M=i32:16 N=i32:16 K=i32:16
# ARGS: stride_am=i32:16 stride_ak=i32:eq1 stride_bk=i32:16 stride_bn=i32:eq1 stride_cm=i32:16 stride_cn=i32:eq1
# CONSTEXPRS: BLOCK_SIZE_M=128 BLOCK_SIZE_N=128 BLOCK_SIZE_K=64 GROUP_SIZE_M=8 ACTIVATION=""
from tests.shared_kernels import script_kernels

matmul_kernel = script_kernels("matmul_tutorial03.py")["matmul_kernel"]
hinted_matmul_kernel = script_kernels("persistent_matmul.py")["matmul_kernel"]

# CHECK-LABEL: cuda-plan @matmul_kernel (sm_90, 8 warps)
# CHECK: scf.for at matmul_tutorial03.py:{{[0-9]+}}:4: the fast copy of a versioned loop: cp.async ring
# CHECK-NEXT: ring: wgmma, 3 stages of 32768 B, 2 ahead, 1 group(s) in flight, A (128, 64) B (64, 128) f16
# CHECK: scf.for at matmul_tutorial03.py:{{[0-9]+}}:4: the run-time fallback of a versioned loop: mma accumulators (no cp.async ring: an operand pointer is not proved 16-byte contiguous and aligned)
# CHECK-NEXT: accumulator 0: mma (128, 128) warps 2x4
# CHECK: register cap: .maxnreg 128 (two CTAs per SM; occupancy.py)

# NOCAP-LABEL: cuda-plan @matmul_kernel
# NOCAP: the fast copy of a versioned loop: cp.async ring
# NOCAP: the run-time fallback of a versioned loop: mma accumulators
# NOCAP-NOT: register cap

# HINTED-LABEL: cuda-plan @matmul_kernel (sm_90, 8 warps)
# HINTED: scf.for at persistent_matmul.py:{{[0-9]+}}:4: cp.async ring
# HINTED-NEXT: ring: wgmma
# HINTED-NOT: versioned
# HINTED-NOT: register cap
