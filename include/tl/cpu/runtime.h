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
  explicit HeapArray(int64_t count) {
    int64_t bytes = count * static_cast<int64_t>(sizeof(T));
    bytes = (bytes + 63) / 64 * 64;
    data = bytes > 0 ? static_cast<T*>(aligned_alloc(64, static_cast<size_t>(bytes))) : nullptr;
  }
  ~HeapArray() { free(data); }
  HeapArray(const HeapArray&) = delete;
  HeapArray& operator=(const HeapArray&) = delete;
};

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
