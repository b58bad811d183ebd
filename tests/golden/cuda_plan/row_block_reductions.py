# The cuda plan of last-axis reductions of 2-D blocks (Inductor's [XBLOCK, R0_BLOCK] tiles:
# tests/e2e/test_row_block_reductions.row_block_reduce, seven reductions, two of them
# argmax/argmin): with one row per block each is a reduction of the whole block (warp
# butterflies, one exchange across warps), the xor_sum fused with the first sum (its
# input is ready: one exchange for both); rows spanning whole warps reduce as wide rows
# (256 lanes per row over 8 warps; 1024 over 4 warps: each thread first combines its
# chunks).  With row_butterflies off every reduction takes the general path (the row
# staged in shared memory); with fuse_siblings off none is fused.
# RUN: cuda-plan --arch=90 --warps=16 --kernel=one_row --check-prefix=ONE
# RUN: cuda-plan --arch=90 --warps=16 --kernel=one_row --tuning=row_butterflies=0 --check-prefix=NOBF
# RUN: cuda-plan --arch=90 --warps=16 --kernel=one_row --tuning=fuse_siblings=0 --check-prefix=NOFUSE
# RUN: cuda-plan --arch=90 --warps=8 --kernel=wide_rows --check-prefix=WIDE
# RUN: cuda-plan --arch=90 --warps=4 --kernel=repeated_rows --check-prefix=REP
# ARGS: X=*fp32:16 K=*i32:16 Out=*fp32:16 Idx=*i32:16 M=i32:16 N=i32:16
import tilejit
from tests.e2e.test_row_block_reductions import row_block_reduce


@tilejit.jit
def one_row(X, K, Out, Idx, M, N):
    row_block_reduce(X, K, Out, Idx, M, N, 1, 2048)


@tilejit.jit
def wide_rows(X, K, Out, Idx, M, N):
    row_block_reduce(X, K, Out, Idx, M, N, 2, 1024)


@tilejit.jit
def repeated_rows(X, K, Out, Idx, M, N):
    row_block_reduce(X, K, Out, Idx, M, N, 2, 4096)


# ONE-LABEL: cuda-plan @one_row (sm_90, 16 warps)
# ONE: tt.reduce sum <1x2048xfp32> axis 1 at {{.*}}:24:8: whole block
# ONE-NEXT: fused: tt.reduce xor_sum at {{.*}}:27:9 (its input is ready: one exchange across warps for both)
# ONE-NEXT: tt.reduce max <1x2048xfp32> axis 1 at {{.*}}: whole block
# ONE-NEXT: tt.reduce min <1x2048xint32> axis 1 at {{.*}}: whole block
# ONE-NEXT: tt.reduce xor_sum <1x2048xint32> axis 1 at {{.*}}: whole block
# ONE-NEXT: tt.reduce argmax <1x2048xfp32> axis 1 at {{.*}}: whole block
# ONE-NEXT: tt.reduce argmin <1x2048xint32> axis 1 at {{.*}}: whole block
# ONE-NEXT: tt.reduce sum <1x2048xfp32> axis 1 at {{.*}}:31:8: whole block

# NOBF-LABEL: cuda-plan @one_row (sm_90, 16 warps)
# NOBF-NOT: whole block
# NOBF: tt.reduce sum <1x2048xfp32> axis 1 at {{.*}}:24:8: general
# NOBF-NEXT: tt.reduce max {{.*}}: general
# NOBF-NEXT: tt.reduce min {{.*}}: general
# NOBF-NEXT: tt.reduce xor_sum {{.*}}: general
# NOBF-NEXT: tt.reduce argmax {{.*}}: general
# NOBF-NEXT: tt.reduce argmin {{.*}}: general
# NOBF-NEXT: tt.reduce sum {{.*}}:31:8: general
# NOBF-NOT: whole block

# NOFUSE-LABEL: cuda-plan @one_row (sm_90, 16 warps)
# NOFUSE-NOT: fused
# NOFUSE: tt.reduce sum <1x2048xfp32> axis 1 at {{.*}}:24:8: whole block
# NOFUSE-NEXT: tt.reduce max <1x2048xfp32> axis 1 at {{.*}}: whole block
# NOFUSE-NOT: fused

# WIDE-LABEL: cuda-plan @wide_rows (sm_90, 8 warps)
# WIDE: tt.reduce sum <2x1024xfp32> axis 1 at {{.*}}:24:8: wide rows, 256 lanes per row
# WIDE-NEXT: tt.reduce max {{.*}}: wide rows, 256 lanes per row
# WIDE-NEXT: tt.reduce min {{.*}}: wide rows, 256 lanes per row
# WIDE-NEXT: tt.reduce xor_sum {{.*}}: wide rows, 256 lanes per row
# WIDE-NEXT: tt.reduce argmax {{.*}}: wide rows, 256 lanes per row
# WIDE-NEXT: tt.reduce argmin {{.*}}: wide rows, 256 lanes per row
# WIDE-NEXT: tt.reduce sum {{.*}}:31:8: wide rows, 256 lanes per row

# REP-LABEL: cuda-plan @repeated_rows (sm_90, 4 warps)
# REP: tt.reduce sum <2x4096xfp32> axis 1 at {{.*}}:24:8: wide rows, 1024 lanes per row
# REP-NEXT: tt.reduce max {{.*}}: wide rows, 1024 lanes per row
# REP-NEXT: tt.reduce min {{.*}}: wide rows, 1024 lanes per row
# REP-NEXT: tt.reduce xor_sum {{.*}}: wide rows, 1024 lanes per row
# REP-NEXT: tt.reduce argmax {{.*}}: wide rows, 1024 lanes per row
# REP-NEXT: tt.reduce argmin {{.*}}: wide rows, 1024 lanes per row
# REP-NEXT: tt.reduce sum {{.*}}:31:8: wide rows, 1024 lanes per row
