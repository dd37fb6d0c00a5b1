/* One core's AMX tile-unit peak: tdpbf16ps and tdpbssd on four independent C tiles (tmm0..3) whose
 * A / B operands (tmm4..7) stay in the tiles, so nothing but the multiply unit limits the rate.
 * Zero operands first (the unit's best case), then random ones (what a GEMM feeds it).
 * Prints GFLOP/s (bf16, 16 x 16 x 32 multiply-adds per instruction) and GOP/s (int8, 16 x 16 x 64)
 * and the time per instruction; the block loop's rates (driver.cc) read against these say how much
 * of the unit a GEMM driver keeps busy (docs/PERFORMANCE.md, twentieth session).
 *   g++ -O2 -mamx-tile -mamx-bf16 -mamx-int8 amx_peak.cc -o amx_peak && taskset -c 2 ./amx_peak */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

struct alignas(64) TileConfig {
  uint8_t palette, start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

int main() {
  const long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;  // Linux: ask for the tile state
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    perror("arch_prctl(ARCH_REQ_XCOMP_PERM): no AMX tile state for this process");
    return 1;
  }
  TileConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  __asm__ __volatile__("ldtilecfg %0" ::"m"(cfg));
  // Operands: zeros (the unit's best case), then random values: bf16 uniform in [-1, 1), int8 bytes uniform
  // (the rate depends on the data: a GEMM's operands are not zeros). The int8 rounds use the same bits.
  alignas(64) static uint16_t rnd[4][512];
  uint32_t x = 12345;
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 512; ++i) {
      x = x * 1664525u + 1013904223u;
      float f = (float)(x >> 8) / 8388608.0f - 1.0f;
      uint32_t u;
      memcpy(&u, &f, 4);
      rnd[t][i] = (uint16_t)(u >> 16);
    }
  const long n = 2000000;  // 8M instructions: ~50 ms each
  for (int round = 0; round < 6; ++round) {
    const bool random = round >= 3;
    if (!random) {
      __asm__ __volatile__("tilezero %%tmm4\n tilezero %%tmm5\n tilezero %%tmm6\n tilezero %%tmm7" ::: "memory");
    } else {
      const int64_t stride = 64;
      __asm__ __volatile__("tileloadd (%0,%1,1), %%tmm4" ::"r"(rnd[0]), "r"(stride) : "memory");
      __asm__ __volatile__("tileloadd (%0,%1,1), %%tmm5" ::"r"(rnd[1]), "r"(stride) : "memory");
      __asm__ __volatile__("tileloadd (%0,%1,1), %%tmm6" ::"r"(rnd[2]), "r"(stride) : "memory");
      __asm__ __volatile__("tileloadd (%0,%1,1), %%tmm7" ::"r"(rnd[3]), "r"(stride) : "memory");
    }
    double t0 = thread_seconds();
    for (long i = 0; i < n; ++i)
      __asm__ __volatile__(
          "tdpbf16ps %%tmm6, %%tmm4, %%tmm0\n tdpbf16ps %%tmm7, %%tmm4, %%tmm1\n"
          "tdpbf16ps %%tmm6, %%tmm5, %%tmm2\n tdpbf16ps %%tmm7, %%tmm5, %%tmm3" ::: "memory");
    double t1 = thread_seconds();
    for (long i = 0; i < n; ++i)
      __asm__ __volatile__(
          "tdpbssd %%tmm6, %%tmm4, %%tmm0\n tdpbssd %%tmm7, %%tmm4, %%tmm1\n"
          "tdpbssd %%tmm6, %%tmm5, %%tmm2\n tdpbssd %%tmm7, %%tmm5, %%tmm3" ::: "memory");
    double t2 = thread_seconds();
    const double ops = 4.0 * n * 16 * 16 * 2;  // per unit of k
    printf("AMX peak, one core, %s operands: bf16 %.0f GFLOP/s, int8 %.0f GOP/s (%.2f / %.2f ns per instruction)\n",
           random ? "random" : "zero", ops * 32 / (t1 - t0) / 1e9, ops * 64 / (t2 - t1) / 1e9, (t1 - t0) / (4.0 * n) * 1e9,
           (t2 - t1) / (4.0 * n) * 1e9);
  }
  __asm__ __volatile__("tilerelease");
  return 0;
}
