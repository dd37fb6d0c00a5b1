/* The exp2 nest of the bf16 flash-attention KV step alone (128 x 128 scores, the acc_o rescale fused
 * as fuse_elementwise_loops leaves it): GCC's vectorization of the scalar tl::cpu::exp2 against the
 * explicit vector code that vectorize_math_loops has emitted (tl::cpu::vexp2), thread CPU time, best
 * of 7 runs of 2,000 nests each (docs/PERFORMANCE.md, thirteenth session).
 *   g++ -std=c++17 -O2 -march=native -mprefer-vector-width=512 -ftree-vectorize -fvect-cost-model=dynamic \
 *       -fno-math-errno -fno-trapping-math -ffp-contract=fast -Iinclude bench/cpu_flash_phases/exp2_nest.cc \
 *       -o /tmp/exp2_nest && /tmp/exp2_nest */
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "tl/cpu/math.h"

static double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
alignas(64) float acc_s[128 * 128], acc_o[128 * 128], smax[128], sscale[128];

__attribute__((noinline)) void nest_scalar() {  // as the kernel had it before the pass
  for (int32_t i = 0; i < 128; ++i) {
#pragma GCC ivdep
    for (int32_t j = 0; j < 128; ++j) {
      acc_s[i * 128 + j] = tl::cpu::exp2((acc_s[i * 128 + j] * 0.12751743f) - (smax[i] * 0.12751743f));
      acc_o[i * 128 + j] = acc_o[i * 128 + j] * sscale[i];
    }
  }
}

__attribute__((noinline)) void nest_vector() {  // as codegen_vector.cc emits it (without the rescale guard)
  typedef tl::cpu::f32x16 V;
  for (int32_t i = 0; i < 128; ++i) {
    for (int32_t j = 0; j < 128; j += 16) {
      tl::cpu::vstore(&acc_s[i * 128 + j],
                      tl::cpu::vexp2((tl::cpu::vload<V>(&acc_s[i * 128 + j]) * 0.12751743f) - (smax[i] * 0.12751743f)));
      tl::cpu::vstore(&acc_o[i * 128 + j], tl::cpu::vload<V>(&acc_o[i * 128 + j]) * sscale[i]);
    }
  }
}

int main() {
  double best[2] = {1e9, 1e9};
  for (int rep = 0; rep < 7; ++rep)
    for (int v = 0; v < 2; ++v) {
      for (int i = 0; i < 128 * 128; ++i) acc_s[i] = (rand() % 1000) * 0.01f, acc_o[i] = 1.0f;
      for (int i = 0; i < 128; ++i) smax[i] = 10.0f, sscale[i] = 1.0f;
      const double t0 = thread_seconds();
      for (int it = 0; it < 2000; ++it) v ? nest_vector() : nest_scalar();
      const double t = (thread_seconds() - t0) / 2000 / 1024 * 1e9;
      if (t < best[v]) best[v] = t;
    }
  std::printf("exp2 nest ns per 16 elements: scalar-vectorized %.2f, explicit %.2f (ratio %.3f)\n", best[0], best[1],
              best[0] / best[1]);
}
