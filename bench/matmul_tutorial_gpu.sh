#!/bin/bash
# One device call for tutorials 03/08 (bench/results/matmul_tutorial_notes.md): the GPU
# tests of the dot paths under the working tree's switches, the bench rows side by side
# with Triton, then switch variants of the rows (matmul_tutorial_probe.py --impl rows).
# usage: [KF=pytest -k filter] bash bench/matmul_tutorial_gpu.sh OUTDIR [test timeout s] [variants,...] [bench: 1/0] [triton probe: 1/0]
O=${1:-/tmp}; TT=${2:-120}; VARS=${3:-}; BENCH=${4:-1}; TRI=${5:-0}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
python -c "from tilejit.runtime.options import get_options; print(get_options().cuda)" | tee -a $O/gpu.txt
if [ "$TT" != 0 ]; then
  timeout $TT python -m pytest -q -n 8 -p no:cacheprovider -o addopts="" tests/e2e tests/unit/test_cuda_gpu_dot.py \
    -k "${KF:-cuda and (matmul or dot or gemm or ring or align or persistent or tutorial or attention or attn)}" > $O/gpu_tests.log 2>&1
  echo "tests rc=$?"; tail -4 $O/gpu_tests.log
fi
if [ "$BENCH" = 1 ]; then
  timeout 90 python bench/bench_tutorials_cuda.py --only matmul,grouped_gemm,persistent_matmul --out $O/tutorials.json > $O/tutorials.log 2>&1
  echo "bench rc=$?"; tail -6 $O/tutorials.log
fi
if [ "$TRI" = 1 ]; then
  timeout 60 python bench/matmul_tutorial_probe.py --impl triton --out $O/triton.jsonl 2>&1 | tail -2
fi
if [ -n "$VARS" ]; then
  timeout 200 python bench/matmul_tutorial_probe.py --impl rows --out $O/rows.jsonl --tmp $O/probe_tmp --only $VARS 2>&1 \
    | python -c "
import json, sys
for ln in sys.stdin:
    try: r = json.loads(ln)
    except Exception: print(ln, end=''); continue
    print(r.get('variant'), r.get('ms'), r.get('err'), r.get('ok'), r.get('error', ''))"
  rm -rf $O/probe_tmp
fi
