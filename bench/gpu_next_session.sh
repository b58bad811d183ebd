#!/bin/bash
# Two device calls that validate what ships OFF for want of a GPU run and re-measure every
# README figure from one tree, so the README's H200 tables come from one run each:
#
#   bash bench/gpu_next_session.sh switches   # ~5 min: the whole GPU suite (its cuda e2e
#       tests include the OFF switches turned on: test_attention_rows 'index tiles',
#       test_matmul_tutorial_switches 'arange leaves', test_fused_reductions), then each
#       OFF switch's bench rows beside the shipped default
#   bash bench/gpu_next_session.sh figures    # ~6 min: bench_cuda.py and every tutorial row
#
# CudaTuning fields still OFF (tilejit/runtime/options.py says what each does; flip the
# default, and the PTX tests' expectations, only after the 'switches' call shows it
# correct and faster; TILEJIT_CUDA_TUNING="index_tiles=1,..." sets them for one run):
#   index_tiles (+ ring_rotate_under_cap=0): causal attention's band loop in the ring
#       (predicted causal 1.24 -> ~1.0 ms)
#   arange_leaves: tutorial 03's K-mask index per chunk (4 fewer barriers)
#   fuse_siblings: sibling full reductions share one exchange (LN dx)
#   prestage_b: the region dots' B operands staged together (slower on the H200 so far)
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
  timeout 120 python bench/attn_rows_variants.py wgmma "index tiles" > "$OUT/attn.log" 2>&1; tail -6 "$OUT/attn.log"
  mkdir -p "$OUT/mm"
  timeout 150 bash bench/matmul_tutorial_gpu.sh "$OUT/mm" 0 matmul_imm_uwg_fresh,matmul_shipped_arange 0 0
  TESTS= SKIP_TRITON_PTX=1 ROWS=layer_norm_bwd_dx OUT="$OUT/ln" timeout 120 \
      bash bench/memory_bound_gpu.sh "fuse:fuse_siblings=1@layer_norm_bwd_dx,layer_norm_bwd"
  ;;
figures)
  timeout 280 python bench/bench_cuda.py --out "$OUT/cuda_h200.json" > "$OUT/bench_cuda.log" 2>&1
  echo "bench_cuda rc=$?"; tail -14 "$OUT/bench_cuda.log"
  timeout 300 python bench/bench_tutorials_cuda.py --out "$OUT/tutorials_cuda_h200.json" > "$OUT/tutorials.log" 2>&1
  echo "tutorials rc=$?"; tail -16 "$OUT/tutorials.log"
  ;;
*) echo "usage: bash bench/gpu_next_session.sh switches|figures"; exit 2 ;;
esac
