/* The fp32 multiply-add peak of one core: CHAINS independent chains of vector FMAs (acc = acc * a + b),
 * as many as the register file holds beside a and b, so that the loop is bound by the FMA units'
 * throughput, not by their latency. Built with -O2 -march=native by bench/common.py (fp32_fma_peak)
 * and bench/cpu_fp32_ceiling/run.py; the vector width follows the build's ISA (GCC vector extensions).
 *   tl_bench_fma_num_chains(), tl_bench_fma_lanes(): the loop's shape (2 * chains * lanes operations
 *                                   per iteration)
 *   tl_bench_fma_chains(n, x):      runs n iterations from acc[i] = x + i in every lane; returns the sum
 *                                   of all lanes (a check that every chain and lane ran n steps). */
#if defined(__AVX512F__)
constexpr int kBytes = 64, kChains = 28;  // 28 + 2 of 32 zmm
#elif defined(__AVX__)
constexpr int kBytes = 32, kChains = 12;  // 12 + 2 of 16 ymm
#else
constexpr int kBytes = 16, kChains = 12;
#endif
typedef float V __attribute__((vector_size(kBytes)));
constexpr int kLanes = kBytes / 4;

extern "C" int tl_bench_fma_num_chains() { return kChains; }
extern "C" int tl_bench_fma_lanes() { return kLanes; }

extern "C" double tl_bench_fma_chains(long n, float x) {
  V acc[kChains];
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i) acc[i] = V{} + (x + float(i));
  const V a = V{} + 0.999f, b = V{} + 1e-4f;
  for (long it = 0; it < n; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * a + b;  // one FMA each (-ffp-contract=fast)
  }
  double s = 0;
#pragma GCC unroll 32
  for (int i = 0; i < kChains; ++i)
    for (int l = 0; l < kLanes; ++l) s += acc[i][l];
  return s;
}
