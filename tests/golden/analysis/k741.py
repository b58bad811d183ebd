# triton-lang/triton #741: the scattered store must never look contiguous, with the
# argument reassigned (xnumel = 2000) or not; the loads of in_ptr1 + x2 are contiguous.
# RUN: analysis --kernel=k741_reassigned --grid=2,1,1
# RUN: analysis --kernel=k741_reassigned --pipeline --check-prefix=ANYGRID
# RUN: analysis --kernel=k741 --grid=2,1,1 --check-prefix=ARG
# ARGS: in_ptr0=*i64:16 in_ptr1=*fp32:16 out_ptr0=*fp32:16 xnumel=i32:16
# CONSTEXPRS: XBLOCK=1024
import tilejit
import tilejit.language as tl


@tilejit.jit
def k741_reassigned(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 2000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000*tmp0) + (196000*x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)


@tilejit.jit
def k741(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x2, xmask)
    tl.store(out_ptr0 + x0 + (1000*tmp0) + (196000*x1) + tl.zeros([XBLOCK], tl.int32), tmp1, xmask)

# CHECK-LABEL: tt.func @k741_reassigned
# CHECK: %xindex = arith.add {{.*}} // range=[0, 2047] contig=[1024] div=[1024] const=[1]
# 2000 is a multiple of 16: the mask is constant over aligned runs of 16
# CHECK: %xmask = arith.cmp {{.*}} // range=[0, 1] contig=[1] div=[1] const=[16]
# CHECK: %x0 = arith.rem {{.*}} // range=[0, 999] contig=[8] div=[8] const=[1]
# CHECK: %x1 = arith.idiv {{.*}} // range=[0, 2] contig=[1] div=[1] const=[8]
# CHECK: %tmp0 = tt.load
# in_ptr1 + x2: contiguous over the whole block, 16-byte aligned
# CHECK: tt.addptr %{{[0-9]+}}, %xindex : <1024x*fp32> // contig=[1024] div=[16] const=[1]
# CHECK-NEXT: %tmp1 = tt.load
# out_ptr0 + x0 is contiguous in runs of 8, but + 1000*tmp0 scatters it: from there to
# the store no pointer is contiguous
# CHECK: tt.addptr %{{[0-9]+}}, %x0 : <1024x*fp32> // contig=[8] div=[16]
# CHECK: tt.addptr {{.*}} : <1024x*fp32> // contig=[1] div=[4] const=[1]
# CHECK-NOT: x*fp32> // contig=[{{[2-9]|[1-9][0-9]+}}]
# CHECK: tt.store %{{[0-9]+}}, %tmp1, mask = %xmask

# Any grid: pid * 1024 may wrap, so x0 may be negative and its runs are not claimed;
# the block's own run survives (it starts at a multiple of 1024: no wrap inside).
# ANYGRID-LABEL: tt.func @k741_reassigned
# ANYGRID: %xindex = arith.add {{.*}} // range=[-2147483648, 2147483647] contig=[1024] div=[1024]
# ANYGRID: %xmask = arith.cmp {{.*}} const=[16]
# ANYGRID: %x0 = arith.rem {{.*}} // range=[-999, 999] contig=[1] div=[1] const=[1]
# ANYGRID: tt.addptr %{{[0-9]+}}, %xindex : <1024x*fp32> // contig=[1024] div=[16]
# ANYGRID-NEXT: %tmp1 = tt.load
# ANYGRID-NOT: x*fp32> // contig=[{{[2-9]|[1-9][0-9]+}}]
# ANYGRID: tt.store %{{[0-9]+}}, %tmp1

# The argument itself (specialized: divisible by 16) gives the same mask constancy.
# ARG-LABEL: tt.func @k741
# ARG: %xmask = arith.cmp %xindex, {{.*}} // range=[0, 1] contig=[1] div=[1] const=[16]
# ARG: tt.addptr %{{[0-9]+}}, %xindex : <1024x*fp32> // contig=[1024] div=[16] const=[1]
# ARG: tt.addptr %{{[0-9]+}}, %x0 : <1024x*fp32> // contig=[8] div=[16]
# ARG: tt.addptr {{.*}} : <1024x*fp32> // contig=[1] div=[4] const=[1]
# ARG-NOT: x*fp32> // contig=[{{[2-9]|[1-9][0-9]+}}]
# ARG: tt.store %{{[0-9]+}}, %tmp1
