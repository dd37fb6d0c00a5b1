// Device-side debugging: T.print / T.printf helpers and T.device_assert.
//
// device_assert records the first failure (file, line, message, block and thread) in the
// module-global `tl_device_error` slot and lets the kernel run on; no trap, so the CUDA context
// survives. The runtime (src/target/cuda/driver.h) reads the slot after a launch of a kernel that
// contains asserts, clears it, and raises tl::RuntimeError, which Python sees as an exception.
// The host side reads this struct byte for byte: keep it in sync with DeviceErrorRecord there.
#pragma once

#include "tl/cuda/types.h"

struct TLDeviceErrorSlot {
  unsigned int flag;  // 0: no failure; 1: a failure is recorded
  int line;
  unsigned int block[3];
  unsigned int thread[3];
  char file[128];
  char message[240];
};

extern "C" {
__device__ TLDeviceErrorSlot tl_device_error;
}

namespace tl {

TL_DEVICE void copy_cstr(char* dst, const char* src, int cap) {
  int i = 0;
  if (src)
    for (; i < cap - 1 && src[i]; ++i) dst[i] = src[i];
  dst[i] = 0;
}

__device__ __noinline__ void report_assert_failure(const char* file, int line, const char* message) {
  if (atomicCAS(&tl_device_error.flag, 0u, 2u) != 0u) return;  // 2: being written
  tl_device_error.line = line;
  tl_device_error.block[0] = blockIdx.x;
  tl_device_error.block[1] = blockIdx.y;
  tl_device_error.block[2] = blockIdx.z;
  tl_device_error.thread[0] = threadIdx.x;
  tl_device_error.thread[1] = threadIdx.y;
  tl_device_error.thread[2] = threadIdx.z;
  copy_cstr(tl_device_error.file, file, sizeof(tl_device_error.file));
  copy_cstr(tl_device_error.message, message, sizeof(tl_device_error.message));
  __threadfence();
  atomicExch(&tl_device_error.flag, 1u);
}

TL_DEVICE void device_assert(bool cond, const char* file, int line, const char* message) {
  if (!cond) report_assert_failure(file, line, message);
}

// ---------------------------------------------------------------------------------------------
// printf of one value of any device scalar type, prefixed with the block and thread.
TL_DEVICE void print_value(const char* msg, float v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %f (float32)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, (double)v);
}
TL_DEVICE void print_value(const char* msg, double v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %f (float64)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, v);
}
TL_DEVICE void print_value(const char* msg, half_t v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %f (float16)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, (double)static_cast<float>(v));
}
TL_DEVICE void print_value(const char* msg, bfloat16_t v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %f (bfloat16)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, (double)static_cast<float>(v));
}
TL_DEVICE void print_value(const char* msg, fp8_e4m3_t v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %f (float8_e4m3)\n", msg, (int)blockIdx.x,
         (int)blockIdx.y, (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z,
         (double)static_cast<float>(v));
}
TL_DEVICE void print_value(const char* msg, fp8_e5m2_t v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %f (float8_e5m2)\n", msg, (int)blockIdx.x,
         (int)blockIdx.y, (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z,
         (double)static_cast<float>(v));
}
TL_DEVICE void print_value(const char* msg, long long v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %lld (int64)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, v);
}
TL_DEVICE void print_value(const char* msg, unsigned long long v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %llu (uint64)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, v);
}
TL_DEVICE void print_value(const char* msg, int v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %d (int32)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, v);
}
TL_DEVICE void print_value(const char* msg, unsigned v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %u (uint32)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, v);
}
TL_DEVICE void print_value(const char* msg, bool v) {
  printf("%s: block (%d, %d, %d) thread (%d, %d, %d): %s (bool)\n", msg, (int)blockIdx.x, (int)blockIdx.y,
         (int)blockIdx.z, (int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z, v ? "true" : "false");
}
TL_DEVICE void print_value(const char* msg, short v) { print_value(msg, static_cast<int>(v)); }
TL_DEVICE void print_value(const char* msg, signed char v) { print_value(msg, static_cast<int>(v)); }
TL_DEVICE void print_value(const char* msg, unsigned char v) { print_value(msg, static_cast<unsigned>(v)); }
TL_DEVICE void print_value(const char* msg, unsigned short v) { print_value(msg, static_cast<unsigned>(v)); }

// One element of a printed buffer: "msg[i] = v" (T.print of a shared/fragment buffer prints all
// elements from one thread).
template <typename T>
TL_DEVICE void print_element(const char* msg, int index, T v) {
  if constexpr (is_same<T, float>::value || is_same<T, double>::value || is_same<T, half_t>::value ||
                is_same<T, bfloat16_t>::value || is_same<T, fp8_e4m3_t>::value || is_same<T, fp8_e5m2_t>::value) {
    printf("%s[%d] = %f\n", msg, index, (double)static_cast<float>(v));
  } else if constexpr (sizeof(T) == 8) {
    printf("%s[%d] = %lld\n", msg, index, (long long)v);
  } else {
    printf("%s[%d] = %d\n", msg, index, (int)v);
  }
}

}  // namespace tl
