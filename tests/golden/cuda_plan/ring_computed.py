# The cuda plan of a one-tile matmul whose operand pointers the body computes from the
# induction variable (tests/e2e/test_ring_computed_pointers.mm_computed, MASK=2: the
# `offs_k < K` mask on the computed offsets; one version of the loop): with K a multiple
# of 16 the mask is constant over 8-element chunks and the loop takes the cp.async ring;
# with K unknown it may change inside a 16-byte chunk and the loop keeps the register path.
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_computed --align-version=0
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_k_unknown --align-version=0 --check-prefix=KANY
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
