# The cuda plan of tutorial 06's attention loop with block pointers
# (tests/e2e/test_ring_computed_pointers.attn_fwd; BLOCK 128x64, 8 warps, 3 stages): a
# row ring of K and V tiles on wgmma (sm_90), which gets the register cap for two CTAs
# per SM -- unless the launch chose (maxnreg, min_ctas_per_sm) or ring_occupancy is off;
# with row_ring off the region keeps its rotated loads (K's K-major: 4-element vectors
# along its dim 0; per element with kmajor_b off) and no ring is planned, both dots
# taking A from registers and the softmax rows reduced in the row region.
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_fwd --check-prefix=CAP
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_fwd --attrs=maxnreg=168 --check-prefix=LAUNCH
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_fwd --attrs=min_ctas_per_sm=1 --check-prefix=LAUNCH
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_fwd --tuning=ring_occupancy=0 --check-prefix=LAUNCH
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_fwd --tuning=row_ring=0 --check-prefix=NORING
# RUN: cuda-plan --arch=80 --warps=8 --kernel=attn_fwd --check-prefix=SM80
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_fwd --tuning=row_ring=0,kmajor_b=0 --check-prefix=NOKMAJOR
# ARGS: Q=*fp16:16 K=*fp16:16 V=*fp16:16 sm_scale=fp32 Out=*fp16:16
# ARGS: stride_qm=i32:16 stride_kn=i32:16 stride_vk=i32:16 stride_om=i32:16 N_CTX=i32:16
# CONSTEXPRS: HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64
from tests.e2e.test_ring_computed_pointers import attn_fwd  # noqa: F401

# CAP-LABEL: cuda-plan @attn_fwd (sm_90, 8 warps)
# CAP: scf.for at {{.*}}: row ring
# Under the cap the first dot stays in its iteration (its wgmma waited for before the softmax).
# CAP: row ring: 3 stages of 16384 B, 2 ahead, last dot in flight over the loop edge
# CAP-NEXT: copy: {{.*}} K-major (64, 64), 8 x 2 B per cp.async, wgmma
# CAP-NEXT: copy: {{.*}} N-major (64, 64), 8 x 2 B per cp.async, wgmma
# CAP: register cap: .maxnreg 128 (two CTAs per SM; occupancy.py)

# LAUNCH-LABEL: cuda-plan @attn_fwd (sm_90, 8 warps)
# LAUNCH: row ring: 3 stages of 16384 B, 2 ahead, first dot an iteration ahead
# LAUNCH-NOT: register cap

# NORING-LABEL: cuda-plan @attn_fwd (sm_90, 8 warps)
# NORING: scf.for at {{.*}}: row region
# NORING-NOT: row ring
# NORING: rotated: {{.*}} (computed pointer), width 1, K-major width 4
# NORING-NEXT: rotated: {{.*}} (computed pointer), width 4
# NORING: tt.dot 128x64x64 fp16 at {{.*}}: mma (128, 64) warps 8x1
# NORING-NEXT: A from registers: loop-invariant: fragments read once before the loop
# NORING-NEXT: tt.reduce max <128x64xfp32> axis 1 at {{.*}}: in the row region (mma_rows.py)
# NORING-NEXT: tt.reduce sum <128x64xfp32> axis 1 at {{.*}}: in the row region (mma_rows.py)
# NORING: tt.dot 128x64x64 fp16 at {{.*}}: mma (128, 64) warps 8x1
# NORING-NEXT: A from registers: a region tile: its accumulator fragments
# NORING-NOT: register cap

# Without K-major B loads K's transposed tile is rotated a tile ahead per element.
# NOKMAJOR-LABEL: cuda-plan @attn_fwd (sm_90, 8 warps)
# NOKMAJOR: scf.for at {{.*}}: row region
# NOKMAJOR: rotated: {{.*}} (computed pointer), width 1{{$}}
# NOKMAJOR-NEXT: rotated: {{.*}} (computed pointer), width 4

# On sm_80: the ring's dots on mma.sync, the first one an iteration ahead (q @ k of the
# first tile before the loop), no register cap.
# SM80-LABEL: cuda-plan @attn_fwd (sm_80, 8 warps)
# SM80: scf.for at {{.*}}: row ring
# SM80: row ring: 3 stages of 16384 B, 2 ahead, first dot an iteration ahead
# SM80-NEXT: copy: {{.*}} K-major (64, 64), 8 x 2 B per cp.async, mma.sync
# SM80-NEXT: copy: {{.*}} N-major (64, 64), 8 x 2 B per cp.async, mma.sync
# SM80: A from registers: loop-invariant
# SM80: A from registers: a region tile
# SM80-NOT: register cap
