/* Runs an instrumented cpu flash-attention kernel (B1 H8 S2048 D128, bench/cpu_flash.py's kernel) on
 * the calling thread and prints its rate and the timestamp-counter ticks per KV step of each phase
 * (bench/cpu_flash_phases/run.sh builds it). The kernel's own source is included (KSRC); the
 * runtime's parallel_for is a serial loop here. Ticks count wall time: on a loaded machine the
 * phases take in other processes' time slices; the rate is by thread CPU time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>
static uint64_t tl_ph_acc[128], tl_ph_last;
static int tl_ph_cur = -1;
static inline void tl_ph(int n) {
  const uint64_t t = __rdtsc();
  if (tl_ph_cur >= 0) tl_ph_acc[tl_ph_cur] += t - tl_ph_last;
  tl_ph_cur = n;
  tl_ph_last = __rdtsc();
}
#include KSRC
#ifdef F32
typedef float DT;
#else
typedef uint16_t DT;  // bfloat16 bits
#endif
static void serial_for(void*, int64_t n, TLParallelBody body, void* ctx) {
  for (int64_t i = 0; i < n; ++i) {
    body(ctx, i);
    tl_ph_cur = -1;  // the time between blocks is no phase's
  }
}
static void report_error(void*, const char* m) { fprintf(stderr, "%s\n", m); }
static int print(void*, const char* t) { return fputs(t, stdout); }
static double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char** argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 5;
  const size_t n = size_t(8) * 2048 * 128;
  const int steps = 8 * (2048 / BM) * (2048 / BN);  // KV steps per call (not causal)
  DT* t[4];
  for (auto& p : t) p = static_cast<DT*>(aligned_alloc(1 << 21, n * sizeof(DT)));
  srand(1);
  for (int j = 0; j < 3; ++j)
    for (size_t i = 0; i < n; ++i) {
      const float f = (rand() % 2001 - 1000) / 500.f;
      uint32_t u;
      memcpy(&u, &f, 4);
      if (sizeof(DT) == 2) memcpy(&t[j][i], reinterpret_cast<char*>(&u) + 2, 2);  // truncated to bf16
      else memcpy(&t[j][i], &f, 4);
    }
  TLRuntimeAPI api = {TL_CPU_ABI_VERSION, nullptr, serial_for, report_error, print};
  TLArg args[4];
  for (int j = 0; j < 4; ++j) args[j].ptr = t[j];
  if (tl_kernel_entry(args, 4, &api) != 0) return 1;  // warm-up
  memset(tl_ph_acc, 0, sizeof tl_ph_acc);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = thread_seconds();
    tl_kernel_entry(args, 4, &api);
    const double s = thread_seconds() - t0;
    if (s < best) best = s;
  }
  const double flops = 4.0 * 8 * 2048.0 * 2048 * 128;
  printf("best %.2f ms (%.1f GFLOP/s by thread CPU time)\n", best * 1e3, flops / best / 1e9);
  uint64_t all = 0;
  for (uint64_t a : tl_ph_acc) all += a;
  FILE* f = fopen(LABELS, "r");
  char line[256];
  for (int i = 0; f && fgets(line, sizeof line, f); ++i) {
    line[strcspn(line, "\n")] = 0;
    if (tl_ph_acc[i])
      printf("%5.1f%%  %8.0f ticks/step  %s\n", 100.0 * tl_ph_acc[i] / all, double(tl_ph_acc[i]) / reps / steps, line);
  }
  printf("KV loop: %.0f ticks/step\n", double(all) / reps / steps);
  return 0;
}
