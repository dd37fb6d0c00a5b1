/* How fast one core writes a 256 MiB output in 16 KiB pieces from an L1-resident block (RMSNorm's
 * Y rows: 4 x 1024 floats a block), by four store paths: AVX-512 stores (a fused loop's stores:
 * each line is read for ownership first), `rep movsb` (what glibc's memcpy uses at these sizes:
 * on Intel cores with ERMS it may write whole lines without that read), memcpy itself, and
 * non-temporal stores (tl::cpu::copy_stream). Eighteenth session (docs/PERFORMANCE.md): a probe for
 * why the fused fp32 RMSNorm ran slower than the unfused one (whose copy-out GCC turns into memcpy)
 * on the Emerald Rapids Xeon but faster on Zen 4.
 *   g++ -O2 -mavx512f bench/cpu_store_paths/store_paths.cc -o /tmp/store_paths && taskset -c 1 /tmp/store_paths */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main() {  // GB/s written, three repetitions
  const size_t N = size_t(256) << 20, C = 16384;
  char* dst = (char*)aligned_alloc(4096, N); memset(dst, 1, N);
  alignas(64) static char src[C]; memset(src, 2, C);
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now();
    for (size_t o = 0; o < N; o += C)
      for (size_t i = 0; i < C; i += 64) _mm512_storeu_ps((float*)(dst + o + i), _mm512_load_ps((float*)(src + i)));
    double t1 = now();
    for (size_t o = 0; o < N; o += C) { void* d = dst + o; const void* s = src; size_t n = C; __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) :: "memory"); }
    double t2 = now();
    for (size_t o = 0; o < N; o += C) memcpy(dst + o, src, C);
    double t3 = now();
    for (size_t o = 0; o < N; o += C)
      for (size_t i = 0; i < C; i += 64) _mm512_stream_ps((float*)(dst + o + i), _mm512_load_ps((float*)(src + i)));
    _mm_sfence();
    double t4 = now();
    printf("GB/s  vmovups %.1f  rep movsb %.1f  memcpy %.1f  vmovntps %.1f\n", N / (t1 - t0) / 1e9, N / (t2 - t1) / 1e9, N / (t3 - t2) / 1e9, N / (t4 - t3) / 1e9);
  }
}
