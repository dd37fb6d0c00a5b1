// ldmatrix / stmatrix: a warp moves 8x8 matrices of 16-bit elements between shared memory and
// registers. For .x1/.x2/.x4, threads 0-7 / 0-15 / 0-31 supply the row addresses (8 threads per
// matrix, row r of matrix m from thread 8*m + r); every row is 16 contiguous, 16-byte aligned
// bytes. Thread t receives, per matrix m, the 32-bit register holding row t/4, columns
// 2*(t%4) and 2*(t%4)+1 (with .trans: column t/4, rows 2*(t%4) and 2*(t%4)+1).
#pragma once

#include "tl/cuda/common.h"

namespace tl {

TL_DEVICE void ldmatrix_x1(uint32_t* r, const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(smem_addr(smem))
               : "memory");
}
TL_DEVICE void ldmatrix_x2(uint32_t* r, const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(smem))
               : "memory");
}
TL_DEVICE void ldmatrix_x4(uint32_t* r, const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem))
               : "memory");
}
TL_DEVICE void ldmatrix_x1_trans(uint32_t* r, const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(smem_addr(smem))
               : "memory");
}
TL_DEVICE void ldmatrix_x2_trans(uint32_t* r, const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(smem))
               : "memory");
}
TL_DEVICE void ldmatrix_x4_trans(uint32_t* r, const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem))
               : "memory");
}

// Dispatch on the matrix count and transposition, for generated code.
template <int kNum, bool kTrans>
TL_DEVICE void ldmatrix(uint32_t* r, const void* smem) {
  static_assert(kNum == 1 || kNum == 2 || kNum == 4, "ldmatrix loads 1, 2 or 4 matrices");
  if (kNum == 1) {
    if (kTrans) ldmatrix_x1_trans(r, smem); else ldmatrix_x1(r, smem);
  } else if (kNum == 2) {
    if (kTrans) ldmatrix_x2_trans(r, smem); else ldmatrix_x2(r, smem);
  } else {
    if (kTrans) ldmatrix_x4_trans(r, smem); else ldmatrix_x4(r, smem);
  }
}

#if TL_ARCH >= 900
// stmatrix (sm_90+): the inverse of ldmatrix.
TL_DEVICE void stmatrix_x1(void* smem, const uint32_t* r) {
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(smem_addr(smem)), "r"(r[0]) : "memory");
}
TL_DEVICE void stmatrix_x2(void* smem, const uint32_t* r) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" ::"r"(smem_addr(smem)), "r"(r[0]),
               "r"(r[1])
               : "memory");
}
TL_DEVICE void stmatrix_x4(void* smem, const uint32_t* r) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(smem_addr(smem)), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}
// The warp's 8 registers r[0..7] per lane as four 8x8 matrices of D (pair p = r[2p], r[2p + 1],
// converted and packed, in matrix p); `smem` is this lane's row address (lane 8 m + i: row i of
// matrix m). The fragment -> shared copies of mma / wgmma accumulators (src/target/cuda/cuda_copy.cc).
template <typename D, typename S>
TL_DEVICE void stmatrix_x4_cast(D* smem, const S* r) {
  static_assert(sizeof(D) == 2, "stmatrix moves 16-bit elements");
  uint32_t p[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    alignas(4) D pair[2] = {static_cast<D>(r[2 * i]), static_cast<D>(r[2 * i + 1])};
    p[i] = *reinterpret_cast<const uint32_t*>(pair);
  }
  stmatrix_x4(smem, p);
}
TL_DEVICE void stmatrix_x4_trans(void* smem, const uint32_t* r) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(smem_addr(smem)),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}
#endif

}  // namespace tl
