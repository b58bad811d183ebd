# The cuda plan of a blocked fp16 matmul (tutorial 03's loop with carried pointers):
# on sm_90 with 8 warps (M = 16 rows per warp) the dot loop takes the cp.async ring
# with wgmma, one group in flight; on sm_80 with mma.sync; the operand layouts get
# 16-byte chunks for the copies;
# with BK // 2 = 32 (K not a multiple of 64) the ring says no, and the loop keeps the
# register path: the accumulator in the mma layout, both loads rotated an iteration ahead;
# so does num_stages=1 (no ring of one stage), and sm_75 (no cp.async, no mma.sync here)
# keeps a plain loop.
# RUN: cuda-plan --arch=90 --warps=8 --kernel=matmul --check-prefix=SM90
# RUN: cuda-plan --arch=80 --warps=4 --kernel=matmul --check-prefix=SM80
# RUN: cuda-plan --arch=90 --warps=4 --kernel=matmul_k32 --check-prefix=K32
# RUN: cuda-plan --arch=90 --warps=8 --kernel=matmul --stages=1 --check-prefix=STAGES1
# RUN: cuda-plan --arch=75 --warps=8 --kernel=matmul --check-prefix=SM75
# ARGS: a_ptr=*fp16:16 b_ptr=*fp16:16 c_ptr=*fp32:16 M=i32:16 N=i32:16 K=i32:16
# ARGS: stride_am=i32:16 stride_bk=i32:16 stride_cm=i32:16
# CONSTEXPRS: BM=128 BN=128 BK=64
import tilejit
import tilejit.language as tl


@tilejit.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc)


@tilejit.jit
def matmul_k32(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BM, BN, BK // 2)

# SM90-LABEL: cuda-plan @matmul (sm_90, 8 warps)
# SM90-NEXT: layout 128x64: 8-element chunks
# SM90-NEXT: layout 64x128: 8-element chunks
# SM90-NEXT: scf.for at matmul.py:{{[0-9]+}}:4: cp.async ring
# SM90-NEXT: ring: wgmma, 3 stages of 32768 B, 2 ahead, 1 group(s) in flight, A (128, 64) B (64, 128) f16
# SM90-NEXT: copy: tt.load <128x64xfp16> at matmul.py:{{[0-9]+}}:12 (carried pointer)
# SM90-NEXT: copy: tt.load <64x128xfp16> at matmul.py:{{[0-9]+}}:12 (carried pointer)
# SM90: tt.store <128x128xfp32> at matmul.py:{{[0-9]+}}:4: width 4

# SM80-LABEL: cuda-plan @matmul (sm_80, 4 warps)
# SM80: scf.for at matmul.py:{{[0-9]+}}:4: cp.async ring
# SM80-NEXT: ring: mma, 3 stages of 32768 B, 2 ahead, 0 group(s) in flight
# SM80: tt.load <128x64xfp16> at matmul.py:{{[0-9]+}}:12: width 8

# K32-LABEL: cuda-plan @matmul_k32 (sm_90, 4 warps)
# K32-NEXT: scf.for at matmul.py:{{[0-9]+}}:4: mma accumulators (no cp.async ring: tile shape 128x128x32: K and N multiples of 64, M of 16)
# K32-NEXT: accumulator 0: mma (128, 128) warps 2x2
# K32-NEXT: rotated: tt.load <128x32xfp16> at matmul.py:{{[0-9]+}}:12 (carried pointer 1), width 4/4
# K32-NEXT: rotated: tt.load <32x128xfp16> at matmul.py:{{[0-9]+}}:12 (carried pointer 2), width 4/4

# STAGES1-LABEL: cuda-plan @matmul (sm_90, 8 warps)
# STAGES1: scf.for at matmul.py:{{.*}}: mma accumulators (no cp.async ring: 1 stages of 32768 bytes: no ring)
# STAGES1-NOT: ring:

# SM75-LABEL: cuda-plan @matmul (sm_75, 8 warps)
# SM75: scf.for at matmul.py:{{.*}}: plain
# SM75-NOT: ring:
