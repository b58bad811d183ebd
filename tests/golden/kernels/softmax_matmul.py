# RUN: pipeline --kernel=softmax_kernel --check-prefix=SOFTMAX
# RUN: pipeline --kernel=matmul_kernel --check-prefix=MATMUL
# ARGS: out_ptr=*fp32:16 in_ptr=*fp32:16 stride=i32:16 n_cols=i32 a_ptr=*fp16:16 b_ptr=*fp16:16 c_ptr=*fp32:16 M=i32 N=i32 K=i32:16
# CONSTEXPRS: BLOCK=128 BLOCK_M=32 BLOCK_N=32 BLOCK_K=16
import tilejit
import tilejit.language as tl


@tilejit.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride + cols, num / den, mask=mask)


@tilejit.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptrs, acc, mask=mask)

# The -inf padding survives printing as a float constant; row*stride is computed once.
# SOFTMAX-LABEL: tt.func @softmax_kernel(%out_ptr: *fp32 {tt.divisibility = 16}, %in_ptr: *fp32 {tt.divisibility = 16}, %stride: i32 {tt.divisibility = 16}, %n_cols: i32)
# SOFTMAX: %[[OFF:[0-9]+]] = arith.mul %row, %stride : i32
# SOFTMAX-NOT: arith.mul %row, %stride
# SOFTMAX: arith.constant -inf : <128xfp32>
# SOFTMAX: %x = tt.load %{{[0-9]+}}, mask = %mask, other = %{{[0-9]+}} : <128xfp32>
# SOFTMAX: tt.reduce %x {kind = "max", axis = 0} : fp32
# SOFTMAX: %num = math.exp %x.1 : <128xfp32>
# SOFTMAX: %den = tt.reduce %num {kind = "sum", axis = 0} : fp32
# SOFTMAX: arith.truediv %num, %{{[0-9]+}} : <128xfp32>
# SOFTMAX-NOT: arith.mul %row, %stride
# SOFTMAX: tt.store

# The pointer tiles are loop-carried next to the accumulator; the dot accumulates in fp32.
# MATMUL-LABEL: tt.func @matmul_kernel
# MATMUL: %acc{{[.0-9]*}}, %{{[a-z_0-9.]+}}, %{{[a-z_0-9.]+}} = scf.for %k = %{{[0-9]+}} to %K step %{{[0-9]+}} iter_args(
# MATMUL-SAME: -> (<32x32xfp32>, <32x16x*fp16>, <16x32x*fp16>) {
# MATMUL: tt.load %{{[a-z_0-9.]+}} : <32x16xfp16>
# MATMUL: tt.load %{{[a-z_0-9.]+}} : <16x32xfp16>
# MATMUL: tt.dot %{{[a-z0-9.]+}}, %{{[a-z0-9.]+}}, %{{[a-z0-9.]+}} : <32x32xfp32>
# MATMUL: scf.yield
# MATMUL: %mask = arith.and %{{[0-9]+}}, %{{[0-9]+}} : <32x32xi1>
# MATMUL: tt.store %{{[a-z_0-9.]+}}, %acc{{[.0-9]*}}, mask = %mask
