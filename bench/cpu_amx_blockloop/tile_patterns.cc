/* AMX issue patterns on one core, ns per tdpbf16ps: products alone (operands held in the tiles) in several
 * accumulator / operand-sharing orders, and tile-load + product schedules with L1-resident operands (the shipped
 * 3 x 1 and 2 x 2 blocks of include/tl/cpu/gemm.h and alternatives). A lead of the twentieth session
 * (docs/PERFORMANCE.md): products alone ran 6.1 ns each with four accumulators in the 2 x 2 order
 * (amx_peak.cc) but 14.2 ns with the 3 x 1 block's three accumulators sharing one B tile, and the shipped 3 x 1
 * step with its loads 21-30 ns, 2 x 2 25 ns. Written then; only T1, T3, S1 and S2's shapes had been measured
 * (by an earlier version of this file) when the device time ran out.
 *   g++ -O2 -march=native tile_patterns.cc -o tile_patterns && taskset -c 2 ./tile_patterns */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static double now() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
struct alignas(64) Cfg { uint8_t p, sr; uint8_t r[14]; uint16_t colsb[16]; uint8_t rows[16]; };
#define L(t, p) __asm__ __volatile__("tileloadd (%0,%1,1), %%tmm" #t ::"r"(p), "r"((int64_t)64) : "memory")
#define D(c, a, b) __asm__ __volatile__("tdpbf16ps %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::: "memory")
#define Z(t) __asm__ __volatile__("tilezero %%tmm" #t ::: "memory")
static char* A; static char* B; static char* BL;  // BL: 256 KiB, B's pack size in the bench (L2)
#define RUN(name, ntdp, body) { double t0 = now(); for (long r = 0; r < reps; ++r) { body; } double t = now() - t0; printf("  %-44s %6.2f ns/tdp\n", name, t / (reps * (double)(ntdp)) * 1e9); }
int main() {
  if (syscall(SYS_arch_prctl, 0x1023, 18)) return perror("arch_prctl"), 1;
  Cfg c; memset(&c, 0, sizeof c); c.p = 1; for (int t = 0; t < 8; ++t) { c.colsb[t] = 64; c.rows[t] = 16; }
  __asm__ __volatile__("ldtilecfg %0" ::"m"(c));
  A = (char*)aligned_alloc(4096, 32 * 1024); B = (char*)aligned_alloc(4096, 16 * 1024);
  for (int i = 0; i < 32 * 1024; ++i) A[i] = (char)(rand() & 0x3f);  // small bf16 values, no zeros
  for (int i = 0; i < 16 * 1024; ++i) B[i] = (char)(rand() & 0x3f);
  BL = (char*)aligned_alloc(4096, 256 * 1024);
  for (int i = 0; i < 256 * 1024; ++i) BL[i] = (char)(rand() & 0x3f);
  const long reps = 400000;
  for (int round = 0; round < 2; ++round) {
    printf("round %d, tdp only (operands loaded once, random data):\n", round);
    L(3, A); L(4, A + 1024); L(5, A + 2048); L(6, B); L(7, B + 1024); L(2, A + 3072);
    RUN("T1 4 chains, B alternating (2x2 order)", 4, { D(0,4,6); D(1,4,7); D(2,5,6); D(3,5,7); })
    RUN("T3 3 chains, all share B (3x1 order)", 3, { D(0,3,6); D(1,4,6); D(2,5,6); })
    RUN("T4 3 chains, B alternating", 6, { D(0,3,6); D(1,4,7); D(2,5,6); D(0,3,7); D(1,4,6); D(2,5,7); })
    L(2, A + 3072);
    RUN("T5 2 chains, share B", 2, { D(0,4,6); D(1,5,6); })
    RUN("T6 2 chains, B alternating", 2, { D(0,4,6); D(1,5,7); })
    RUN("T7 1 chain", 1, { D(0,4,6); })
    printf(" with loads from L1 (8 steps of distinct tiles):\n");
    RUN("S1 3x1 shipped", 24, { for (int s = 0; s < 8; ++s) { L(6, B + s * 1024); L(3, A + s * 1024); L(4, A + (8 + s) * 1024); L(5, A + (16 + s) * 1024); D(0,3,6); D(1,4,6); D(2,5,6); } })
    RUN("S2 2x2 shipped", 32, { for (int s = 0; s < 8; ++s) { L(4, A + s * 1024); L(6, B + s * 1024); L(5, A + (8 + s) * 1024); L(7, B + (8 + s) * 1024); D(0,4,6); D(1,4,7); D(2,5,6); D(3,5,7); } })
    RUN("S3 2x1 double-buffered (C0,1; A2,3 B4 | A5,6 B7)", 16, { for (int s = 0; s < 8; s += 2) {
        L(2, A + s * 1024); L(3, A + (8 + s) * 1024); L(4, B + s * 1024);
        L(5, A + (s + 1) * 1024); L(6, A + (9 + s) * 1024); L(7, B + (s + 1) * 1024);
        D(0,2,4); D(1,3,4); D(0,5,7); D(1,6,7); } })
    RUN("S4 3x1, B in tmm6/tmm7 alternating per step", 24, { for (int s = 0; s < 8; s += 2) {
        L(6, B + s * 1024); L(3, A + s * 1024); L(4, A + (8 + s) * 1024); L(5, A + (16 + s) * 1024); D(0,3,6); D(1,4,6); D(2,5,6);
        L(7, B + (s + 1) * 1024); L(3, A + (s + 1) * 1024); L(4, A + (9 + s) * 1024); L(5, A + (17 + s) * 1024); D(0,3,7); D(1,4,7); D(2,5,7); } })
    RUN("S5 2x2, A fixed, B loads only", 32, { for (int s = 0; s < 8; ++s) { L(6, B + s * 1024); L(7, B + (8 + s) * 1024); D(0,4,6); D(1,4,7); D(2,5,6); D(3,5,7); } })
    RUN("S6 2x2, loads of next step's A/B after last use", 32, { L(4, A); L(6, B); L(5, A + 8192); L(7, B + 8192);
        for (int s = 0; s < 8; ++s) { int n = (s + 1) & 7; D(0,4,6); D(1,4,7); L(4, A + n * 1024); D(2,5,6); L(6, B + n * 1024); D(3,5,7); L(5, A + (8 + n) * 1024); L(7, B + (8 + n) * 1024); } })
    RUN("S7 2x2, loads interleaved with products", 32, { for (int s = 0; s < 8; ++s) { L(4, A + s * 1024); L(6, B + s * 1024); D(0,4,6);
        L(7, B + (8 + s) * 1024); D(1,4,7); L(5, A + (8 + s) * 1024); D(2,5,6); D(3,5,7); } })
    RUN("S8 3x1, loads interleaved with products", 24, { for (int s = 0; s < 8; ++s) { L(6, B + s * 1024); L(3, A + s * 1024); D(0,3,6);
        L(4, A + (8 + s) * 1024); D(1,4,6); L(5, A + (16 + s) * 1024); D(2,5,6); } })
    RUN("S9 3x1, next step's A after last use", 24, { L(3, A); L(4, A + 8192); L(5, A + 16384);
        for (int s = 0; s < 8; ++s) { int n = (s + 1) & 7; L(6, B + s * 1024); D(0,3,6); L(3, A + n * 1024); D(1,4,6); L(4, A + (8 + n) * 1024);
        D(2,5,6); L(5, A + (16 + n) * 1024); } })
    RUN("S10 3x1, B tmm6/7 alt + next A after use", 24, { L(3, A); L(4, A + 8192); L(5, A + 16384); L(6, B);
        for (int s = 0; s < 8; s += 2) { L(7, B + (s + 1) * 1024); D(0,3,6); L(3, A + (s + 1) * 1024); D(1,4,6); L(4, A + (9 + s) * 1024); D(2,5,6); L(5, A + (17 + s) * 1024);
        L(6, B + ((s + 2) & 7) * 1024); D(0,3,7); L(3, A + ((s + 2) & 7) * 1024); D(1,4,7); L(4, A + (8 + ((s + 2) & 7)) * 1024); D(2,5,7); L(5, A + (16 + ((s + 2) & 7)) * 1024); } })
    printf(" B from a 256 KiB buffer (L2), A from L1:\n");
    RUN("L1 3x1 shipped, B in L2", 24, { const char* Bb = BL + (r & 31) * 8192; for (int s = 0; s < 8; ++s) { L(6, Bb + s * 1024); L(3, A + s * 1024); L(4, A + (8 + s) * 1024); L(5, A + (16 + s) * 1024); D(0,3,6); D(1,4,6); D(2,5,6); } })
    RUN("L2 2x2 shipped, B in L2", 32, { const char* Bb = BL + (r & 15) * 16384; for (int s = 0; s < 8; ++s) { L(4, A + s * 1024); L(6, Bb + s * 1024); L(5, A + (8 + s) * 1024); L(7, Bb + (8 + s) * 1024); D(0,4,6); D(1,4,7); D(2,5,6); D(3,5,7); } })
    RUN("L3 2x2 interleaved (S7), B in L2", 32, { const char* Bb = BL + (r & 15) * 16384; for (int s = 0; s < 8; ++s) { L(4, A + s * 1024); L(6, Bb + s * 1024); D(0,4,6);
        L(7, Bb + (8 + s) * 1024); D(1,4,7); L(5, A + (8 + s) * 1024); D(2,5,6); D(3,5,7); } })
    RUN("L4 3x1 next A after use (S9), B in L2", 24, { const char* Bb = BL + (r & 31) * 8192; L(3, A); L(4, A + 8192); L(5, A + 16384);
        for (int s = 0; s < 8; ++s) { int n = (s + 1) & 7; L(6, Bb + s * 1024); D(0,3,6); L(3, A + n * 1024); D(1,4,6); L(4, A + (8 + n) * 1024);
        D(2,5,6); L(5, A + (16 + n) * 1024); } })
    RUN("L5 3x1 B alt + next A (S10), B in L2", 24, { const char* Bb = BL + (r & 31) * 8192; L(3, A); L(4, A + 8192); L(5, A + 16384); L(6, Bb);
        for (int s = 0; s < 8; s += 2) { L(7, Bb + (s + 1) * 1024); D(0,3,6); L(3, A + (s + 1) * 1024); D(1,4,6); L(4, A + (9 + s) * 1024); D(2,5,6); L(5, A + (17 + s) * 1024);
        L(6, Bb + ((s + 2) & 7) * 1024); D(0,3,7); L(3, A + ((s + 2) & 7) * 1024); D(1,4,7); L(4, A + (8 + ((s + 2) & 7)) * 1024); D(2,5,7); L(5, A + (16 + ((s + 2) & 7)) * 1024); } })
  }
  __asm__ __volatile__("tilerelease");
}
