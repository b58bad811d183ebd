# One line per AxisInfo rule of Triton 3.6 (docs/analysis.md's table), on values whose
# signs the grid settles (4 programs): what tilejit claims where Triton's rule is sound,
# and where it is not (`//` and `%` of a negative run, a descending run) what it claims
# instead.  tests/unit/test_analysis_divrem.py runs it under the claim checker.
# RUN: analysis --grid=4,1,1
# ARGS: x_ptr=*i32:16 out_ptr=*i32:16 n=i32:16 m=i32
# CONSTEXPRS: BLOCK=64
import tilejit
import tilejit.language as tl


@tilejit.jit
def rules(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    r = tl.arange(0, BLOCK)
    base = pid * BLOCK
    offs = base + r
    two = r[None, :] + (r[:, None] * BLOCK)
    sub = offs - 3
    desc = BLOCK - r
    scaled = offs * 4
    q = offs // 16
    rem = offs % n
    neg_q = (r - 32) // 16
    neg_rem = (r - 32) % 16
    shl = offs << 2
    shr = offs >> 3
    low = offs & 15
    orr = scaled | 1
    sel = tl.where(r < 32, offs, offs + 64)
    lt = offs < n
    mn = tl.minimum(offs, base + 32 + r)
    wide = offs.to(tl.int64)
    narrow = (offs + 250).to(tl.int8)
    x = tl.load(x_ptr + base + (r // 16))
    flat = tl.reshape(two, (BLOCK * BLOCK,))
    tr = tl.trans(two)
    mx = tl.max(two, axis=0)
    acc = (sub + desc + scaled + q + rem + neg_q + neg_rem + shl + shr + low + orr + sel
           + lt.to(tl.int32) + mn + wide.to(tl.int32) + narrow.to(tl.int32) + x + mx
           + tl.sum(flat) + tl.sum(tr, axis=0) + m)
    tl.store(out_ptr + offs, acc)

# CHECK-LABEL: tt.func @rules
# make_range: contiguous from a multiple of 2^32 (start 0)
# CHECK: %r = tt.make_range {{.*}} // range=[0, 63] contig=[64] div=[2^32] const=[1]
# CHECK: %base = arith.mul {{.*}} // range=[0, 192] contig=[1] div=[64] const=[1]
# splat + make_range: runs of 64 starting at multiples of 64
# CHECK: %offs = arith.add {{.*}} // range=[0, 255] contig=[64] div=[64] const=[1]
# expand_dims / broadcast: 2-D index, contiguous along the last dim, constant down it
# (down a column the elements are r + 64i: only the row starts are multiples of 64)
# CHECK: %two = arith.add {{.*}} // range=[0, 4095] contig=[1, 64] div=[1, 64] const=[1, 1]
# sub of a constant keeps the runs (divisibility of the starts: gcd(64, 3) = 1)
# CHECK: %sub = arith.sub {{.*}} // range=[-3, 252] contig=[64] div=[1] const=[1]
# K - x is descending: no runs (triton #4871)
# CHECK: %desc = arith.sub {{.*}} // range=[1, 64] contig=[1] div=[1] const=[1]
# mul: divisibility multiplies, runs end
# CHECK: %scaled = arith.mul {{.*}} // range=[0, 1020] contig=[1] div=[4] const=[1]
# // of a non-negative run by 16: constant over aligned runs of 16
# CHECK: %q = arith.idiv {{.*}} // range=[0, 15] contig=[1] div=[1] const=[16]
# % n (n specialised, a multiple of 16) of a non-negative run: runs of 16
# CHECK: %rem = arith.rem {{.*}} // range=[0, 255] contig=[16] div=[16] const=[1]
# // and % of a run that crosses 0 (Triton claims runs here, triton #7749)
# CHECK: %neg_q = arith.idiv {{.*}} // range=[-2, 1] contig=[1] div=[1] const=[1]
# CHECK: %neg_rem = arith.rem {{.*}} // range=[-15, 15] contig=[1] div=[1] const=[1]
# CHECK: %shl = arith.shl {{.*}} // range=[0, 1020] contig=[1] div=[4] const=[1]
# >> floors: constant over aligned runs of 8, any sign
# CHECK: %shr = arith.shr {{.*}} // range=[0, 31] contig=[1] div=[1] const=[8]
# & (2^4 - 1) is x mod 16 (floor): runs of 16
# CHECK: %low = arith.and {{.*}} // range=[0, 15] contig=[16] div=[16] const=[1]
# CHECK: %orr = arith.or {{.*}} // range=[1, 1023] contig=[1] div=[1] const=[1]
# select on a condition constant over runs of 32: runs of 32 of both sides
# CHECK: %sel = arith.select {{.*}} // range=[0, 319] contig=[32] div=[32] const=[1]
# compare of a run with a bound that is a multiple of 16: constant over runs of 16
# CHECK: %lt = arith.cmp {{.*}} // range=[0, 1] contig=[1] div=[1] const=[16]
# min of two runs: a run (starts: multiples of gcd(64, 32))
# CHECK: %mn = arith.min {{.*}} // range=[0, 255] contig=[64] div=[32] const=[1]
# widening cast keeps everything; a narrowing one that may wrap keeps runs of gcd(c, v)
# CHECK: %wide = tt.cast {{.*}} // range=[0, 255] contig=[64] div=[64] const=[1]
# (offs + 250 crosses 256 inside a run; Triton passes contig 64 through the truncation)
# CHECK: %narrow = tt.cast {{.*}} // range=[-128, 127] contig=[2] div=[2] const=[1]
# load: equal addresses read equal values
# CHECK: %x = tt.load {{.*}} // range=[-2147483648, 2147483647] contig=[1] div=[1] const=[16]
# reshape (row-major): the innermost runs survive
# CHECK: %flat = tt.reshape {{.*}} // range=[0, 4095] contig=[64] div=[64] const=[1]
# CHECK: %tr = tt.trans {{.*}} // range=[0, 4095] contig=[64, 1] div=[64, 1] const=[1, 1]
# integer max along axis 0: the runs along the other dim survive
# CHECK: %mx = tt.reduce {{.*}} // range=[0, 4095] contig=[64] div=[64] const=[1]
