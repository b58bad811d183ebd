# Liger's norm-backward shape (tests/unit/test_cuda_ptx_vec16.row_loop: 2-byte rows loaded
# and stored in a loop, fp32 partial sums stored after it): the accesses the loop
# repeats decide the chunk width, 8 halves (16 bytes) per access; the fp32 store after
# the loop moves 4 floats per access.
# RUN: cuda-plan --arch=90 --warps=8 --kernel=row_loop
# RUN: cuda-plan --arch=80 --warps=8 --kernel=row_loop
# ARGS: X=*fp16:16 DW=*fp32:16 stride=i32:16 n_rows=i32:16 N=i32:16
# CONSTEXPRS: BLOCK=4096
from tests.unit.test_cuda_ptx_vec16 import row_loop  # noqa: F401

# CHECK-LABEL: cuda-plan @row_loop
# CHECK: scf.for at {{.*}}: plain
# CHECK-NEXT: tt.load <4096xfp16> at {{.*}}: width 8 (masked)
# CHECK-NEXT: tt.reduce sum <4096xfp32> axis 0 at {{.*}}: whole block
# CHECK-NEXT: tt.store <4096xfp16> at {{.*}}: width 8 (masked)
# CHECK-NEXT: tt.store <4096xfp32> at {{.*}}: width 4 (masked)
