#!/bin/bash
# Two device calls that validate the CUDA code-generation defaults and re-measure every
# README figure from one tree, so the README's H200 tables come from one run each:
#
#   bash bench/gpu_next_session.sh switches   # ~5 min: the whole GPU suite (its cuda e2e
#       tests run CudaTuning fields flipped: test_attention_rows, test_matmul_tutorial_switches,
#       test_fused_reductions), then the defaults flipped last (index_tiles, fuse_siblings ON;
#       the register cap of range-versioned ring kernels, cuda/occupancy.py) beside their
#       previous settings
#   bash bench/gpu_next_session.sh figures    # ~6 min: bench_cuda.py and every tutorial row
#
# Every CudaTuning field ships ON (tilejit/runtime/options.py says what each does;
# TILEJIT_CUDA_TUNING="index_tiles=0,..." switches one off for a run); a strategy that is
# not faster on the H200 is deleted with its code, not left OFF.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/triton_cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader | tee "$OUT/gpu.txt"
case "${1:-}" in
switches)
  timeout 200 python -m pytest -n 14 -p no:cacheprovider -o addopts="" -q --timeout 150 tests/e2e \
      tests/unit/test_cuda_gpu.py tests/unit/test_cuda_gpu_dot.py tests/unit/test_cuda_express.py \
      tests/unit/test_cuda_native_launch.py tests/errors/test_sanitize_cuda.py \
      tests/unit/test_compat_scripts.py tests/unit/test_align_version.py \
      -k "cuda or compat_scripts or native or version" > "$OUT/gpu_tests.log" 2>&1
  echo "tests rc=$?"; grep -E "^(FAILED|ERROR)" "$OUT/gpu_tests.log" | head -20; tail -1 "$OUT/gpu_tests.log"
  timeout 120 python bench/attn_rows_variants.py wgmma "no index tiles" > "$OUT/attn.log" 2>&1; tail -6 "$OUT/attn.log"
  timeout 150 python bench/matmul_tutorial_probe.py --impl tilejit --only mm,mm03,mm03_nocap \
      --out "$OUT/probe_tj.jsonl" 2>&1 | grep '^{'
  TESTS= SKIP_TRITON_PTX=1 ROWS=layer_norm_bwd_dx OUT="$OUT/ln" timeout 120 \
      bash bench/memory_bound_gpu.sh "nofuse:fuse_siblings=0@layer_norm_bwd_dx,layer_norm_bwd"
  ;;
figures)
  timeout 280 python bench/bench_cuda.py --out "$OUT/cuda_h200.json" > "$OUT/bench_cuda.log" 2>&1
  echo "bench_cuda rc=$?"; tail -14 "$OUT/bench_cuda.log"
  timeout 300 python bench/bench_tutorials_cuda.py --out "$OUT/tutorials_cuda_h200.json" > "$OUT/tutorials.log" 2>&1
  echo "tutorials rc=$?"; tail -16 "$OUT/tutorials.log"
  ;;
*) echo "usage: bash bench/gpu_next_session.sh switches|figures"; exit 2 ;;
esac
