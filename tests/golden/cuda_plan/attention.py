# The cuda plan of the attention forward loop (tests/e2e/test_attention_rows.attn_rows:
# tutorial 06's loop with plain pointers): a row region (the softmax rows in the mma
# layout, q's fragments read before the loop) whose dots' B tiles (K K-major, V
# N-major) go through a cp.async ring; on sm_90 with 8 warps the ring's dots are wgmma,
# the last one's group left in flight over the loop edge (retired by the next iteration's
# first wait), and the kernel gets the register cap for two CTAs per SM.
# On sm_80 the ring's dots are mma.sync.  With the ring switched off the region keeps
# its rotated loads, and both dots take A from registers (q hoisted, p a region tile).
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_rows --check-prefix=SM90
# RUN: cuda-plan --arch=80 --warps=8 --kernel=attn_rows --check-prefix=SM80
# RUN: cuda-plan --arch=90 --warps=8 --kernel=attn_rows --tuning=row_ring=0 --check-prefix=NORING
# ARGS: Q=*fp16:16 K=*fp16:16 V=*fp16:16 sm_scale=fp32 Out=*fp16:16 M=*fp32:16 N_CTX=i32:16
# CONSTEXPRS: HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=False BF16=False
from tests.e2e.test_attention_rows import attn_rows  # noqa: F401

# SM90-LABEL: cuda-plan @attn_rows (sm_90, 8 warps)
# SM90: scf.for at {{.*}}: row ring (no cp.async ring: no tt.dot accumulates into a carried value alone
# SM90-NEXT: rows: 128 rows over 8 warps, 17 ops in the region, carried rows at [0, 2]
# SM90-NEXT: hoisted A: tt.dot at
# SM90-NEXT: row ring: 3 stages of 16384 B, 2 ahead, last dot in flight over the loop edge
# SM90-NEXT: copy: tt.load <64x64xfp16> at {{.*}} K-major (64, 64), 8 x 2 B per cp.async, wgmma
# SM90-NEXT: copy: tt.load <64x64xfp16> at {{.*}} N-major (64, 64), 8 x 2 B per cp.async, wgmma
# SM90-NEXT: accumulator 1: mma (128, 64) warps 8x1, its row scaling applied in the mma layout
# SM90: tt.store <128x64xfp16> at {{.*}}: width 4
# SM90-NEXT: register cap: .maxnreg 128 (two CTAs per SM; occupancy.py)

# SM80-LABEL: cuda-plan @attn_rows (sm_80, 8 warps)
# SM80: row ring: 3 stages of 16384 B, 2 ahead, first dot an iteration ahead
# SM80-NEXT: copy: {{.*}} K-major (64, 64), 8 x 2 B per cp.async, mma.sync
# SM80-NEXT: copy: {{.*}} N-major (64, 64), 8 x 2 B per cp.async, mma.sync
# SM80-NOT: register cap

# NORING-LABEL: cuda-plan @attn_rows (sm_90, 8 warps)
# NORING: scf.for at {{.*}}: row region (no cp.async ring
# NORING: accumulator 1: mma (128, 64) warps 8x1
# NORING-NEXT: rotated: tt.load <64x64xfp16> at {{.*}} (computed pointer), width 1, K-major width 4
# NORING-NEXT: rotated: tt.load <64x64xfp16> at {{.*}} (computed pointer), width 4
# NORING: tt.dot 128x64x64 fp16 at {{.*}}: mma (128, 64) warps 8x1
# NORING-NEXT: A from registers: loop-invariant: fragments read once before the loop
# NORING: tt.dot 128x64x64 fp16 at {{.*}}: mma (128, 64) warps 8x1
# NORING-NEXT: A from registers: a region tile: its accumulator fragments
# NORING-NOT: register cap
