#!/usr/bin/env bash
# The AOT example end to end (docs/AOT.md): export examples/aot's GEMM as gemm.so + gemm.h, build
# the C++ program with CMake as a user would, and run it (it checks the result itself).
#   scripts/aot_example.sh cpu  [DIR]   # tests/python/aot runs this in `make test`
#   scripts/aot_example.sh cuda [DIR]   # on a GPU machine (scripts/gpu_check.sh step aot_cuda)
# DIR (default build/aot_<target>) receives the library, the header and the CMake build.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-cpu}
DIR=${2:-$PWD/build/aot_$TARGET}
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
"$PY" examples/aot/export_gemm.py --target "$TARGET" --out "$DIR"
cmake -S examples/aot -B "$DIR/build" -DTL_AOT_DIR="$DIR" -DTL_AOT_TARGET="$TARGET" >/dev/null
cmake --build "$DIR/build"
# Run with no Python or tilelang variables: the program needs only gemm.so.
env -u PYTHONPATH -u TILELANG_SOURCE_DIR "$DIR/build/aot_gemm" 1000
"$DIR/build/aot_gemm" 1
