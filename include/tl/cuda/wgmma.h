// Block-level GEMM on Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): C[M, N] += op(A) op(B) for
// f16 / bf16 operands with float accumulators, for the generated code of T.gemm.
//
// Warpgroups (4 consecutive warps, 128 threads) split C as src/layout/mma_layout.h says
// (make_wgmma_c_fragment): warpgroup g = gm * kWgN + gn owns rows [gm * M / kWgM, ...) and
// columns [gn * N / kWgN, ...) and issues one m64nNk16 instruction per 64 rows and 16 of K. Inside
// a warpgroup, warp w holds rows 16 w .. 16 w + 15 of each 64-row instruction tile, its registers
// numbered as the instruction's D list: C[(N / kWgN / 2) * mi + 4 * nt + i] (the mma.sync m16n8
// accumulator order, n-tiles first), mi = instruction row tile.
//
// Shared operands are in the "gmma" layouts of src/layout/swizzle.h (make_gmma_layout): the
// tile's contiguous dimension is cut into panels of kSwz bytes; each panel stores its rows kSwz
// bytes apart, with the 16-byte chunks of a row XOR-permuted by the hardware's swizzle pattern of
// that width (128 / 64 / 32 bytes). The descriptors below describe exactly that layout; the tile
// base must be aligned to 8 rows of a panel (8 * kSwz bytes), which plan_shared_memory guarantees.
//
// Synchronous: the call issues all instructions, then waits for them (wgmma.wait_group 0), so
// the accumulators and the shared tiles are free when it returns, as T.gemm promises. Shared
// memory written through the generic proxy (stores, cp.async) is made visible to the tensor
// cores' async proxy by a fence.proxy.async before the first instruction (after the barrier that
// ordered the writes).
#pragma once

#include "tl/cuda/common.h"
#include "tl/cuda/types.h"
#include "tl/cuda/wgmma_ops.h"

namespace tl {

TL_DEVICE void fence_proxy_async() {
#if TL_ARCH >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
TL_DEVICE void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
TL_DEVICE void wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
template <int N>
TL_DEVICE void wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}
// Keeps the compiler from moving reads or writes of a register across the asm statements around
// it (wgmma reads and writes its operands asynchronously, which the compiler cannot see).
TL_DEVICE void fence_register(float& r) { asm volatile("" : "+f"(r)::"memory"); }
TL_DEVICE void fence_register(uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

namespace wgmma_ops {
// float8 operands (include/tl/cuda/wgmma_ops_f8.h, included by kernels that use them).
template <int N>
struct F8;
}  // namespace wgmma_ops

namespace wgmma_detail {

// This thread's warpgroup, broadcast from lane 0: the value is the same in every lane of a warp,
// which ptxas only knows from the shuffle. The descriptors derived from it then live in uniform
// registers (computed once, offset per instruction by uniform adds) instead of being copied from
// vector registers (R2UR) before every wgmma.
// TL_WGMMA_WARPGROUP_PER_THREAD: computed per thread as before 2026-11-27, for A/B measurements
// (bench/gpu_hopper_variants.py flash).
TL_DEVICE int warpgroup_index() {
#if defined(TL_WGMMA_WARPGROUP_PER_THREAD)
  return static_cast<int>(thread_linear()) / 128;
#else
  return __shfl_sync(0xffffffffu, static_cast<int>(thread_linear()) / 128, 0);
#endif
}

// The operand code of an fp8 type in wgmma_ops::F8 (0 e4m3, 1 e5m2).
template <typename T>
struct f8_code {
  enum : int { value = is_same<T, fp8_e5m2_t>::value ? 1 : 0 };
};

// Swizzle mode field of the descriptor: 128 B -> 1, 64 B -> 2, 32 B -> 3.
template <int kSwz>
struct swizzle_mode {
  static_assert(kSwz == 128 || kSwz == 64 || kSwz == 32, "gmma layouts swizzle 32, 64 or 128 bytes");
  enum : uint64_t { value = kSwz == 128 ? 1 : kSwz == 64 ? 2 : 3 };
};

// Matrix descriptor: start address, leading / stride byte offsets (all >> 4), swizzle mode.
template <int kSwz>
TL_DEVICE uint64_t make_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (swizzle_mode<kSwz>::value << 62);
}

// Byte offset from the tile base of the 16-byte chunk holding element (row, col) before
// swizzling, for a stored tile of kRows rows (the non-contiguous dimension) whose contiguous
// dimension is cut into panels of kSwz bytes. `col` is a multiple of 8 (a chunk start).
template <typename T, int kRows, int kSwz>
TL_HOST_DEVICE constexpr uint32_t chunk_offset(int row, int col) {
  constexpr int kPanel = kSwz / int(sizeof(T));
  return static_cast<uint32_t>((col / kPanel) * (kRows * kSwz) + row * kSwz + (col % kPanel) * int(sizeof(T)));
}

// Descriptors of one operand: the descriptor of the slice at (mn0 + mn, k) is the base
// descriptor for mn0 (a run-time warpgroup offset) plus a compile-time offset for (mn, k), added
// to the start-address field (16-byte units; shared addresses stay below 2^18, so the field does
// not overflow into the next one).
//   K-major (stored [MN][K], K contiguous): 8-row groups along MN are 8 * kSwz bytes apart (SBO);
//     the 16 K-elements of one instruction lie inside one swizzled row, so LBO is unused (1).
//   MN-major (stored [K][MN], MN contiguous): panels along MN are kRows * kSwz bytes apart (LBO),
//     8-row groups along K are 8 * kSwz bytes apart (SBO).
template <typename T, bool kMNMajor, int kRows, int kSwz>
struct Operand {
  uint32_t lo, hi;  // the base descriptor's two words (offsets only change the low one)
  TL_DEVICE Operand(const T* tile, int mn0) {
    const uint32_t addr = smem_addr(tile);
    uint64_t d;
    if constexpr (!kMNMajor) {
      d = make_desc<kSwz>(addr + chunk_offset<T, kRows, kSwz>(mn0, 0), 16, 8 * kSwz);
    } else {
      d = make_desc<kSwz>(addr + chunk_offset<T, kRows, kSwz>(0, mn0), kRows * kSwz, 8 * kSwz);
    }
    lo = static_cast<uint32_t>(d);
    hi = static_cast<uint32_t>(d >> 32);
  }
  // (mn, k) are constants in unrolled loops, so the offset folds into an immediate.
  TL_DEVICE uint64_t at(int mn, int k) const {
    const uint32_t off = kMNMajor ? chunk_offset<T, kRows, kSwz>(k, mn) : chunk_offset<T, kRows, kSwz>(mn, k);
    return (static_cast<uint64_t>(hi) << 32) | (lo + (off >> 4));
  }
};

}  // namespace wgmma_detail

// A and B in shared memory. kTransA: A stored [K][M] (MN-major), else [M][K]; kTransB: B stored
// [N][K] (K-major), else [K][N] (MN-major). kSwzA / kSwzB: the operands' gmma swizzle widths.
// kPending = 1 (pipelined loops, see src/transform/inject_pipeline.h): return with this call's
// instructions still in flight, having waited for the previous call's; C and the two tiles stay in
// use until the next call returns or tl::wgmma_drain. kPending = -1 (overlapped GEMMs of a
// warp-specialized loop, src/target/cuda/ws_overlap.cc): issue only, wait for nothing; C and
// the tiles stay in use until a tl::wgmma_wait_regs that covers this call. T (A's type) and TB: f16 or bf16 (equal),
// or fp8 e4m3 / e5m2 (any pair; then both operands K-major, m64nNk32 instructions). kProxyFence:
// fence.proxy.async first, so that shared-memory writes of threads (generic proxy) are visible to
// the wgmma (async proxy); false only where TMA alone wrote both tiles. scale_d = 0 (T.gemm's
// clear_accum, possibly a run-time condition): C = op(A) op(B), the first instruction of each row tile
// does not read C (no clearing of the registers first; ptxas then needs no zeros in them).
template <int M, int N, int K, int kWgM, int kWgN, bool kTransA, bool kTransB, int kSwzA, int kSwzB, typename T,
          int kPending = 0, typename TB = T, bool kProxyFence = true>
TL_DEVICE void wgmma_gemm_ss(const T* A, const TB* B, float* C, int scale_d = 1) {
  constexpr bool kF8 = sizeof(T) == 1;
  constexpr int kKI = kF8 ? 32 : 16;  // K per instruction
  constexpr int kMw = M / kWgM, kNw = N / kWgN, kMI = kMw / 64, kKS = K / kKI;
  static_assert(M % (64 * kWgM) == 0 && N % (8 * kWgN) == 0 && kNw <= 256 && K % kKI == 0, "wgmma tile does not split");
  constexpr bool kBF16 = is_same<T, bfloat16_t>::value;
  static_assert(kBF16 || is_same<T, half_t>::value || kF8, "wgmma_gemm_ss: f16, bf16 or fp8 operands");
  static_assert(!kF8 || (!kTransA && kTransB && sizeof(TB) == 1), "fp8 wgmma: both operands K-major");
  const int wg = wgmma_detail::warpgroup_index();
  // Threads outside the GEMM's warpgroups skip it. Not for issue-only calls (kPending = -1):
  // warp_specialize makes those only where every thread is in one of the GEMM's warpgroups, and
  // ptxas must see every thread issue the same wgmma groups to know which one a later
  // wgmma.wait_group retires (otherwise it serializes every wgmma of the kernel, C7514).
  if constexpr (kPending >= 0)
    if (wg >= kWgM * kWgN) return;
  const wgmma_detail::Operand<T, kTransA, kTransA ? K : M, kSwzA> a(A, (wg / kWgN) * kMw);
  const wgmma_detail::Operand<TB, !kTransB, kTransB ? N : K, kSwzB> b(B, (wg % kWgN) * kNw);
  if constexpr (kProxyFence) fence_proxy_async();
#pragma unroll
  for (int i = 0; i < kMI * kNw / 2; ++i) fence_register(C[i]);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < kKS; ++ks)
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
      if constexpr (kF8)
        wgmma_ops::F8<kNw>::template ss<wgmma_detail::f8_code<T>::value, wgmma_detail::f8_code<TB>::value>(
            C + mi * (kNw / 2), a.at(64 * mi, kKI * ks), b.at(0, kKI * ks), ks == 0 ? scale_d : 1);
      else
        wgmma_ops::F32<kNw>::template ss<kBF16, kTransA ? 1 : 0, kTransB ? 0 : 1>(
            C + mi * (kNw / 2), a.at(64 * mi, kKI * ks), b.at(0, kKI * ks), ks == 0 ? scale_d : 1);
    }
  wgmma_commit();
  if constexpr (kPending >= 0) wgmma_wait<kPending>();
  if constexpr (kPending == 0) {
#pragma unroll
    for (int i = 0; i < kMI * kNw / 2; ++i) fence_register(C[i]);
  }
}

// Waits for every wgmma of this thread's warpgroup (after a pipelined loop of kPending GEMMs),
// then lets the compiler read the kRegs accumulators again.
template <int kRegs>
TL_DEVICE void wgmma_drain(float* C) {
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < kRegs; ++i) fence_register(C[i]);
}

// Waits until at most kPending wgmma groups of this thread's warpgroup are in flight (those issued
// with kPending = -1), then lets the compiler read and write the kRegs accumulators at C again.
template <int kPending, int kRegs>
TL_DEVICE void wgmma_wait_regs(float* C) {
  wgmma_wait<kPending>();
#pragma unroll
  for (int i = 0; i < kRegs; ++i) fence_register(C[i]);
}

// A in registers (make_wgmma_a_fragment: the m16n8k16 A fragment of each warp's 16 rows, k-tile
// kt of instruction row tile mi at A[8 * (kt + K / 16 * mi)]), B in shared memory. kPending: 0
// (wait for this call) or -1 (issue only, as for wgmma_gemm_ss).
template <int M, int N, int K, int kWgM, int kWgN, bool kTransB, int kSwzB, typename T, bool kProxyFence = true,
          int kPending = 0>
TL_DEVICE void wgmma_gemm_rs(const T* A, const T* B, float* C) {
  constexpr int kMw = M / kWgM, kNw = N / kWgN, kMI = kMw / 64, kKS = K / 16;
  static_assert(M % (64 * kWgM) == 0 && N % (8 * kWgN) == 0 && kNw <= 256 && K % 16 == 0, "wgmma tile does not split");
  constexpr bool kBF16 = is_same<T, bfloat16_t>::value;
  static_assert(kBF16 || is_same<T, half_t>::value, "wgmma_gemm_rs: f16 or bf16 operands");
  const int wg = wgmma_detail::warpgroup_index();
  // Threads outside the GEMM's warpgroups skip it. Not for issue-only calls (kPending = -1):
  // warp_specialize makes those only where every thread is in one of the GEMM's warpgroups, and
  // ptxas must see every thread issue the same wgmma groups to know which one a later
  // wgmma.wait_group retires (otherwise it serializes every wgmma of the kernel, C7514).
  if constexpr (kPending >= 0)
    if (wg >= kWgM * kWgN) return;
  const wgmma_detail::Operand<T, !kTransB, kTransB ? N : K, kSwzB> b(B, (wg % kWgN) * kNw);
  uint32_t a[kMI * kKS][4];
#pragma unroll
  for (int t = 0; t < kMI * kKS; ++t) {
    memcpy(a[t], A + 8 * t, 16);
#pragma unroll
    for (int r = 0; r < 4; ++r) fence_register(a[t][r]);
  }
  if constexpr (kProxyFence) fence_proxy_async();  // B written by threads: see wgmma_gemm_ss
#pragma unroll
  for (int i = 0; i < kMI * kNw / 2; ++i) fence_register(C[i]);
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < kKS; ++ks)
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
      wgmma_ops::F32<kNw>::template rs<kBF16, kTransB ? 0 : 1>(C + mi * (kNw / 2), a[ks + kKS * mi], b.at(0, 16 * ks));
  wgmma_commit();
  static_assert(kPending == 0 || kPending == -1, "wgmma_gemm_rs: kPending is 0 or -1");
  if constexpr (kPending == 0) {
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kMI * kNw / 2; ++i) fence_register(C[i]);
  }
}

}  // namespace tl
