#!/usr/bin/env bash
# One device call for the Hopper pipelines (issue 16): build the extension (or use one built
# elsewhere for this Python, when it imports), run the GPU tier of the warp-specialized / TMA / fp8 /
# persistent / ping-pong kernels against references, run the examples on cuda, time them against
# cuBLAS / cuDNN / torch._scaled_mm (bench/gpu_hopper.py, one process per section so a hang costs
# one section), and profile the main GEMM and attention kernels with Nsight Compute when time is
# left. Every step has its own time limit inside HOPPER_DEADLINE seconds, so one hang cannot take
# the whole call; logs go to $OUT (hopper.log, bench.jsonl, examples.txt, ncu_*.txt).
#
#   scripts/gpu_hopper.sh                    # everything
#   HOPPER_STEPS="build bench" scripts/gpu_hopper.sh
#   HOPPER_BENCH="gemm flash" HOPPER_BENCH_ARGS="quick" scripts/gpu_hopper.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/hopper_out}
mkdir -p "$OUT"
LOG=$OUT/hopper.log
: > "$LOG"
PY=${PYTHON:-python3}
STEPS=${HOPPER_STEPS:-"build tests examples bench ncu"}
DEADLINE=${HOPPER_DEADLINE:-450}
START_S=$(date +%s)
export PYTHONUNBUFFERED=1
export PYTHONPATH=$ROOT/python:$ROOT/bench:$ROOT/tests/python/cuda
export TILELANG_SOURCE_DIR=$ROOT TILELANG_CACHE_DIR=/tmp/tl-hopper-cache TL_BENCH_JSON=$OUT/bench.jsonl
source "$ROOT/scripts/gpu_steps.sh"

{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  $PY -c 'import torch; print("torch", torch.__version__)'; } 2>&1 | tee -a "$LOG"
has build && build_core
if has tests; then
  # The GPU tier of every file that runs warp-specialized kernels (sm_90a: every T.Pipelined loop).
  step tests 150 $PY -m pytest -q -p no:cacheprovider -n 8 --timeout 90 -m gpu -rfE --tb=short \
    ${HOPPER_TESTS:-tests/python/cuda/test_warp_specialized.py tests/python/cuda/test_kernels.py}
  grep -E "^(FAILED|ERROR)|passed|failed" "$LOG" | tail -n 25
fi
if has examples; then
  export PYTHON=$PY; step examples 90 env OUT="$OUT" scripts/run_examples.sh
  grep -E "^FAIL" "$OUT/examples.txt"
fi
if has bench; then
  for section in ${HOPPER_BENCH:-gemm fp8 flash mla host}; do
    case $section in gemm) lim=110 ;; flash) lim=90 ;; mla) lim=150 ;; *) lim=70 ;; esac
    step "bench_$section" $lim $PY bench/gpu_hopper.py "$section" ${HOPPER_BENCH_ARGS:-}
  done
  grep -E "^(gemm|fp8|flash|mla|host) " "$LOG" | cut -c1-175
fi
if has ncu && command -v ncu >/dev/null; then
  for which in ${HOPPER_NCU:-gemm flash}; do
    step "ncu_$which" 60 ncu --kernel-name regex:main --launch-skip 1 --launch-count 1 --section SpeedOfLight \
      --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --log-file "$OUT/ncu_$which.txt" $PY bench/gpu_profile.py "$which"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc A" "$OUT/ncu_$which.txt" | head -n 6
  done
fi
echo "=== done in $(( $(date +%s) - START_S )) s" | tee -a "$LOG"
