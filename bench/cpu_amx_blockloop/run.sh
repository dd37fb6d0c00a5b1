#!/bin/sh
# A/B of include/tl/cpu/gemm.h against another tree's (default: the last commit's), on the bench
# kernel's block loop, one process, interleaved rounds, thread CPU time (docs/PERFORMANCE.md).
#   bench/cpu_amx_blockloop/run.sh [ROUNDS] [OLD_COMMIT]
# Variants: old (OLD_COMMIT's gemm.h), new (this tree's; B's pack reused across the blocks when the
# headers have the packed-B cache), new_norb (this tree's with -DREUSE_B=false: B packed per call).
set -e
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
rounds=${1:-30}; old=${2:-HEAD}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r "$root/include" "$tmp/old_include"
git -C "$root" show "$old:include/tl/cpu/gemm.h" > "$tmp/old_include/tl/cpu/gemm.h"
flags="-std=c++17 -O2 -march=native -ftree-vectorize -fvect-cost-model=dynamic -fno-math-errno -fno-trapping-math -ffp-contract=fast -fPIC -shared"  # the kernel build's (src/target/cpu/codegen.cc), with -march=native for the host ISA flags
kinds=${KINDS:-bf16 int8}  # KINDS="f32" for the fp32 block loop only
for v in $kinds; do
  d=""; [ $v = int8 ] && d="-DINT8"; [ $v = f32 ] && d="-DF32"
  g++ $flags $d -fvisibility=hidden -I"$tmp/old_include" "$here/variant.cc" -o "$tmp/old_$v.so"
  g++ $flags $d -fvisibility=hidden -I"$root/include" "$here/variant.cc" -o "$tmp/new_$v.so"
  g++ $flags $d -DREUSE_B=false -fvisibility=hidden -I"$root/include" "$here/variant.cc" -o "$tmp/new_norb_$v.so"
done
g++ -O2 "$here/driver.cc" -o "$tmp/driver" -ldl
cd "$tmp"
for v in $kinds; do
  flag=""; [ $v = int8 ] && flag=--int8; [ $v = f32 ] && flag=--f32
  "$tmp/driver" "$rounds" $flag ./old_$v.so ./new_$v.so ./new_norb_$v.so
done
if grep -q amx_tile /proc/cpuinfo; then
  g++ -O2 -mamx-tile -mamx-bf16 -mamx-int8 "$here/amx_peak.cc" -o "$tmp/amx_peak" && "$tmp/amx_peak"
fi
uptime
