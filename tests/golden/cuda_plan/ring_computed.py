# The cuda plan of a one-tile matmul whose operand pointers the body computes from the
# induction variable (tests/e2e/test_ring_computed_pointers.mm_computed, MASK=2: the
# `offs_k < K` mask on the computed offsets; one version of the loop): with K a multiple
# of 16 the mask is constant over 8-element chunks and the loop takes the cp.async ring;
# with K unknown it may change inside a 16-byte chunk and the loop keeps the register path.
# The ring feeds wgmma on sm_90 and mma.sync on sm_80, with or without masks.
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_computed --align-version=0
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_k_unknown --align-version=0 --check-prefix=KANY
# RUN: cuda-plan --arch=80 --warps=8 --kernel=mm_computed --align-version=0 --check-prefix=SM80
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_unmasked --align-version=0 --check-prefix=MASKS
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_mask1 --align-version=0 --check-prefix=MASKS
# RUN: cuda-plan --arch=80 --warps=8 --kernel=mm_unmasked --align-version=0 --check-prefix=MASKS80
# RUN: cuda-plan --arch=80 --warps=8 --kernel=mm_mask1 --align-version=0 --check-prefix=MASKS80
# ARGS: a_ptr=*fp16:16 b_ptr=*fp16:16 c_ptr=*fp32:16 M=i32:16 N=i32:16 K=i32:16
# ARGS: sam=i32:16 sak=i32:eq1 sbk=i32:16 sbn=i32:eq1 scm=i32:16 K_any=i32
# CONSTEXPRS: BM=128 BN=128 BK=64 MASK=2
import tilejit
import tilejit.language as tl
from tests.e2e.test_ring_computed_pointers import mm_computed


@tilejit.jit
def mm_k_unknown(a_ptr, b_ptr, c_ptr, M, N, K_any, sam, sak, sbk, sbn, scm,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, MASK: tl.constexpr):
    mm_computed(a_ptr, b_ptr, c_ptr, M, N, K_any, sam, sak, sbk, sbn, scm, BM, BN, BK, MASK)


@tilejit.jit
def mm_unmasked(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, MASK: tl.constexpr):
    mm_computed(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, BM, BN, BK, 0)


@tilejit.jit
def mm_mask1(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, MASK: tl.constexpr):
    mm_computed(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, BM, BN, BK, 1)

# CHECK-LABEL: cuda-plan @mm_computed (sm_90, 8 warps)
# CHECK: scf.for at {{.*}}: cp.async ring
# CHECK-NEXT: ring: wgmma, 3 stages of 32768 B, 2 ahead, 1 group(s) in flight
# CHECK-NEXT: copy: tt.load <128x64xfp16> at {{.*}} (computed pointer)
# CHECK-NEXT: copy: tt.load <64x128xfp16> at {{.*}} (computed pointer)

# The operand layouts keep the 16-byte chunks the structural ring plan gave them.
# KANY-LABEL: cuda-plan @mm_k_unknown (sm_90, 8 warps)
# KANY: scf.for at {{.*}}: mma accumulators (no cp.async ring: a mask is not proved constant over 8-element chunks)
# KANY-NEXT: accumulator 0: mma (128, 128) warps 2x4
# KANY-NEXT: direct: tt.load <128x64xfp16> at {{.*}} (pointer from the induction variable)
# KANY-NEXT: direct: tt.load <64x128xfp16> at {{.*}} (pointer from the induction variable)
# KANY: tt.load <128x64xfp16> at {{.*}}: width 1 (masked)
# KANY: tt.dot 128x128x64 fp16 at {{.*}}: mma (128, 128) warps 2x4

# On sm_80 the ring feeds mma.sync (nothing left in flight across the loop edge).
# SM80-LABEL: cuda-plan @mm_computed (sm_80, 8 warps)
# SM80: scf.for at {{.*}}: cp.async ring
# SM80-NEXT: ring: mma, 3 stages of 32768 B, 2 ahead, 0 group(s) in flight
# SM80: tt.dot 128x128x64 fp16 at {{.*}}: in the loop's cp.async ring (mma)

# Without a mask, and with the mask on the M/N edges (MASK=1), the same ring.
# MASKS: scf.for at {{.*}}: cp.async ring
# MASKS-NEXT: ring: wgmma, 3 stages of 32768 B, 2 ahead, 1 group(s) in flight
# MASKS-NEXT: copy: tt.load <128x64xfp16> at {{.*}} (computed pointer)
# MASKS-NEXT: copy: tt.load <64x128xfp16> at {{.*}} (computed pointer)
# MASKS: tt.dot 128x128x64 fp16 at {{.*}}: in the loop's cp.async ring (wgmma)
# MASKS80: scf.for at {{.*}}: cp.async ring
# MASKS80-NEXT: ring: mma, 3 stages of 32768 B, 2 ahead, 0 group(s) in flight
# MASKS80: tt.dot 128x128x64 fp16 at {{.*}}: in the loop's cp.async ring (mma)
