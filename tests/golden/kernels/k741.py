# The kernel from triton-lang/triton #741, with the argument reassigned inside the body.
# RUN: print --kernel=k741_reassigned
# RUN: pipeline --kernel=k741_reassigned --check-prefix=OPT
# RUN: pipeline --kernel=k741_other_value --check-prefix=OTHER
# RUN: cuda-plan --kernel=k741_reassigned --check-prefix=PLAN
# RUN: cuda-plan --kernel=k741_other_value --check-prefix=PLAN2
# ARGS: in_ptr0=*i64:16 in_ptr1=*fp32:16 out_ptr0=*fp32:16 xnumel=i32:16
# CONSTEXPRS: XBLOCK=512
import tilejit
import tilejit.language as tl


@tilejit.jit
def k741_reassigned(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 2000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % 1000
    x1 = (xindex // 1000)
    tmp0 = tl.load(in_ptr0 + (x1), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (x2), xmask)
    tl.store(out_ptr0 + (x0 + (1000 * tmp0) + (196000 * x1) + tl.zeros([XBLOCK], tl.int32)), tmp1, xmask)


@tilejit.jit
def k741_other_value(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tmp1 = tl.load(in_ptr1 + xindex, xmask)
    tl.store(out_ptr0 + xindex, tmp1, xmask)

# The argument stays an argument; every later use of the name sees the constant 2000.
# CHECK-LABEL: tt.func @k741_reassigned(%in_ptr0: *i64 {tt.divisibility = 16}, %in_ptr1: *fp32 {tt.divisibility = 16}, %out_ptr0: *fp32 {tt.divisibility = 16}, %xnumel: i32 {tt.divisibility = 16})
# CHECK-NOT: %xnumel,
# CHECK: %xindex = arith.add
# CHECK: %[[N:[0-9]+]] = arith.constant 2000 : <512xi32>
# CHECK-NEXT: %xmask = arith.cmp %xindex, %[[N]] {pred = "lt"} : <512xi1>
# CHECK: %x0 = arith.rem %xindex, %{{[0-9]+}} : <512xi32>
# CHECK: %x1 = arith.idiv %xindex, %{{[0-9]+}} : <512xi32>
# CHECK: %tmp0 = tt.load %{{[0-9]+}}, mask = %xmask {eviction = "evict_last"} : <512xi64>
# CHECK: %tmp1 = tt.load %{{[0-9]+}}, mask = %xmask : <512xfp32>
# CHECK: tt.store %{{[0-9]+}}, %tmp1, mask = %xmask

# After the pipeline: 1000 is one constant for % and //, and the zeros tile is gone
# (folded to an i64 zero, then x + 0 -> x), so the store address is x0 + 1000*tmp0 + 196000*x1.
# OPT-LABEL: tt.func @k741_reassigned
# OPT: %[[K:[0-9]+]] = arith.constant 1000 : <512xi32>
# OPT-NEXT: %x0 = arith.rem %xindex, %[[K]] : <512xi32>
# OPT-NEXT: %x1 = arith.idiv %xindex, %[[K]] : <512xi32>
# OPT: %[[A:[0-9]+]] = arith.add %{{[0-9]+}}, %{{[0-9]+}} : <512xi64>
# OPT: %[[B:[0-9]+]] = arith.add %[[A]], %{{[0-9]+}} : <512xi64>
# OPT-NEXT: %[[P:[0-9]+]] = tt.splat %out_ptr0
# OPT-NEXT: %[[Q:[0-9]+]] = tt.addptr %[[P]], %[[B]] : <512x*fp32>
# OPT-NEXT: tt.store %[[Q]], %tmp1, mask = %xmask
# OPT-NOT: arith.constant 0 :

# A different constant: the mask compares against 1000, never against the argument.
# OTHER-LABEL: tt.func @k741_other_value
# OTHER: %[[N:[0-9]+]] = arith.constant 1000 : <512xi32>
# OTHER-NEXT: %xmask = arith.cmp %xindex, %[[N]] {pred = "lt"}
# OTHER-NOT: %xnumel
# The cuda plan: x1's load reads one address per 1000 lanes (not contiguous: per lane); the
# scattered store is contiguous over aligned groups of 4 (x0 runs of 1000, a multiple
# of 4; tmp0 and x1 constant over them) -- one 16-byte store per group, as the
# analysis proves; the other kernel's accesses likewise.
# PLAN-LABEL: cuda-plan @k741_reassigned (sm_90, 4 warps)
# PLAN-NEXT: tt.load <512xint64> at k741.py:{{[0-9]+}}:11: width 1 (masked)
# PLAN-NEXT: tt.load <512xfp32> at k741.py:{{[0-9]+}}:11: width 4 (masked)
# PLAN-NEXT: tt.store <512xfp32> at k741.py:{{[0-9]+}}:4: width 4 (masked)
# PLAN2-LABEL: cuda-plan @k741_other_value (sm_90, 4 warps)
# PLAN2-NEXT: tt.load <512xfp32> at k741.py:{{[0-9]+}}:11: width 4 (masked)
# PLAN2-NEXT: tt.store <512xfp32> at k741.py:{{[0-9]+}}:4: width 4 (masked)
