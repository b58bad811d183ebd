# Signed // and % truncate toward zero: on negative values they are not constant /
# contiguous over aligned runs (triton #7749 claimed (arange - 8) // 4 constant in runs
# of 4; it is [-2, -1, -1, -1, -1, 0, 0, 0, ...]).  Arithmetic >> floors, so it is.
# RUN: analysis --grid=1,1,1
# ARGS: out_ptr=*i32:16
# CONSTEXPRS: BLOCK=16
import tilejit
import tilejit.language as tl


@tilejit.jit
def divrem(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    neg = offs - 8
    q_neg = neg // 4
    r_neg = neg % 4
    s_neg = neg >> 2
    pos = offs + 8
    q_pos = pos // 4
    r_pos = pos % 4
    tl.store(out_ptr + offs, q_neg + r_neg + s_neg + q_pos + r_pos)

# CHECK-LABEL: tt.func @divrem
# CHECK: %neg = arith.sub {{.*}} // range=[-8, 7] contig=[16] div=[8] const=[1]
# (-8..7) // 4 = [-2, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]: not runs of 4
# CHECK: %q_neg = arith.idiv {{.*}} // range=[-2, 1] contig=[1] div=[1] const=[1]
# (-8..7) % 4 = [0, -3, -2, -1, 0, -3, ...]: not ascending runs
# CHECK: %r_neg = arith.rem {{.*}} // range=[-3, 3] contig=[1] div=[1] const=[1]
# (-8..7) >> 2 floors: [-2, -2, -2, -2, -1, ...]
# CHECK: %s_neg = arith.shr {{.*}} // range=[-2, 1] contig=[1] div=[1] const=[4]
# CHECK: %pos = arith.add {{.*}} // range=[8, 23] contig=[16] div=[8] const=[1]
# CHECK: %q_pos = arith.idiv {{.*}} // range=[2, 5] contig=[1] div=[1] const=[4]
# CHECK: %r_pos = arith.rem {{.*}} // range=[0, 3] contig=[4] div=[4] const=[1]
