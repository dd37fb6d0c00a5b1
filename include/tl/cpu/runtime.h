/* Support code for kernels emitted for the cpu target: per-block heap storage and printing
 * through the runtime (include/tl/cpu/abi.h). */
#ifndef TL_CPU_RUNTIME_H_
#define TL_CPU_RUNTIME_H_

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tl/cpu/abi.h"

namespace tl {
namespace cpu {

/* A block-local buffer too large (or too dynamic) for the stack: 64-byte aligned, freed when the
 * block's scope ends. `data` is null when the allocation failed. */
template <typename T>
struct HeapArray {
  T* data;
  /* A negative count, or one whose byte size overflows, leaves data null (reported by the caller);
   * an empty buffer still gets one cache line, so that data is a valid pointer. */
  explicit HeapArray(int64_t count) : data(nullptr) {
    if (count < 0 || count > (INT64_MAX - 63) / static_cast<int64_t>(sizeof(T))) return;
    int64_t bytes = count * static_cast<int64_t>(sizeof(T));
    bytes = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
    data = static_cast<T*>(aligned_alloc(64, static_cast<size_t>(bytes)));
  }
  ~HeapArray() { free(data); }
  HeapArray(const HeapArray&) = delete;
  HeapArray& operator=(const HeapArray&) = delete;
};

/* T.use_swizzle(panel, order) on a 2-D (or larger) grid: the block with linear index pid (the
 * first grid dimension, bx, varying fastest as on GPUs) runs tile (bx, by) of a walk that covers
 * `panel` rows of tiles (row order; columns for col order) across the whole grid before moving on,
 * so that the A tiles of those rows stay in L2/L3 while the B tiles stream past. The same mapping as
 * the cuda target's. */
inline void rasterize2d(int64_t pid, int64_t gx, int64_t gy, int64_t panel, bool row, int64_t* bx, int64_t* by) {
  if (row) {
    const int64_t group = panel * gx, first = (pid / group) * panel;
    const int64_t rows = gy - first < panel ? gy - first : panel;
    *by = first + (pid % group) % rows;
    *bx = (pid % group) / rows;
  } else {
    const int64_t group = panel * gy, first = (pid / group) * panel;
    const int64_t cols = gx - first < panel ? gx - first : panel;
    *bx = first + (pid % group) % cols;
    *by = (pid % group) / cols;
  }
}

/* printf-style formatting sent to the runtime in one piece, so lines of different blocks do not
 * interleave. Long output is truncated at 4 KiB. */
inline int print(const TLRuntimeAPI* api, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
inline int print(const TLRuntimeAPI* api, const char* fmt, ...) {
  char text[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return api->print(api->pool, text);
}

/* Reports a failure (device_assert, allocation) to the runtime; the launch then raises it. */
inline void report_error(const TLRuntimeAPI* api, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
inline void report_error(const TLRuntimeAPI* api, const char* fmt, ...) {
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  api->report_error(api->pool, text);
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_RUNTIME_H_
