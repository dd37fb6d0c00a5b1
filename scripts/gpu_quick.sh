#!/usr/bin/env bash
# Quick GPU loop for one measurement: builds only the Python extension (system g++, Release) and runs
# the given bench scripts or Python files, e.g. `scripts/gpu_quick.sh bench/gpu_overhead.py`.
# scripts/gpu_check.sh is the full check (tests + all benches); this is for iterating on one thing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BUILD=${GPU_CHECK_BUILD_DIR:-$PWD/build-gpu}
if [ -x /usr/bin/g++ ]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v $PY)" \
  -Dnanobind_DIR="$($PY -m nanobind --cmake_dir)" -DTL_BUILD_TESTS=OFF > /dev/null
cmake --build "$BUILD" -j "${JOBS:-16}" --target _core > /dev/null
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/tests/python/cuda${PYTHONPATH:+:$PYTHONPATH}
export TILELANG_SOURCE_DIR=$PWD TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-gpu-quick-cache}
for f in "$@"; do
  echo "=== $f"
  $PY "$f"
done
