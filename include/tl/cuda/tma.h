// Hopper (sm_90) asynchronous data movement and the synchronization it needs: the bulk tensor copy
// engine (TMA) driven by tensor maps, shared-memory mbarriers with transaction counts, named
// barriers, and register reallocation between warpgroups (setmaxnreg, sm_90a).
//
// Warp-specialized pipelines (src/transform/warp_specialize.h) use them like this, per stage s of
// a ring of S stages and fill j of it (parity = j & 1):
//   producer thread: mbarrier_wait(empty[s], parity ^ 1)       // the consumers released fill j-1
//                    mbarrier_arrive_expect_tx(full[s], bytes)  // one arrival + the bytes to come
//                    tma_load(map, smem, full[s], coords...)    // completes `bytes` on full[s]
//   consumer threads: mbarrier_wait(full[s], parity)            // fill j has landed
//                    ... read the stage (wgmma) ...
//                    mbarrier_arrive_warp(empty[s])             // every consumer warp, after its reads
// An mbarrier phase completes when its pending arrival count reaches zero and every expected
// transaction byte has arrived; try_wait.parity(p) returns once the phase of parity p has
// completed (on a fresh barrier, in phase 0, parity 1 counts as completed).
#pragma once

#include "tl/cuda/common.h"

namespace tl {

// A CUtensorMap: 128 opaque bytes, 64-byte aligned, encoded on the host (cuTensorMapEncodeTiled)
// and passed by value as a `const __grid_constant__` kernel parameter.
struct alignas(64) TmaDescriptor {
  unsigned long long data[16];
};

TL_DEVICE void mbarrier_init(uint64_t* bar, uint32_t count) {
#if TL_ARCH >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
#endif
}

// Makes the initialized barriers visible to the async proxy (TMA) and to the other threads (a
// __syncthreads must follow).
TL_DEVICE void fence_barrier_init() {
#if TL_ARCH >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

TL_DEVICE void mbarrier_arrive(uint64_t* bar) {
#if TL_ARCH >= 900
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_addr(bar)) : "memory");
#endif
}

// One arrival for the whole warp, after every lane has reached this point (the consumers' release of
// a stage: the empty barriers count warps, not threads). __syncwarp orders the lanes' reads of the
// stage before lane 0's arrival, which releases them at CTA scope. Every lane of the warp must call.
TL_DEVICE void mbarrier_arrive_warp(uint64_t* bar) {
#if TL_ARCH >= 900
  __syncwarp();
  if ((threadIdx.x & 31) == 0) mbarrier_arrive(bar);
#endif
}

TL_DEVICE void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#if TL_ARCH >= 900
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
#endif
}

TL_DEVICE void mbarrier_wait(uint64_t* bar, uint32_t parity) {
#if TL_ARCH >= 900
  asm volatile(
      "{\n.reg .pred p;\nTL_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@p bra TL_DONE;\nbra TL_WAIT;\nTL_DONE:\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
#endif
}

TL_DEVICE void prefetch_tma_descriptor(const TmaDescriptor& d) {
#if TL_ARCH >= 900
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&d)) : "memory");
#endif
}

// Global -> shared copy of one box of the tensor map `d` at element coordinates c0 (innermost) ...,
// completing its bytes on `bar`. Elements outside the tensor arrive as zeros (and still count).
TL_DEVICE void tma_load(const TmaDescriptor& d, void* smem, uint64_t* bar, int c0) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];" ::"r"(
          smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0)
      : "memory");
#endif
}
TL_DEVICE void tma_load(const TmaDescriptor& d, void* smem, uint64_t* bar, int c0, int c1) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
      : "memory");
#endif
}
TL_DEVICE void tma_load(const TmaDescriptor& d, void* smem, uint64_t* bar, int c0, int c1, int c2) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
#endif
}
TL_DEVICE void tma_load(const TmaDescriptor& d, void* smem, uint64_t* bar, int c0, int c1, int c2, int c3) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
#endif
}
TL_DEVICE void tma_load(const TmaDescriptor& d, void* smem, uint64_t* bar, int c0, int c1, int c2, int c3, int c4) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, "
      "%7}], [%2];" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
#endif
}

// Thread-block clusters (sm_90). Multicast form of tma_load: the box lands at the same shared
// offset in every CTA of the cluster whose bit is set in `mask`, and completes its bytes on the
// mbarrier at `bar`'s offset in each of them. The CTAs of a cluster each load a share of a tile they
// all need (src/target/cuda/ws_tma_copies.cc), so each full barrier expects the whole tile.
TL_DEVICE void tma_load_multicast(const TmaDescriptor& d, void* smem, uint64_t* bar, uint16_t mask, int c0, int c1) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, "
      "%5}], [%2], %3;" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "h"(mask), "r"(c0), "r"(c1)
      : "memory");
#endif
}
TL_DEVICE void tma_load_multicast(const TmaDescriptor& d, void* smem, uint64_t* bar, uint16_t mask, int c0, int c1,
                                  int c2) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, "
      "%5, %6}], [%2], %3;" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "h"(mask), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
#endif
}
TL_DEVICE void tma_load_multicast(const TmaDescriptor& d, void* smem, uint64_t* bar, uint16_t mask, int c0, int c1,
                                  int c2, int c3) {
#if TL_ARCH >= 900
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, "
      "%5, %6, %7}], [%2], %3;" ::"r"(smem_addr(smem)),
      "l"(reinterpret_cast<uint64_t>(&d)), "r"(smem_addr(bar)), "h"(mask), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
#endif
}

// Called by every thread of a warp (converged): once the whole warp is past this point, one arrival
// of the warp on the mbarrier at `bar`'s offset in each of the first `ctas` CTAs of the cluster
// (this CTA included; lane r signals CTA r), after the warp's earlier reads of the stage. The
// barriers count one arrival per warp and CTA. The arrival has the default (CTA-scope release)
// semantics: the reads it orders are of this CTA's shared memory, and the writes that wait for it
// are TMA writes the peer's producer issues after observing it. (An arrival per thread and CTA with
// release at cluster scope, a fence each, ran a 2-CTA GEMM at half speed on an H100.)
TL_DEVICE void mbarrier_arrive_cluster_warps(uint64_t* bar, uint32_t ctas) {
#if TL_ARCH >= 900
  __syncwarp();
  const uint32_t lane = threadIdx.x & 31;
  if (lane < ctas)
    asm volatile(
        "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
        "r"(lane)
        : "memory");
#endif
}

// A barrier of every thread of every CTA of the cluster, with release/acquire ordering of memory
// (shared memory of the whole cluster included).
TL_DEVICE void cluster_sync() {
#if TL_ARCH >= 900
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
#endif
}

// This CTA's rank in its cluster.
TL_DEVICE int cluster_ctarank() {
#if TL_ARCH >= 900
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return static_cast<int>(r);
#else
  return 0;
#endif
}

// Shared -> global copy of one box (the epilogue form): the writing threads must have made their
// stores visible to the async proxy (fence_proxy_async in each, then a barrier) before one thread
// issues it; tma_store_commit + tma_store_wait<0> before the shared tile is written again.
TL_DEVICE void tma_store(const TmaDescriptor& d, const void* smem, int c0) {
#if TL_ARCH >= 900
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%2}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(&d)),
               "r"(smem_addr(smem)), "r"(c0)
               : "memory");
#endif
}
TL_DEVICE void tma_store(const TmaDescriptor& d, const void* smem, int c0, int c1) {
#if TL_ARCH >= 900
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(&d)),
               "r"(smem_addr(smem)), "r"(c0), "r"(c1)
               : "memory");
#endif
}
TL_DEVICE void tma_store(const TmaDescriptor& d, const void* smem, int c0, int c1, int c2) {
#if TL_ARCH >= 900
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(&d)),
               "r"(smem_addr(smem)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#endif
}
TL_DEVICE void tma_store(const TmaDescriptor& d, const void* smem, int c0, int c1, int c2, int c3) {
#if TL_ARCH >= 900
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(&d)),
               "r"(smem_addr(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
#endif
}
TL_DEVICE void tma_store(const TmaDescriptor& d, const void* smem, int c0, int c1, int c2, int c3, int c4) {
#if TL_ARCH >= 900
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(&d)),
               "r"(smem_addr(smem)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
               : "memory");
#endif
}
TL_DEVICE void tma_store_commit() {
#if TL_ARCH >= 900
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
template <int N>
TL_DEVICE void tma_store_wait() {
#if TL_ARCH >= 900
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#endif
}

// Per-thread register budget of the calling warpgroup (sm_90a; the kernel must be compiled with a
// register cap, i.e. __launch_bounds__(threads, 1)).
template <int N>
TL_DEVICE void setmaxnreg_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
#endif
}
template <int N>
TL_DEVICE void setmaxnreg_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
#endif
}

}  // namespace tl
