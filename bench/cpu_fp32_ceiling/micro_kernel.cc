/* The shipped fp32 AVX-512 micro-kernel (include/tl/cpu/gemm.h, micro_kernel_packed: 14 x 32 block
 * of C in registers over 256 k steps) alone, as many calls as a 2048^3 GEMM's multiply-adds, its A
 * block and C block fixed (L1) and its B strip taken in turn from STRIPS packed strips of 32 KiB
 * (STRIPS=1: B in L1; 16: 512 KiB, from L2, as in the blocked driver). run(a, b, c) ignores its
 * arguments (the same entry as ../cpu_amx_blockloop/variant.cc, so run.py times both alike). */
#include <stdint.h>

#include "tl/cpu/gemm.h"

#ifndef STRIPS
#define STRIPS 16
#endif
namespace {
constexpr int kMR = 14, kNR = 32, kKC = 256, kAS = kKC + 16, kLdc = 528;
alignas(64) float a_block[kMR * kAS], b_strips[STRIPS * kKC * kNR], c_block[kMR * kLdc];
}  // namespace

extern "C" __attribute__((visibility("default"))) void run(const void*, const void*, void*) {
  const long calls = 2048L * 2048 * 2048 / (long(kMR) * kNR * kKC);
  for (long i = 0; i < calls; ++i)
    tl::cpu::gemm_impl::micro_kernel_packed<64, kMR, 2, kAS>(kKC, a_block, b_strips + (i % STRIPS) * kKC * kNR,
                                                             c_block, kLdc, true);
}
