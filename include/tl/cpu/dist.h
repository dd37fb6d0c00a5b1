/* Distributed (multi-process) support for kernels emitted for the cpu target: T.Scale("device"),
 * remote T.copy, T.barrier, T.signal / T.wait. Included only by kernels
 * that use them.
 *
 * Every process ("device") owns one symmetric heap, a shared-memory segment that every peer has
 * mapped too. The runtime fills `tl_dist_ctx` before each launch: this process's rank, the world
 * size, and the address at which each rank's heap is mapped *in this process*. A pointer into the
 * local heap becomes the same object on peer `pe` by moving it from bases[rank] to bases[pe].
 * The layout of TLDistCtx is shared with src/runtime/distributed.h. */
#ifndef TL_CPU_DIST_H_
#define TL_CPU_DIST_H_

#include <stdint.h>
#include <string.h>

#include <sched.h>
#include <time.h>

#include "tl/cpu/abi.h"
#include "tl/cpu/runtime.h"

#define TL_DIST_MAX_RANKS 16
#define TL_DIST_MAX_BLOCKS 4096

typedef struct TLDistCtx {
  int32_t rank;
  int32_t world;           /* 0: tilelang.distributed is not initialised in this process */
  uint64_t heap_size;      /* bytes of each rank's heap */
  uint64_t timeout_ns;     /* T.barrier / T.wait give up after this long */
  uint64_t ctrl_offset;    /* barrier counters: ctrl_offset .. + 2 * 8 * TL_DIST_MAX_BLOCKS */
  uint64_t bases[TL_DIST_MAX_RANKS];
} TLDistCtx;

/* Defined here: only the one translation unit of a kernel that uses distributed ops includes this. */
extern "C" {
__attribute__((visibility("default"))) TLDistCtx tl_dist_ctx = {0, 0, 0, 0, 0, {0}};
}

namespace tl {
namespace cpu {
namespace dist {

inline int32_t rank() { return tl_dist_ctx.rank; }
inline int32_t world() { return tl_dist_ctx.world; }

inline uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

/* `p` (in the local heap) as seen on rank `pe`; null (with an error reported) when p is not in the
 * symmetric heap or pe is out of range. pe < 0 means the local object. */
inline char* remote(const TLRuntimeAPI* api, const void* p, int64_t pe, const char* what) {
  const TLDistCtx& c = tl_dist_ctx;
  if (pe < 0) return static_cast<char*>(const_cast<void*>(p));
  if (pe >= c.world) {
    report_error(api, "%s: peer %lld is out of range (world size %d)", what, (long long)pe, (int)c.world);
    return nullptr;
  }
  uint64_t addr = reinterpret_cast<uint64_t>(p), base = c.bases[c.rank];
  if (addr < base || addr - base >= c.heap_size) {
    report_error(api,
                 "%s: the buffer is not in symmetric memory; allocate tensors that peers access with "
                 "tilelang.distributed.empty / zeros (same calls, same order, on every rank)",
                 what);
    return nullptr;
  }
  return reinterpret_cast<char*>(c.bases[pe] + (addr - base));
}

/* rows x row_bytes from src to dst (row strides in bytes); either side may be on a peer. */
inline int copy(const TLRuntimeAPI* api, void* dst, const void* src, int64_t rows, int64_t row_bytes,
                int64_t dst_ld, int64_t src_ld, int64_t dst_pe, int64_t src_pe, const char* what) {
  if (rows <= 0 || row_bytes <= 0) return 0;
  char* d = remote(api, dst, dst_pe, what);
  const char* s = remote(api, src, src_pe, what);
  if (!d || !s) return 1;
  if (dst_ld == row_bytes && src_ld == row_bytes) {
    memcpy(d, s, static_cast<size_t>(rows * row_bytes));
  } else {
    for (int64_t r = 0; r < rows; ++r) memcpy(d + r * dst_ld, s + r * src_ld, static_cast<size_t>(row_bytes));
  }
  __atomic_thread_fence(__ATOMIC_RELEASE);
  return 0;
}

template <typename F>
inline int spin_until(const TLRuntimeAPI* api, F done, const char* what) {
  uint64_t start = 0;
  for (uint64_t i = 0;; ++i) {
    if (done()) return 0;
    if (i < 64) continue;
    sched_yield();
    if ((i & 255) == 0) {
      uint64_t t = now_ns();
      if (start == 0) start = t;
      else if (t - start > tl_dist_ctx.timeout_ns) {
        report_error(api, "%s timed out after %.1f s on rank %d: a peer did not arrive (a peer process exited, "
                     "or the ranks run different grids / different numbers of barriers); "
                     "TILELANG_DIST_TIMEOUT sets the limit",
                     what, tl_dist_ctx.timeout_ns / 1e9, (int)tl_dist_ctx.rank);
        return 1;
      }
    }
  }
}

/* Block `block` of every rank meets here. Counters live in the control area of each heap:
 * arrivals[block] (incremented by every rank) and, after them, this rank's own generation. */
inline int barrier(const TLRuntimeAPI* api, int64_t block, const char* what) {
  const TLDistCtx& c = tl_dist_ctx;
  if (block < 0 || block >= TL_DIST_MAX_BLOCKS) {
    report_error(api, "%s: T.barrier supports grids of at most %d blocks (block %lld)", what, TL_DIST_MAX_BLOCKS,
                 (long long)block);
    return 1;
  }
  uint64_t* local_arrivals = reinterpret_cast<uint64_t*>(c.bases[c.rank] + c.ctrl_offset);
  uint64_t* gen = local_arrivals + TL_DIST_MAX_BLOCKS + block;
  uint64_t g = ++*gen;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  for (int32_t p = 0; p < c.world; ++p) {
    uint64_t* a = reinterpret_cast<uint64_t*>(c.bases[p] + c.ctrl_offset) + block;
    __atomic_fetch_add(a, 1, __ATOMIC_RELEASE);
  }
  uint64_t want = g * static_cast<uint64_t>(c.world);
  uint64_t* mine = local_arrivals + block;
  return spin_until(api, [&] { return __atomic_load_n(mine, __ATOMIC_ACQUIRE) >= want; }, what);
}

/* op 0: store value, 1: add value; on rank pe's copy of *flag, after this block's earlier writes. */
template <typename T>
inline int signal(const TLRuntimeAPI* api, T* flag, int64_t value, int64_t pe, int op, const char* what) {
  T* f = reinterpret_cast<T*>(remote(api, flag, pe, what));
  if (!f) return 1;
  if (op == 0) __atomic_store_n(f, static_cast<T>(value), __ATOMIC_RELEASE);
  else __atomic_fetch_add(f, static_cast<T>(value), __ATOMIC_RELEASE);
  return 0;
}

/* cmp 0: ==, 1: !=, 2: >=, 3: >, 4: <=, 5: < ; waits on the local *flag. */
template <typename T>
inline int wait(const TLRuntimeAPI* api, T* flag, int64_t value, int cmp, const char* what) {
  const T v = static_cast<T>(value);
  return spin_until(api, [&] {
    T x = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
    switch (cmp) {
      case 0: return x == v;
      case 1: return x != v;
      case 2: return x >= v;
      case 3: return x > v;
      case 4: return x <= v;
      default: return x < v;
    }
  }, what);
}

}  // namespace dist
}  // namespace cpu
}  // namespace tl

#endif /* TL_CPU_DIST_H_ */
