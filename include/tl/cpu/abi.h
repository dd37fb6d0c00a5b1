/* The binary interface between the runtime (src/runtime) and a kernel emitted for the cpu target.
 * C-compatible and self-contained: emitted code includes it, the runtime includes it.
 *
 * The emitted shared object exports
 *     int32_t tl_kernel_entry(const TLArg* args, int32_t num_args, const TLRuntimeAPI* api);
 * `args` holds, in order, one slot per PrimFunc parameter (tensor: data pointer; int/bool scalar:
 * i64; float scalar: f64), then one i64 slot per dynamic variable in PrimFunc::dynamic_vars()
 * order (dimensions and symbolic strides bound from the tensors).
 * It returns 0, or non-zero after calling api->report_error (device_assert, ...).
 * The entry runs the grid through api->parallel_for; each block runs on one worker thread. */
#ifndef TL_CPU_ABI_H_
#define TL_CPU_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef union TLArg {
  void* ptr;
  int64_t i64;
  double f64;
} TLArg;

/* Runs fn(ctx, i) for every i in [0, n) on the worker pool and returns when all are done. */
typedef void (*TLParallelBody)(void* ctx, int64_t index);

typedef struct TLRuntimeAPI {
  uint32_t abi_version; /* TL_CPU_ABI_VERSION */
  void* pool;
  void (*parallel_for)(void* pool, int64_t n, TLParallelBody body, void* ctx);
  /* Records a kernel failure (first one wins); the runtime raises it after the launch. */
  void (*report_error)(void* pool, const char* message);
  /* Printing from kernels (T.print / T.printf) goes through the runtime so output is ordered. */
  int (*print)(void* pool, const char* text);
} TLRuntimeAPI;

#define TL_CPU_ABI_VERSION 1u

typedef int32_t (*TLKernelEntry)(const TLArg* args, int32_t num_args, const TLRuntimeAPI* api);

#ifdef __cplusplus
}
#endif

#endif /* TL_CPU_ABI_H_ */
