/* Tile GEMM for kernels emitted for the cpu target: C (+)= op(A) * op(B) on one block's tiles.
 *
 * The cpu lowering of T.gemm with compile-time M, N, K calls tl::cpu::gemm (shapes known only at
 * run time use the loop form of src/op/gemm.cc instead). It is built like a BLIS macro-kernel:
 *
 *   - a register-blocked micro-kernel keeps an MR x (NV vectors) block of C in registers while it
 *     runs over k: per k step NV vector loads of B, MR broadcasts of A, MR*NV multiply-adds
 *     (AVX-512: 6 x 64 floats in 24 zmm registers; AVX2: 6 x 16; portable: 4 x 8);
 *   - the macro loop walks C in column strips of NV vectors (the strip of B, k x NR, stays in L1
 *     while every MR-row block of A passes over it) and, inside a strip, in MR-row blocks; k is
 *     cut into chunks so that a strip takes at most 3/4 of the L1 data cache (size from cpuid);
 *   - A is read in place when it has the accumulator type and its rows are close (a shared-memory
 *     tile); B is packed into NR-wide column panels (converted, transposed, padded to whole
 *     vectors) in stack buffers of at most 128 KiB per call, in chunks of k when the tile is larger,
 *     except an fp32 B of whole vectors feeding fewer than 96 rows of C, which is read in place;
 *   - bfloat16 / int8 inputs use AMX tiles (tdpbf16ps / tdpbssd) when compiled for and granted;
 *     without AMX, vdpbf16ps / vpdpbusd in a blocked driver whose packed B a launch reuses across
 *     its calls when the kernel passes a launch token (gemm_begin_launch);
 *   - bfloat16 inputs with a float32 C use vdpbf16ps (AVX512_BF16) on pairs of k: B is packed as
 *     k-pairs interleaved per column, A's pairs are broadcast as one 32-bit word. float16 inputs
 *     of large calls (M N K >= 2^22) use the bfloat16 tiles where there is AMX-BF16, each value
 *     split into two bfloat16 (exact; four tile products per k, "float16 as two bfloat16" below);
 *     otherwise they are converted to float32 while packing (vcvtph2ps). AVX512_FP16's arithmetic
 *     accumulates in float16 and is not used.
 *
 * The instruction set tier is picked once per loaded kernel (tl/cpu/isa.h): AVX-512, AVX2+FMA or
 * the portable one (16-byte vectors), forced lower with TL_CPU_ISA=portable|avx2.
 *
 * Numerics: products and sums in the accumulator type (float for float/half/bfloat16/fp8 C,
 * int32 for int32 C, double for double C); C's old value is the starting point unless `clear`.
 * Every C element sums its k terms in increasing k order (one fused multiply-add each where the
 * machine has FMA), except the AVX512_BF16 path: vdpbf16ps adds the product of k+1 and then that
 * of k for each pair (both exact in float32) and treats bf16 subnormal inputs as zero, and the AMX
 * paths, which add each k's products (float16: the four partial products) in float32 as
 * tdpbf16ps does. */
#ifndef TL_CPU_GEMM_H_
#define TL_CPU_GEMM_H_
#define TL_CPU_GEMM_HAS_PACK_CACHE 1  // tl::cpu::gemm(..., clear, launch) and tl::cpu::gemm_begin_launch()

#include <stdint.h>
#include <stdlib.h>

#include "tl/cpu/isa.h"
#include "tl/cpu/types.h"
#include "tl/cpu/vec.h"

namespace tl {
namespace cpu {
namespace gemm_impl {

#ifndef TL_CPU_GEMM_PACK_BYTES
#define TL_CPU_GEMM_PACK_BYTES (128 * 1024)
#endif
/* Stack used for packed operands per gemm_acc call. 128 KiB holds a 128 x 128 x 128 bf16 product's A
 * and B (as float) in one k chunk: with 96 KiB they went in chunks of 96 + 32 (two passes over C), and
 * a Zen 3 core's bf16 flash-attention step ran 1.05x slower (docs/PERFORMANCE.md, 22nd session). */
constexpr int kPackBytes = TL_CPU_GEMM_PACK_BYTES;
constexpr int kTempCBytes = 64 * 1024;  // stack used for a converted C (non-accumulator C dtype)
/* A B that the micro-kernel could read in place is still packed into panels from this many rows of
 * C on: the copy pays for itself once enough row blocks reuse it (measured on an AVX-512 Xeon: +10%
 * at 256 x 256 x 64 and 96 x 256 x 64, -20% at 16 x 256 x 256, -5% at 64 x 256 x 128). */
#ifndef TL_CPU_GEMM_PACK_B_MIN_M
#define TL_CPU_GEMM_PACK_B_MIN_M 96
#endif
constexpr int kPackBMinM = TL_CPU_GEMM_PACK_B_MIN_M;
/* An fp32 A read in place whose rows are at least this many bytes apart (a tile of a global matrix,
 * which T.gemm reads directly when forward_gemm_operands dropped its copy) is copied row by row into
 * a compact buffer of at most kPackABytes first: the micro-kernel broadcasts from MR rows at once,
 * and rows 8 KiB apart share one L1 set (measured: 89 instead of 112 GFLOP/s at 2048^3). */
constexpr int64_t kDirectAMaxRowBytes = 1024;
constexpr int kPackABytes = 64 * 1024;

constexpr int cmin(int a, int b) { return a < b ? a : b; }
constexpr int cmax(int a, int b) { return a > b ? a : b; }
constexpr int round_up(int a, int b) { return (a + b - 1) / b * b; }

/* Register blocking per vector width: MR rows x NV vectors of accumulators, with NV registers for
 * B and one for the broadcast A value left over. */
template <int VB> struct Blocking;
template <> struct Blocking<64> { static constexpr int MR = 6, NV = 4; };  // 24 + 4 + 1 of 32 zmm
template <> struct Blocking<32> { static constexpr int MR = 6, NV = 2; };  // 12 + 2 + 1 of 16 ymm
template <> struct Blocking<16> { static constexpr int MR = 4, NV = 2; };  // 8 + 2 + 1 of 16 xmm

/* ---- micro-kernels ---------------------------------------------------------------------------
 * c[r][j] (+)= sum_k a[r * a_rs + k * a_ks] * b[k * b_ks + j] for r < MR, j < NV * lanes. */

template <typename Acc, int VB, int MR, int NV>
__attribute__((noinline)) void micro_kernel(int k, const Acc* __restrict a, int64_t a_rs, int64_t a_ks,
                                            const Acc* __restrict b, int64_t b_ks, Acc* __restrict c, int64_t ldc,
                                            bool load_c) {
  typedef typename vec<Acc, VB>::type V;
  constexpr int L = vec<Acc, VB>::kLanes;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[r][v] = load_c ? vload<V>(c + r * ldc + v * L) : V{};
#pragma GCC unroll 2
  for (int kk = 0; kk < k; ++kk) {
    V bv[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) bv[v] = vload<V>(b + kk * b_ks + v * L);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const Acc s = a[r * a_rs + kk * a_ks];
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] += bv[v] * s;
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) vstore(c + r * ldc + v * L, acc[r][v]);
}

/* The policy for plain multiply-adds in Acc: B columns are Acc elements. */
template <typename Acc, int VB> struct MulAddKernel {
  typedef Acc AType;
  typedef Acc BType;
  static constexpr int kLanes = vec<Acc, VB>::kLanes;
  static constexpr int kBPerColumn = 1;  // B elements per column in one k row of the micro-kernel
  static int64_t a_step(int64_t a_ks) { return a_ks; }  // A elements from one k to the next
  template <int MR, int NV>
  static void call(int k, const Acc* a, int64_t a_rs, int64_t a_ks, const Acc* b, int64_t b_ks, Acc* c, int64_t ldc,
                   bool load_c) {
    micro_kernel<Acc, VB, MR, NV>(k, a, a_rs, a_ks, b, b_ks, c, ldc, load_c);
  }
};

/* The last NT (< lanes) columns of C through a one-vector temporary; B is zero-padded there. */
template <typename Kernel, int R, typename Acc>
inline void tail_columns(int k, const typename Kernel::AType* a, int64_t a_rs, int64_t a_ks,
                         const typename Kernel::BType* b, int64_t b_ks, Acc* c, int64_t ldc, int nt, bool load_c) {
  constexpr int L = Kernel::kLanes;
  alignas(64) Acc tmp[R * L];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < L; ++j) tmp[r * L + j] = (load_c && j < nt) ? c[r * ldc + j] : Acc(0);
  Kernel::template call<R, 1>(k, a, a_rs, a_ks, b, b_ks, tmp, L, true);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < nt; ++j) c[r * ldc + j] = tmp[r * L + j];
}

/* The row blocks of M rows for MR-row micro-kernels: f(RowCount<R>{}, i0) for each block of R rows
 * from row i0, in order. M / MR full blocks, except that a remainder of fewer than MR / 2 rows is
 * merged with the last full block and the two run as halves (128 = 20 x 6 + 4 + 4 rather than 21 x 6
 * + 2: a 2-row block has too few accumulator chains to cover the multiply-add latency; in a Zen 3
 * flash step it ran at about 0.6 of the 6-row blocks' rate). */
template <int R> struct RowCount {
  static constexpr int value = R;
};
template <int M, int MR, typename F> __attribute__((always_inline)) inline void for_row_blocks(F f) {
  constexpr int MT = M % MR;
  constexpr bool kSplit = MT > 0 && 2 * MT < MR && M >= MR + MT;
  constexpr int MF = kSplit ? M - MR - MT : M - MT;  // rows in full blocks
  constexpr int R1 = kSplit ? (MR + MT + 1) / 2 : MT, R2 = kSplit ? MR + MT - R1 : 0;
  for (int i0 = 0; i0 < MF; i0 += MR) f(RowCount<MR>{}, i0);
  if constexpr (R1 > 0) f(RowCount<R1>{}, MF);
  if constexpr (R2 > 0) f(RowCount<R2>{}, MF + R1);
}

/* ---- macro loop over one k chunk --------------------------------------------------------------
 * C[M, N] (+)= A-chunk * B-chunk. Column strip s (NR = NV vectors wide) of B starts at b + s * b_ss
 * with rows b_ks apart: b_ss = NR * BC for B stored row by row (a row of the whole width is b_ks),
 * b_ss = k * NR for B packed in panels (each strip contiguous, b_ks = NR). B must be readable
 * (zero-padded) up to whole vectors; the last partial vector of C goes through a small temporary. */
template <typename Kernel, int VB, int M, int N, typename Acc>
inline void macro_chunk(int k, const typename Kernel::AType* a, int64_t a_rs, int64_t a_ks,
                       const typename Kernel::BType* b, int64_t b_ks, int64_t b_ss, Acc* c, int64_t ldc,
                       bool load_c) {
  constexpr int L = Kernel::kLanes, MR = Blocking<VB>::MR, NV = Blocking<VB>::NV, NR = NV * L;
  constexpr int NF = N / NR * NR;        // columns in full strips
  constexpr int NV2 = (N - NF) / L;      // whole vectors in the last strip
  constexpr int NT = N % L;              // columns of the last, partial vector
  constexpr int BC = Kernel::kBPerColumn;
  auto bcol = [&](int j) { return b + (j / NR) * b_ss + (j % NR) * BC; };  // B at column j
  for (int j0 = 0; j0 < NF; j0 += NR)
    for_row_blocks<M, MR>([&](auto rows, int i0) {
      Kernel::template call<decltype(rows)::value, NV>(k, a + i0 * a_rs, a_rs, a_ks, bcol(j0), b_ks, c + i0 * ldc + j0,
                                                      ldc, load_c);
    });
  if constexpr (NV2 > 0)
    for_row_blocks<M, MR>([&](auto rows, int i0) {
      Kernel::template call<decltype(rows)::value, NV2>(k, a + i0 * a_rs, a_rs, a_ks, bcol(NF), b_ks, c + i0 * ldc + NF,
                                                       ldc, load_c);
    });
  if constexpr (NT > 0) {
    constexpr int J0 = N - NT;
    for_row_blocks<M, MR>([&](auto rows, int i0) {
      tail_columns<Kernel, decltype(rows)::value>(k, a + i0 * a_rs, a_rs, a_ks, bcol(J0), b_ks, c + i0 * ldc + J0, ldc,
                                                  NT, load_c);
    });
  }
}

/* The macro loop in k chunks sized from the L1 data cache: the strip of B one micro-kernel call
 * streams over (k x NV vectors) takes at most 3/4 of L1, so that it is still there for the next
 * MR rows of A. Each chunk after the first accumulates onto C. */
template <typename Kernel, int VB, int M, int N, typename Acc>
inline void macro_tile(int k, const typename Kernel::AType* a, int64_t a_rs, int64_t a_ks,
                       const typename Kernel::BType* b, int64_t b_ks, int64_t b_ss, Acc* c, int64_t ldc,
                       bool load_c) {
  constexpr int kStripBytesPerK = Blocking<VB>::NV * Kernel::kLanes * Kernel::kBPerColumn *
                                  static_cast<int>(sizeof(typename Kernel::BType));
  const int kc = cmax(8, isa().l1d_bytes * 3 / 4 / kStripBytesPerK);
  const int64_t a_step = Kernel::a_step(a_ks);
  for (int k0 = 0; k0 < k; k0 += kc)
    macro_chunk<Kernel, VB, M, N>(k - k0 < kc ? k - k0 : kc, a + k0 * a_step, a_rs, a_ks, b + k0 * b_ks, b_ks, b_ss, c,
                                  ldc, load_c || k0 > 0);
}

/* ---- packing ----------------------------------------------------------------------------------- */

/* A storage value in the accumulator type (through its compute type: half -> float -> double). */
template <typename Acc, typename T> __attribute__((always_inline)) inline Acc to_acc(const T& x) {
  return static_cast<Acc>(static_cast<typename compute_type<T>::type>(x));
}

/* 16 float16 values to float32 (vcvtph2ps with AVX-512, one by one otherwise). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // 64-byte vectors by value without AVX-512: inlined, no ABI crossed
__attribute__((always_inline)) inline vec<float, 64>::type load_half16(const half_t* src) {
  vec<float, 64>::type f;
#if TL_CPU_COMPILED_AVX512
  const vec<int16_t, 32>::type h = vload<vec<int16_t, 32>::type>(src);
  __asm__("vcvtph2ps %1, %0" : "=v"(f) : "v"(h));
#else
  for (int l = 0; l < 16; ++l) f[l] = static_cast<float>(src[l]);
#endif
  return f;
}
#pragma GCC diagnostic pop

/* n float16 values to float32: vcvtph2ps 16 (AVX-512) or 8 (AVX2 tier, F16C) at a time. */
template <int VB> inline void half_run_to_float(const half_t* src, float* dst, int n) {
  int j = 0;
#if TL_CPU_COMPILED_AVX512
  if constexpr (VB == 64)
    for (; j + 16 <= n; j += 16) vstore(dst + j, load_half16(src + j));
#endif
#if TL_CPU_COMPILED_AVX2
  if constexpr (VB == 32) {
    typedef vec<float, 32>::type V;
    typedef vec<int16_t, 16>::type H;
    for (; j + 8 <= n; j += 8) {
      H h = vload<H>(src + j);
      V f;
      __asm__("vcvtph2ps %1, %0" : "=x"(f) : "x"(h));
      vstore(dst + j, f);
    }
  }
#endif
  for (; j < n; ++j) dst[j] = static_cast<float>(src[j]);
}

/* n bfloat16 values to float32: each a 16-bit shift, in a loop GCC vectorizes (to_acc's conversion
 * went one value at a time in integer code in the transposed pack, twenty-first session). */
inline void bf16_run_to_float(const bfloat16_t* src, float* __restrict dst, int n) {
  const uint16_t* bits = reinterpret_cast<const uint16_t*>(src);
#pragma GCC ivdep
  for (int j = 0; j < n; ++j) dst[j] = __builtin_bit_cast(float, uint32_t(bits[j]) << 16);
}

/* dst[i * dst_ld + kk] = A(i, k0 + kk) for i < M, kk < kc. */
template <int VB, int M, bool TRANS_A, typename TA, typename Acc>
inline void pack_a(const TA* A, int64_t lda, int k0, int kc, Acc* dst, int dst_ld) {
  for (int i = 0; i < M; ++i) {
    Acc* d = dst + i * dst_ld;
    if constexpr (!TRANS_A && same_type<TA, half_t>::value && same_type<Acc, float>::value) {
      half_run_to_float<VB>(A + i * lda + k0, d, kc);
    } else if constexpr (!TRANS_A && same_type<TA, bfloat16_t>::value && same_type<Acc, float>::value) {
      bf16_run_to_float(A + i * lda + k0, d, kc);
    } else {
#pragma GCC ivdep
      for (int kk = 0; kk < kc; ++kk) d[kk] = to_acc<Acc>(TRANS_A ? A[(k0 + kk) * lda + i] : A[i * lda + k0 + kk]);
    }
  }
}

/* Square transposes of L x L lanes held in L vectors: log2(L) rounds of interleaving vector i with
 * vector i + L/2 (lower halves into 2i, upper halves into 2i + 1), the perfect-shuffle transpose. */
template <int L, int... I> struct lane_seq : lane_seq<L - 1, L - 1, I...> {};
template <int... I> struct lane_seq<0, I...> {};
template <typename V, int L, int... I>
__attribute__((always_inline)) inline void interleave_halves(V a, V b, V* lo, V* hi, lane_seq<0, I...>) {
  *lo = __builtin_shufflevector(a, b, ((I % 2) ? L + I / 2 : I / 2)...);
  *hi = __builtin_shufflevector(a, b, ((I % 2) ? L + L / 2 + I / 2 : L / 2 + I / 2)...);
}
template <typename V, int L, int ROUND = 1> __attribute__((always_inline)) inline void transpose_lanes(V* r) {
  if constexpr (ROUND < L) {
    V t[L];
#pragma GCC unroll 16
    for (int i = 0; i < L / 2; ++i) interleave_halves<V, L>(r[i], r[i + L / 2], &t[2 * i], &t[2 * i + 1], lane_seq<L>());
#pragma GCC unroll 16
    for (int i = 0; i < L; ++i) r[i] = t[i];
    transpose_lanes<V, L, 2 * ROUND>(r);
  }
}

/* The run of k a transposed float16 / bfloat16 B converts at a time, per row (L rows: 8 KiB of float at 16 lanes). */
constexpr int kPackHalfRunMax = 128;

/* B(k0 + kk, j) for kk < kc, j < N into column panels NR wide: strip s = j / NR at dst + s * kc * NR,
 * row kk of it at + kk * NR (so a micro-kernel streams one contiguous panel, and no two k rows of a
 * strip compete for the same L1 sets, as rows of a 1 KiB-strided tile do); zero past N. */
template <int VB, int N, int NR, bool TRANS_B, typename TB, typename Acc>
inline void pack_b(const TB* B, int64_t ldb, int k0, int kc, Acc* dst) {
  constexpr int NS = (N + NR - 1) / NR;  // strips
  if constexpr (TRANS_B) {
    int jv = 0;  // rows of B done by whole L x L transposes
    if constexpr (same_type<TB, float>::value && same_type<Acc, float>::value) {
      /* float32 B: L rows x L columns of B at a time, transposed in registers (an L x L block of
       * lanes), each packed row then one vector store. A loop of scalar copies ran at about one
       * element per cycle: the pack of a 64 x 128 K tile in attention (S = Q K^T) took longer than
       * its GEMM. */
      typedef typename vec<float, VB>::type V;
      constexpr int L = vec<float, VB>::kLanes;
      const int kv = kc / L * L;
      for (; jv + L <= N; jv += L) {
        float* d = dst + (jv / NR) * kc * NR + jv % NR;
        for (int kk0 = 0; kk0 < kv; kk0 += L) {
          V r[L];
#pragma GCC unroll 16
          for (int j = 0; j < L; ++j) r[j] = vload<V>(B + (jv + j) * ldb + k0 + kk0);
          transpose_lanes<V, L>(r);
#pragma GCC unroll 16
          for (int kk = 0; kk < L; ++kk) vstore(d + (kk0 + kk) * NR, r[kk]);
        }
        for (int kk = kv; kk < kc; ++kk)
          for (int j = 0; j < L; ++j) d[kk * NR + j] = B[(jv + j) * ldb + k0 + kk];
      }
    }
    if constexpr ((same_type<TB, half_t>::value || same_type<TB, bfloat16_t>::value) && same_type<Acc, float>::value) {
      /* float16 / bfloat16: L rows' runs of k converted to float first (vcvtph2ps; bfloat16 by a
       * shift, in a loop GCC vectorizes; to_acc converts one value at a time in integer code: half of
       * the time of a float16 Q K^T in attention), then L x L blocks transposed in registers of the
       * build's width into the panel (L adjacent j per k row); edges one by one. (With 16 x 16 blocks
       * of 64-byte vectors on AVX2, where GCC lowers their shuffles one lane at a time, and bfloat16
       * through the scalar loop below, the bfloat16 Q K^T of the flash-attention step took 1.4x the
       * P V GEMM's time on a Zen 3 core.) */
      typedef typename vec<float, VB>::type V;
      constexpr int L = vec<float, VB>::kLanes;
      alignas(64) float rows[L][kPackHalfRunMax];
      for (int kb = 0; kb < kc; kb += kPackHalfRunMax) {
        const int kn = kc - kb < kPackHalfRunMax ? kc - kb : kPackHalfRunMax;
        for (int j0 = 0; j0 < N; j0 += L) {
          const int jn = N - j0 < L ? N - j0 : L;
          for (int j = 0; j < jn; ++j) {
            const TB* src = B + (j0 + j) * ldb + k0 + kb;
            if constexpr (same_type<TB, half_t>::value) half_run_to_float<VB>(src, rows[j], kn);
            else bf16_run_to_float(src, rows[j], kn);
          }
          int kk = 0;
          if (NR % L == 0 && jn == L) {  // the L rows lie in one strip
            Acc* d = dst + (j0 / NR) * kc * NR + kb * NR + j0 % NR;
            for (; kk + L <= kn; kk += L) {
              V r[L];
#pragma GCC unroll 16
              for (int i = 0; i < L; ++i) r[i] = vload<V>(&rows[i][kk]);
              transpose_lanes<V, L>(r);
#pragma GCC unroll 16
              for (int t = 0; t < L; ++t) vstore(d + (kk + t) * NR, r[t]);
            }
          }
          for (; kk < kn; ++kk)
            for (int j = 0; j < jn; ++j) {
              const int jj = j0 + j;
              dst[(jj / NR) * kc * NR + (kb + kk) * NR + jj % NR] = rows[j][kk];
            }
        }
      }
    } else {
      /* B is [N, K]: 8 rows of B at a time, so that each packed row gets 8 adjacent stores. */
      for (int j0 = jv; j0 < N; j0 += 8) {
        const int jn = N - j0 < 8 ? N - j0 : 8;
        for (int kk = 0; kk < kc; ++kk)
          for (int j = 0; j < jn; ++j) {
            const int jj = j0 + j;
            dst[(jj / NR) * kc * NR + kk * NR + jj % NR] = to_acc<Acc>(B[jj * ldb + k0 + kk]);
          }
      }
    }
    if constexpr (NS * NR > N)
      for (int kk = 0; kk < kc; ++kk)
        for (int j = N; j < NS * NR; ++j) dst[(NS - 1) * kc * NR + kk * NR + j % NR] = Acc(0);
  } else {
    for (int kk = 0; kk < kc; ++kk) {
      const TB* row = B + (k0 + kk) * ldb;
      for (int st = 0; st < NS; ++st) {
        Acc* d = dst + st * kc * NR + kk * NR;
        const int j0 = st * NR, w = N - j0 < NR ? N - j0 : NR;
        if constexpr (same_type<TB, half_t>::value && same_type<Acc, float>::value) {
          half_run_to_float<VB>(row + j0, d, w);
        } else if constexpr (same_type<TB, bfloat16_t>::value && same_type<Acc, float>::value) {
          bf16_run_to_float(row + j0, d, w);
        } else if (w == NR) {
#pragma GCC ivdep
          for (int j = 0; j < NR; ++j) d[j] = to_acc<Acc>(row[j0 + j]);
        } else {
#pragma GCC ivdep
          for (int j = 0; j < w; ++j) d[j] = to_acc<Acc>(row[j0 + j]);
        }
        for (int j = w; j < NR; ++j) d[j] = Acc(0);
      }
    }
  }
}

/* ---- drivers --------------------------------------------------------------------------------- */

/* C (Acc, row-major with ldc) (+)= op(A) op(B) with multiply-adds in Acc. B is read in place only
 * when it already has the micro-kernel's layout and there is little reuse to pay for packing (at
 * most one MR-row block); otherwise it is packed into NR-wide panels, per chunk of k. */
template <int VB, int M, int N, int K, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename Acc>
inline void gemm_acc(const TA* A, int64_t lda, const TB* B, int64_t ldb, Acc* C, int64_t ldc, bool load_c) {
  typedef MulAddKernel<Acc, VB> Kernel;
  constexpr int L = Kernel::kLanes, NR = Blocking<VB>::NV * L, NPS = round_up(N, NR);
  constexpr bool kDirectA = same_type<TA, Acc>::value;
  constexpr bool kDirectB = same_type<TB, Acc>::value && !TRANS_B && N % L == 0 && M < kPackBMinM;
  constexpr int kPerK = (kDirectA ? 0 : M) + (kDirectB ? 0 : NPS);  // packed elements per k
  constexpr int KC = kPerK == 0 ? K : cmax(1, cmin(K, kPackBytes / (kPerK * static_cast<int>(sizeof(Acc)))));
  alignas(64) Acc a_pack[kDirectA ? 1 : M * KC];
  alignas(64) Acc b_pack[kDirectB ? 1 : KC * NPS];
  /* A of the accumulator type with far-apart rows: compacted at run time (kDirectAMaxRowBytes). */
  constexpr bool kMayCompactA = kDirectA && !TRANS_A && M > 1;
  constexpr int KA = kMayCompactA ? cmax(1, cmin(K, kPackABytes / (M * static_cast<int>(sizeof(Acc))))) : 1;
  alignas(64) Acc a_rows[kMayCompactA ? M * KA : 1];
  const bool compact_a = kMayCompactA && lda * static_cast<int64_t>(sizeof(Acc)) >= kDirectAMaxRowBytes;
  const int kstep = compact_a ? cmin(KC, KA) : KC;
  for (int k0 = 0; k0 < K; k0 += kstep) {
    const int kc = K - k0 < kstep ? K - k0 : kstep;
    const Acc* a;
    int64_t a_rs, a_ks;
    if constexpr (kDirectA) {
      a = TRANS_A ? A + k0 * lda : A + k0;
      a_rs = TRANS_A ? 1 : lda;
      a_ks = TRANS_A ? lda : 1;
      if (compact_a) {
        for (int i = 0; i < M; ++i) {
          const Acc* src = reinterpret_cast<const Acc*>(A) + i * lda + k0;
          Acc* d = a_rows + i * KA;
#pragma GCC ivdep
          for (int kk = 0; kk < kc; ++kk) d[kk] = src[kk];
        }
        a = a_rows;
        a_rs = KA;
      }
    } else {
      pack_a<VB, M, TRANS_A>(A, lda, k0, kc, a_pack, KC);
      a = a_pack;
      a_rs = KC;
      a_ks = 1;
    }
    const Acc* b;
    int64_t b_ks, b_ss;
    if constexpr (kDirectB) {
      b = B + k0 * ldb;
      b_ks = ldb;
      b_ss = NR;
    } else {
      pack_b<VB, N, NR, TRANS_B>(B, ldb, k0, kc, b_pack);
      b = b_pack;
      b_ks = NR;
      b_ss = int64_t(kc) * NR;
    }
    macro_tile<Kernel, VB, M, N>(kc, a, a_rs, a_ks, b, b_ks, b_ss, C, ldc, load_c || k0 > 0);
  }
}

/* ---- packed B reused across the calls of one launch -------------------------------------------
 * The blocks of one grid column of a tiled GEMM multiply different rows of A by the same B tile
 * (2048^3 in 512 x 512 blocks: 4 blocks), and each call packed that tile again. A call given a
 * launch token (tl::cpu::gemm(..., clear, launch), launch != 0) that takes the dot-product driver
 * (bf16 / int8 without AMX: the pack interleaves B into 4-byte groups) or the AMX driver (B's tiles
 * in 4-byte groups, every k chunk one after the other) keeps its packed B in a
 * per-thread cache instead of on the stack, keyed by the driver instantiation, the token, B's
 * address and ldb; a later call with the same key uses the pack as it is. The token says that no
 * store of that launch writes B's memory: codegen_cpu passes one (gemm_begin_launch(ok) before each
 * grid launch, a fresh number per launch) only to GEMMs whose B is a tensor parameter no statement
 * of the function writes, and `ok` is false (token 0: no reuse) when such a B overlaps a written
 * tensor parameter in memory (docs/TARGET_CPU.md). Within a launch a key's pack is then made from
 * unchanged memory, so a hit gives exactly what packing again would; a new launch gets a new token
 * (the caller may have written B in between). Each thread (pool worker) has its own cache, at most
 * kPackCacheBytes in kPackCacheEntries buffers, the least recently used given up first; when the
 * grid has finished, the entry calls gemm_end_launch(token), which takes every thread's buffers of
 * that launch back: between launches at most kPackCacheBytes stay allocated (pack_pool), whatever
 * the number of threads. Measured on a Zen 4 core (docs/PERFORMANCE.md, eleventh
 * session): bf16 1.01-1.03x, int8 1.01-1.03x on the 2048^3 block loop. The fp32 blocked driver does
 * not use it: its pack is a plain copy, and reading the cached pack from L3 cost as much as
 * packing (0.99-1.01x). */
#ifndef TL_CPU_GEMM_PACK_CACHE_BYTES
#define TL_CPU_GEMM_PACK_CACHE_BYTES (8 << 20)
#endif
constexpr int64_t kPackCacheBytes = TL_CPU_GEMM_PACK_CACHE_BYTES;
/* Entries: a flash-attention grid's blocks walk every K and V block of their head (2 x 32 packs of
 * 16 KiB at S = 2048, D = 128, 64-row blocks), which a smaller table evicts before the next block of
 * the head comes back to them. */
constexpr int kPackCacheEntries = 256;
constexpr int kPackCacheHints = 1024;  // a power of two
inline unsigned pack_cache_hash(const void* b) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(b) >> 1;  // B's address: 2-byte elements at least
  return static_cast<unsigned>(x ^ (x >> 10) ^ (x >> 20)) & (kPackCacheHints - 1);
}
/* Calls with fewer rows than this pack into the stack buffer as before: their blocks rarely share
 * B (decode shapes), and the packed B then stays in L2 instead of going to a heap region. 32 takes
 * in flash attention's GEMMs (64 query rows a block; every block of a head multiplies by the same
 * K and V blocks): on the Zen 4 core the bf16 flash forward ran 1.01-1.05x with it (was 96). */
constexpr int kPackCacheMinM = 32;

/* A fresh launch token (never 0) when `ok`, else 0 (the launch packs B per call). */
inline uint64_t gemm_begin_launch(bool ok = true) {
  static uint64_t counter = 0;
  const uint64_t token = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
  return ok ? token : 0;
}

/* A spin lock (held for a few dozen instructions: a lookup, or a release at a launch's end). */
struct PackLock {
  int word = 0;
  void lock() {
    while (__atomic_exchange_n(&word, 1, __ATOMIC_ACQUIRE))
      while (__atomic_load_n(&word, __ATOMIC_RELAXED)) {
      }
  }
  void unlock() { __atomic_store_n(&word, 0, __ATOMIC_RELEASE); }
};

/* Whether the byte ranges [a, a + an) and [b, b + bn) share a byte (an empty range shares none). */
inline bool gemm_ranges_overlap(const void* a, int64_t an, const void* b, int64_t bn) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an > 0 && bn > 0 && x < y + static_cast<uintptr_t>(bn) && y < x + static_cast<uintptr_t>(an);
}

/* One thread's cache; every live one is on a list (pack_cache_list), so that gemm_end_launch can
 * free a finished launch's buffers in all of them. */
struct PackCache {
  struct Entry {
    const void* tag = nullptr;  // the driver instantiation (its function's address)
    const void* b = nullptr;
    int64_t ldb = 0;
    uint64_t launch = 0, used = 0;
    int64_t bytes = 0;
    void* data = nullptr;
  };
  Entry entry[kPackCacheEntries];
  const void* keys[kPackCacheEntries] = {};  // entry[i].b of a live entry, else null: the hit scan reads only these
  // A hint, never trusted: the slot where a B hashing to h was last found or placed. A hit there
  // skips the scan of keys (about 200 cycles for 256 keys; flash attention looks up twice per KV step).
  uint16_t hint[kPackCacheHints] = {};
  uint64_t clock = 0;
  PackLock lock;  // taken by its thread's lookups and by gemm_end_launch
  PackCache *prev = nullptr, *next = nullptr;
  PackCache();
  ~PackCache();
};
struct PackCacheList {
  PackLock lock;
  PackCache* head = nullptr;
};
inline PackCacheList& pack_cache_list() {
  static PackCacheList list;
  return list;
}
inline PackCache::PackCache() {
  PackCacheList& l = pack_cache_list();
  l.lock.lock();
  next = l.head;
  if (next) next->prev = this;
  l.head = this;
  l.lock.unlock();
}
inline PackCache::~PackCache() {
  PackCacheList& l = pack_cache_list();
  l.lock.lock();
  if (prev) prev->next = next;
  else l.head = next;
  if (next) next->prev = prev;
  l.lock.unlock();
  for (Entry& e : entry) free(e.data);
}
inline PackCache& pack_cache() {
  static thread_local PackCache cache;
  return cache;
}

/* Buffers of finished launches kept for the next one (at most kPackCacheBytes in all per loaded
 * kernel, whatever the number of threads): allocating them afresh at every launch page-faulted them
 * in again (the bf16 2048^3 block loop 2% slower). A leaf lock: taken inside a cache's lock, never
 * the other way round. */
struct PackPool {
  PackLock lock;
  void* data[kPackCacheEntries] = {};
  int64_t bytes[kPackCacheEntries] = {};
};
inline PackPool& pack_pool() {
  static PackPool pool;
  return pool;
}
/* A kept buffer of exactly `n` bytes, or a new one. */
inline void* pack_buffer_take(int64_t n) {
  PackPool& p = pack_pool();
  void* d = nullptr;
  p.lock.lock();
  for (int i = 0; i < kPackCacheEntries && !d; ++i)
    if (p.data[i] && p.bytes[i] == n) {
      d = p.data[i];
      p.data[i] = nullptr;
    }
  p.lock.unlock();
  return d ? d : aligned_alloc(64, static_cast<size_t>((n + 63) / 64 * 64));
}
/* Keeps a buffer for a later launch while the pool has room, else frees it. */
inline void pack_buffer_give(void* d, int64_t n) {
  PackPool& p = pack_pool();
  p.lock.lock();
  int64_t held = 0;
  int slot = -1;
  for (int i = 0; i < kPackCacheEntries; ++i) {
    if (p.data[i]) held += p.bytes[i];
    else if (slot < 0) slot = i;
  }
  if (slot >= 0 && held + n <= kPackCacheBytes) {
    p.data[slot] = d;
    p.bytes[slot] = n;
    d = nullptr;
  }
  p.lock.unlock();
  free(d);
}

/* Gives up the packs of launch `token` in every thread's cache (to the pool, or freed); the entry
 * calls it once the grid has finished (no GEMM of that launch still runs). */
inline void gemm_end_launch(uint64_t token) {
  if (token == 0) return;
  PackCacheList& l = pack_cache_list();
  l.lock.lock();
  for (PackCache* c = l.head; c; c = c->next) {
    c->lock.lock();
    for (int i = 0; i < kPackCacheEntries; ++i)
      if (c->entry[i].data && c->entry[i].launch == token) {
        pack_buffer_give(c->entry[i].data, c->entry[i].bytes);
        c->entry[i] = PackCache::Entry();
        c->keys[i] = nullptr;
      }
    c->lock.unlock();
  }
  l.lock.unlock();
}

inline void* pack_cache_lookup_locked(PackCache& pc, const void* tag, uint64_t launch, const void* b, int64_t ldb,
                                      int64_t bytes, bool* hit) {
  typedef PackCache::Entry Entry;
  auto matches = [&](const Entry& e) {
    return e.data && e.b == b && e.tag == tag && e.ldb == ldb && e.launch == launch && e.bytes == bytes;
  };
  uint16_t& hint = pc.hint[pack_cache_hash(b)];
  if (matches(pc.entry[hint])) {
    Entry& e = pc.entry[hint];
    e.used = ++pc.clock;
    *hit = true;
    return e.data;
  }
  for (int i = 0; i < kPackCacheEntries; ++i) {
    if (pc.keys[i] != b) continue;
    Entry& e = pc.entry[i];
    if (matches(e)) {
      e.used = ++pc.clock;
      hint = static_cast<uint16_t>(i);
      *hit = true;
      return e.data;
    }
  }
  int64_t held = 0;
  for (Entry& e : pc.entry)
    if (e.data) held += e.bytes;
  auto drop = [&](Entry* e) {  // gives up an entry's buffer
    pack_buffer_give(e->data, e->bytes);
    held -= e->bytes;
    *e = Entry();
    pc.keys[e - pc.entry] = nullptr;
  };
  auto oldest = [&]() {  // the buffer to give up first: stale before live, then least recently used
    Entry* o = nullptr;
    for (Entry& e : pc.entry)
      if (e.data && (!o || (e.launch != launch) > (o->launch != launch) ||
                     ((e.launch != launch) == (o->launch != launch) && e.used < o->used)))
        o = &e;
    return o;
  };
  Entry* slot = nullptr;
  for (Entry& e : pc.entry)
    if (e.data && e.launch != launch && e.bytes == bytes) slot = &e;  // a stale buffer of this size
  if (!slot) {
    while (held + bytes > kPackCacheBytes) drop(oldest());
    for (Entry& e : pc.entry)
      if (!e.data) slot = &e;
    if (!slot) drop(slot = oldest());
    slot->data = pack_buffer_take(bytes);
    if (!slot->data) return nullptr;
  }
  slot->tag = tag;
  slot->b = b;
  slot->ldb = ldb;
  slot->launch = launch;
  slot->bytes = bytes;
  slot->used = ++pc.clock;
  pc.keys[slot - pc.entry] = b;
  hint = static_cast<uint16_t>(slot - pc.entry);
  return slot->data;
}

/* The cache buffer (64-byte aligned, `bytes` long) for the pack of (tag, b, ldb) in launch
 * `launch`; *hit tells whether it already holds it (else the caller packs into it). Null when the
 * pack does not fit the budget or memory is short: the caller packs as without the cache. At most
 * kPackCacheBytes stay allocated per thread (a buffer left by a launch that did not call
 * gemm_end_launch is reused or freed first). */
inline void* pack_cache_lookup(const void* tag, uint64_t launch, const void* b, int64_t ldb, int64_t bytes, bool* hit) {
  *hit = false;
  if (bytes > kPackCacheBytes) return nullptr;
  PackCache& pc = pack_cache();
  pc.lock.lock();
  void* p = pack_cache_lookup_locked(pc, tag, launch, b, ldb, bytes, hit);
  pc.lock.unlock();
  return p;
}


/* ---- blocked driver for float32 with long k (AVX-512 and AVX2 tiers) ----------------------------
 * The GEMM of a TileLang kernel whose k loop holds nothing but the GEMM gets the whole k in one
 * call (forward_gemm_operands fuses the loop, docs/TARGET_CPU.md step 4). Then C can stay in
 * registers over long stretches of k, and each operand is packed once per stretch:
 *   - k runs in chunks of KC (256); per chunk, B (KC x NC columns, at most kF32PackBBytes = 512 KiB,
 *     so NC = 512 at KC = 256) is packed into NR-wide column panels (each strip contiguous, rows NR
 *     floats apart), in L2, with the rows kPrefetchRows ahead prefetched into L2;
 *   - per MR-row block of A, its KC-wide slice is copied into a compact block (rows KC + 16 floats
 *     apart; MR x KC floats, in L1; the next block's rows are prefetched into L2 meanwhile), then
 *     the micro-kernel runs it against every strip of the B panel (streamed from L2), each MR x NR
 *     block of C in registers for the whole chunk.
 * MR x NV = 14 x 2 vectors (28 zmm accumulators, 2 for B, 1 broadcast; AVX-512) or 6 x 2 (12 ymm;
 * AVX2): the strip read from L2 per k step is two vectors for MR broadcasts. Taken for a
 * row-major fp32 A and B, or fp16 ones (converted with vcvtph2ps as they are packed: a 512 x 512 x
 * 256 call packed B in 24-k chunks in gemm_acc, whose stack budget holds A and B together), with N
 * a multiple of the vector width, M >= 2 and K >= 128 (one row of C
 * takes the GEMV below; a short k, as in a k loop of block_K-deep GEMMs, keeps gemm_acc, whose
 * operands are read in place where they can be). Measured on one core (docs/PERFORMANCE.md): 1.07
 * against the loop of 64-deep GEMMs at 2048^3, 1.1-1.2 at decode M = 4 and 16. Summation order as
 * in gemm_acc: each C element adds its k terms in increasing k, starting from C. */
#ifndef TL_CPU_GEMM_F32_KC
#define TL_CPU_GEMM_F32_KC 256
#endif
constexpr int kF32KC = TL_CPU_GEMM_F32_KC;
#ifndef TL_CPU_GEMM_F32_PACK_B_BYTES
#define TL_CPU_GEMM_F32_PACK_B_BYTES (512 * 1024)
#endif
constexpr int kF32PackBBytes = TL_CPU_GEMM_F32_PACK_B_BYTES;  // packed B per chunk (stack; L2 holds it)
#ifndef TL_CPU_GEMM_BLOCKED_MIN_M
#define TL_CPU_GEMM_BLOCKED_MIN_M 2
#endif
constexpr int kBlockedMinM = TL_CPU_GEMM_BLOCKED_MIN_M, kBlockedMinK = 128;
/* B rows prefetched ahead of the packing, into L2 (prefetcht2), also across k chunks: 16 rows into
 * L2 instead of 4 into L1 ran decode 16 x 4096 x 4096 (B from memory) 1.10-1.13x faster on a Zen 4
 * core, 2048^3 unchanged (docs/PERFORMANCE.md). */
#ifndef TL_CPU_GEMM_F32_PREFETCH_ROWS
#define TL_CPU_GEMM_F32_PREFETCH_ROWS 16
#endif
#ifndef TL_CPU_GEMM_F32_PREFETCH_LOC
#define TL_CPU_GEMM_F32_PREFETCH_LOC 1
#endif
constexpr int kPrefetchRows = TL_CPU_GEMM_F32_PREFETCH_ROWS;
template <int VB> struct F32Blocking;
#ifndef TL_CPU_GEMM_F32_MR  // rows x vectors of the AVX-512 micro-kernel (a knob for the bench/ sweeps)
#define TL_CPU_GEMM_F32_MR 14
#endif
#ifndef TL_CPU_GEMM_F32_NV
#define TL_CPU_GEMM_F32_NV 2
#endif
template <> struct F32Blocking<64> { static constexpr int MR = TL_CPU_GEMM_F32_MR, NV = TL_CPU_GEMM_F32_NV; };
template <> struct F32Blocking<32> { static constexpr int MR = 6, NV = 2; };
template <int VB, int M, int N, int K, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename Acc>
struct BlockedF32Fits {
  static constexpr bool value = (VB == 64 || VB == 32) &&
                                ((same_type<TA, float>::value && same_type<TB, float>::value) ||
                                 (same_type<TA, half_t>::value && same_type<TB, half_t>::value)) &&
                                same_type<Acc, float>::value && !TRANS_A && !TRANS_B &&
                                N % (VB / 4) == 0 && M >= kBlockedMinM && K >= kBlockedMinK;
};

/* The micro-kernel on packed operands, strides known at compile time: A rows AS floats apart, B
 * rows NV vectors apart (so every broadcast and load has a constant offset from two pointers). */
template <int VB, int MR, int NV, int AS>
__attribute__((noinline)) void micro_kernel_packed(int k, const float* __restrict a, const float* __restrict b,
                                                   float* __restrict c, int64_t ldc, bool load_c) {
  typedef typename vec<float, VB>::type V;
  constexpr int L = VB / 4, NR = NV * L;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[r][v] = load_c ? vload<V>(c + r * ldc + v * L) : V{};
#pragma GCC unroll 4
  for (int kk = 0; kk < k; ++kk) {
    V bv[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) bv[v] = vload<V>(b + kk * NR + v * L);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const float s = a[r * AS + kk];
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] += bv[v] * s;
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) vstore(c + r * ldc + v * L, acc[r][v]);
}

/* ---- one row of C (decode GEMV) --------------------------------------------------------------
 * C[0, j] (+)= sum_k A[0, k] B[k, j] for a row-major fp32 B read in place: NV vectors of C stay in
 * registers over all of k while the row pieces of B stream by (NV independent sums per k, so the
 * multiply-adds do not wait on each other), with the piece kGemvPrefetchRows rows ahead
 * prefetched (the rows are pages apart: the hardware prefetchers do not run ahead into them). */
#ifndef TL_CPU_GEMV_PREFETCH_ROWS
#define TL_CPU_GEMV_PREFETCH_ROWS 8
#endif
constexpr int kGemvPrefetchRows = TL_CPU_GEMV_PREFETCH_ROWS;
template <int VB, int NV>
__attribute__((noinline)) void gemv_strip(int k, const float* __restrict a, int64_t a_ks, const float* __restrict b,
                                          int64_t ldb, float* __restrict c, bool load_c) {
  typedef typename vec<float, VB>::type V;
  constexpr int L = VB / 4;
  V acc[NV];
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) acc[v] = load_c ? vload<V>(c + v * L) : V{};
  const int kp = k - kGemvPrefetchRows;
  int kk = 0;
  for (; kk < kp; ++kk) {
    const float* row = b + kk * ldb;
#pragma GCC unroll 16
    for (int v = 0; v < NV; v += VB >= 64 ? 1 : 64 / VB)  // one prefetch per 64-byte line
      __builtin_prefetch(row + kGemvPrefetchRows * ldb + v * L, 0, 3);
    __builtin_prefetch(row + kGemvPrefetchRows * ldb + NV * L - 1, 0, 3);  // the tail line (rows not 64-byte aligned)
    const float s = a[kk * a_ks];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[v] += vload<V>(row + v * L) * s;
  }
  for (; kk < k; ++kk) {
    const float s = a[kk * a_ks];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[v] += vload<V>(b + kk * ldb + v * L) * s;
  }
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) vstore(c + v * L, acc[v]);
}

/* A wide row of C (more than one strip): kGemvRows rows of B at a time over the whole row (each row
 * of B is read front to back), C's row in L1, and the rows kGemvRowsAhead further on prefetched into
 * L2 (prefetcht2; a row piece of a block is often one 4 KiB page, across which the hardware
 * prefetchers do not run ahead, and demand misses alone leave the memory bandwidth unused). Each C
 * element still adds its k terms one by one in increasing k. Measured on a Zen 4 core at 1 x 1024 x
 * 4096 (B from memory, docs/PERFORMANCE.md): 8 rows 1.14-1.22x against 4 (12 and 16 slower); the
 * L2 prefetch 16..64 rows ahead 1.26-1.38x more (into L1, prefetcht0: 0.8-0.99x). On an Emerald
 * Rapids core the software prefetch costs instead (its L2 streamer keeps up without it: no prefetch
 * 1.10-1.12x over 32 rows ahead, 8..24 rows ahead in between; fourteenth session), so Intel hosts
 * (TL_CPU_TUNE_INTEL) take kGemvRowsAhead = 0: no prefetch. So does the AVX2 tier
 * (kGemvRowsAheadAvx2): on an AMD EPYC Zen 3 core (AVX2, no AVX-512; twentieth session) the bench's
 * 1 x 4096 x 4096 GEMV ran 0.69x OpenBLAS with the prefetch 32 rows ahead and 0.91x without it
 * (16 ahead 0.74x, 64 ahead 0.59x); AVX2-only Intel cores already took none. */
#ifndef TL_CPU_GEMV_ROWS
#define TL_CPU_GEMV_ROWS 8
#endif
#ifndef TL_CPU_GEMV_ROWS_AHEAD
#define TL_CPU_GEMV_ROWS_AHEAD (TL_CPU_TUNE_INTEL ? 0 : 32)
#endif
#ifndef TL_CPU_GEMV_ROWS_AHEAD_AVX2
#define TL_CPU_GEMV_ROWS_AHEAD_AVX2 0
#endif
constexpr int kGemvRows = TL_CPU_GEMV_ROWS, kGemvRowsAhead = TL_CPU_GEMV_ROWS_AHEAD;
constexpr int kGemvRowsAheadAvx2 = TL_CPU_GEMV_ROWS_AHEAD_AVX2;
template <int VB, int N>
inline void gemv_rows(int k, const float* __restrict a, int64_t a_ks, const float* __restrict b, int64_t ldb,
                      float* __restrict c, bool load_c) {
  typedef typename vec<float, VB>::type V;
  constexpr int L = VB / 4;
  constexpr int kAhead = VB >= 64 ? kGemvRowsAhead : kGemvRowsAheadAvx2;  // rows prefetched ahead (0: none)
  int kk = 0;
  if (!load_c) {
    const float s = a[0];
#pragma GCC unroll 4
    for (int j = 0; j < N; j += L) vstore(c + j, vload<V>(b + j) * s);
    kk = 1;
  }
  for (; kk + kGemvRows <= k; kk += kGemvRows) {
    float sr[kGemvRows];
    const float* r[kGemvRows];
#pragma GCC unroll 16
    for (int q = 0; q < kGemvRows; ++q) sr[q] = a[(kk + q) * a_ks], r[q] = b + (kk + q) * ldb;
    const int64_t pf = kk + kGemvRows + kAhead <= k ? kAhead * ldb : 0;  // none at the end
    // The line of each row's last element: where B's rows are not 64-byte aligned (numpy's arrays
    // are 16 bytes past a page), it lies past the lines prefetched below (one per 16 floats from the
    // row's start), in the next 4 KiB page, and would be a demand miss from memory at every pass's end.
    if constexpr (kAhead > 0) {
#pragma GCC unroll 16
      for (int q = 0; q < kGemvRows; ++q) __builtin_prefetch(r[q] + pf + N - 1, 0, 1);
    }
#pragma GCC unroll 4
    for (int j = 0; j < N; j += L) {
      if (kAhead > 0 && j % 16 == 0)  // one prefetch per 64-byte line
#pragma GCC unroll 16
        for (int q = 0; q < kGemvRows; ++q) __builtin_prefetch(r[q] + pf + j, 0, 1);
      V x = vload<V>(c + j);
#pragma GCC unroll 16
      for (int q = 0; q < kGemvRows; ++q) x += vload<V>(r[q] + j) * sr[q];
      vstore(c + j, x);
    }
  }
  for (; kk < k; ++kk) {
    const float s = a[kk * a_ks];
    const float* r = b + kk * ldb;
#pragma GCC unroll 4
    for (int j = 0; j < N; j += L) vstore(c + j, vload<V>(c + j) + vload<V>(r + j) * s);
  }
}

template <int VB, int N, bool TRANS_A>
inline void gemm_f32_gemv(int k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, bool load_c) {
  constexpr int L = VB / 4, NVMAX = VB == 64 ? 16 : 8, W = NVMAX * L;  // columns per strip
  constexpr int NS = N / W, NVT = (N - NS * W) / L;
  const int64_t a_ks = TRANS_A ? lda : 1;
  if constexpr (N > W) {  // wider than one strip: whole rows (measured 1.2-1.3x against strips at N = 1024..4096)
    gemv_rows<VB, N>(k, A, a_ks, B, ldb, C, load_c);
    return;
  }
  for (int s = 0; s < NS; ++s) gemv_strip<VB, NVMAX>(k, A, a_ks, B + s * W, ldb, C + s * W, load_c);
  if constexpr (NVT > 0) gemv_strip<VB, NVT>(k, A, a_ks, B + NS * W, ldb, C + NS * W, load_c);
}

/* Prefetching a run of bytes that may start anywhere in a line (numpy's large arrays start 16
 * bytes past a page): the run's i-th line counted from the line holding its first byte, and how many
 * lines a run of n bytes at p touches; run_lines() is an upper bound for every row of a matrix whose
 * rows are `stride` bytes apart (so that rows of one prefetch loop share one count). Counting from
 * p itself missed a row's last line whenever p was not 64-byte aligned (a demand miss per row: the
 * 2048^3 block loops ran 4-6% slower on such operands, Zen 4 core). */
inline const char* run_line(const void* p, int i) {
  return reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t(63)) + int64_t(i) * 64;
}
inline int run_lines(const void* p, int64_t stride, int64_t n) {
  const bool shifted = (reinterpret_cast<uintptr_t>(p) & 63) != 0 || stride % 64 != 0;
  return static_cast<int>((n + 63) / 64 + (shifted ? 1 : 0));
}

/* One MR-row block against the strips of one packed B chunk: nvl vectors in the last strip.
 * Meanwhile the next block's A rows (next_rows rows of kc floats from next, lda apart) are
 * prefetched into L2 a few lines before each strip (with the C prefetch, 1.01-1.03x the 224 lines
 * prefetched all at once at the block's start, on the 2048^3 bench kernel's block loop, Zen 4
 * core: presumably the burst queues behind itself), and the next strip's C block into L1
 * (C_local of a 512-wide block is 1 MiB: it does not stay in L2 between k chunks). */
template <int VB, int MR, int NV, int AS, typename TA>
inline void blocked_row_block(int kc, const float* a, const float* bp, int strips, int nvl, float* c, int64_t ldc,
                              bool load_c, const TA* next, int64_t lda, int next_rows) {
  constexpr int L = VB / 4, NR = NV * L, E = static_cast<int>(sizeof(TA));
  const int row_lines = run_lines(next, lda * E, int64_t(kc) * E), lines = next_rows * row_lines;
  const int per = (lines + strips - 1) / strips;
  int li = 0;
  for (int s = 0; s + 1 < strips; ++s) {
    for (const int e = li + per < lines ? li + per : lines; li < e; ++li)
      __builtin_prefetch(run_line(next + (li / row_lines) * lda, li % row_lines), 0, 2);
    if (load_c)
      for (int r = 0; r < MR; ++r)
        for (int j = 0; j < NR; j += 16) __builtin_prefetch(c + r * ldc + (s + 1) * NR + j, 1, 3);
    micro_kernel_packed<VB, MR, NV, AS>(kc, a, bp + int64_t(s) * kc * NR, c + s * NR, ldc, load_c);
  }
  for (; li < lines; ++li) __builtin_prefetch(run_line(next + (li / row_lines) * lda, li % row_lines), 0, 2);
  const float* bl = bp + int64_t(strips - 1) * kc * NR;
  float* cl = c + (strips - 1) * NR;
  if (nvl == NV) {
    micro_kernel_packed<VB, MR, NV, AS>(kc, a, bl, cl, ldc, load_c);
  } else if constexpr (NV > 1) {  // nvl < NV vectors in the last strip; its rows stay NR apart
    if (nvl == 1) micro_kernel<float, VB, MR, 1>(kc, a, AS, 1, bl, NR, cl, ldc, load_c);
    if constexpr (NV > 2)
      if (nvl == 2) micro_kernel<float, VB, MR, 2>(kc, a, AS, 1, bl, NR, cl, ldc, load_c);
    if constexpr (NV > 3)
      if (nvl == 3) micro_kernel<float, VB, MR, 3>(kc, a, AS, 1, bl, NR, cl, ldc, load_c);
  }
}

template <int VB, int M, int N, int K, typename T>
inline void gemm_f32_blocked(const T* A, int64_t lda, const T* B, int64_t ldb, float* C, int64_t ldc, bool load_c) {
  constexpr int L = VB / 4, MR = F32Blocking<VB>::MR, NV = F32Blocking<VB>::NV, NR = NV * L;
  constexpr bool kHalf = same_type<T, half_t>::value;  // float16 operands, converted by vcvtph2ps as packed
  constexpr int E = static_cast<int>(sizeof(T));
  constexpr int KC = cmin(K, kF32KC), AS = KC + 16;  // A block row stride: rows 64 bytes off a KiB multiple
  constexpr int NC = cmin(round_up(N, NR), cmax(NR, kF32PackBBytes / (KC * 4) / NR * NR));  // columns per B chunk
  alignas(64) float b_pack[KC * NC];
  alignas(64) float a_blk[MR * AS];
  for (int j0 = 0; j0 < N; j0 += NC) {
    const int nc = N - j0 < NC ? N - j0 : NC;
    const int strips = (nc + NR - 1) / NR, nvl = (nc - (strips - 1) * NR) / L;
    for (int k0 = 0; k0 < K; k0 += KC) {
      const int kc = K - k0 < KC ? K - k0 : KC;
      const bool lc = load_c || k0 > 0;
      for (int kk = 0; kk < kc; ++kk) {  // B chunk into strips [s][kk][NR]
        const T* row = B + int64_t(k0 + kk) * ldb + j0;
        if (k0 + kk + kPrefetchRows < K)  // rows are pages apart: the hardware prefetchers do not run ahead into them
          for (int j = 0, n = run_lines(row, ldb * E, int64_t(nc) * E); j < n; ++j)
            __builtin_prefetch(run_line(row + kPrefetchRows * ldb, j), 0, TL_CPU_GEMM_F32_PREFETCH_LOC);
        for (int s = 0; s < strips; ++s) {
          float* d = b_pack + int64_t(s) * kc * NR + kk * NR;
          const int w = s + 1 < strips ? NR : nvl * L;
          if constexpr (kHalf) {
            half_run_to_float<VB>(row + s * NR, d, w);
          } else {
#pragma GCC ivdep
            for (int j = 0; j < w; ++j) d[j] = row[s * NR + j];
          }
        }
      }
      for_row_blocks<M, MR>([&](auto rows, int i0) {
        constexpr int R = decltype(rows)::value;
        const int next_rows = cmin(MR, M - i0 - R);  // the rows after the block, prefetched meanwhile
        const T* next = A + int64_t(i0 + R) * lda + k0;
        for (int r = 0; r < R; ++r) {
          const T* src = A + int64_t(i0 + r) * lda + k0;
          float* d = a_blk + r * AS;
          if constexpr (kHalf) {
            half_run_to_float<VB>(src, d, kc);
          } else {
#pragma GCC ivdep
            for (int kk = 0; kk < kc; ++kk) d[kk] = src[kk];
          }
        }
        blocked_row_block<VB, R, NV, AS>(kc, a_blk, b_pack, strips, nvl, C + int64_t(i0) * ldc + j0, ldc, lc, next, lda,
                                         next_rows);
      });
    }
  }
}

/* ---- 4-byte groups ----------------------------------------------------------------------------
 * The dot-product instructions (vdpbf16ps, vpdpbusd; AMX tdpbf16ps, tdpbssd) take k in groups of 4
 * bytes per column: pairs of bf16, quads of int8. The helpers below form such groups from rows of a
 * row-major B (k rows, columns adjacent) or transpose them out of a [N, K] B, in registers. */
typedef uint32_t GroupRow __attribute__((vector_size(64)));

/* Transposes 16 rows of 16 four-byte elements in place (transpose_lanes: four rounds of
 * interleaving row i with row i + 8, unrolled, all in registers). */
inline void transpose16_groups(GroupRow* r) { transpose_lanes<GroupRow, 16>(r); }

typedef uint8_t Bytes64 __attribute__((vector_size(64)));
typedef uint16_t Halves64 __attribute__((vector_size(64)));

/* Two 64-byte rows of bf16 (columns 0..31, rows k and k+1) into two tile rows of pairs: out[q] holds
 * columns 16q..16q+15, each as (row 0, row 1) (one vpermt2w each). */
inline void interleave_pairs(Halves64 x0, Halves64 x1, GroupRow* out) {
#define TL_PAIRS(c) c, 32 + c, c + 1, 33 + c, c + 2, 34 + c, c + 3, 35 + c
  const Halves64 p0 = __builtin_shufflevector(x0, x1, TL_PAIRS(0), TL_PAIRS(4), TL_PAIRS(8), TL_PAIRS(12));
  const Halves64 p1 = __builtin_shufflevector(x0, x1, TL_PAIRS(16), TL_PAIRS(20), TL_PAIRS(24), TL_PAIRS(28));
#undef TL_PAIRS
  __builtin_memcpy(&out[0], &p0, 64);
  __builtin_memcpy(&out[1], &p1, 64);
}

/* 16-byte lanes of two 64-byte vectors: lane i of the result is lane li of (x, y) (0..3 x, 4..7 y). */
#define TL_LANE(l) 4 * (l), 4 * (l) + 1, 4 * (l) + 2, 4 * (l) + 3
#define TL_LANES(x, y, l0, l1, l2, l3) __builtin_shufflevector(x, y, TL_LANE(l0), TL_LANE(l1), TL_LANE(l2), TL_LANE(l3))

/* Four 64-byte rows of int8 (columns 0..63, rows k..k+3) into four tile rows of 4-byte groups:
 * out[q] holds columns 16q..16q+15, each as (row 0, row 1, row 2, row 3). Unpacks of bytes, then of
 * 16-bit pairs, within 16-byte lanes (lane L of u[q] is then columns 16L + 4q .. 16L + 4q + 3), and
 * a 4 x 4 transpose of the lanes. */
inline void interleave_quads(Bytes64 x0, Bytes64 x1, Bytes64 x2, Bytes64 x3, GroupRow* out) {
#define TL_UNPACK8(L, h) 16 * L + h + 0, 64 + 16 * L + h + 0, 16 * L + h + 1, 64 + 16 * L + h + 1, 16 * L + h + 2, \
    64 + 16 * L + h + 2, 16 * L + h + 3, 64 + 16 * L + h + 3, 16 * L + h + 4, 64 + 16 * L + h + 4, 16 * L + h + 5, \
    64 + 16 * L + h + 5, 16 * L + h + 6, 64 + 16 * L + h + 6, 16 * L + h + 7, 64 + 16 * L + h + 7
#define TL_UNPACK8_ALL(h) TL_UNPACK8(0, h), TL_UNPACK8(1, h), TL_UNPACK8(2, h), TL_UNPACK8(3, h)
  const Bytes64 lo01 = __builtin_shufflevector(x0, x1, TL_UNPACK8_ALL(0));
  const Bytes64 hi01 = __builtin_shufflevector(x0, x1, TL_UNPACK8_ALL(8));
  const Bytes64 lo23 = __builtin_shufflevector(x2, x3, TL_UNPACK8_ALL(0));
  const Bytes64 hi23 = __builtin_shufflevector(x2, x3, TL_UNPACK8_ALL(8));
#undef TL_UNPACK8_ALL
#undef TL_UNPACK8
#define TL_UNPACK16(L, h) 8 * L + h + 0, 32 + 8 * L + h + 0, 8 * L + h + 1, 32 + 8 * L + h + 1, 8 * L + h + 2, \
    32 + 8 * L + h + 2, 8 * L + h + 3, 32 + 8 * L + h + 3
#define TL_UNPACK16_ALL(h) TL_UNPACK16(0, h), TL_UNPACK16(1, h), TL_UNPACK16(2, h), TL_UNPACK16(3, h)
  Halves64 a0, a1, b0, b1;
  __builtin_memcpy(&a0, &lo01, 64);
  __builtin_memcpy(&a1, &hi01, 64);
  __builtin_memcpy(&b0, &lo23, 64);
  __builtin_memcpy(&b1, &hi23, 64);
  const Halves64 h0 = __builtin_shufflevector(a0, b0, TL_UNPACK16_ALL(0));
  const Halves64 h1 = __builtin_shufflevector(a0, b0, TL_UNPACK16_ALL(4));
  const Halves64 h2 = __builtin_shufflevector(a1, b1, TL_UNPACK16_ALL(0));
  const Halves64 h3 = __builtin_shufflevector(a1, b1, TL_UNPACK16_ALL(4));
#undef TL_UNPACK16_ALL
#undef TL_UNPACK16
  GroupRow u0, u1, u2, u3;
  __builtin_memcpy(&u0, &h0, 64);
  __builtin_memcpy(&u1, &h1, 64);
  __builtin_memcpy(&u2, &h2, 64);
  __builtin_memcpy(&u3, &h3, 64);
  const GroupRow ta = TL_LANES(u0, u1, 0, 4, 1, 5), tb = TL_LANES(u0, u1, 2, 6, 3, 7);
  const GroupRow tc = TL_LANES(u2, u3, 0, 4, 1, 5), td = TL_LANES(u2, u3, 2, 6, 3, 7);
  out[0] = TL_LANES(ta, tc, 0, 1, 4, 5);
  out[1] = TL_LANES(ta, tc, 2, 3, 6, 7);
  out[2] = TL_LANES(tb, td, 0, 1, 4, 5);
  out[3] = TL_LANES(tb, td, 2, 3, 6, 7);
}

/* One 64-byte column piece of a group of rows of a row-major B, in 4-byte groups: `r` points at the
 * group's first row, `ld` is B's row stride and `col` the piece's first column, both in elements.
 * ELEM 1 (int8): 64 columns of 4 rows into out[0..3]; ELEM 2 (bf16): 32 columns of 2 rows into
 * out[0..1]. Shared by the dot-product driver's and the AMX driver's B packs. */
template <int ELEM>
inline void load_group_rows(const char* r, int64_t ld, int64_t col, GroupRow* out) {
  if constexpr (ELEM == 1) {
    Bytes64 x0, x1, x2, x3;
    __builtin_memcpy(&x0, r + col, 64);
    __builtin_memcpy(&x1, r + ld + col, 64);
    __builtin_memcpy(&x2, r + 2 * ld + col, 64);
    __builtin_memcpy(&x3, r + 3 * ld + col, 64);
    interleave_quads(x0, x1, x2, x3, out);
  } else {
    Halves64 x0, x1;
    __builtin_memcpy(&x0, r + 2 * col, 64);
    __builtin_memcpy(&x1, r + 2 * (ld + col), 64);
    interleave_pairs(x0, x1, out);
  }
}
#undef TL_LANES
#undef TL_LANE

#if TL_CPU_COMPILED_AVX512_BF16 || TL_CPU_COMPILED_AVX512_VNNI
/* ---- dot-product driver: bf16 (vdpbf16ps) and int8 (vpdpbusd) ---------------------------------
 * Both instructions add, per 32-bit lane of C, the products of one 4-byte group of A (a pair of bf16
 * / a quad of int8) with the matching group of B. The driver is the blocked fp32 one's, on groups:
 *   - k runs in chunks of KC (bf16: 256, int8: 512, so a packed strip is 32 KiB either way); per
 *     chunk and per NC columns (at most 512), B is packed once into 64-column strips ([strip][group
 *     of k][64 columns x 4 bytes], each strip contiguous; a row-major B is interleaved 64 bytes of a
 *     row at a time in registers, a [N, K] one transposed 16 x 16 groups at a time), in L2;
 *   - per MR-row block of A its chunk is copied into a compact block (rows KC / E + 16 groups apart:
 *     rows of a global A are pages apart and share L1 sets), which the micro-kernel runs against
 *     every strip with its 6 x 4-vector block of C in registers for the whole chunk (24 zmm
 *     accumulators, 4 for B, 1 for the broadcast group of A).
 * int8: vpdpbusd multiplies unsigned bytes by signed ones. B is packed as B + 128 (its sign bit
 * flipped: an unsigned byte), A stays signed, and the micro-kernel subtracts 128 * (the sum of the
 * row's A over the chunk) from every lane at the end, computed while A is copied. The four products
 * of a group and their sum are exact in int32 (|sum| <= 4 * 255 * 128); the additions into C wrap
 * modulo 2^32 like the scalar path's, so C is exact whenever the true result fits in int32.
 * bf16: vdpbf16ps adds the product of k + 1 and then that of k for each pair (both exact in
 * float32) and treats bf16 subnormal inputs as zero; an odd K gets a zero pair half. */
template <typename T> struct DotTraits;
#if TL_CPU_COMPILED_AVX512_BF16
template <> struct DotTraits<bfloat16_t> {
  typedef float Acc;
  static constexpr int E = 2, KC = 256;
  static constexpr uint32_t kFlip = 0;
};
#endif
#if TL_CPU_COMPILED_AVX512_VNNI
template <> struct DotTraits<int8_t> {
  typedef int32_t Acc;
  static constexpr int E = 4, KC = 512;
  static constexpr uint32_t kFlip = 0x80808080u;  // B + 128 as unsigned bytes
};
#endif
constexpr int kDotMR = 6, kDotNV = 4, kDotNR = kDotNV * 16, kDotNC = 512;

/* c[r][j] (+)= sum over kg groups of a[r * AS + g] . b[g * NV * 16 + j] (groups of 4 bytes), for
 * r < MR, j < NV * 16; int8: minus corr[r] (128 * the row's sum of A) at the end. */
template <typename T, int MR, int NV, int AS>
__attribute__((noinline)) void dot_micro_kernel(int kg, const uint32_t* __restrict a, const uint32_t* __restrict b,
                                                typename DotTraits<T>::Acc* __restrict c, int64_t ldc, bool load_c,
                                                const int32_t* __restrict corr) {
  typedef typename DotTraits<T>::Acc Acc;
  typedef typename vec<Acc, 64>::type V;
  typedef vec<int32_t, 64>::type VI;
  constexpr bool kInt8 = DotTraits<T>::E == 4;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[r][v] = load_c ? vload<V>(c + r * ldc + v * 16) : V{};
#pragma GCC unroll 2
  for (int g = 0; g < kg; ++g) {
    VI bv[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) bv[v] = vload<VI>(b + g * (NV * 16) + v * 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const VI av = vsplat<VI>(static_cast<int32_t>(a[r * AS + g]));
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) {
        if constexpr (kInt8)  // AT&T order: signed source (A), unsigned source (B), accumulator
          __asm__("vpdpbusd %2, %1, %0" : "+v"(acc[r][v]) : "v"(bv[v]), "v"(av));
        else
          __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc[r][v]) : "v"(av), "v"(bv[v]));
      }
    }
  }
  if constexpr (kInt8) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const V cr = vsplat<V>(corr[r]);
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] -= cr;
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) vstore(c + r * ldc + v * 16, acc[r][v]);
}

/* The 4-byte group of B for k = k0 .. k0 + E - 1 (past K: zero) in column j, flipped for int8. */
template <typename T, bool TRANS_B>
inline uint32_t dot_group_b(const T* B, int64_t ldb, int K, int k0, int j) {
  constexpr int E = DotTraits<T>::E, ELEM = static_cast<int>(sizeof(T));
  uint32_t w = 0;
  for (int e = 0; e < E && k0 + e < K; ++e) {
    uint32_t x = 0;
    __builtin_memcpy(&x, TRANS_B ? B + int64_t(j) * ldb + k0 + e : B + int64_t(k0 + e) * ldb + j, ELEM);
    w |= x << (8 * ELEM * e);
  }
  return w ^ DotTraits<T>::kFlip;
}

/* B rows [k0, k0 + kc) (kg = ceil(kc / E) groups), columns [j0, j0 + nc) into strips: strip s at
 * dst + s * kg * kDotNR, its group g row at + g * W (W = 64 columns, the last strip's nvl * 16),
 * columns past nc zero. */
template <int K, bool TRANS_B, typename T>
inline void dot_pack_b(const T* B, int64_t ldb, int k0, int kc, int j0, int nc, uint32_t* dst) {
  constexpr int E = DotTraits<T>::E, ELEM = static_cast<int>(sizeof(T));
  constexpr uint32_t kFlip = DotTraits<T>::kFlip;
  const int kg = (kc + E - 1) / E, kgf = kc / E;  // groups; whole groups
  const int strips = (nc + kDotNR - 1) / kDotNR;
  const GroupRow flip = vsplat<GroupRow>(kFlip);
  for (int s = 0; s < strips; ++s) {
    const int js = s * kDotNR, w = nc - js < kDotNR ? nc - js : kDotNR, W = (w + 15) / 16 * 16;
    uint32_t* d = dst + int64_t(s) * kg * kDotNR;
    int gdone = 0, jdone = 0;  // the part done in registers: groups [0, gdone) of columns [0, jdone)
    if constexpr (TRANS_B) {
      /* B is [N, K]: 16 columns' 64 bytes of k (16 groups) are 16 rows of a 16 x 16 group transpose. */
      gdone = kgf / 16 * 16;
      jdone = w / 16 * 16;
      for (int jq = 0; jq < jdone; jq += 16)
        for (int g0 = 0; g0 < gdone; g0 += 16) {
          GroupRow r[16];
#pragma GCC unroll 16
          for (int j = 0; j < 16; ++j) __builtin_memcpy(&r[j], B + int64_t(j0 + js + jq + j) * ldb + k0 + g0 * E, 64);
          transpose16_groups(r);
#pragma GCC unroll 16
          for (int g = 0; g < 16; ++g) {
            const GroupRow x = r[g] ^ flip;
            __builtin_memcpy(d + (g0 + g) * W + jq, &x, 64);
          }
        }
    } else {
      /* B is [K, N]: E rows of 64 bytes (64 int8 / 32 bf16 columns) at a time into groups. */
      constexpr int CW = 64 / ELEM;  // columns per 64-byte row piece
      gdone = kgf;
      jdone = w / CW * CW;
      for (int g = 0; g < gdone; ++g) {
        const char* r0 = reinterpret_cast<const char*>(B + int64_t(k0 + g * E) * ldb + j0 + js);
        if (g + 4 < gdone)  // rows are pages apart: the hardware prefetchers do not run ahead into them
          for (int e = 0; e < E; ++e)
            for (int j = 0, n = run_lines(r0, ldb * ELEM, int64_t(w) * ELEM); j < n; ++j)
              __builtin_prefetch(run_line(r0 + (4 * E + e) * ldb * ELEM, j), 0, 3);
        for (int jq = 0; jq < jdone; jq += CW) {
          GroupRow out[4];
          load_group_rows<ELEM>(r0, ldb, jq, out);
#pragma GCC unroll 4
          for (int q = 0; q < CW / 16; ++q) {
            const GroupRow x = out[q] ^ flip;
            __builtin_memcpy(d + g * W + jq + q * 16, &x, 64);
          }
        }
      }
    }
    for (int g = 0; g < kg; ++g) {  // the rest, one group at a time; zero columns past w
      uint32_t* dg = d + g * W;
      for (int j = g < gdone ? jdone : 0; j < w; ++j) dg[j] = dot_group_b<T, TRANS_B>(B, ldb, K, k0 + g * E, j0 + js + j);
      for (int j = w; j < W; ++j) dg[j] = 0u;
    }
  }
}

/* Rows [i0, i0 + mr) of A, k in [k0, k0 + kc), into dst (rows AS groups apart, zero past kc up to
 * whole groups); int8: corr[r] = 128 * the row's sum. */
template <int AS, bool TRANS_A, typename T>
inline void dot_pack_a(const T* A, int64_t lda, int i0, int mr, int k0, int kc, uint32_t* dst, int32_t* corr) {
  constexpr int E = DotTraits<T>::E;
  const int kg = (kc + E - 1) / E;
  for (int r = 0; r < mr; ++r) {
    T* d = reinterpret_cast<T*>(dst + r * AS);
    if constexpr (TRANS_A) {
      for (int kk = 0; kk < kc; ++kk) d[kk] = A[int64_t(k0 + kk) * lda + i0 + r];
    } else {
      __builtin_memcpy(d, A + int64_t(i0 + r) * lda + k0, kc * sizeof(T));
    }
    for (int kk = kc; kk < kg * E; ++kk) __builtin_memset(d + kk, 0, sizeof(T));
    if constexpr (E == 4) {
      const int8_t* q = reinterpret_cast<const int8_t*>(d);
      int32_t sum = 0;
      for (int kk = 0; kk < kc; ++kk) sum += q[kk];
      corr[r] = sum * 128;
    }
  }
}

/* One MR-row block (MR a template argument, for the row tail) against the strips of a packed chunk;
 * the last strip of nvl < kDotNV vectors, or of a partial vector, through the matching kernel (a
 * partial vector via a temporary C block). The next block's A rows (next_rows rows of row_bytes from
 * next, lda_bytes apart) are prefetched into L2 a few lines before each strip, as in the fp32
 * driver. */
template <typename T, int MR, int AS>
inline void dot_row_block(int kg, const uint32_t* a, const uint32_t* bp, int nc, typename DotTraits<T>::Acc* c,
                          int64_t ldc, bool load_c, const int32_t* corr, const char* next = nullptr,
                          int64_t lda_bytes = 0, int next_rows = 0, int row_bytes = 0) {
  typedef typename DotTraits<T>::Acc Acc;
  const int strips = (nc + kDotNR - 1) / kDotNR;
  const int row_lines = run_lines(next, lda_bytes, row_bytes), lines = next_rows * row_lines;
  const int per = (lines + strips - 1) / strips;
  int li = 0;
  for (int s = 0; s < strips; ++s) {
    for (const int e = li + per < lines ? li + per : lines; li < e; ++li)
      __builtin_prefetch(run_line(next + (li / row_lines) * lda_bytes, li % row_lines), 0, 2);
    const uint32_t* b = bp + int64_t(s) * kg * kDotNR;
    Acc* cs = c + s * kDotNR;
    const int w = nc - s * kDotNR < kDotNR ? nc - s * kDotNR : kDotNR, nv = (w + 15) / 16;
    alignas(64) Acc tmp[MR * kDotNR];
    const bool partial = w % 16 != 0;
    Acc* cc = cs;
    int64_t ld = ldc;
    if (partial) {
      for (int r = 0; r < MR; ++r)
        for (int j = 0; j < nv * 16; ++j) tmp[r * kDotNR + j] = load_c && j < w ? cs[r * ldc + j] : Acc(0);
      cc = tmp;
      ld = kDotNR;
    }
    const bool lc = load_c || partial;
    if (nv == 4) dot_micro_kernel<T, MR, 4, AS>(kg, a, b, cc, ld, lc, corr);
    else if (nv == 3) dot_micro_kernel<T, MR, 3, AS>(kg, a, b, cc, ld, lc, corr);
    else if (nv == 2) dot_micro_kernel<T, MR, 2, AS>(kg, a, b, cc, ld, lc, corr);
    else dot_micro_kernel<T, MR, 1, AS>(kg, a, b, cc, ld, lc, corr);
    if (partial)
      for (int r = 0; r < MR; ++r)
        for (int j = 0; j < w; ++j) cs[r * ldc + j] = tmp[r * kDotNR + j];
  }
}

template <int M, int N, int K, bool TRANS_A, bool TRANS_B, typename T>
inline void gemm_dot(const T* A, int64_t lda, const T* B, int64_t ldb, typename DotTraits<T>::Acc* C, int64_t ldc,
                     bool load_c, uint64_t launch) {
  constexpr int E = DotTraits<T>::E, MR = kDotMR, MT = M % MR;
  constexpr int KC = cmin(K, DotTraits<T>::KC);           // k per chunk (elements)
  constexpr int KG = (KC + E - 1) / E, AS = KG + 16;      // groups per chunk; A block row stride (groups)
  constexpr int NC = cmin(round_up(N, kDotNR), kDotNC);   // columns per packed chunk
  constexpr int NKC = (K + KC - 1) / KC, NJC = (N + NC - 1) / NC;  // chunks of k and of columns
  alignas(64) uint32_t b_pack[KG * NC];
  alignas(64) uint32_t a_blk[MR * AS];
  int32_t corr[MR] = {};
  bool hit = false;  // B unwritten in this launch: packed once per launch and thread (pack_cache_lookup)
  uint32_t* const cached =
      launch != 0 && M >= kPackCacheMinM
          ? static_cast<uint32_t*>(pack_cache_lookup(
                reinterpret_cast<const void*>(&gemm_dot<M, N, K, TRANS_A, TRANS_B, T>), launch, B, ldb,
                int64_t(NJC) * NKC * KG * NC * 4, &hit))
          : nullptr;
  for (int j0 = 0; j0 < N; j0 += NC) {
    const int nc = N - j0 < NC ? N - j0 : NC;
    for (int k0 = 0; k0 < K; k0 += KC) {
      const int kc = K - k0 < KC ? K - k0 : KC, kg = (kc + E - 1) / E;
      const bool lc = load_c || k0 > 0;
      uint32_t* const bp = cached ? cached + (int64_t(j0 / NC) * NKC + k0 / KC) * KG * NC : b_pack;
      if (!hit) dot_pack_b<K, TRANS_B>(B, ldb, k0, kc, j0, nc, bp);
      for (int i0 = 0; i0 + MR <= M; i0 += MR) {
        // the next block's rows into L2 while this block computes (spread over its strips)
        const int next_rows = TRANS_A || M - i0 - MR <= 0 ? 0 : (M - i0 - MR < MR ? M - i0 - MR : MR);
        dot_pack_a<AS, TRANS_A>(A, lda, i0, MR, k0, kc, a_blk, corr);
        dot_row_block<T, MR, AS>(kg, a_blk, bp, nc, C + int64_t(i0) * ldc + j0, ldc, lc, corr,
                                 reinterpret_cast<const char*>(A + int64_t(i0 + MR) * lda + k0),
                                 lda * int64_t(sizeof(T)), next_rows, kc * static_cast<int>(sizeof(T)));
      }
      if constexpr (MT > 0) {
        constexpr int I0 = M - MT;
        dot_pack_a<AS, TRANS_A>(A, lda, I0, MT, k0, kc, a_blk, corr);
        dot_row_block<T, MT, AS>(kg, a_blk, bp, nc, C + int64_t(I0) * ldc + j0, ldc, lc, corr);
      }
    }
  }
}
#endif

/* ---- float16 as two bfloat16 --------------------------------------------------------------------
 * A float16 value x has 11 significant bits and an exponent inside bfloat16's normal range, so
 * x = hi + lo exactly with hi = bfloat16(x) (to nearest even, 8 bits) and lo = x - hi (at most 3
 * bits: exact in float32 and in bfloat16). Then a b = a_hi b_hi + a_hi b_lo + a_lo b_hi + a_lo b_lo,
 * four products exact in float32, so a float16 GEMM is a bfloat16 GEMM over 4 K whose k-th group of
 * four holds (a_hi, a_hi', a_lo, a_lo) in A and (b_hi, b_lo, b_hi', b_lo) in B (gemm_amx's float16 path).
 * An infinite value has lo = 0 and hi' = 0 (hi' is the copy that meets the other operand's lo): its
 * products are inf times the other's hi and zeros, so inf * finite is inf and inf * 0 is NaN, as
 * in float32, and never inf * (a finite value's lo of 0). A NaN is a quiet NaN in hi. These helpers
 * are plain vector code (tested on any machine); the GEMM that uses them needs AMX-BF16. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // 64-byte vectors by value without AVX-512: inlined, no ABI crossed
typedef uint32_t SplitBits __attribute__((vector_size(64)));
typedef float SplitFloats __attribute__((vector_size(64)));
struct F16Split {
  SplitBits hi, hi2, lo;  // bfloat16 bits in the upper 16 bits of each lane, the lower 16 zero
};
__attribute__((always_inline)) inline F16Split f16_split(SplitFloats x) {
  const SplitBits u = (SplitBits)x, mag = u & 0x7fffffffu;
  const SplitBits nan = (SplitBits)(mag > 0x7f800000u), inf = (SplitBits)(mag == 0x7f800000u);
  SplitBits h = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;  // to nearest even (finite x)
  h = (h & ~nan) | (u & nan & 0xffff0000u) | (nan & 0x00400000u);  // NaN: quiet, upper bits kept
  const SplitBits lo = (SplitBits)(x - (SplitFloats)h) & 0xffff0000u & ~inf & ~nan;
  return F16Split{h, h & ~inf, lo};
}
/* Two lanes' 32-bit words interleaved: d0[0], d1[0], d0[1], d1[1], ... into 32 words at dst. */
__attribute__((always_inline)) inline void store_interleaved(SplitBits d0, SplitBits d1, uint32_t* dst) {
  const SplitBits o0 = __builtin_shufflevector(d0, d1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const SplitBits o1 = __builtin_shufflevector(d0, d1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  __builtin_memcpy(dst, &o0, 64);
  __builtin_memcpy(dst + 16, &o1, 64);
}
/* 16 float16 values from src, of which only the first n (8 or 16) are read; the rest are 0. */
__attribute__((always_inline)) inline SplitFloats load_half_part(const half_t* src, int n) {
  if (n == 16) return load_half16(src);
  alignas(32) half_t t[16];
  for (int l = 0; l < 16; ++l) t[l] = l < n ? src[l] : half_t::from_bits(0);
  return load_half16(t);
}
/* The AMX tiles of a float16 operand in its bfloat16 pair form: one tile step holds 8 k (32
 * bfloat16), tiles of 16 rows x 64 bytes, 256 words each, as gemm_amx lays them out (below).
 * A: rows [i0, i0 + 16 RT), steps [s0, s0 + sc) into a_blk ([row tile][step][row][64 bytes]); the
 * 64 bytes of a row and step are (hi, hi', lo, lo) for each of its 8 k. */
template <int RT>
inline void amx_pack_a_f16(const half_t* A, int64_t lda, int i0, int s0, int sc, char* a_blk) {
  for (int r = 0; r < 16 * RT; ++r) {
    const half_t* src = A + int64_t(i0 + r) * lda + s0 * 8;
    char* d = a_blk + (r / 16) * sc * 1024 + (r % 16) * 64;
    for (int s = 0; s < sc; s += 2) {  // two steps (16 k) per split
      const F16Split v = f16_split(load_half_part(src + s * 8, sc - s >= 2 ? 16 : 8));
      alignas(64) uint32_t w[32];
      store_interleaved((v.hi >> 16) | v.hi2, (v.lo >> 16) | v.lo, w);
      __builtin_memcpy(d + s * 1024, w, 64);
      if (sc - s >= 2) __builtin_memcpy(d + (s + 1) * 1024, w + 16, 64);
    }
  }
}
/* B ([K, N]; TRANS_B: [N, K]), steps [s0, s0 + sc) into b_pack ([column tile][step][group row][16
 * columns x 4 bytes]): group row 2 q of a step is (hi, lo) and row 2 q + 1 (hi', lo) of each
 * column's k = 8 step + q. A row of B gives two tile rows as they are; a transposed B's rows are
 * columns, turned by the 16 x 16 word transpose of the integer packs. */
template <int N, bool TRANS_B>
inline void amx_pack_b_f16(const half_t* B, int64_t ldb, int s0, int sc, uint32_t* b_pack) {
  constexpr int NTL = N / 16;
  if constexpr (TRANS_B) {
    for (int jt = 0; jt < NTL; ++jt)
      for (int s = 0; s < sc; s += 2) {
        const int n = sc - s >= 2 ? 16 : 8;
        GroupRow r0[16], r1[16];
        for (int j = 0; j < 16; ++j) {
          const F16Split v = f16_split(load_half_part(B + int64_t(jt * 16 + j) * ldb + (s0 + s) * 8, n));
          alignas(64) uint32_t w[32];
          store_interleaved((v.hi >> 16) | v.lo, (v.hi2 >> 16) | v.lo, w);
          __builtin_memcpy(&r0[j], w, 64);
          __builtin_memcpy(&r1[j], w + 16, 64);
        }
        transpose16_groups(r0);
        __builtin_memcpy(b_pack + (int64_t(jt) * sc + s) * 256, r0, sizeof r0);
        if (n == 16) {
          transpose16_groups(r1);
          __builtin_memcpy(b_pack + (int64_t(jt) * sc + s + 1) * 256, r1, sizeof r1);
        }
      }
    return;
  }
  for (int s = 0; s < sc; ++s)
    for (int q = 0; q < 8; ++q) {
      const half_t* row = B + int64_t((s0 + s) * 8 + q) * ldb;
      for (int jt = 0; jt < NTL; ++jt) {
        const F16Split v = f16_split(load_half16(row + jt * 16));
        const SplitBits even = (v.hi >> 16) | v.lo, odd = (v.hi2 >> 16) | v.lo;
        uint32_t* d = b_pack + (int64_t(jt) * sc + s) * 256 + 2 * q * 16;
        __builtin_memcpy(d, &even, 64);
        __builtin_memcpy(d + 16, &odd, 64);
      }
    }
}
#pragma GCC diagnostic pop

#if TL_CPU_COMPILED_AMX_BF16 || TL_CPU_COMPILED_AMX_INT8
/* ---- AMX tiles ----------------------------------------------------------------------------------
 * Eight tile registers of 16 rows x 64 bytes. The main block is 3 x 1: tmm0..2 hold a 48 x 16
 * block of C (tiles of 16 x 16 float or int32), tmm3..5 three 16-row slices of A (16 rows x 64
 * bytes of k: 32 bf16 or 64 int8), tmm6 a 16-column slice of B packed in groups of 4 bytes per
 * column (k-pairs of bf16, k-quads of int8: "VNNI" layout, one 64-byte row of a tile per group).
 * The 32 or 16 rows left over use 2 x 2 / 2 x 1 (1 x 2 / 1 x 1) blocks: tmm0..3 C, tmm4..5 A,
 * tmm6..7 B. tdpbf16ps / tdpbssd add
 * the products of each group in float32 / int32. The tile instructions are inline assembly (the
 * headers avoid <immintrin.h>); register numbers are part of the mnemonic, so each is a macro. */
struct alignas(64) AmxTileConfig {
  uint8_t palette, start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
#define TL_AMX_LOAD(t, p, stride) \
  __asm__ __volatile__("tileloadd (%0,%1,1), %%tmm" #t ::"r"(p), "r"(static_cast<int64_t>(stride)) : "memory")
#define TL_AMX_STORE(t, p, stride) \
  __asm__ __volatile__("tilestored %%tmm" #t ", (%0,%1,1)" ::"r"(p), "r"(static_cast<int64_t>(stride)) : "memory")
#define TL_AMX_ZERO(t) __asm__ __volatile__("tilezero %%tmm" #t ::: "memory")
#define TL_AMX_DP(op, c, a, b) __asm__ __volatile__(op " %%tmm" #b ", %%tmm" #a ", %%tmm" #c ::: "memory")

inline void amx_configure() {
  AmxTileConfig cfg;
  __builtin_memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  __asm__ __volatile__("ldtilecfg %0" ::"m"(cfg) : "memory");
}
inline void amx_release() { __asm__ __volatile__("tilerelease" ::: "memory"); }

/* The AMX driver's operands are packed so that every tile is one contiguous KiB (16 rows of 64
 * bytes, rows 64 bytes apart): a tile load then touches 16 consecutive cache lines instead of 16
 * rows of a matrix that may lie 4 KiB apart (one L1 set: a 32-row slice of a 2048-wide bf16 A
 * thrashes it). B: [column tile jt][tile step s][group row g][16 columns x 4 bytes], packed once
 * per chunk of k and reused by every 32-row block of A (it lives in L2); A: the 32 rows of one row
 * block, [row tile][tile step][row][64 bytes], copied just before its blocks run (it stays in L1). */
#ifndef TL_CPU_AMX_PACK_B_BYTES
#define TL_CPU_AMX_PACK_B_BYTES (256 * 1024)
#endif
#ifndef TL_CPU_AMX_MAX_STEPS
#define TL_CPU_AMX_MAX_STEPS 16
#endif
constexpr int kAmxPackBBytes = TL_CPU_AMX_PACK_B_BYTES;  // stack for packed B per call (L2 holds it)
constexpr int kAmxTileBytes = 1024;
constexpr int kAmxMaxSteps = TL_CPU_AMX_MAX_STEPS;  // tile steps per chunk: C reloaded every 16 steps at most
#ifndef TL_CPU_AMX_A_BLOCK_BYTES  // (a bench knob: 48 KiB, 16 steps, ran 0.80-0.83x on the AMX Xeon)
#define TL_CPU_AMX_A_BLOCK_BYTES (32 * 1024)
#endif
constexpr int kAmxABlockBytes = TL_CPU_AMX_A_BLOCK_BYTES;  // the packed 48-row A block stays in L1: at most 10 steps
/* A whose rows are at most this many bytes apart is not packed: the tile loads read it in place
 * (flash attention's Q and P blocks: 256 and 128 bytes a row), which saves a copy of every A block. */
#ifndef TL_CPU_AMX_DIRECT_A_LD_BYTES
#define TL_CPU_AMX_DIRECT_A_LD_BYTES 512
#endif
constexpr int64_t kAmxDirectALdBytes = TL_CPU_AMX_DIRECT_A_LD_BYTES;
/* The AMX driver keeps B's pack in the launch's cache only up to this size (flash attention's K and
 * V blocks: 16 KiB at D = 128 with 64-row blocks, 32 KiB with 128). */
#ifndef TL_CPU_AMX_PACK_CACHE_MAX_BYTES
#define TL_CPU_AMX_PACK_CACHE_MAX_BYTES (64 * 1024)
#endif
constexpr int64_t kAmxPackCacheMaxBytes = TL_CPU_AMX_PACK_CACHE_MAX_BYTES;

/* One MT x NT block of 16 x 16 C tiles (MT, NT in {1, 2}) over `steps` tile steps of k: A tile of
 * row tile r and step s at a + r * a_ts + s * a_ss with rows a_rs bytes apart (packed: 1 KiB and 64;
 * read in place: 64 and A's row stride), B tile of column tile c at b + c * b_ts + s * 1 KiB
 * (packed, rows 64 bytes apart), C at `c` (row stride c_ld bytes). */
template <bool BF16, int MT, int NT>
inline void amx_block(int steps, const char* a, int64_t a_ts, int64_t a_ss, int64_t a_rs, const char* b, int64_t b_ts,
                      char* c, int64_t c_ld, bool load_c) {
  if (load_c) {
    TL_AMX_LOAD(0, c, c_ld);
    if constexpr (NT > 1) TL_AMX_LOAD(1, c + 64, c_ld);
    if constexpr (MT > 1) TL_AMX_LOAD(2, c + 16 * c_ld, c_ld);
    if constexpr (MT > 1 && NT > 1) TL_AMX_LOAD(3, c + 16 * c_ld + 64, c_ld);
  } else {
    TL_AMX_ZERO(0);
    if constexpr (NT > 1) TL_AMX_ZERO(1);
    if constexpr (MT > 1) TL_AMX_ZERO(2);
    if constexpr (MT > 1 && NT > 1) TL_AMX_ZERO(3);
  }
  for (int s = 0; s < steps; ++s) {
    const char* as = a + s * a_ss;
    const char* bs = b + s * kAmxTileBytes;
    TL_AMX_LOAD(4, as, a_rs);
    TL_AMX_LOAD(6, bs, 64);
    if constexpr (MT > 1) TL_AMX_LOAD(5, as + a_ts, a_rs);
    if constexpr (NT > 1) TL_AMX_LOAD(7, bs + b_ts, 64);
    if constexpr (BF16) {
      TL_AMX_DP("tdpbf16ps", 0, 4, 6);
      if constexpr (NT > 1) TL_AMX_DP("tdpbf16ps", 1, 4, 7);
      if constexpr (MT > 1) TL_AMX_DP("tdpbf16ps", 2, 5, 6);
      if constexpr (MT > 1 && NT > 1) TL_AMX_DP("tdpbf16ps", 3, 5, 7);
    } else {
      TL_AMX_DP("tdpbssd", 0, 4, 6);
      if constexpr (NT > 1) TL_AMX_DP("tdpbssd", 1, 4, 7);
      if constexpr (MT > 1) TL_AMX_DP("tdpbssd", 2, 5, 6);
      if constexpr (MT > 1 && NT > 1) TL_AMX_DP("tdpbssd", 3, 5, 7);
    }
  }
  TL_AMX_STORE(0, c, c_ld);
  if constexpr (NT > 1) TL_AMX_STORE(1, c + 64, c_ld);
  if constexpr (MT > 1) TL_AMX_STORE(2, c + 16 * c_ld, c_ld);
  if constexpr (MT > 1 && NT > 1) TL_AMX_STORE(3, c + 16 * c_ld + 64, c_ld);
}

/* One 3 x 1 block of C tiles (48 rows x 16 columns in tmm0..2) over `steps` tile steps: per step
 * one B tile (tmm6, from the packed B in L2) feeds three A tiles (tmm3..5, from the A block in L1),
 * so B crosses from L2 once per three tile products instead of once per two in the 2 x 2 block;
 * the C traffic per product is the same. Layout arguments as amx_block's. */
template <bool BF16>
inline void amx_block31(int steps, const char* a, int64_t a_ts, int64_t a_ss, int64_t a_rs, const char* b, char* c,
                        int64_t c_ld, bool load_c) {
  if (load_c) {
    TL_AMX_LOAD(0, c, c_ld);
    TL_AMX_LOAD(1, c + 16 * c_ld, c_ld);
    TL_AMX_LOAD(2, c + 32 * c_ld, c_ld);
  } else {
    TL_AMX_ZERO(0);
    TL_AMX_ZERO(1);
    TL_AMX_ZERO(2);
  }
  for (int s = 0; s < steps; ++s) {
    const char* as = a + s * a_ss;
    TL_AMX_LOAD(6, b + s * kAmxTileBytes, 64);
    TL_AMX_LOAD(3, as, a_rs);
    TL_AMX_LOAD(4, as + a_ts, a_rs);
    TL_AMX_LOAD(5, as + 2 * a_ts, a_rs);
    if constexpr (BF16) {
      TL_AMX_DP("tdpbf16ps", 0, 3, 6);
      TL_AMX_DP("tdpbf16ps", 1, 4, 6);
      TL_AMX_DP("tdpbf16ps", 2, 5, 6);
    } else {
      TL_AMX_DP("tdpbssd", 0, 3, 6);
      TL_AMX_DP("tdpbssd", 1, 4, 6);
      TL_AMX_DP("tdpbssd", 2, 5, 6);
    }
  }
  TL_AMX_STORE(0, c, c_ld);
  TL_AMX_STORE(1, c + 16 * c_ld, c_ld);
  TL_AMX_STORE(2, c + 32 * c_ld, c_ld);
}

/* Whether the AMX driver takes this GEMM: row-major A, whole 16 x 16 C tiles, whole tile steps of
 * k (32 bf16 / 64 int8), and at least one tile step of packed B within the pack budget. Other
 * shapes take the AVX-512 paths. */
template <int M, int N, int K, bool TRANS_A, int ELEM> struct AmxFits {
  static constexpr int KT = 64 / ELEM;  // k per tile step
  static constexpr bool value =
      !TRANS_A && M % 16 == 0 && N % 16 == 0 && K % KT == 0 && (N / 16) * kAmxTileBytes <= kAmxPackBBytes;
};
/* float16 (two bfloat16 per value): 8 k per tile step, and only for calls of at least
 * kAmxF16MinWork = M N K: four tile products per k pay for themselves on large blocks, not on small
 * ones. Per call on an Emerald Rapids core against the float32 multiply-adds (operands in L2,
 * docs/PERFORMANCE.md): 512 x 512 x 256 2.0x, 256 x 256 x 64 1.6x, 256 x 128 x 64 1.3x, 128^3
 * 1.1-1.2x alone but 0.7x inside the flash-attention kernel (128 x 128 blocks), 128 x 128 x 32 0.94x,
 * 64 x 64 x 128 (B transposed) 0.74x; and at least TL_CPU_AMX_F16_MIN_ROWS = 512 rows, which reuse
 * each split B pack (twice B's bytes, not kept across calls above the launch cache's 64 KiB) over 16
 * blocks of 32 rows: deep calls (a k loop of 32-deep GEMMs fused into one) ran 0.93x the
 * multiply-adds at 128 x 128 x 2048 and 0.83x at 256 x 256 x 2048, 0.93-0.98x the per-call 256 k at
 * 512 x 512 x 2048.
 * TL_CPU_AMX_F16=0 keeps float16 on the multiply-adds (a knob for the bench/ comparisons). */
#ifndef TL_CPU_AMX_F16
#define TL_CPU_AMX_F16 1
#endif
#ifndef TL_CPU_AMX_F16_MIN_WORK
#define TL_CPU_AMX_F16_MIN_WORK (1 << 22)
#endif
constexpr int64_t kAmxF16MinWork = TL_CPU_AMX_F16_MIN_WORK;
#ifndef TL_CPU_AMX_F16_MIN_ROWS
#define TL_CPU_AMX_F16_MIN_ROWS 512
#endif
template <int M, int N, int K, bool TRANS_A> struct AmxF16Fits {
  static constexpr bool value = TL_CPU_AMX_F16 && int64_t(M) * N * K >= kAmxF16MinWork &&
                                M >= TL_CPU_AMX_F16_MIN_ROWS && AmxFits<M, N, 4 * K, TRANS_A, 2>::value;
};
/* The AMX unit a GEMM's types and shape take: 0 none, 1 the bf16 tiles (bfloat16, or float16 as two
 * bfloat16 per value; float C), 2 the int8 tiles (int32 C). At run time the matching grant
 * (isa().amx_bf16 / amx_int8) decides; without it the call takes the AVX-512 paths. */
template <int M, int N, int K, bool TRANS_A, typename TA, typename TB, typename Acc> constexpr int amx_unit() {
  if constexpr (!same_type<TA, TB>::value) {
    return 0;
  } else if constexpr (TL_CPU_COMPILED_AMX_BF16 && same_type<Acc, float>::value && same_type<TA, bfloat16_t>::value) {
    return AmxFits<M, N, K, TRANS_A, 2>::value ? 1 : 0;
  } else if constexpr (TL_CPU_COMPILED_AMX_BF16 && same_type<Acc, float>::value && same_type<TA, half_t>::value) {
    return AmxF16Fits<M, N, K, TRANS_A>::value ? 1 : 0;
  } else if constexpr (TL_CPU_COMPILED_AMX_INT8 && same_type<Acc, int32_t>::value && same_type<TA, int8_t>::value) {
    return AmxFits<M, N, K, TRANS_A, 1>::value ? 2 : 0;
  } else {
    return 0;
  }
}

/* Packs tile steps [s0, s0 + sc) of B into b_pack ([jt][s][g][16 x 4 bytes], sc steps per column
 * tile): group g of step s is k = (s0 + s) * KT + g * E .. + E - 1 (E = 2 bf16 / 4 int8 per group). */
template <int N, bool TRANS_B, typename T>
inline void amx_pack_b(const T* B, int64_t ldb, int s0, int sc, uint32_t* b_pack) {
  constexpr int ELEM = static_cast<int>(sizeof(T)), E = 4 / ELEM, KT = 64 / ELEM, NTL = N / 16;
  if constexpr (TRANS_B) {
    /* B is [N, K]: the 64 bytes of one tile step of row j are group row j of the transposed tile. */
    for (int jt = 0; jt < NTL; ++jt)
      for (int s = 0; s < sc; ++s) {
        GroupRow r[16];
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) __builtin_memcpy(&r[j], B + (jt * 16 + j) * ldb + (s0 + s) * KT, 64);
        transpose16_groups(r);
        __builtin_memcpy(b_pack + (int64_t(jt) * sc + s) * 256, r, sizeof r);
      }
    return;
  }
  /* B is [K, N]: the E rows of one group, 64 bytes (64 int8 / 32 bf16 columns) at a time, are
   * interleaved into 4-byte groups with unpack-low/high shuffles (they work within 16-byte lanes),
   * and a 4 x 4 transpose of 16-byte lanes puts 16 columns into each 64-byte tile row. */
  const int64_t jt_stride = int64_t(sc) * 256;  // uint32 per column tile
  constexpr int CW = 64 / ELEM;                   // columns per 64-byte row piece
  constexpr int NW = N / CW * CW;                 // columns in whole pieces
  for (int s = 0; s < sc; ++s)
    for (int g = 0; g < 16; ++g) {
      const int kb = (s0 + s) * KT + g * E;
      const char* r0 = reinterpret_cast<const char*>(B + kb * ldb);
      uint32_t* d = b_pack + (s * 16 + g) * 16;
      for (int j0 = 0; j0 < NW; j0 += CW) {
        GroupRow out[4];
        load_group_rows<ELEM>(r0, ldb, j0, out);
        for (int q = 0; q < CW / 16; ++q)
          __builtin_memcpy(d + (j0 / 16 + q) * jt_stride, &out[q], 64);
      }
      for (int jt = NW / 16; jt < NTL; ++jt) {  // the column tiles past the whole 64-byte pieces
        uint32_t* dj = d + jt * jt_stride;
        for (int j = 0; j < 16; ++j) {
          uint32_t v = 0;
          for (int e = 0; e < E; ++e) {
            uint32_t x = 0;
            __builtin_memcpy(&x, r0 + (e * ldb + jt * 16 + j) * ELEM, ELEM);
            v |= x << (8 * ELEM * e);
          }
          dj[j] = v;
        }
      }
    }
}

/* Rows [i0, i0 + 16 * RT) of A, tile steps [s0, s0 + sc), into a_blk ([row tile][s][row][64 bytes]). */
template <int RT, typename T>
inline void amx_pack_a(const T* A, int64_t lda, int i0, int s0, int sc, char* a_blk) {
  constexpr int KT = 64 / static_cast<int>(sizeof(T));
  typedef int32_t V __attribute__((vector_size(64)));
  for (int r = 0; r < 16 * RT; ++r) {
    const char* src = reinterpret_cast<const char*>(A + (i0 + r) * lda + s0 * KT);
    char* d = a_blk + (r / 16) * sc * kAmxTileBytes + (r % 16) * 64;
    for (int s = 0; s < sc; ++s) {
      V v;
      __builtin_memcpy(&v, src + s * 64, 64);
      __builtin_memcpy(d + s * kAmxTileBytes, &v, 64);
    }
  }
}

/* C (float for bf16 and float16, int32 for int8; row-major) (+)= A B with A [M, K] row-major and B
 * [K, N] (TRANS_B: [N, K]), through the tiles; float16 as two bfloat16 per value (8 k per tile step,
 * four tile products per k, packed by amx_pack_a_f16 / amx_pack_b_f16: products exact, sums in
 * float32 as tdpbf16ps makes them). Chunks of k whose packed B fits kAmxPackBBytes; within a
 * chunk, 48-row blocks of A (packed into L1) against every 16-column tile of B (3 x 1 blocks of C
 * tiles), then the 32 or 16 rows left in 2 x 2 / 2 x 1 (1 x 2 / 1 x 1) blocks; each C block stays
 * in the tiles for the whole chunk. */
template <int M, int N, int K, bool TRANS_B, typename T, typename Acc>
inline void gemm_amx(const T* A, int64_t lda, const T* B, int64_t ldb, Acc* C, int64_t ldc, bool load_c,
                     uint64_t launch) {
  constexpr int ELEM = static_cast<int>(sizeof(T));
  constexpr bool kF16 = same_type<T, half_t>::value;
  constexpr bool kBf16 = ELEM == 2;                                           // tdpbf16ps (bf16, float16)
  constexpr int S = K / (kF16 ? 8 : 64 / ELEM);                               // tile steps of k
  constexpr int NTL = N / 16;                                                 // column tiles
  constexpr int SC = cmin(cmin(S, kAmxMaxSteps),  // steps per chunk: packed B and the A block within budget
                          cmin(kAmxPackBBytes / (NTL * kAmxTileBytes), kAmxABlockBytes / (3 * kAmxTileBytes)));
  constexpr int M3 = M / 48 * 48, NF = N / 32 * 32;  // rows in 3 x 1 blocks; columns in 2-tile pairs
  alignas(64) uint32_t b_pack[NTL * SC * 256];
  alignas(64) char a_blk[3 * SC * kAmxTileBytes];
  // B unwritten in this launch: packed once per launch and thread, every chunk after the one before
  // (chunk s0 at NTL * s0 tiles), and reused by the launch's later calls on the same B ("packed B
  // reused across the calls of one launch" above).
  // Only small packs (kAmxPackCacheMaxBytes): a large one is read back from L3 at about the cost of
  // packing it again (the 2048^3 block loops' 256 KiB packs: bf16 0.98-1.01x, int8 0.99-1.05x with
  // them on the AMX Xeon, within noise).
  constexpr int64_t kPackBytes = int64_t(NTL) * S * kAmxTileBytes;
  bool hit = false;
  uint32_t* const cached =
      launch != 0 && M >= kPackCacheMinM && kPackBytes <= kAmxPackCacheMaxBytes
          ? static_cast<uint32_t*>(pack_cache_lookup(reinterpret_cast<const void*>(&gemm_amx<M, N, K, TRANS_B, T, Acc>),
                                                     launch, B, ldb, kPackBytes, &hit))
          : nullptr;
  // A rows at most kAmxDirectALdBytes apart are read by the tile loads in place (a tile's 16 rows
  // then span at most 8 KiB, spread over the L1 sets); wider rows are packed (see above).
  const bool direct_a = !kF16 && lda * ELEM <= kAmxDirectALdBytes;
  amx_configure();
  const int64_t c_ld = ldc * 4;
  for (int s0 = 0; s0 < S; s0 += SC) {
    const int sc = S - s0 < SC ? S - s0 : SC;
    uint32_t* const bpk = cached ? cached + int64_t(NTL) * s0 * 256 : b_pack;
    if (!hit) {
      if constexpr (kF16) amx_pack_b_f16<N, TRANS_B>(B, ldb, s0, sc, bpk);
      else amx_pack_b<N, TRANS_B>(B, ldb, s0, sc, bpk);
    }
    const bool lc = load_c || s0 > 0;
    const char* bp = reinterpret_cast<const char*>(bpk);
    const int64_t bt = int64_t(sc) * kAmxTileBytes, at = bt;  // one tile's steps, A and B alike
    // A's tiles: read in place when its rows are close (direct_a), else packed per row block
    const int64_t a_ss = direct_a ? 64 : kAmxTileBytes, a_rs = direct_a ? lda * ELEM : 64;
    auto a_rows = [&](int i0, int rt) -> const char* {  // rows [i0, i0 + 16 * rt) from step s0 on
      if (direct_a) return reinterpret_cast<const char*>(A + int64_t(i0) * lda) + int64_t(s0) * 64;
      if constexpr (kF16) {
        if (rt == 3) amx_pack_a_f16<3>(A, lda, i0, s0, sc, a_blk);
        else if (rt == 2) amx_pack_a_f16<2>(A, lda, i0, s0, sc, a_blk);
        else amx_pack_a_f16<1>(A, lda, i0, s0, sc, a_blk);
      } else {
        if (rt == 3) amx_pack_a<3>(A, lda, i0, s0, sc, a_blk);
        else if (rt == 2) amx_pack_a<2>(A, lda, i0, s0, sc, a_blk);
        else amx_pack_a<1>(A, lda, i0, s0, sc, a_blk);
      }
      return a_blk;
    };
    const int64_t a_ts = direct_a ? 16 * lda * ELEM : at;
    for (int i0 = 0; i0 < M3; i0 += 48) {
      const char* ap = a_rows(i0, 3);
      char* ci = reinterpret_cast<char*>(C + i0 * ldc);
      for (int jt = 0; jt < NTL; ++jt)
        amx_block31<kBf16>(sc, ap, a_ts, a_ss, a_rs, bp + jt * bt, ci + jt * 64, c_ld, lc);
    }
    if constexpr (M - M3 == 32 || M - M3 == 16) {
      constexpr int RT = (M - M3) / 16;
      const char* ap = a_rows(M3, RT);
      char* ci = reinterpret_cast<char*>(C + M3 * ldc);
      for (int j0 = 0; j0 < NF; j0 += 32)
        amx_block<kBf16, RT, 2>(sc, ap, a_ts, a_ss, a_rs, bp + (j0 / 16) * bt, bt, ci + j0 * 4, c_ld, lc);
      if constexpr (NF < N)
        amx_block<kBf16, RT, 1>(sc, ap, a_ts, a_ss, a_rs, bp + (NF / 16) * bt, bt, ci + NF * 4, c_ld, lc);
    }
  }
  amx_release();
}
#endif

/* One tier with an accumulator-typed C: the bf16 instructions when usable, else multiply-adds. */
template <int VB, int M, int N, int K, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename Acc>
inline void gemm_tier_acc(const TA* A, int64_t lda, const TB* B, int64_t ldb, Acc* C, int64_t ldc, bool load_c,
                          uint64_t launch = 0) {
#if TL_CPU_COMPILED_AMX_BF16 || TL_CPU_COMPILED_AMX_INT8
  if constexpr (VB == 64) {
    constexpr int kUnit = amx_unit<M, N, K, TRANS_A, TA, TB, Acc>();
    if constexpr (kUnit != 0) {
      if (kUnit == 1 ? isa().amx_bf16 : isa().amx_int8) {
        gemm_amx<M, N, K, TRANS_B>(A, lda, B, ldb, C, ldc, load_c, launch);
        return;
      }
    }
  }
#endif
#if TL_CPU_COMPILED_AVX512_BF16
  if constexpr (VB == 64 && same_type<TA, bfloat16_t>::value && same_type<TB, bfloat16_t>::value &&
                same_type<Acc, float>::value) {
    if (isa().bf16) {
      gemm_dot<M, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, C, ldc, load_c, launch);
      return;
    }
  }
#endif
#if TL_CPU_COMPILED_AVX512_VNNI
  if constexpr (VB == 64 && same_type<TA, int8_t>::value && same_type<TB, int8_t>::value &&
                same_type<Acc, int32_t>::value) {
    if (isa().vnni) {
      gemm_dot<M, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, C, ldc, load_c, launch);
      return;
    }
  }
#endif
  if constexpr ((VB == 64 || VB == 32) && M == 1 && same_type<TA, float>::value && same_type<TB, float>::value &&
                same_type<Acc, float>::value && !TRANS_B && N % (VB / 4) == 0) {
    gemm_f32_gemv<VB, N, TRANS_A>(K, A, lda, B, ldb, C, load_c);
    return;
  }
  if constexpr (BlockedF32Fits<VB, M, N, K, TRANS_A, TRANS_B, TA, TB, Acc>::value) {
    gemm_f32_blocked<VB, M, N, K>(A, lda, B, ldb, C, ldc, load_c);
    return;
  }
  gemm_acc<VB, M, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, C, ldc, load_c);
}

/* R rows of a C whose dtype is not the accumulator's, through a converted copy. */
template <int VB, int R, int N, int K, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void gemm_rows_converted(const TA* A, int64_t lda, const TB* B, int64_t ldb, TC* C, int64_t ldc, bool clear,
                                typename compute_type<TC>::type* tmp, uint64_t launch) {
  typedef typename compute_type<TC>::type Acc;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < N; ++j) tmp[i * N + j] = clear ? Acc(0) : to_acc<Acc>(C[i * ldc + j]);
  gemm_tier_acc<VB, R, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, tmp, N, true, launch);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < N; ++j) C[i * ldc + j] = TC(tmp[i * N + j]);
}

template <int VB, int M, int N, int K, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void gemm_tier(const TA* A, int64_t lda, const TB* B, int64_t ldb, TC* C, int64_t ldc, bool clear,
                      uint64_t launch) {
  typedef typename compute_type<TC>::type Acc;
  if constexpr (same_type<TC, Acc>::value) {
    gemm_tier_acc<VB, M, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, C, ldc, !clear, launch);
  } else {
    constexpr int MC = cmax(1, cmin(M, kTempCBytes / (N * static_cast<int>(sizeof(Acc)))));
    alignas(64) Acc tmp[MC * N];
    for (int m0 = 0; m0 + MC <= M; m0 += MC)
      gemm_rows_converted<VB, MC, N, K, TRANS_A, TRANS_B>(TRANS_A ? A + m0 : A + m0 * lda, lda, B, ldb, C + m0 * ldc,
                                                          ldc, clear, tmp, launch);
    if constexpr (M % MC != 0) {
      constexpr int M0 = M - M % MC;
      gemm_rows_converted<VB, M % MC, N, K, TRANS_A, TRANS_B>(TRANS_A ? A + M0 : A + M0 * lda, lda, B, ldb,
                                                              C + M0 * ldc, ldc, clear, tmp, launch);
    }
  }
}

}  // namespace gemm_impl

using gemm_impl::gemm_begin_launch;    // a kernel entry's token for the GEMMs of one grid launch
using gemm_impl::gemm_end_launch;      // ... and the release of its packs once the grid has finished
using gemm_impl::gemm_ranges_overlap;  // whether a reused B overlaps a written tensor

/* Row-major A is [M, K] (TRANS_A: [K, M]), B is [K, N] (TRANS_B: [N, K]), C is [M, N]; each with
 * unit stride in its last dimension and the given leading dimension (elements). launch: 0, or a
 * token of gemm_begin_launch() for a launch in which nothing writes B's memory: B's pack may then be
 * reused by the launch's later calls ("packed B reused across the calls of one launch" above). */
template <int M, int N, int K, bool TRANS_A, bool TRANS_B, typename TA, typename TB, typename TC>
inline void gemm(const TA* A, int64_t lda, const TB* B, int64_t ldb, TC* C, int64_t ldc, bool clear,
                 uint64_t launch = 0) {
  static_assert(M > 0 && N > 0, "tl::cpu::gemm needs a non-empty C tile");
  if constexpr (K <= 0) {  // an empty sum: C keeps its value, or becomes 0
    if (clear)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) C[i * ldc + j] = TC(typename compute_type<TC>::type(0));
  } else {
#if TL_CPU_COMPILED_AVX512
    if (isa().level == kIsaAvx512) {
      gemm_impl::gemm_tier<64, M, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, C, ldc, clear, launch);
      return;
    }
#endif
#if TL_CPU_COMPILED_AVX2
    if (isa().level == kIsaAvx2) {
      gemm_impl::gemm_tier<32, M, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, C, ldc, clear, launch);
      return;
    }
#endif
    gemm_impl::gemm_tier<16, M, N, K, TRANS_A, TRANS_B>(A, lda, B, ldb, C, ldc, clear, launch);
  }
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_GEMM_H_
