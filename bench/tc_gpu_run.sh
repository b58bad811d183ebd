#!/bin/bash
# One device call: correctness of the pipelined dot, then the matmul benchmark.
# usage: bash bench/tc_gpu_run.sh OUTDIR [bench config indices]
O=${1:-/tmp}; CFG=${2:-}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 70 python -m pytest -q -p no:cacheprovider -o addopts="" tests/unit/test_cuda_gpu_dot.py 2>&1 | tail -25 | tee $O/gpu_dot.log
timeout 30 python -m pytest -q -p no:cacheprovider -o addopts="" tests/unit/test_cuda_gpu.py tests/e2e -k "cuda and (dot or matmul)" 2>&1 | tail -5 | tee $O/gpu_existing.log
timeout 45 python bench/bench_matmul_tc.py --out $O/bench.json ${CFG:+--configs $CFG} 2>&1 | tail -22
timeout 40 python -c "
import json, sys
sys.argv = ['x']
import bench.bench_cuda as B
r = B.bench_matmul(4096)
print(json.dumps(r))
" 2>&1 | tail -3 | tee $O/bench_cuda_matmul.log
