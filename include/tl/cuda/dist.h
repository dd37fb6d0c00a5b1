// Distributed (one process per GPU) support for kernels emitted for the cuda target:
// T.Scale("device"), remote T.copy, T.barrier, T.signal / T.wait. Included only by kernels that use them.
//
// Every rank owns one symmetric heap (device memory shared with its peers through CUDA IPC and
// mapped into every peer's address space). Before a launch the runtime fills `tl_dist_ctx` (a
// module global, looked up with cuModuleGetGlobal): rank, world size and the address of each rank's
// heap *in this process*. A pointer into the local heap becomes the same object on peer `pe` by
// moving it from bases[rank] to bases[pe]; loads and stores then go over NVLink / PCIe.
// The layout of TLDistCtx is shared with src/runtime/distributed.h.
#pragma once

#include "tl/cuda/common.h"

#define TL_DIST_MAX_RANKS 16
#define TL_DIST_MAX_BLOCKS 4096

struct TLDistCtx {
  int rank;
  int world;
  unsigned long long heap_size;
  unsigned long long timeout_ns;
  unsigned long long ctrl_offset;
  unsigned long long bases[TL_DIST_MAX_RANKS];
};

// Defined here: only the one translation unit of a kernel that uses distributed ops includes this.
__device__ TLDistCtx tl_dist_ctx;

namespace tl {
namespace dist {

__device__ __forceinline__ int rank() { return tl_dist_ctx.rank; }
__device__ __forceinline__ int world() { return tl_dist_ctx.world; }

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A failure that cannot be recovered inside the kernel (a peer that never arrives, a pointer outside
// the symmetric heap): print why from one thread and stop the kernel. The context is lost, so the
// host sees the next CUDA call fail; the printed line says what happened.
#if defined(TL_CONSUMER_THREADS)
// A warp-specialized kernel (wgmma; the copy-engine all-gather GEMM's T.wait) must contain no call:
// with the printf below ptxas serializes every wgmma of the kernel (the CE GEMM ran 7-14% slower
// than the same GEMM without its wait on an H100, 2026-11-27). Here a failure traps without the
// device line; the host sees the launch fail (docs/DISTRIBUTED.md, "Errors").
__device__ __forceinline__ void fail(const char*, const char*, long long, long long) { __trap(); }
#else
__device__ __noinline__ void fail(const char* what, const char* why, long long a, long long b) {
  printf("tilelang: %s on rank %d, block %d: %s (%lld, %lld)\n", what, tl_dist_ctx.rank,
         (int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)), why, a, b);
  __trap();
}
#endif

__device__ __forceinline__ char* remote(const void* p, long long pe, const char* what) {
  if (pe < 0) return static_cast<char*>(const_cast<void*>(p));
  const TLDistCtx& c = tl_dist_ctx;
  if (pe >= c.world) fail(what, "peer out of range (peer, world)", pe, c.world);
  uint64_t addr = reinterpret_cast<uint64_t>(p), base = c.bases[c.rank];
  if (addr < base || addr - base >= c.heap_size)
    fail(what, "buffer not in symmetric memory: allocate it with tilelang.distributed.empty (addr, heap base)",
         (long long)addr, (long long)base);
  return reinterpret_cast<char*>(c.bases[pe] + (addr - base));
}

// Who executes an op: every thread of the block (kBlock), the consumer warpgroups of a
// warp-specialized kernel (kConsumers: the producer warpgroup does not take part, so the op
// synchronizes and divides work among the consumers only), or the one thread that calls it (kThread:
// the TMA producer thread of a warp-specialized kernel whose T.wait gates only what it loads;
// warp_specialize gives it only T.wait).
enum Mode { kBlock = 0, kConsumers = 1, kThread = 2 };
template <int kMode>
__device__ __forceinline__ int block_threads() {
#ifdef TL_CONSUMER_THREADS
  if (kMode == kConsumers) return TL_CONSUMER_THREADS;
#endif
  return blockDim.x * blockDim.y * blockDim.z;
}
template <int kMode>
__device__ __forceinline__ int block_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
template <int kMode>
__device__ __forceinline__ void block_sync() {
  if (kMode == kThread) return;
  if (kMode == kConsumers) tl::sync_block();
  else __syncthreads();
}

// rows x row_bytes from src to dst (row strides in bytes), by every thread of the block; either side
// may be on a peer. 16-byte accesses when everything is 16-byte aligned, 4 or 1 otherwise.
template <int kMode, typename V>
__device__ __forceinline__ void copy_rows(char* d, const char* s, long long rows, long long row_bytes,
                                          long long dst_ld, long long src_ld) {
  const long long per_row = row_bytes / (long long)sizeof(V), total = rows * per_row;
  const int n = block_threads<kMode>();
  long long i = block_thread<kMode>();
  constexpr int kUnroll = 4;
  for (; i + (kUnroll - 1) * (long long)n < total; i += kUnroll * (long long)n) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      long long j = i + u * (long long)n, r = j / per_row, c = j - r * per_row;
      v[u] = *reinterpret_cast<const V*>(s + r * src_ld + c * (long long)sizeof(V));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      long long j = i + u * (long long)n, r = j / per_row, c = j - r * per_row;
      *reinterpret_cast<V*>(d + r * dst_ld + c * (long long)sizeof(V)) = v[u];
    }
  }
  for (; i < total; i += n) {
    long long r = i / per_row, c = i - r * per_row;
    *reinterpret_cast<V*>(d + r * dst_ld + c * (long long)sizeof(V)) =
        *reinterpret_cast<const V*>(s + r * src_ld + c * (long long)sizeof(V));
  }
}

template <int kMode = kBlock>
__device__ __forceinline__ void copy(void* dst, const void* src, long long rows, long long row_bytes,
                                     long long dst_ld, long long src_ld, long long dst_pe, long long src_pe,
                                     const char* what) {
  block_sync<kMode>();  // the block's earlier writes of src are done
  if (rows > 0 && row_bytes > 0) {
    char* d = remote(dst, dst_pe, what);
    const char* s = remote(src, src_pe, what);
    const unsigned long long bits = reinterpret_cast<uint64_t>(d) | reinterpret_cast<uint64_t>(s) |
                                    (uint64_t)row_bytes | (uint64_t)(rows > 1 ? (dst_ld | src_ld) : 0);
    if ((bits & 15) == 0) copy_rows<kMode, int4>(d, s, rows, row_bytes, dst_ld, src_ld);
    else if ((bits & 3) == 0) copy_rows<kMode, int>(d, s, rows, row_bytes, dst_ld, src_ld);
    else copy_rows<kMode, char>(d, s, rows, row_bytes, dst_ld, src_ld);
  }
  block_sync<kMode>();
}

__device__ __forceinline__ void spin_until_ge(const uint64_t* p, uint64_t want, const char* what) {
  uint64_t start = 0;  // the clock starts at the first unsuccessful look (a met condition costs one load)
  for (;;) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    if (v >= want) return;
    if (start == 0) start = now_ns();
    else if (now_ns() - start > tl_dist_ctx.timeout_ns)
      fail(what, "timed out waiting for peers (have, want); a peer exited or the ranks run different grids", v, want);
    __nanosleep(64);
  }
}

// Block `block` of every rank meets here (T.barrier). The block's earlier writes, local and remote,
// are visible to every rank's block `block` after it.
template <int kMode = kBlock>
__device__ __forceinline__ void barrier(long long block, const char* what) {
  __threadfence_system();
  block_sync<kMode>();
  if (block_thread<kMode>() == 0) {
    const TLDistCtx& c = tl_dist_ctx;
    if (block < 0 || block >= TL_DIST_MAX_BLOCKS) fail(what, "T.barrier: grid too large (block, max)", block, TL_DIST_MAX_BLOCKS);
    uint64_t* mine = reinterpret_cast<uint64_t*>(c.bases[c.rank] + c.ctrl_offset);
    uint64_t g = ++mine[TL_DIST_MAX_BLOCKS + block];
    for (int p = 0; p < c.world; ++p) {
      uint64_t* a = reinterpret_cast<uint64_t*>(c.bases[p] + c.ctrl_offset) + block;
      asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(a), "l"((uint64_t)1) : "memory");
    }
    spin_until_ge(mine + block, g * (uint64_t)c.world, what);
  }
  block_sync<kMode>();
  fence_proxy_async();
}

// op 0: store, 1: add; on rank pe's copy of *flag, after the block's earlier writes.
template <int kMode = kBlock, typename T>
__device__ __forceinline__ void signal(T* flag, long long value, long long pe, int op, const char* what) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.signal flags are 32- or 64-bit integers");
  __threadfence_system();
  block_sync<kMode>();
  if (block_thread<kMode>() == 0) {
    T* f = reinterpret_cast<T*>(remote(flag, pe, what));
    if (sizeof(T) == 8) {
      if (op == 0) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(f), "l"((uint64_t)value) : "memory");
      else asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(f), "l"((uint64_t)value) : "memory");
    } else {
      if (op == 0) asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(f), "r"((uint32_t)value) : "memory");
      else asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(f), "r"((uint32_t)value) : "memory");
    }
  }
  block_sync<kMode>();
}

// Data that arrived from a peer (generic-proxy writes, observed through an acquire) may next be read
// by TMA, which goes through the async proxy: order the two.
__device__ __forceinline__ void fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

template <typename T>
__device__ __forceinline__ bool compare(T x, T v, int cmp) {
  switch (cmp) {
    case 0: return x == v;
    case 1: return x != v;
    case 2: return x >= v;
    case 3: return x > v;
    case 4: return x <= v;
    default: return x < v;
  }
}

// Waits until the local *flag compares true with value (cmp 0 ==, 1 !=, 2 >=, 3 >, 4 <=, 5 <).
template <int kMode = kBlock, typename T>
__device__ __forceinline__ void wait(T* flag, long long value, int cmp, const char* what) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "T.wait flags are 32- or 64-bit integers");
  if (kMode == kThread || block_thread<kMode>() == 0) {
    const T v = static_cast<T>(value);
    uint64_t start = 0;  // as in spin_until_ge: no clock read when the flag is already set
    for (;;) {
      T x;
      if (sizeof(T) == 8) {
        uint64_t t;
        asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(t) : "l"(flag) : "memory");
        x = static_cast<T>(t);
      } else {
        uint32_t t;
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(t) : "l"(flag) : "memory");
        x = static_cast<T>(t);
      }
      if (compare(x, v, cmp)) break;
      if (start == 0) start = now_ns();
      else if (now_ns() - start > tl_dist_ctx.timeout_ns)
        fail(what, "T.wait timed out (value seen, value wanted)", (long long)x, value);
      __nanosleep(64);
    }
  }
  block_sync<kMode>();
  fence_proxy_async();
}

}  // namespace dist
}  // namespace tl
