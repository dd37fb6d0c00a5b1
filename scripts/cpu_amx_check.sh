#!/usr/bin/env bash
# AMX check for the cpu target, for a machine whose CPU may have AMX (e.g. the CPU of a GPU host):
# builds tilelang-cpp, prints what the CPU and the OS offer (AMX-BF16/INT8 flags, the tile state in
# XCR0, the arch_prctl permission), runs the AMX / ISA-dispatch correctness tests (values against
# numpy in float64 / int64, native build vs tl.cpu_isa=avx512), then the cpu GEMM benchmark's bf16 row
# (and the fp32 rows) against torch.matmul in the same process. No network needed.
#
#   scripts/cpu_amx_check.sh                 # build + tests + bench
#   AMX_CHECK_SKIP_BENCH=1 scripts/...       # build + tests only
#   PYTHON=/path/to/python JOBS=16 scripts/...
#   AMX_CHECK_BENCH_TIMEOUT=180 (seconds per bench run; the whole script fits a 10-minute device call
#   on a 16-core host: build ~3 min, tests ~2 min, three quick bench runs)
#
# Output: $OUT (default ./cpu_amx_check_out) gets amx_check.log (everything) and the bench JSON.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/cpu_amx_check_out}
mkdir -p "$OUT"
LOG=$OUT/amx_check.log
: > "$LOG"
PY=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}
BUILD=${AMX_CHECK_BUILD_DIR:-$ROOT/build-amx}
export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
export TILELANG_SOURCE_DIR=$ROOT
export TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-amx-check-cache}
rc_all=0
say() { echo "$@" | tee -a "$LOG"; }

# ---- what the machine offers ------------------------------------------------------------------
say "date: $(date -u +%FT%TZ)"
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
say "isa flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512_vnni|avx512_bf16|avx512_fp16|amx_tile|amx_bf16|amx_int8|amx_fp16)$' | tr '\n' ' ')"
say "kernel: $(uname -r); cores: $(nproc)"
for v in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE MKL_ENABLE_INSTRUCTIONS ONEDNN_MAX_CPU_ISA ATEN_CPU_CAPABILITY; do
  [ -n "${!v:-}" ] && say "note: $v=${!v} is set (the bench re-executes itself without it)"
done
PROBE=$(mktemp -d)
cat > "$PROBE/amx_probe.c" <<'C'
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void) {
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  unsigned long mask = 0;
  long req = syscall(SYS_arch_prctl, 0x1023, 18);
  syscall(SYS_arch_prctl, 0x1022, &mask);
  printf("XCR0 tile state: %s; arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) = %ld; permitted: %s\n",
         ((lo >> 17) & 3) == 3 ? "on" : "off", req, (mask >> 18) & 1 ? "yes" : "no");
  return 0;
}
C
if gcc -O1 "$PROBE/amx_probe.c" -o "$PROBE/amx_probe" 2>>"$LOG"; then say "$("$PROBE/amx_probe")"; fi
rm -rf "$PROBE"

# ---- build --------------------------------------------------------------------------------------
say "=== build ($BUILD)"
NB_DIR=$($PY -m nanobind --cmake_dir 2>/dev/null)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v $PY)" \
  ${NB_DIR:+-Dnanobind_DIR=$NB_DIR} >> "$LOG" 2>&1 && cmake --build "$BUILD" -j "$JOBS" >> "$LOG" 2>&1
rc=$?
say "=== build rc=$rc"
[ $rc -ne 0 ] && { tail -n 30 "$LOG"; exit 1; }
# (the extension module is written into python/tilelang/ by the build)

# ---- correctness ---------------------------------------------------------------------------------
if [ -x "$BUILD/tl_tests" ]; then
  say "=== C++: host ISA detection, flags, load check, tile GEMM micro-kernels"
  "$BUILD/tl_tests" --gtest_brief=1 --gtest_filter='*CpuHostIsa*:*CpuGemm*:CpuCodegen.CompilerFlags' >> "$LOG" 2>&1
  rc=$?; say "=== C++ tests rc=$rc"; [ $rc -ne 0 ] && rc_all=1
fi
say "=== Python: AMX bf16/int8 GEMM vs numpy, ISA dispatch, cpu GEMM kernels"
TL_TEST_TIER=cpu $PY -m pytest -q tests/python/cpu/test_cpu_amx.py tests/python/cpu/test_cpu_isa_dispatch.py \
  tests/python/cpu/test_cpu_gemm_forwarding.py tests/python/cpu/test_cpu_kernels.py >> "$LOG" 2>&1
rc=$?; say "=== Python tests rc=$rc ($(tail -n 1 "$LOG"))"; [ $rc -ne 0 ] && rc_all=1
$PY - <<'P' 2>&1 | tee -a "$LOG"
import ctypes, os, sys
sys.path.insert(0, "tests/python")
import tilelang, kernel_zoo as zoo
k = tilelang.compile(zoo.gemm(256, 256, 256, 256, 256, 128, "bfloat16", "float32", "float32"), target="cpu")
lib = ctypes.CDLL(os.path.join(k.artifact_dir, "kernel.so"))
lib.tl_kernel_isa.restype = ctypes.c_char_p
print("bf16 GEMM kernel: runs", lib.tl_kernel_isa().decode(), "; compiled for",
      ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(lib, "tl_kernel_build_isa"))).decode())
P

# ---- bench ----------------------------------------------------------------------------------------
if [ -z "${AMX_CHECK_SKIP_BENCH:-}" ]; then
  say "=== bench: cpu GEMM vs numpy (OpenBLAS) and torch.matmul (MKL / oneDNN), 2 threads"
  timeout ${AMX_CHECK_BENCH_TIMEOUT:-180} $PY bench/cpu_gemm.py --threads 2 --quick 2>&1 | tee -a "$LOG"
  cp bench/results/cpu_gemm.json "$OUT/cpu_gemm_2threads.json" 2>/dev/null
  say "=== bench: 1 thread, thread CPU time (robust when the machine is shared)"
  timeout ${AMX_CHECK_BENCH_TIMEOUT:-180} $PY bench/cpu_gemm.py --threads 1 --timer thread_cpu --quick --rounds 3 --rep 10 2>&1 | tee -a "$LOG"
  cp bench/results/cpu_gemm_1t_cputime.json "$OUT/cpu_gemm_1t_cputime.json" 2>/dev/null
  say "=== bench: all threads"
  timeout ${AMX_CHECK_BENCH_TIMEOUT:-180} $PY bench/cpu_gemm.py --threads "$(nproc)" --quick 2>&1 | tee -a "$LOG"
  cp bench/results/cpu_gemm.json "$OUT/cpu_gemm_allthreads.json" 2>/dev/null
fi
say "=== done: $([ $rc_all -eq 0 ] && echo 'all tests passed' || echo 'TESTS FAILED'); log in $LOG"
exit $rc_all
