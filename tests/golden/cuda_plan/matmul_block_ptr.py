# The cuda plan of a matmul through block pointers advanced along K (tl.advance:
# tests/e2e/test_ring_computed_pointers.mm_block_ptr, CHECK=1: boundary checks on both
# dims, zero padding): the pointer tiles come from carried scalar offsets, stepped ahead
# by their own update, and the loop takes the cp.async ring (masked copies) on sm_90
# (wgmma) and sm_80 (mma.sync).  The PTX of that ring: tests/unit/test_cuda_ptx_ring_computed.py.
# CudaTuning.ring_late_issue off: the next tile copied before the dot, while the in-flight
# wgmma group still reads a stage, so the ring runs one tile less ahead (EARLY); with
# wgmma_inflight off too, no group stays in flight (WAITALL).
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_block_ptr
# RUN: cuda-plan --arch=80 --warps=8 --kernel=mm_block_ptr --check-prefix=SM80
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_block_ptr --tuning=ring_late_issue=0 --check-prefix=EARLY
# RUN: cuda-plan --arch=90 --warps=8 --kernel=mm_block_ptr --tuning=wgmma_inflight=0 --check-prefix=WAITALL
# ARGS: a_ptr=*fp16:16 b_ptr=*fp16:16 c_ptr=*fp32:16 M=i32:16 N=i32:16 K=i32:16
# ARGS: sam=i32:16 sbk=i32:16 scm=i32:16
# CONSTEXPRS: BM=128 BN=128 BK=64 CHECK=1
from tests.e2e.test_ring_computed_pointers import mm_block_ptr  # noqa: F401

# CHECK-LABEL: cuda-plan @mm_block_ptr (sm_90, 8 warps)
# CHECK-NEXT: layout 128x64: 8-element chunks
# CHECK-NEXT: layout 64x128: 8-element chunks
# CHECK-NEXT: scf.for at test_ring_computed_pointers.py:106:4: cp.async ring
# CHECK-NEXT: ring: wgmma, 3 stages of 32768 B, 2 ahead, 1 group(s) in flight, A (128, 64) B (64, 128) f16
# CHECK-NEXT: copy: tt.load <128x64xfp16> at test_ring_computed_pointers.py:108:16 (computed pointer)
# CHECK-NEXT: copy: tt.load <64x128xfp16> at test_ring_computed_pointers.py:109:16 (computed pointer)
# CHECK-NEXT: tt.load <128x64xfp16> at test_ring_computed_pointers.py:108:16: width 8 (masked)
# CHECK-NEXT: tt.load <64x128xfp16> at test_ring_computed_pointers.py:109:16: width 8 (masked)
# CHECK-NEXT: tt.dot 128x128x64 fp16 at test_ring_computed_pointers.py:113:14: in the loop's cp.async ring (wgmma)

# SM80-LABEL: cuda-plan @mm_block_ptr (sm_80, 8 warps)
# SM80: scf.for at test_ring_computed_pointers.py:106:4: cp.async ring
# SM80-NEXT: ring: mma, 3 stages of 32768 B, 2 ahead, 0 group(s) in flight, A (128, 64) B (64, 128) f16
# SM80: tt.dot 128x128x64 fp16 at test_ring_computed_pointers.py:113:14: in the loop's cp.async ring (mma)

# EARLY-LABEL: cuda-plan @mm_block_ptr (sm_90, 8 warps)
# EARLY: ring: wgmma, 3 stages of 32768 B, 1 ahead, 1 group(s) in flight

# WAITALL-LABEL: cuda-plan @mm_block_ptr (sm_90, 8 warps)
# WAITALL: ring: wgmma, 3 stages of 32768 B, 2 ahead, 0 group(s) in flight
