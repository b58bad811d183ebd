# The cuda plan of an fp32 dot loop: mma.sync takes fp16/bf16 operands only, so the dot
# is multiply-adds through shared memory and its loop has neither the cp.async ring nor
# mma accumulators; the same loop in fp16 on sm_80 takes the ring (mma.sync).
# RUN: cuda-plan --arch=90 --warps=4 --kernel=dot_loop
# RUN: cuda-plan --arch=80 --warps=4 --kernel=dot_loop_fp16 --check-prefix=FP16
# ARGS: a_ptr=*fp32:16 b_ptr=*fp32:16 c_ptr=*fp32:16 K=i32:16
# CONSTEXPRS: B=64
import tilejit
import tilejit.language as tl


@tilejit.jit
def dot_loop(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr):
    r = tl.arange(0, B)
    a_ptrs = a_ptr + r[:, None] * B + r[None, :]
    b_ptrs = b_ptr + r[:, None] * B + r[None, :]
    acc = tl.zeros((B, B), dtype=tl.float32)
    for k in range(0, K, B):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += B
        b_ptrs += B * B
    tl.store(c_ptr + r[:, None] * B + r[None, :], acc)


@tilejit.jit
def dot_loop_fp16(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr):
    r = tl.arange(0, B)
    a_ptrs = a_ptr.to(tl.pointer_type(tl.float16)) + r[:, None] * B + r[None, :]
    b_ptrs = b_ptr.to(tl.pointer_type(tl.float16)) + r[:, None] * B + r[None, :]
    acc = tl.zeros((B, B), dtype=tl.float32)
    for k in range(0, K, B):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += B
        b_ptrs += B * B
    tl.store(c_ptr + r[:, None] * B + r[None, :], acc)

# CHECK-LABEL: cuda-plan @dot_loop (sm_90, 4 warps)
# CHECK-NEXT: scf.for at dot_fp32.py:{{[0-9]+}}:4: plain (no cp.async ring: dot fp32 x fp32 -> fp32: fp16/bf16 -> fp32 only)
# CHECK-NOT: accumulator
# CHECK: tt.dot 64x64x64 fp32 at dot_fp32.py:{{[0-9:]+}}: multiply-adds through shared memory

# FP16-LABEL: cuda-plan @dot_loop_fp16 (sm_80, 4 warps)
# FP16: scf.for at dot_fp32.py:{{[0-9]+}}:4: cp.async ring
# FP16-NEXT: ring: mma, 3 stages of 16384 B, 2 ahead
# FP16: tt.dot 64x64x64 fp16 at dot_fp32.py:{{[0-9:]+}}: in the loop's cp.async ring (mma)
