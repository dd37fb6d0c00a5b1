/* The bench kernel's fp32 decode GEMM (bench/cpu_gemm.py "fp32 decode 16x4096x4096": 16 x 256 blocks
 * of C, the k loop fused into one tl::cpu::gemm<16, 256, 4096> call per block, C_local copied out),
 * built against one include/ tree with the -D knobs of one variant into a shared object that run.py
 * times against the others and the peers in one process. */
#include <stdint.h>
#include <string.h>

#include "tl/cpu/gemm.h"

#ifndef DM
#define DM 16
#endif
#ifndef DBN  // block columns (the bench kernel's 256)
#define DBN 256
#endif
constexpr int M = DM, N = 4096, K = 4096, BN = DBN;

extern "C" __attribute__((visibility("default"))) void run(const float* a, const float* b, float* c) {
  alignas(64) static thread_local float cl[M * BN];
  for (int bx = 0; bx < N / BN; ++bx) {
    tl::cpu::gemm<M, BN, K, false, false>(a, K, b + bx * BN, N, cl, BN, true);  // true: C starts from zero (the fused k loop's first call)
    for (int i = 0; i < M; ++i) memcpy(c + int64_t(i) * N + bx * BN, cl + i * BN, sizeof(float) * BN);
  }
}
