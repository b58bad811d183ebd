# RUN: print
# RUN: pipeline --check-prefix=OPT
# ARGS: x_ptr=*fp32:16 out_ptr=*fp32 n=i32
# CONSTEXPRS: BLOCK=32
import tilejit
import tilejit.language as tl


@tilejit.jit
def control_flow(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = 0
    for i in range(0, n):
        offs = i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs)
        count += 1
    if n > 3:
        acc = acc * 2
    while n > 100:
        n = n // 2
    tl.store(out_ptr + tl.arange(0, BLOCK) + n * 0, acc)

# CHECK-LABEL: tt.func @control_flow
# CHECK: %acc{{[.0-9]*}}, %{{[0-9a-z.]+}} = scf.for %i = %{{[0-9]+}} to %n step %{{[0-9]+}} iter_args(
# CHECK: %offs = arith.add
# CHECK: scf.yield
# CHECK: scf.if %{{[0-9]+}} -> (<32xfp32>) {
# CHECK: } else {
# CHECK: scf.while (
# CHECK: scf.condition
# CHECK: } do (
# CHECK: arith.idiv
# CHECK: tt.store

# The unused loop counter is pruned, + n * 0 folds away (integers: x * 0 -> 0, then
# ptr + 0 -> ptr), and the if and the while (termination is observable) stay.
# OPT-LABEL: tt.func @control_flow
# OPT: %acc{{[.0-9]*}} = scf.for %i = %{{[0-9]+}} to %n step %{{[0-9]+}} iter_args(%{{[0-9a-z.]+}} = %acc) -> (<32xfp32>) {
# OPT-NOT: arith.mul %n
# OPT: scf.if
# OPT: scf.while
# OPT-NOT: arith.mul %n.1
# OPT: %[[R:[0-9]+]] = tt.make_range {start = 0, end = 32}
# OPT-NEXT: %[[S:[0-9]+]] = tt.splat %out_ptr
# OPT-NEXT: %[[P:[0-9]+]] = tt.addptr %[[S]], %[[R]] : <32x*fp32>
# OPT-NEXT: tt.store %[[P]], %acc.3
