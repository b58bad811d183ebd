# The cuda plan of tutorial 05's layer norm (tests/triton_scripts/layer_norm.py, as
# published): the backward dx kernel's partial DW/DB loads are issued before the lock's
# branch (hoist_loads.py), and its row loads are recomputed after the reductions
# (remat.py) with two CTAs per SM asked; the forward kernel's row loop has no dot.
# RUN: cuda-plan --arch=90 --warps=8 --kernel=_layer_norm_bwd_dx_fused --check-prefix=DX
# RUN: cuda-plan --arch=90 --warps=8 --kernel=_layer_norm_bwd_dx_fused --tuning=hoist_branch_loads=0,remat_reductions=0 --check-prefix=OFF
# RUN: cuda-plan --arch=90 --warps=4 --kernel=_layer_norm_fwd_fused --check-prefix=FWD
# ARGS: DX=*fp16:16 DY=*fp16:16 DW=*fp16:16 DB=*fp16:16 X=*fp16:16 W=*fp16:16 Mean=*fp32:16 Rstd=*fp32:16
# ARGS: Lock=*i32:16 stride=i32:16 N=i32:16 Y=*fp16:16 B=*fp16:16 eps=fp32
# CONSTEXPRS: GROUP_SIZE_M=64 BLOCK_SIZE_N=8192 BLOCK_SIZE=1024
from tests.shared_kernels import script_kernels

_K = script_kernels("layer_norm.py")
_layer_norm_bwd_dx_fused = _K["_layer_norm_bwd_dx_fused"]
_layer_norm_fwd_fused = _K["_layer_norm_fwd_fused"]

# DX-LABEL: cuda-plan @_layer_norm_bwd_dx_fused (sm_90, 8 warps)
# DX-NEXT: branch loads hoisted: 2
# DX-NEXT: tt.load <8192xfp16> at layer_norm.py:96:8: width 8 (masked)
# DX: tt.load <8192xfp16> at layer_norm.py:121:22: width 8 (masked)
# DX: remat: values recomputed after 2 reduction(s), .minnctapersm 2

# OFF-LABEL: cuda-plan @_layer_norm_bwd_dx_fused (sm_90, 8 warps)
# OFF-NOT: branch loads hoisted
# OFF: tt.store <8192xfp16> at layer_norm.py:124:4: width 8 (masked)
# OFF-NOT: remat

# FWD-LABEL: cuda-plan @_layer_norm_fwd_fused (sm_90, 4 warps)
# FWD-NEXT: scf.for at layer_norm.py:39:4: plain
# FWD-NEXT: tt.load <1024xfp16> at layer_norm.py:41:12: width 8 (masked)
# FWD: tt.store <1024xfp16> at layer_norm.py:66:8: width 8 (masked)
# FWD-NOT: remat
