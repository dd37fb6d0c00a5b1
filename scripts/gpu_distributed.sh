#!/usr/bin/env bash
# One device call for tilelang.distributed (issue 20) on a multi-GPU machine: build the extension,
# run the distributed examples on cuda (one process per GPU, and two processes sharing GPU 0), the
# distributed test tier on cuda, then bench/gpu_distributed.py (fused kernels vs NCCL + cuBLAS).
# Logs go to $OUT (dist.log, bench_dist.jsonl). NVLink multicast stays off (the machine's
# NCCL_NVLS_ENABLE=0 etc. are kept; nothing here calls cuMulticastCreate).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/dist_out}
mkdir -p "$OUT"
LOG=$OUT/dist.log
: > "$LOG"
PY=${PYTHON:-python3}
STEPS=${DIST_STEPS:-"build examples tests bench"}
DEADLINE=${DIST_DEADLINE:-540}
START_S=$(date +%s)
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$ROOT/python TILELANG_SOURCE_DIR=$ROOT TILELANG_CACHE_DIR=/tmp/tl-dist-cache
source "$ROOT/scripts/gpu_steps.sh"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m; } 2>&1 | tee -a "$LOG"
NGPU=$($PY -c 'import torch; print(torch.cuda.device_count())')
has build && build_core
if has examples; then
  step example_gpus 120 $PY examples/distributed/example_distributed.py --nprocs "$NGPU" --device cuda
  step example_shared_gpu 120 env CUDA_VISIBLE_DEVICES=0 TILELANG_DIST_SHARE_GPU=1 \
    $PY examples/distributed/example_distributed.py --nprocs 2 --device cuda
  grep -E "max error|^ok|Error" "$LOG" | tail -n 12
fi
if has tests; then
  step tests 150 $PY -m pytest -q -p no:cacheprovider --timeout 120 -rfE --tb=short -m gpu tests/python/distributed
  grep -E "^(FAILED|ERROR)|passed|failed" "$LOG" | tail -n 10
fi
if has bench; then
  step bench 300 $PY bench/gpu_distributed.py --nprocs "$NGPU" ${DIST_BENCH_ARGS:-}
  grep -E '^\{' "$LOG" > "$OUT/bench_dist.jsonl"
  cat "$OUT/bench_dist.jsonl"
fi
echo "=== done in $(( $(date +%s) - START_S )) s" | tee -a "$LOG"
