// Block-level GEMM on mma.sync: C[M, N] += op(A) op(B), for the generated code of T.gemm.
//
// The warps split C as src/layout/mma_layout.h says (make_mma_c_fragment): warp
// w = wm * kWarpsN + wn owns rows [wm * M / kWarpsM, ...) and columns [wn * N / kWarpsN, ...);
// inside a warp, tile (mt, nt) of 16 x 8 holds its 4 accumulators at C[4 * (nt + kNT * mt)], in
// the order of the instruction's D registers. A and B operands held in registers follow
// make_mma_a_fragment / make_mma_b_fragment. The compiler side (src/op/cuda_gemm.cc) and this
// header must agree on that numbering; tests/python/cuda check it on the GPU.
//
// Shared-memory operands are tiles with kCols elements per row, row-major or XOR-swizzled exactly
// as src/layout/swizzle.cc defines it (tile_offset below). 16-bit operands are loaded with
// ldmatrix (x4, .trans where the stored rows run along K; see load_a / load_b); other types element
// by element following the PTX fragment tables. float operands use 3xTF32 (see split_tf32).
#pragma once

#include "tl/cuda/ldmatrix.h"
#include "tl/cuda/mma.h"

namespace tl {

// K of one mma.sync for an operand type: 16 (16-bit), 8 (tf32), 32 (8-bit).
template <typename T>
struct mma_k_of {
  enum : int { value = sizeof(T) == 2 ? 16 : sizeof(T) == 4 ? 8 : 32 };
};

// Element offset of (row, col) in a shared tile with kCols elements per row.
template <typename T, int kCols, bool kSwizzled>
TL_DEVICE int tile_offset(int row, int col) {
  if constexpr (!kSwizzled) {
    return row * kCols + col;
  } else {
    constexpr int kRowBytes = kCols * int(sizeof(T));
    constexpr int kChunk = 16 / int(sizeof(T));
    if constexpr (kRowBytes % 128 == 0) {
      return row * kCols + (col ^ ((row & 7) * kChunk));
    } else {
      constexpr int kPhaseElems = 128 / int(sizeof(T));
      const int flat = row * kCols + col;
      return flat ^ (((flat / kPhaseElems) & 7) * kChunk);
    }
  }
}

namespace gemm_detail {

// Packs operand elements into one 32-bit register as mma.sync expects. float operands keep their
// full bits here: split_tf32 turns them into a big and a small tf32 part before the mma.
template <typename T>
TL_DEVICE uint32_t pack_reg(const T* e) {
  if constexpr (sizeof(T) == 4) {
    return __float_as_uint(static_cast<float>(e[0]));
  } else {
    uint32_t r = 0;
    memcpy(&r, e, 4);
    return r;
  }
}

// One 16 x kK tile of A at (m0, k0), from shared memory. kTrans: A is stored [K][M].
template <typename T, int kCols, bool kSwz, bool kTrans>
TL_DEVICE void load_a(uint32_t* a, const T* smem, int m0, int k0, int lane) {
  if constexpr (sizeof(T) == 2) {
    if constexpr (!kTrans) {
      ldmatrix<4, false>(a, smem + tile_offset<T, kCols, kSwz>(m0 + (lane & 15), k0 + (lane >> 4) * 8));
    } else {
      const int q = lane >> 3;
      ldmatrix<4, true>(a, smem + tile_offset<T, kCols, kSwz>(k0 + 8 * (q >> 1) + (lane & 7), m0 + 8 * (q & 1)));
    }
  } else {
    constexpr int kP = 4 / int(sizeof(T));  // elements per register
    const int g = lane >> 2, tg = lane & 3;
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      T e[kP];
#pragma unroll
      for (int i = 0; i < kP; ++i) {
        const int row = m0 + g + 8 * (p & 1), col = k0 + tg * kP + i + 4 * kP * (p >> 1);
        e[i] = kTrans ? smem[tile_offset<T, kCols, kSwz>(col, row)] : smem[tile_offset<T, kCols, kSwz>(row, col)];
      }
      a[p] = pack_reg(e);
    }
  }
}

// One kK x 8 tile of B at (k0, n0), element by element. kTrans: B is stored [N][K].
template <typename T, int kCols, bool kSwz, bool kTrans>
TL_DEVICE void load_b_elems(uint32_t* b, const T* smem, int k0, int n0, int lane) {
  constexpr int kP = 4 / int(sizeof(T));
  const int g = lane >> 2, tg = lane & 3;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    T e[kP];
#pragma unroll
    for (int i = 0; i < kP; ++i) {
      const int k = k0 + tg * kP + i + 4 * kP * p, n = n0 + g;
      e[i] = kTrans ? smem[tile_offset<T, kCols, kSwz>(n, k)] : smem[tile_offset<T, kCols, kSwz>(k, n)];
    }
    b[p] = pack_reg(e);
  }
}

// The kNT tiles of B a warp needs at k0 (columns n0, n0 + 8, ...): two tiles per ldmatrix.x4.
template <typename T, int kNT, int kCols, bool kSwz, bool kTrans>
TL_DEVICE void load_b(uint32_t (*b)[2], const T* smem, int k0, int n0, int lane) {
  if constexpr (sizeof(T) == 2) {
#pragma unroll
    for (int nt = 0; nt + 1 < kNT; nt += 2) {
      uint32_t r[4];
      const int n = n0 + 8 * nt;
      if constexpr (kTrans) {
        ldmatrix<4, false>(r, smem + tile_offset<T, kCols, kSwz>(n + (lane & 7) + 8 * (lane >> 4),
                                                                 k0 + 8 * ((lane >> 3) & 1)));
      } else {
        const int q = lane >> 3;
        ldmatrix<4, true>(r, smem + tile_offset<T, kCols, kSwz>(k0 + (lane & 7) + 8 * (q & 1), n + 8 * (q >> 1)));
      }
      b[nt][0] = r[0];
      b[nt][1] = r[1];
      b[nt + 1][0] = r[2];
      b[nt + 1][1] = r[3];
    }
    if constexpr (kNT % 2 == 1) {
      const int n = n0 + 8 * (kNT - 1);
      const int l = lane & 15;  // .x2 reads the addresses of lanes 0-15
      if constexpr (kTrans) {
        ldmatrix<2, false>(b[kNT - 1], smem + tile_offset<T, kCols, kSwz>(n + (l & 7), k0 + 8 * (l >> 3)));
      } else {
        ldmatrix<2, true>(b[kNT - 1], smem + tile_offset<T, kCols, kSwz>(k0 + (l & 7) + 8 * (l >> 3), n));
      }
    }
  } else {
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) load_b_elems<T, kCols, kSwz, kTrans>(b[nt], smem, k0, n0 + 8 * nt, lane);
  }
}

// float GEMM in "3xTF32": x = big + small with both parts tf32; a*b is accumulated as
// big_a*small_b + small_a*big_b + big_a*big_b, which is as accurate as fp32 FFMA for GEMM purposes
// (plain tf32 keeps 10 mantissa bits, a relative error near 1e-3 per product).
template <int kN>
TL_DEVICE void split_tf32(const uint32_t* raw, uint32_t* big, uint32_t* small) {
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    const float x = __uint_as_float(raw[i]);
    big[i] = f32_to_tf32(x);
    small[i] = f32_to_tf32(x - __uint_as_float(big[i]));
  }
}

// c (4 accumulators of one 16 x 8 tile) += a * b.
template <typename AT, typename BT>
TL_DEVICE void mma_acc(float* c, const uint32_t* a, const uint32_t* b) {
  if constexpr (is_same<AT, half_t>::value) {
    mma_m16n8k16_f16f16f32(c, a, b, c);
  } else if constexpr (is_same<AT, bfloat16_t>::value) {
    mma_m16n8k16_bf16bf16f32(c, a, b, c);
  } else if constexpr (is_same<AT, float>::value) {
    uint32_t ab[4], as[4], bb[2], bs[2];
    split_tf32<4>(a, ab, as);
    split_tf32<2>(b, bb, bs);
    mma_m16n8k8_tf32tf32f32(c, ab, bs, c);
    mma_m16n8k8_tf32tf32f32(c, as, bb, c);
    mma_m16n8k8_tf32tf32f32(c, ab, bb, c);
#if TL_ARCH >= 890
  } else if constexpr (is_same<AT, fp8_e4m3_t>::value) {
    mma_m16n8k32_e4m3e4m3f32(c, a, b, c);
  } else if constexpr (is_same<AT, fp8_e5m2_t>::value) {
    mma_m16n8k32_e5m2e5m2f32(c, a, b, c);
#endif
  } else {
    static_assert(sizeof(AT) == 0, "no float-accumulating mma.sync for this operand type");
  }
}
template <typename AT, typename BT>
TL_DEVICE void mma_acc(int32_t* c, const uint32_t* a, const uint32_t* b) {
  if constexpr (is_same<AT, int8_t>::value) {
    mma_m16n8k32_s8s8s32(c, a, b, c);
  } else {
    mma_m16n8k32_u8u8s32(c, a, b, c);
  }
}
template <typename AT, typename BT>
TL_DEVICE void mma_acc(half_t* c, const uint32_t* a, const uint32_t* b) {
  uint32_t acc[2];
  memcpy(acc, c, 8);
  mma_m16n8k16_f16f16f16(acc, a, b, acc);
  memcpy(c, acc, 8);
}

template <typename T>
TL_DEVICE void pack_regs(uint32_t* out, const T* e) {
  constexpr int kP = 4 / int(sizeof(T));
#pragma unroll
  for (int p = 0; p < 4; ++p) out[p] = pack_reg(e + p * kP);
}

}  // namespace gemm_detail

// A and B in shared memory.
template <int M, int N, int K, int kWarpsM, int kWarpsN, bool kTransA, bool kTransB, bool kSwzA, bool kSwzB,
          int kColsA, int kColsB, typename AT, typename BT, typename CT>
TL_DEVICE void gemm_ss(const AT* A, const BT* B, CT* C) {
  constexpr int kK = mma_k_of<AT>::value;
  constexpr int kMT = M / kWarpsM / 16, kNT = N / kWarpsN / 8;
  static_assert(M % (16 * kWarpsM) == 0 && N % (8 * kWarpsN) == 0 && K % kK == 0, "gemm tile does not split");
  const int tid = static_cast<int>(thread_linear()), warp = tid >> 5, lane = tid & 31;
  if (warp >= kWarpsM * kWarpsN) return;
  const int m0 = (warp / kWarpsN) * (M / kWarpsM), n0 = (warp % kWarpsN) * (N / kWarpsN);
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += kK) {
    uint32_t a[kMT][4], b[kNT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) gemm_detail::load_a<AT, kColsA, kSwzA, kTransA>(a[mt], A, m0 + 16 * mt, k0, lane);
    gemm_detail::load_b<BT, kNT, kColsB, kSwzB, kTransB>(b, B, k0, n0, lane);
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) gemm_detail::mma_acc<AT, BT>(C + 4 * (nt + kNT * mt), a[mt], b[nt]);
  }
}

// A in registers (the layout of make_mma_a_fragment: tile (mt, kt) at A[(kt + KT * mt) * kK / 2]),
// B in shared memory.
template <int M, int N, int K, int kWarpsM, int kWarpsN, bool kTransB, bool kSwzB, int kColsB, typename AT,
          typename BT, typename CT>
TL_DEVICE void gemm_rs(const AT* A, const BT* B, CT* C) {
  constexpr int kK = mma_k_of<AT>::value;
  constexpr int kMT = M / kWarpsM / 16, kNT = N / kWarpsN / 8, kKT = K / kK;
  static_assert(M % (16 * kWarpsM) == 0 && N % (8 * kWarpsN) == 0 && K % kK == 0, "gemm tile does not split");
  const int tid = static_cast<int>(thread_linear()), warp = tid >> 5, lane = tid & 31;
  if (warp >= kWarpsM * kWarpsN) return;
  const int n0 = (warp % kWarpsN) * (N / kWarpsN);
#pragma unroll
  for (int kt = 0; kt < kKT; ++kt) {
    uint32_t a[kMT][4], b[kNT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) gemm_detail::pack_regs(a[mt], A + (kt + kKT * mt) * (kK / 2));
    gemm_detail::load_b<BT, kNT, kColsB, kSwzB, kTransB>(b, B, kt * kK, n0, lane);
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) gemm_detail::mma_acc<AT, BT>(C + 4 * (nt + kNT * mt), a[mt], b[nt]);
  }
}

// A and B in registers (make_mma_a_fragment and make_mma_b_fragment layouts, as in gemm_rs and
// gemm_sr): TileLang's "rr" GEMM of two tiles copied from global memory into fragments.
template <int M, int N, int K, int kWarpsM, int kWarpsN, typename AT, typename BT, typename CT>
TL_DEVICE void gemm_rr(const AT* A, const BT* B, CT* C) {
  constexpr int kK = mma_k_of<AT>::value;
  constexpr int kMT = M / kWarpsM / 16, kNT = N / kWarpsN / 8, kKT = K / kK;
  constexpr int kP = 4 / int(sizeof(BT));
  static_assert(M % (16 * kWarpsM) == 0 && N % (8 * kWarpsN) == 0 && K % kK == 0, "gemm tile does not split");
  const int tid = static_cast<int>(thread_linear()), warp = tid >> 5;
  if (warp >= kWarpsM * kWarpsN) return;
#pragma unroll
  for (int kt = 0; kt < kKT; ++kt) {
    uint32_t a[kMT][4], b[kNT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) gemm_detail::pack_regs(a[mt], A + (kt + kKT * mt) * (kK / 2));
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) {
      const BT* e = B + (kt + kKT * nt) * (kK / 4);
      b[nt][0] = gemm_detail::pack_reg(e);
      b[nt][1] = gemm_detail::pack_reg(e + kP);
    }
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) gemm_detail::mma_acc<AT, BT>(C + 4 * (nt + kNT * mt), a[mt], b[nt]);
  }
}

// A in shared memory, B in registers (make_mma_b_fragment: tile (kt, nt) at B[(kt + KT * nt) * kK / 4]).
template <int M, int N, int K, int kWarpsM, int kWarpsN, bool kTransA, bool kSwzA, int kColsA, typename AT,
          typename BT, typename CT>
TL_DEVICE void gemm_sr(const AT* A, const BT* B, CT* C) {
  constexpr int kK = mma_k_of<AT>::value;
  constexpr int kMT = M / kWarpsM / 16, kNT = N / kWarpsN / 8, kKT = K / kK;
  constexpr int kP = 4 / int(sizeof(BT));
  static_assert(M % (16 * kWarpsM) == 0 && N % (8 * kWarpsN) == 0 && K % kK == 0, "gemm tile does not split");
  const int tid = static_cast<int>(thread_linear()), warp = tid >> 5, lane = tid & 31;
  if (warp >= kWarpsM * kWarpsN) return;
  const int m0 = (warp / kWarpsN) * (M / kWarpsM);
#pragma unroll
  for (int kt = 0; kt < kKT; ++kt) {
    uint32_t a[kMT][4], b[kNT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
      gemm_detail::load_a<AT, kColsA, kSwzA, kTransA>(a[mt], A, m0 + 16 * mt, kt * kK, lane);
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) {
      const BT* e = B + (kt + kKT * nt) * (kK / 4);
      b[nt][0] = gemm_detail::pack_reg(e);
      b[nt][1] = gemm_detail::pack_reg(e + kP);
    }
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) gemm_detail::mma_acc<AT, BT>(C + 4 * (nt + kNT * mt), a[mt], b[nt]);
  }
}

}  // namespace tl
