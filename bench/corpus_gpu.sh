#!/bin/bash
# The corpus bench on the H200 beside Triton 3.6 (< 4 min), JSON and logs to $OUT:
#
#   bash bench/corpus_gpu.sh          # from the repository root, liger-kernel 0.8.5 installed
#
# Two runs of bench/bench_corpus_cuda.py, each with its own time budget:
#   1. Liger-Kernel 0.8.5's kernels (fwd+bwd through the functional API, and the RMSNorm /
#      LayerNorm kernels alone): corpus_liger_h200.json
#   2. Triton's tutorials verbatim and the kernels Inductor writes for
#      tests/torch_compile/models.py: corpus_tutorials_inductor_h200.json
# Each row: device time (CUDA events behind a GPU sleep), kernel_ms (CUPTI: kernels only)
# and wall_ms (back-to-back calls: shows a host-bound launch path).
#
#   bash bench/corpus_gpu.sh ab       # ~1 min: the Liger norm kernels alone with remat off
#       (TILEJIT_CUDA_TUNING=remat_reductions=0), beside the default run's figures: checks
#       cuda/remat.py's rules on the H200 (RMSNorm fwd 40 vs 48 registers, LayerNorm fwd)
set -u
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/triton_cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
if ! python -c "import liger_kernel" 2>/dev/null; then     # the device has no network: a carried copy
  if [ -n "${LIGER_SRC:-}" ]; then pip install --no-deps --no-build-isolation -q "$LIGER_SRC"; fi
  python -c "import liger_kernel" 2>/dev/null || echo "liger-kernel 0.8.5 is not installed (the liger rows will fail): \
pip install --no-deps liger-kernel==0.8.5, or LIGER_SRC=<wheel or sdist> bash bench/corpus_gpu.sh"
fi
NORMS=liger_rms_norm_fwd,liger_rms_norm_bwd,liger_layer_norm_fwd,liger_layer_norm_bwd
if [ "${1:-}" = ab ]; then
  TILEJIT_CUDA_TUNING=remat_reductions=0 timeout 100 python bench/bench_corpus_cuda.py --only "$NORMS" \
      --budget 90 --timeout 60 --out "$OUT/corpus_norms_remat_off_h200.json" > "$OUT/corpus_ab.log" 2>&1
  echo "remat off rc=$?"; tail -8 "$OUT/corpus_ab.log"
  exit 0
fi
LIGER=$NORMS,liger_rms_norm
LIGER=$LIGER,liger_layer_norm,liger_rope,liger_swiglu,liger_geglu,liger_cross_entropy,liger_flce
LIGER=$LIGER,liger_kl_div,liger_jsd
timeout 108 python bench/bench_corpus_cuda.py --only "$LIGER" --budget 98 --timeout 60 \
    --out "$OUT/corpus_liger_h200.json" > "$OUT/corpus_liger.log" 2>&1
echo "liger rc=$?"; tail -16 "$OUT/corpus_liger.log"
REST=$(python -c "import sys; sys.path.insert(0, 'bench'); import bench_corpus_cuda as B; \
keys = [k for k in B.BY_KEY if not k.startswith('liger_')]; \
print(','.join(sorted(keys, key=lambda k: not k.startswith('inductor_'))))")
timeout 122 python bench/bench_corpus_cuda.py --only "$REST" --budget 112 --timeout 100 \
    --out "$OUT/corpus_tutorials_inductor_h200.json" > "$OUT/corpus_rest.log" 2>&1
echo "tutorials+inductor rc=$?"; tail -24 "$OUT/corpus_rest.log"
