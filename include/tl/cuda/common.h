// Basic definitions shared by every tilelang device header. Emitted CUDA code is compiled by
// NVRTC with only this directory on the include path: nothing here may include a toolkit or
// standard-library header, so fixed-width types and helpers are defined locally.
#pragma once

#ifndef __CUDACC__
#error "tl/cuda headers are device headers: compile them with NVRTC or nvcc"
#endif

#define TL_DEVICE __device__ __forceinline__
#define TL_HOST_DEVICE __host__ __device__ __forceinline__

namespace tl {

typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long uintptr_t;
typedef long intptr_t;

// The target architecture as a number (800, 860, 890, 900); 0 when compiling host code.
#ifdef __CUDA_ARCH__
#define TL_ARCH __CUDA_ARCH__
#else
#define TL_ARCH 0
#endif

TL_DEVICE uint32_t lane_id() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// Linear thread index inside the block (threadIdx.x fastest).
TL_DEVICE uint32_t thread_linear() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

// Shared-memory window address of a generic pointer into shared memory (for PTX operands).
TL_DEVICE uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Active-lane mask of warp `warp` in a block of `threads` threads: full warps get every lane, the
// last partial warp only its existing lanes (shuffles with a mask naming absent lanes hang).
TL_HOST_DEVICE uint32_t warp_mask_for(int threads, int warp) {
  int rest = threads - warp * 32;
  return rest >= 32 ? 0xffffffffu : (rest <= 0 ? 0u : ((1u << rest) - 1u));
}

// Barrier `id` (1..15; 0 is __syncthreads) over `count` threads (a multiple of 32).
TL_DEVICE void named_barrier_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
// Arrives at barrier `id` without waiting (the other `count` - arrivals threads sync on it).
TL_DEVICE void named_barrier_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// The block-wide barrier of the generated code and of the device functions that need one
// (tl::allreduce through shared memory). In a warp-specialized kernel (TL_CONSUMER_THREADS
// defined by the generated source) only the consumer warpgroups run such code: they synchronize
// among themselves on named barrier 1, without the producer warpgroup.
TL_DEVICE void sync_block() {
#ifdef TL_CONSUMER_THREADS
  named_barrier_sync(1, TL_CONSUMER_THREADS);
#else
  __syncthreads();
#endif
}

template <typename T>
TL_HOST_DEVICE T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

// Bit-exact reinterpretation between same-sized types.
template <typename To, typename From>
TL_HOST_DEVICE To bit_cast(const From& v) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To out;
  memcpy(&out, &v, sizeof(To));
  return out;
}

// Python-style integer division and remainder (floor rounding), for the IR's floordiv/floormod.
template <typename T>
TL_HOST_DEVICE T floordiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T>
TL_HOST_DEVICE T floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

TL_HOST_DEVICE constexpr bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
TL_HOST_DEVICE constexpr int next_pow2(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

// Compile-time type selection without <type_traits>.
template <bool C, typename A, typename B>
struct conditional {
  typedef A type;
};
template <typename A, typename B>
struct conditional<false, A, B> {
  typedef B type;
};
template <typename A, typename B>
struct is_same {
  enum : bool { value = false };
};
template <typename A>
struct is_same<A, A> {
  enum : bool { value = true };
};

}  // namespace tl
