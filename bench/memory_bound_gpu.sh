#!/bin/bash
# One device call for the memory-bound tutorials (bench/results/memory_bound_notes.md):
# the GPU tests, the tutorial rows beside Triton, Triton's PTX/cubin (from its cache),
# and tilejit-only variant rows.
#   bash bench/memory_bound_gpu.sh "name:field=0,field=1@row,row;name2:...@row"
# (fields of CudaTuning, tilejit/runtime/options.py, given as TILEJIT_CUDA_TUNING; x: none)
# A variant named maxnregN launches the dx kernel with maxnreg=N; one named base* runs
# the tree carried in .exp_base (git archive HEAD).  SKIP_TRITON_PTX=1: no Triton PTX;
# TESTS= (empty): no GPU tests.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export TRITON_CACHE_DIR=/tmp/triton_cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
[[ -n ${TESTS-x} ]] && timeout ${TEST_TIMEOUT:-240} python -m pytest -q -n ${NPROC:-12} --timeout 200 -p no:cacheprovider \
    ${TESTS:-tests/e2e tests/unit/test_cuda_gpu.py tests/unit/test_cuda_gpu_dot.py} -k "${TESTK:-cuda}" 2>&1 \
    | tee $OUT/gpu_tests.txt | grep -E "passed|failed|FAILED|Error" | tail -12
python bench/bench_tutorials_cuda.py --only ${ROWS:-dropout,layer_norm_fwd,layer_norm_bwd,layer_norm_bwd_dx,layer_norm_bwd_dwdb} \
    --out $OUT/t.json 2>&1 | tail -9
IFS=';' read -ra VARS <<< "${1:-}"
for v in "${VARS[@]}"; do
  name=${v%%:*}; flags=${v#*:}; rows=${flags##*@}; flags=${flags%@*}
  script=bench/bench_tutorials_cuda.py
  if [[ $name == base* ]]; then script=.exp_base/bench/bench_tutorials_cuda.py; fi   # an older tree, carried
  if [[ $name == maxnreg* ]]; then
    script=bench/_exp_bench.py
    sed "s/GROUP_SIZE_M=G, num_warps=warps)/GROUP_SIZE_M=G, num_warps=warps, maxnreg=${name#maxnreg})/" \
      bench/bench_tutorials_cuda.py > $script
  fi
  echo "== variant $name ($flags) rows $rows"
  [[ $flags == x ]] && flags=
  TILEJIT_CUDA_TUNING=$flags TILEJIT_CACHE_DIR=/tmp/tjc_$name TILEJIT_BACKEND=cuda \
    python $script --child --impl tilejit --device cuda --rows $rows --result $OUT/var_$name.jsonl --samples /tmp/s_$name 2>&1 | grep -E " ms|WRONG|rror" | tail -6
done
[[ -n ${SKIP_TRITON_PTX:-} ]] && exit 0
mkdir -p $OUT/tr
python bench/memory_bound_ptx.py --impl triton --out $OUT/tr > $OUT/tr/summary.txt 2>&1
cut -c1-300 $OUT/tr/summary.txt
find $TRITON_CACHE_DIR -name "*.ptx" -o -name "*.cubin" -o -name "*.json" | tar czf $OUT/tr/cache.tgz -T - 2>/dev/null
(cd $OUT && tar czf triton_ptx.tgz tr && rm -rf tr)
