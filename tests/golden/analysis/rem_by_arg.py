# `x % C` and `x // C` by a runtime argument specialised as a multiple of 16 (Triton's
# launch specialisation), x = pid * BLOCK + arange (tutorial 03's `% M`, a bias index).
# Triton's AxisInfo claims runs of gcd(contiguity(x), divisibility(x), divisibility(C)) = 16
# whatever the sign of x; C's `%` truncates toward zero, so a negative run is not a run
# (triton #7749): tilejit claims it only where the range proves x >= 0.  With any grid,
# pid * 64 may wrap (pid <= 2**31 - 2): no claim.  With at most 2**20 programs (the cuda
# backend's bounded compile) or a known grid, x >= 0: runs of 16, and `x // C` constant
# over runs of 16.
# RUN: analysis --check-prefix=ANYGRID
# RUN: analysis --grid-bound=1048576,65535,65535 --check-prefix=BOUND
# RUN: analysis --grid=4,1,1 --check-prefix=GRID
# ARGS: bias_ptr=*fp16:16 out_ptr=*fp16:16 C=i32:16
# CONSTEXPRS: BLOCK=64
import tilejit
import tilejit.language as tl


@tilejit.jit
def rem_by_arg(bias_ptr, out_ptr, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    col = offs % C
    row = offs // C
    b = tl.load(bias_ptr + col)
    tl.store(out_ptr + offs, b + row.to(tl.float16))

# ANYGRID-LABEL: tt.func @rem_by_arg
# ANYGRID: %offs = arith.add {{.*}} // range=[-2147483648, 2147483647] contig=[64] div=[64] const=[1]
# C may be 0 (x % 0 == x): x's range, INT_MIN included
# ANYGRID: %col = arith.rem {{.*}} // range=[-2147483648, 2147483647] contig=[1] div=[1] const=[1]
# C is 0 (x // 0 == 0) or a multiple of 16 with |C| >= 16, which bounds x // C
# ANYGRID: %row = arith.idiv {{.*}} // range=[-134217728, 134217728] contig=[1] div=[1] const=[1]
# BOUND-LABEL: tt.func @rem_by_arg
# BOUND: %offs = arith.add {{.*}} // range=[0, 67108863] contig=[64] div=[64] const=[1]
# BOUND: %col = arith.rem {{.*}} // range=[0, 67108863] contig=[16] div=[16] const=[1]
# BOUND: %row = arith.idiv {{.*}} // range=[-4194303, 4194303] contig=[1] div=[1] const=[16]
# the bias pointers: runs of 16 fp16 starting at 16-byte boundaries (one vector load each)
# BOUND: tt.addptr {{.*}} contig=[16] div=[16] const=[1]
# GRID-LABEL: tt.func @rem_by_arg
# GRID: %offs = arith.add {{.*}} // range=[0, 255] contig=[64] div=[64] const=[1]
# GRID: %col = arith.rem {{.*}} // range=[0, 255] contig=[16] div=[16] const=[1]
# GRID: %row = arith.idiv {{.*}} // range=[-15, 15] contig=[1] div=[1] const=[16]
