/* One variant of the bench kernel's block loop (bench/cpu_gemm.py, bf16 2048^3 with 512 x 512 x 256
 * blocks: 16 blocks of 8 tl::cpu::gemm calls on a 64-byte aligned C_local, then the streamed
 * copy-out), built against one include/ tree into a shared object that driver.cc loads. Several
 * variants (another gemm.h, -DLDC=512 for the dense C_local, -DINT8 for the int8 kernel with
 * 512 x 512 x 512 blocks) run interleaved in one process, so header changes can be compared in
 * paired rounds by thread CPU time. Build and run: see run.sh. */
#include <stdint.h>
#include <stdlib.h>

#include "tl/cpu/gemm.h"
#include "tl/cpu/runtime.h"
#include "tl/cpu/stream.h"
#include "tl/cpu/types.h"

/* -DBM=1024 / -DBN=1024: other block shapes (the whole 2048 x 2048 product as one block: a bound on
 * what coarser blocks could give). */
#ifndef BM
#define BM 512
#endif
#ifndef BN
#define BN 512
#endif
#ifndef LDC
#define LDC (BN + 16)  // the row stride pad_gemm_accumulators gives a 512-wide fp32 / int32 C_local
#endif
/* -DBK_CALL_INT8=2048 / -DBK_CALL_BF16=2048: one GEMM over all of k per block, as the k-loop fusion
 * makes of TileLang's example blocks after coarsen_gemm_blocks (eighteenth session). */
#ifndef BK_CALL_INT8
#define BK_CALL_INT8 512
#endif
#ifndef BK_CALL_BF16
#define BK_CALL_BF16 256
#endif
#if defined(INT8)
typedef int8_t In;
typedef int32_t Acc;
constexpr int BK = BK_CALL_INT8;
#elif defined(F32)  // fp32: the k loop is fused into one GEMM over all of k (forward_gemm_operands)
typedef float In;
typedef float Acc;
constexpr int BK = 2048;
#else
typedef tl::cpu::bfloat16_t In;
typedef float Acc;
constexpr int BK = BK_CALL_BF16;
#endif
constexpr int N = 2048;
static_assert(N % BK == 0, "the k depth per call divides 2048");
#ifndef REUSE_B  // -DREUSE_B=false: B packed per call, as a kernel whose B the lowering cannot prove unwritten
#define REUSE_B true
#endif
#ifdef TL_CPU_GEMM_HAS_PACK_CACHE  // headers with the packed-B cache (older ones: B packed per call)
#define BEGIN_LAUNCH() tl::cpu::gemm_begin_launch(REUSE_B)
#define END_LAUNCH(t) tl::cpu::gemm_end_launch(t)
#define LAUNCH_ARG , launch
#else
#define BEGIN_LAUNCH() 0
#define END_LAUNCH(t) (void)(t)
#define LAUNCH_ARG
#endif

extern "C" __attribute__((visibility("default"))) void run(const void* a, const void* b, void* c) {
  const In* A = static_cast<const In*>(a);
  const In* B = static_cast<const In*>(b);
  Acc* C = static_cast<Acc*>(c);
  const uint64_t launch = BEGIN_LAUNCH();  // as a kernel entry does before each grid launch
  (void)launch;
  for (int blk = 0; blk < (N / BM) * (N / BN); ++blk) {
    int64_t bx, by;
    tl::cpu::rasterize2d(blk, N / BN, N / BM, 4, true, &bx, &by);
    Acc* cl = static_cast<Acc*>(aligned_alloc(64, sizeof(Acc) * BM * LDC));
    for (int k = 0; k < N / BK; ++k)
      tl::cpu::gemm<BM, BN, BK, false, false>(A + by * BM * N + k * BK, N, B + int64_t(k) * BK * N + bx * BN, N, cl,
                                              LDC, k == 0 LAUNCH_ARG);
    for (int i = 0; i < BM; ++i) tl::cpu::copy_stream(C + (by * BM + i) * N + bx * BN, cl + i * LDC, int64_t(BN));
    tl::cpu::store_fence();
    free(cl);
  }
  END_LAUNCH(launch);
}
