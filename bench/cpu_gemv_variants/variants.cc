/* Decode GEMV variants (1 x 4096 x 4096 fp32, B row-major, C = A B) for bench/cpu_gemv_variants/run.py:
 * R rows of B per pass over a block of NB columns of C (C's block in L1), with an optional software
 * prefetch PFD floats ahead in each row stream (T0 or T1 hint; past the block's end it runs on into the
 * next pass's rows). R 8, NB 2048, no prefetch is what include/tl/cpu/gemm.h's gemv_rows does on Intel
 * hosts (TL_CPU_TUNE_INTEL). Eighteenth session, docs/PERFORMANCE.md. */
#include <immintrin.h>
#include <stdint.h>
constexpr int K = 4096, N = 4096;
template <int R, int NB, int PFD, int HINT>
static void gemv(const float* __restrict a, const float* __restrict b, float* __restrict c) {
  for (int j0 = 0; j0 < N; j0 += NB) {
    float* cc = c + j0;
    const float* bb = b + j0;
    for (int j = 0; j < NB; j += 16) _mm512_storeu_ps(cc + j, _mm512_setzero_ps());
    for (int kk = 0; kk < K; kk += R) {
      const float* r[R];
      __m512 s[R];
#pragma GCC unroll 16
      for (int q = 0; q < R; ++q) r[q] = bb + int64_t(kk + q) * N, s[q] = _mm512_set1_ps(a[kk + q]);
#pragma GCC unroll 2
      for (int j = 0; j < NB; j += 16) {
        if constexpr (PFD > 0) {
          const int t = j + PFD;
#pragma GCC unroll 16
          for (int q = 0; q < R; ++q) {
            const float* p = t < NB ? r[q] + t : r[q] + int64_t(R) * N + (t - NB);
            if (HINT == 3) _mm_prefetch((const char*)p, _MM_HINT_T0);
            else _mm_prefetch((const char*)p, _MM_HINT_T1);
          }
        }
        __m512 x = _mm512_loadu_ps(cc + j);
#pragma GCC unroll 16
        for (int q = 0; q < R; ++q) x = _mm512_fmadd_ps(_mm512_loadu_ps(r[q] + j), s[q], x);
        _mm512_storeu_ps(cc + j, x);
      }
    }
  }
}
#define V(name, ...) extern "C" __attribute__((visibility("default"))) void name(const float* a, const float* b, float* c) { gemv<__VA_ARGS__>(a, b, c); }
V(r8_2048, 8, 2048, 0, 0)
V(r8_4096, 8, 4096, 0, 0)
V(r8_2048_pf256t0, 8, 2048, 256, 3)
V(r8_2048_pf512t1, 8, 2048, 512, 2)
V(r8_4096_pf512t1, 8, 4096, 512, 2)
V(r8_4096_pf1024t1, 8, 4096, 1024, 2)
V(r4_4096_pf1024t1, 4, 4096, 1024, 2)
V(r16_4096_pf256t0, 16, 4096, 256, 3)
V(r4_4096, 4, 4096, 0, 0)
V(r2_4096_pf512t0, 2, 4096, 512, 3)
