# RUN: print
# RUN: pipeline --check-prefix=OPT
# RUN: pipeline --locs --check-prefix=LOC
# ARGS: x_ptr=*fp32:16 y_ptr=*fp32:16 out_ptr=*fp32:16 n_elements=i32
# CONSTEXPRS: BLOCK_SIZE=1024
import tilejit
import tilejit.language as tl


@tilejit.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(out_ptr + offsets, output, mask=mask)

# CHECK-LABEL: tt.func @add_kernel(%x_ptr: *fp32 {tt.divisibility = 16}, %y_ptr: *fp32 {tt.divisibility = 16}, %out_ptr: *fp32 {tt.divisibility = 16}, %n_elements: i32) attributes {constexprs = {BLOCK_SIZE = 1024}} {
# CHECK: %pid = tt.get_program_id {axis = 0} : i32
# CHECK: %block_start = arith.mul %pid, %{{[0-9]+}} : i32
# CHECK: %offsets = arith.add %{{[0-9]+}}, %{{[0-9]+}} : <1024xi32>
# CHECK: %mask = arith.cmp %offsets, %{{[0-9]+}} {pred = "lt"} : <1024xi1>
# CHECK: %[[XP:[0-9]+]] = tt.addptr %{{[0-9]+}}, %offsets : <1024x*fp32>
# CHECK-NEXT: %x = tt.load %[[XP]], mask = %mask : <1024xfp32>
# CHECK: %y = tt.load %{{[0-9]+}}, mask = %mask : <1024xfp32>
# CHECK: %output = arith.add %x, %y : <1024xfp32>
# CHECK: tt.store %{{[0-9]+}}, %output, mask = %mask
# CHECK-NEXT: tt.return

# After the pipeline nothing is left to simplify: the same ops, one make_range.
# OPT-LABEL: tt.func @add_kernel
# OPT: tt.make_range {start = 0, end = 1024}
# OPT-NOT: tt.make_range
# OPT: tt.store
# OPT-NEXT: tt.return

# Locations point into this file (line 18 is `output = x + y`).
# LOC: %output = arith.add %x, %y : <1024xfp32> loc("{{.*}}vector_add.py":18:13 in "add_kernel")
