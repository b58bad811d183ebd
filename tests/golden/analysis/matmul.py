# A Triton-tutorial matmul: the analysis through an scf.for with loop-carried pointers.
# Without a grid, (pid * BN + arange) % N may see a negative dividend (pid * BN may wrap),
# so b's rows are not claimed contiguous; with the grid they are (in runs of 16 = N's
# known divisor).  a's rows (offs_k with stride_ak == 1) and c are contiguous either way.
# RUN: analysis --pipeline --check-prefix=ANYGRID
# RUN: analysis --pipeline --grid=4,4,1
# ARGS: a_ptr=*fp32:16 b_ptr=*fp32:16 c_ptr=*fp32:16 M=i32:16 N=i32:16 K=i32:16
# ARGS: stride_am=i32:16 stride_ak=i32:eq1 stride_bk=i32:16 stride_bn=i32:eq1 stride_cm=i32:16 stride_cn=i32:eq1
# CONSTEXPRS: BM=32 BN=32 BK=16
import tilejit, tilejit.language as tl
@tilejit.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc, mask=c_mask)

# ANYGRID-LABEL: tt.func @mm
# ANYGRID: %offs_bn = arith.rem {{.*}} contig=[1] div=[1] const=[1]
# ANYGRID: %a_ptrs = tt.addptr {{.*}} : <32x16x*fp32> // contig=[1, 16] div=[4, 16] const=[1, 1]
# ANYGRID: %b_ptrs = tt.addptr {{.*}} : <16x32x*fp32> // contig=[1, 1] div=[4, 4] const=[1, 1]
# ANYGRID: scf.for {{.*}} %a_ptrs.1: contig=[1, 16] div=[4, 16] const=[1, 1]; %b_ptrs.1: contig=[1, 1]
# ANYGRID: %a_ptrs.2 = tt.addptr {{.*}} // contig=[1, 16] div=[4, 16] const=[1, 1]
# ANYGRID: %c_ptrs = tt.addptr {{.*}} // contig=[1, 32] div=[4, 16] const=[1, 1]
# ANYGRID: %c_mask = arith.and {{.*}} const=[16, 16]

# CHECK-LABEL: tt.func @mm
# CHECK: %offs_am = arith.rem {{.*}} // range=[0, 127] contig=[16] div=[16] const=[1]
# CHECK: %offs_bn = arith.rem {{.*}} // range=[0, 127] contig=[16] div=[16] const=[1]
# CHECK: %b_ptrs = tt.addptr {{.*}} : <16x32x*fp32> // contig=[1, 16] div=[4, 16] const=[1, 1]
# CHECK: scf.for {{.*}} %b_ptrs.1: contig=[1, 16] div=[4, 16] const=[1, 1]
# CHECK: %b_ptrs.2 = tt.addptr {{.*}} // contig=[1, 16] div=[4, 16] const=[1, 1]
# CHECK: tt.store %c_ptrs, %acc.1, mask = %c_mask
