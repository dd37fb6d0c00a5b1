/* Tile GEMM for kernels emitted for the cpu target: C (+)= op(A) * op(B) on one block's tiles.
 *
 * The cpu lowering of T.gemm with compile-time M, N, K calls this function; shapes that are only
 * known at run time use the loop form of src/op/gemm.cc instead. It is the single place to make
 * cpu GEMM fast (AVX-512 / AMX micro-kernels can replace the body without touching the compiler).
 *
 * Numerics: products and sums in the accumulator type (float for float/half/bfloat16/fp8 C,
 * int32 for int32 C, double for double C); C's old value is the starting point unless `clear`;
 * k runs in increasing order, as in the loop form. */
#ifndef TL_CPU_GEMM_H_
#define TL_CPU_GEMM_H_

#include <stdint.h>

#include "tl/cpu/types.h"

namespace tl {
namespace cpu {

/* Row-major A is [M, K] (TRANS_A: [K, M]), B is [K, N] (TRANS_B: [N, K]), C is [M, N]; each with
 * unit stride in its last dimension and the given leading dimension (elements). */
template <int M, int N, int K, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void gemm(const TA* A, int64_t lda, const TB* B, int64_t ldb, TC* C, int64_t ldc, bool clear) {
  typedef typename compute_type<TC>::type Acc;
  /* B is converted to Acc (and transposed to [K, N]) once per call when it is not already in that
   * form, so the inner loop is a contiguous multiply-add over j that the compiler vectorizes. */
  constexpr bool kPackB = TRANS_B || !same_type<TB, Acc>::value;
  constexpr bool kPackFits = static_cast<int64_t>(K) * N * sizeof(Acc) <= 256 * 1024;
  constexpr int kJBlock = N < 512 ? N : 512;

  alignas(64) Acc packed[(kPackB && kPackFits) ? K * N : 1];
  if (kPackB && kPackFits) {
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j)
        packed[k * N + j] = static_cast<Acc>(TRANS_B ? B[j * ldb + k] : B[k * ldb + j]);
  }

  for (int j0 = 0; j0 < N; j0 += kJBlock) {
    const int jn = (N - j0) < kJBlock ? (N - j0) : kJBlock;
    for (int i = 0; i < M; ++i) {
      alignas(64) Acc acc[kJBlock];
      TC* c_row = C + i * ldc + j0;
      for (int j = 0; j < jn; ++j) acc[j] = clear ? Acc(0) : static_cast<Acc>(c_row[j]);
      for (int k = 0; k < K; ++k) {
        const Acc a = static_cast<Acc>(TRANS_A ? A[k * lda + i] : A[i * lda + k]);
        if (kPackB && kPackFits) {
          const Acc* b_row = packed + k * N + j0;
#pragma GCC ivdep
          for (int j = 0; j < jn; ++j) acc[j] += a * b_row[j];
        } else if (!kPackB) {
          const TB* b_row = B + k * ldb + j0;
#pragma GCC ivdep
          for (int j = 0; j < jn; ++j) acc[j] += a * static_cast<Acc>(b_row[j]);
        } else {
          for (int j = 0; j < jn; ++j)
            acc[j] += a * static_cast<Acc>(TRANS_B ? B[(j0 + j) * ldb + k] : B[k * ldb + j0 + j]);
        }
      }
      for (int j = 0; j < jn; ++j) c_row[j] = TC(acc[j]);
    }
  }
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_GEMM_H_
