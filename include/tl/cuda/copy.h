// Global <-> shared data movement: cp.async (sm_80+, asynchronous global -> shared copies of
// 4, 8 or 16 bytes, with a zero-filling form for predicated tails) and plain vector accesses.
//
// Ordering contract (what insert_sync relies on): a cp.async is complete for the issuing thread
// after cp_async_wait<n>() retires its group; other threads see the data only after a
// __syncthreads() that follows that wait.
#pragma once

#include "tl/cuda/types.h"

namespace tl {

// Copies kBytes (4, 8 or 16) from global `src` to shared `dst`. 16-byte copies bypass L1 (.cg):
// tiles staged through shared memory are not re-read from L1.
template <int kBytes>
TL_DEVICE void cp_async(void* dst, const void* src) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes");
  if (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(smem_addr(dst)), "l"(src), "n"(kBytes)
                 : "memory");
  }
}

// Predicated form: when `valid` is false no global byte is read and the kBytes of `dst` are
// zero-filled (src-size 0). `src` must still be a valid address (callers pass the tensor base
// for out-of-range elements), since some hardware checks it.
template <int kBytes>
TL_DEVICE void cp_async_zfill(void* dst, const void* src, bool valid) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes");
  int src_size = valid ? kBytes : 0;
  if (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(src_size)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(smem_addr(dst)), "l"(src), "n"(kBytes),
                 "r"(src_size)
                 : "memory");
  }
}

// Closes the group of cp.async issued since the previous commit.
TL_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most kPending committed groups of this thread are still in flight.
template <int kPending>
TL_DEVICE void cp_async_wait() {
  if (kPending == 0) {
    asm volatile("cp.async.wait_all;" ::: "memory");
  } else {
    asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
  }
}

// Synchronous vector copy of N elements (one 4/8/16-byte access each way).
template <typename T, int N>
TL_DEVICE void copy_sync(T* dst, const T* src) {
  copy_vec<T, N>(dst, src);
}

// Predicated synchronous copy: zero-fills dst when `valid` is false (src is not read).
template <typename T, int N>
TL_DEVICE void copy_sync_zfill(T* dst, const T* src, bool valid) {
  typedef typename storage_of<sizeof(T) * N>::type S;
  S v;
  if (valid) {
    v = *reinterpret_cast<const S*>(src);
  } else {
    memset(&v, 0, sizeof(S));
  }
  *reinterpret_cast<S*>(dst) = v;
}

namespace copy_detail {
template <int G, int W>
TL_DEVICE uint32_t pick(const uint32_t (&w)[G][W], int i, int x) {
  uint32_t v = w[0][x];
#pragma unroll
  for (int j = 1; j < G; ++j) v = i == j ? w[j][x] : v;
  return v;
}
}  // namespace copy_detail

// Stores of a register fragment whose G consecutive lanes hold neighbouring groups of V elements of
// a row (the mma / wgmma accumulator: lane q of a quad holds columns 8u + 2q, 8u + 2q + 1 for every
// u). The G lanes exchange their groups through shuffles so that lane q ends with the G * V elements
// of register block q (src[q * R .. q * R + V - 1] of lanes 0 .. G-1, in lane order) and stores them
// with one vector access at dst (which the caller has already offset for lane q). src[j * R + k],
// j < G, k < V: this thread's groups, converted from S to D. q: the lane's index in its group of G
// (lane & (G - 1)); every lane of the group must take part.
template <int G, int V, int R, typename D, typename S>
TL_DEVICE void store_exchange(D* dst, const S* src, int q) {
  constexpr int kBytes = V * int(sizeof(D)), W = kBytes / 4;
  static_assert(kBytes % 4 == 0 && G * kBytes <= 16 && (G & (G - 1)) == 0, "store_exchange: 4-byte groups, <= 16 bytes");
  uint32_t w[G][W], r[G][W];
#pragma unroll
  for (int j = 0; j < G; ++j) {
    alignas(16) D t[V];
#pragma unroll
    for (int k = 0; k < V; ++k) t[k] = static_cast<D>(src[j * R + k]);
    memcpy(w[j], t, kBytes);
  }
  const unsigned mask = __activemask();
  // Round i: lane q reads lane (q + i) mod G, which sends its group number q.
#pragma unroll
  for (int i = 0; i < G; ++i)
#pragma unroll
    for (int x = 0; x < W; ++x)
      r[i][x] = __shfl_sync(mask, copy_detail::pick<G, W>(w, (q - i) & (G - 1), x), (q + i) & (G - 1), G);
  typedef typename storage_of<G * kBytes>::type Out;
  alignas(16) uint32_t out[G * W];
#pragma unroll
  for (int p = 0; p < G; ++p)
#pragma unroll
    for (int x = 0; x < W; ++x) out[p * W + x] = copy_detail::pick<G, W>(r, (p - q) & (G - 1), x);
  *reinterpret_cast<Out*>(dst) = *reinterpret_cast<const Out*>(out);
}

// N elements converted from S to D, reading and writing each side as one vector access when its
// size is 2, 4, 8 or 16 bytes (both pointers aligned to it), element by element otherwise.
template <int N, typename D, typename S>
TL_DEVICE void copy_cast(D* dst, const S* src) {
  constexpr int kSrcBytes = int(sizeof(S)) * N, kDstBytes = int(sizeof(D)) * N;
  alignas(kSrcBytes <= 16 ? kSrcBytes : 16) S in[N];
  if constexpr (kSrcBytes <= 16 && (kSrcBytes & (kSrcBytes - 1)) == 0) {
    typedef typename storage_of<kSrcBytes>::type SS;
    *reinterpret_cast<SS*>(in) = *reinterpret_cast<const SS*>(src);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) in[i] = src[i];
  }
  alignas(kDstBytes <= 16 ? kDstBytes : 16) D out[N];
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = static_cast<D>(in[i]);
  if constexpr (kDstBytes <= 16 && (kDstBytes & (kDstBytes - 1)) == 0) {
    typedef typename storage_of<kDstBytes>::type DS;
    *reinterpret_cast<DS*>(dst) = *reinterpret_cast<const DS*>(out);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = out[i];
  }
}

// Loads that bypass L1 allocation for streamed data (read once).
TL_DEVICE uint4 ld_global_nc_v4(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

}  // namespace tl
