# The planner fuses full reductions of one block (rules_reduce.plan_siblings, the
# CudaTuning.fuse_siblings strategy): the later ones whose input is ready when the first
# is lowered share its exchange across warps; one whose input is computed from the first
# result (the variance after the mean) is reduced on its own, and a store ends the group.
# RUN: cuda-plan --arch=90 --warps=4 --kernel=stats
# RUN: cuda-plan --arch=90 --warps=4 --kernel=stats --tuning=fuse_siblings=0 --check-prefix=OFF
# ARGS: x_ptr=*fp32:16 y_ptr=*fp32:16
# CONSTEXPRS: N=1024
import tilejit
import tilejit.language as tl


@tilejit.jit
def stats(x_ptr, y_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    sq = x * x
    s = tl.sum(x, axis=0)
    m = tl.max(x, axis=0)
    q = tl.sum(sq, axis=0)
    d = x - s / N
    v = tl.sum(d * d, axis=0)
    tl.store(y_ptr, s + m + q + v)
    t = tl.min(x, axis=0)
    tl.store(y_ptr + 1, t)


# CHECK-LABEL: cuda-plan @stats (sm_90, 4 warps)
# CHECK: tt.reduce sum <1024xfp32> axis 0 at fused_reductions.py:17:8: whole block
# CHECK-NEXT: fused: tt.reduce max at fused_reductions.py:18:8 (its input is ready: one exchange across warps for both)
# CHECK-NEXT: fused: tt.reduce sum at fused_reductions.py:19:8 (its input is ready: one exchange across warps for both)
# CHECK-NEXT: tt.reduce max <1024xfp32> axis 0 at fused_reductions.py:18:8: whole block
# CHECK-NEXT: tt.reduce sum <1024xfp32> axis 0 at fused_reductions.py:19:8: whole block
# CHECK-NEXT: tt.reduce sum <1024xfp32> axis 0 at fused_reductions.py:21:8: whole block
# CHECK-NEXT: tt.reduce min <1024xfp32> axis 0 at fused_reductions.py:23:8: whole block
# CHECK-NOT: fused:

# OFF-LABEL: cuda-plan @stats (sm_90, 4 warps)
# OFF-NOT: fused:
