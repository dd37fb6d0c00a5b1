#!/bin/sh
# Where one KV step of the cpu flash-attention forward spends its time (docs/PERFORMANCE.md, cpu,
# ninth session): the bench kernel's generated C++ with a timestamp-counter mark before every
# statement of its KV loop, run single-threaded on B1 H8 S2048 D128.
#   bench/cpu_flash_phases/run.sh [bfloat16|float32] [BM] [BN] [REPS] [extra g++ flags, e.g. -DTL_CPU_GEMM_PACK_B_MIN_M=32]
# TL_KERNEL_SRC=file.cc runs a hand-edited kernel source instead of the generated one.
set -e
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
dtype=${1:-bfloat16}; bm=${2:-64}; bn=${3:-64}; reps=${4:-5}
[ $# -ge 4 ] && shift 4 || shift $#
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
py=${PYTHON:-$root/.venv/bin/python}
if [ -n "$TL_KERNEL_SRC" ]; then cp "$TL_KERNEL_SRC" "$tmp/kernel.cc"; else
  PYTHONPATH="$root/python" TILELANG_SOURCE_DIR="$root" "$py" "$here/dump.py" "$dtype" "$bm" "$bn" > "$tmp/kernel.cc"; fi
"$py" "$here/instrument.py" "$tmp/kernel.cc" "$tmp/inst.cc"
f32=""; [ "$dtype" = float32 ] && f32="-DF32"
# the kernel build's flags (src/target/cpu/codegen.cc) with -march=native for the host's ISA set
g++ -std=c++17 -O2 -march=native -ftree-vectorize -fvect-cost-model=dynamic -fno-math-errno -fno-trapping-math \
  -ffp-contract=fast -fno-exceptions -fno-rtti -I"${TILELANG_INCLUDE_DIR:-$root/include}" $f32 -DBM=$bm -DBN=$bn \
  -DKSRC="\"$tmp/inst.cc\"" -DLABELS="\"$tmp/inst.cc.labels\"" "$@" "$here/harness.cc" -o "$tmp/harness"
"$tmp/harness" "$reps"
