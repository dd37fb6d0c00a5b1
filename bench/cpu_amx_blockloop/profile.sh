#!/bin/sh
# Where the AMX block loop's time goes (docs/PERFORMANCE.md, twentieth session): the bench kernel's block
# loop (variant.cc) built against an instrumented copy of include/tl/cpu/gemm.h (instrument_amx.py), as is
# and with each timing-only oracle (A / B packed once, C tiles in L1, all three), run interleaved by the
# driver without its value check. Prints the tick share of B packing, A packing and the tile blocks per
# build, and each oracle's median paired speedup over the plain build. Needs an AMX CPU.
#   bench/cpu_amx_blockloop/profile.sh [ROUNDS]      (pin it: taskset -c 2 ...)
set -e
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
rounds=${1:-21}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r "$root/include" "$tmp/include"
"${PYTHON:-python3}" "$here/instrument_amx.py" "$root/include/tl/cpu/gemm.h" "$tmp/include/tl/cpu/gemm.h"
flags="-std=c++17 -O2 -march=native -ftree-vectorize -fvect-cost-model=dynamic -fno-math-errno -fno-trapping-math -ffp-contract=fast -fPIC -shared -fvisibility=hidden"
for k in bf16 int8; do
  d=""; [ $k = int8 ] && d=-DINT8
  g++ $flags $d -DVNAME="\"plain_$k\"" -I"$tmp/include" "$here/variant_prof.cc" -o "$tmp/plain_$k.so" &
  for o in A B C; do
    g++ $flags $d -DORACLE_$o -DVNAME="\"oracle_${o}_$k\"" -I"$tmp/include" "$here/variant_prof.cc" -o "$tmp/o${o}_$k.so" &
  done
  g++ $flags $d -DORACLE_A -DORACLE_B -DORACLE_C -DVNAME="\"oracle_ABC_$k\"" -I"$tmp/include" "$here/variant_prof.cc" \
    -o "$tmp/oABC_$k.so" &
done
wait
g++ -O2 "$here/driver.cc" -o "$tmp/driver" -ldl
cd "$tmp"
NOCHECK=1 ./driver "$rounds" ./plain_bf16.so ./oA_bf16.so ./oB_bf16.so ./oC_bf16.so ./oABC_bf16.so
NOCHECK=1 ./driver "$rounds" --int8 ./plain_int8.so ./oA_int8.so ./oB_int8.so ./oC_int8.so ./oABC_int8.so
