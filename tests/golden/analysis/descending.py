# Descending sequences are not contiguous (triton #4871; triton-cpu #159, where
# torch.flip's kernel was vectorized as if ascending).  Contiguity means +1 per step.
# RUN: analysis --kernel=flip --grid=1,1,1
# RUN: analysis --kernel=flip_inductor --grid=4,1,1 --check-prefix=IND
# ARGS: x_ptr=*fp32:16 out_ptr=*fp32:16 in_ptr0=*fp32:16 out_ptr0=*fp32:16 xnumel=i32:16
# CONSTEXPRS: BLOCK=16 XBLOCK=64
import tilejit
import tilejit.language as tl


@tilejit.jit
def flip(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    rev = BLOCK - 1 - offs
    x = tl.load(x_ptr + rev)
    tl.store(out_ptr + offs, x)


@tilejit.jit
def flip_inductor(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # torch.flip(x, [1]) on a (n, 16) tensor, as inductor writes it
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % 16
    x1 = xindex // 16
    tmp0 = tl.load(in_ptr0 + (15 + (-1 * x0) + (16 * x1)), xmask)
    tl.store(out_ptr0 + xindex, tmp0, xmask)

# CHECK-LABEL: tt.func @flip
# CHECK: %offs = tt.make_range {{.*}} // range=[0, 15] contig=[16] div=[2^32] const=[1]
# CHECK: %rev = arith.sub {{.*}} // range=[0, 15] contig=[1] div=[1] const=[1]
# CHECK: tt.addptr %{{[0-9]+}}, %rev : <16x*fp32> // contig=[1] div=[4] const=[1]
# CHECK: tt.addptr %{{[0-9]+}}, %offs : <16x*fp32> // contig=[16] div=[16] const=[1]

# IND-LABEL: tt.func @flip_inductor
# IND: %x0 = arith.rem {{.*}} // range=[0, 15] contig=[16] div=[16] const=[1]
# IND: %x1 = arith.idiv {{.*}} // range=[0, 15] contig=[1] div=[1] const=[16]
# -1 * x0 and 15 - x0 descend
# IND: arith.mul %{{[0-9]+}}, %x0 : <64xi32> // range=[-15, 0] contig=[1] div=[1] const=[1]
# IND-NEXT: arith.constant 15
# IND-NEXT: arith.constant 15
# IND-NEXT: arith.add {{.*}} // range=[0, 15] contig=[1] div=[1] const=[1]
# IND: %[[A:[0-9]+]] = arith.add {{.*}} // range=[0, 255] contig=[1] div=[1] const=[1]
# IND: tt.addptr %{{[0-9]+}}, %[[A]] : <64x*fp32> // contig=[1] div=[4] const=[1]
# IND-NEXT: %tmp0 = tt.load
# IND: tt.addptr %{{[0-9]+}}, %xindex : <64x*fp32> // contig=[64] div=[16] const=[1]
