#!/usr/bin/env bash
# GPU check: build tilelang-cpp on a machine with an NVIDIA GPU, run the CUDA tests, then the GPU
# benchmarks (bench/gpu_*.py), and print a compact summary table. Everything runs in one go so a
# single device session covers it; no network is needed.
#
#   scripts/gpu_check.sh                 # build + tests + benches
#   GPU_CHECK_SKIP_BENCH=1 scripts/...   # build + tests only
#   GPU_CHECK_SKIP_CPP=1 scripts/...     # without the C++ unit tests (no GPU needed: CI runs them)
#   GPU_CHECK_BENCHES="gpu_overhead" scripts/...   # only these benches
#   GPU_CHECK_TESTS="tests/python/cuda/test_device_headers.py" scripts/...   # a subset
#   GPU_CHECK_PROFILE="gemm flash" scripts/...   # also Nsight Compute reports (bench/gpu_profile.py)
#
# Output (at most a few files, so they all come back from a device run): $OUT (default
# ./gpu_check_out) gets gpu_check.log (every step's output), summary.json (one record per step)
# and bench.json (benchmark results, when the benches ran).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu_check_out}
mkdir -p "$OUT"
LOG=$OUT/gpu_check.log
SUMMARY=$OUT/summary.json
: > "$LOG"
PY=${PYTHON:-python3}
JOBS=${JOBS:-16}
BUILD=${GPU_CHECK_BUILD_DIR:-$ROOT/build-gpu}
export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
export TILELANG_SOURCE_DIR=$ROOT
export TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-gpu-check-cache}
export TL_BENCH_JSON=$OUT/bench.json

# The device runs one command for at most 10 minutes: every step gets at most what is left of
# GPU_CHECK_DEADLINE seconds, so the summary is always printed.
DEADLINE=${GPU_CHECK_DEADLINE:-560}
START_S=$(date +%s)

declare -a NAMES STATUS SECS NOTES
record() {  # name rc seconds note
  NAMES+=("$1"); STATUS+=("$2"); SECS+=("$3"); NOTES+=("$4")
}
step() {  # name timeout_s command...
  local name=$1 limit=$2; shift 2
  local left=$((DEADLINE - ($(date +%s) - START_S)))
  if [ $left -lt 10 ]; then
    record "$name" skip 0 "no time left (GPU_CHECK_DEADLINE=${DEADLINE}s)"
    return 1
  fi
  [ $limit -gt $left ] && limit=$left
  echo "=== [$name] $*" | tee -a "$LOG"
  local t0=$(date +%s%N)
  timeout "$limit" "$@" >> "$LOG" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  local dt=$((ms / 1000)).$(( (ms % 1000) / 100 ))
  local note=""
  [ $rc -eq 124 ] && note="timed out after ${limit}s"
  # The last pytest / gtest summary line of a test step, or the last line of a failed step.
  local tail_line=""
  case $name in
    *tests) tail_line=$(tail -n 40 "$LOG" | grep -E "passed|failed|PASSED|FAILED|error" | tail -n 1 | cut -c1-90) ;;
    *) [ $rc -ne 0 ] && tail_line=$(tail -n 1 "$LOG" | cut -c1-90) ;;
  esac
  [ -z "$note" ] && note=$tail_line
  record "$name" "$rc" "$dt" "$note"
  echo "=== [$name] rc=$rc (${dt}s)" | tee -a "$LOG"
  return $rc
}

# ---- environment --------------------------------------------------------------------------------
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
  nvcc --version 2>&1 | tail -n 2
  $PY -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  $PY -c 'import triton; print("triton", triton.__version__)' 2>&1
  cmake --version | head -n 1
  $PY -c 'import sysconfig, os; p = sysconfig.get_paths()["include"]; print("Python.h:", os.path.exists(p + "/Python.h"), p)' 2>&1
  $PY -c 'import nanobind, numpy, ml_dtypes, pytest; print("nanobind", nanobind.__version__, "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)' 2>&1
  echo "gtest: $(ls /usr/include/gtest/gtest.h 2>&1)"
  echo "cuobjdump: $(command -v cuobjdump)"
  echo "cores: $(nproc)"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt" | tee -a "$LOG"

# ---- build --------------------------------------------------------------------------------------
GTEST=OFF
if [ -f /usr/include/gtest/gtest.h ] && compgen -G "/usr/lib*/**/libgtest*" >/dev/null || compgen -G "/usr/lib/*/libgtest*" >/dev/null; then
  [ -f /usr/include/gtest/gtest.h ] && GTEST=ON
fi
NB_DIR=$($PY -m nanobind --cmake_dir 2>/dev/null)
GEN=""
command -v ninja >/dev/null && GEN="-G Ninja"
# The image's first g++ on PATH (/opt/gcc/bin) links libstdc++ statically; a Python extension built
# that way exports libstdc++'s GNU-unique symbols process-wide and breaks every later C++ extension
# (seen: `import tilelang._core; import ml_dtypes` crashed). Build with the system compiler.
if [ -x /usr/bin/g++ ]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
step configure 300 cmake -S "$ROOT" -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release \
  -DPython_EXECUTABLE="$(command -v $PY)" -Dnanobind_DIR="$NB_DIR" -DTL_BUILD_TESTS=$GTEST
BUILD_OK=0
if [ ${STATUS[-1]} -eq 0 ]; then
  step build 480 cmake --build "$BUILD" -j "$JOBS" && BUILD_OK=1
fi

# ---- tests --------------------------------------------------------------------------------------
if [ $BUILD_OK -eq 1 ]; then
  if [ -n "${GPU_CHECK_SKIP_CPP:-}" ]; then
    record cpp_tests skip 0 "GPU_CHECK_SKIP_CPP is set (the C++ tests need no GPU; CI runs them)"
  elif [ "$GTEST" = ON ]; then
    step cpp_tests 300 "$BUILD/tl_tests" --gtest_brief=1
  else
    record cpp_tests skip 0 "GoogleTest not installed here (the C++ tests run in CI)"
  fi
  # Smoke first: each NVRTC/driver step in its own process with driver-call tracing and native
  # backtraces, so a crash is located in this run. When loading a module fails, the GPU tests
  # (which would die with the first crash) are skipped and only the compile-only tests run.
  step cuda_smoke 240 $PY "$ROOT/scripts/cuda_smoke.py" --log "$OUT/smoke.log"
  if [ "${STATUS[-1]}" != 0 ]; then
    export TILELANG_SKIP_GPU_TESTS="the CUDA smoke test failed (see smoke.log)"
  fi
  # AOT export (docs/AOT.md): a C++ program calls an exported cuda GEMM through gemm.so alone.
  if [ -z "${TILELANG_SKIP_GPU_TESTS:-}" ]; then
    step aot_cuda 180 env PYTHON=$PY "$ROOT/scripts/aot_example.sh" cuda "$BUILD/aot_cuda"
  fi
  export TILELANG_CRASH_BACKTRACE=1
  TESTS=${GPU_CHECK_TESTS:-tests/python tests/error}
  # Compile-only tests run in CI; here the GPU tests (device headers, kernels on hardware, and the
  # emulator cases, which are cheap).
  # Eight pytest workers when pytest-xdist is there: compiling each test kernel is the slow part.
  XDIST=""
  $PY -c "import xdist" 2>/dev/null && XDIST="-n 8"
  # The GPU tier: tests marked gpu or torch (tests/conftest.py); CI runs everything else.
  step cuda_tests 300 $PY -X faulthandler -m pytest -q -rfEs -p no:cacheprovider $XDIST -m "gpu or torch" \
    --ignore=tests/python/cuda/test_compile_only.py $TESTS
  # The compatibility tier (TileLang-style programs, torch tensors) on the GPU.
  if [ -z "${TILELANG_SKIP_GPU_TESTS:-}" ]; then
    step compat_tests 240 env TL_COMPAT_DEVICE=cuda $PY -X faulthandler -m pytest -q -rfEs -p no:cacheprovider $XDIST \
      tests/compat
  fi
  grep -E "^(FAILED|ERROR) " "$LOG" | sed 's/ - .*//' | sort -u > "$OUT/failed_tests.txt"
  # Every example (TileLang GPU style, written for every target) runs unchanged on cuda.
  if [ -n "${TILELANG_SKIP_GPU_TESTS:-}" ]; then
    record examples skip 0 "skipped: the CUDA smoke test failed"
  else
    export OUT PYTHON=$PY; step examples 300 "$ROOT/scripts/run_examples.sh"
  fi
  # Accuracy of the math functions on this GPU (docs/MATH_ACCURACY.md's cuda column; publish with
  # `python bench/math_accuracy.py --merge $OUT/math_accuracy_cuda.json`).
  if [ -z "${TILELANG_SKIP_GPU_TESTS:-}" ]; then
    step math_accuracy 120 $PY bench/math_accuracy.py --target cuda --out "$OUT/math_accuracy_cuda.json"
  fi
  if [ -n "${TILELANG_SKIP_GPU_TESTS:-}" ]; then
    record benches skip 0 "skipped: the CUDA smoke test failed"
  elif [ -z "${GPU_CHECK_SKIP_BENCH:-}" ]; then
    : > "$TL_BENCH_JSON"
    # Cheap benchmarks first, so a run cut short still reports them.
    for b in ${GPU_CHECK_BENCHES:-gpu_compile gpu_overhead gpu_memory gpu_gemm gpu_flash}; do
      [ -f "bench/$b.py" ] || continue
      step "$b" 180 $PY "bench/$b.py"
    done
    # With GPU_CHECK_PROFILE="gemm gemm_mma flash" (any of them): Nsight Compute on those kernels
    # (speed of light, compute and memory workload); the report goes to ncu.txt.
    if command -v ncu >/dev/null && [ -n "${GPU_CHECK_PROFILE:-}" ]; then
      : > "$OUT/ncu.txt"
      for which in $GPU_CHECK_PROFILE; do
        step "ncu_$which" 90 ncu --profile-from-start off --launch-skip 1 --launch-count 1 --section SpeedOfLight \
          --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --log-file "$OUT/ncu_$which.txt" \
          $PY bench/gpu_profile.py "$which"
        cat "$OUT/ncu_$which.txt" >> "$OUT/ncu.txt" 2>/dev/null
        rm -f "$OUT/ncu_$which.txt"
      done
    fi
  fi
fi

# ---- summary ------------------------------------------------------------------------------------
{
  echo "["
  for i in "${!NAMES[@]}"; do
    sep=","; [ $i -eq $((${#NAMES[@]} - 1)) ] && sep=""
    note=$(printf '%s' "${NOTES[$i]}" | sed 's/\\/\\\\/g; s/"/\\"/g')
    printf '  {"step": "%s", "status": "%s", "seconds": %.1f, "note": "%s"}%s\n' \
      "${NAMES[$i]}" "${STATUS[$i]}" "${SECS[$i]}" "$note" "$sep"
  done
  echo "]"
} > "$SUMMARY"

echo
echo "================================ gpu_check summary ================================"
printf '%-22s %-6s %8s  %s\n' step status seconds note
FAIL=0
for i in "${!NAMES[@]}"; do
  st=${STATUS[$i]}
  case $st in 0) s=ok ;; skip) s=skip ;; *) s="FAIL"; FAIL=1 ;; esac
  printf '%-22s %-6s %8.1f  %s\n' "${NAMES[$i]}" "$s" "${SECS[$i]}" "${NOTES[$i]}"
done
if [ -s "$TL_BENCH_JSON" ]; then
  echo
  $PY "$ROOT/bench/gpu_summary.py" "$TL_BENCH_JSON" 2>&1 || true
fi
if [ -s "$OUT/failed_tests.txt" ]; then
  echo
  echo "failed tests:"
  head -n 40 "$OUT/failed_tests.txt"
fi
if [ -s "$OUT/examples.txt" ]; then
  echo
  echo "examples on cuda:"
  cat "$OUT/examples.txt"
fi
if grep -q '^smoke ' "$LOG"; then
  echo
  grep '^smoke ' "$LOG"
fi
echo "logs: $LOG"
exit $FAIL
