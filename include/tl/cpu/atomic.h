/* Atomic read-modify-write for kernels emitted for the cpu target. Blocks of a grid run on several
 * worker threads, so T.atomic_add must be atomic across threads. Integers use the hardware
 * fetch-add; floating-point types use a compare-and-swap loop on their bit pattern. Each function
 * returns the old value (in the compute type). Relaxed ordering: the grid's join (parallel_for
 * returning) orders everything with what follows the launch. */
#ifndef TL_CPU_ATOMIC_H_
#define TL_CPU_ATOMIC_H_

#include <stdint.h>

#include "tl/cpu/types.h"

namespace tl {
namespace cpu {

template <typename T>
inline T atomic_add(T* p, T v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

inline float atomic_add(float* p, float v) {
  uint32_t* u = reinterpret_cast<uint32_t*>(p);
  uint32_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(u, &old, float_bits(bits_float(old) + v), true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  return bits_float(old);
}

inline double atomic_add(double* p, double v) {
  uint64_t* u = reinterpret_cast<uint64_t*>(p);
  uint64_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(u, &old, double_bits(__builtin_bit_cast(double, old) + v), true,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return __builtin_bit_cast(double, old);
}

/* 16/8-bit floats: the sum is computed in float and rounded once, like a store. */
template <typename T, typename Bits>
inline float atomic_add_small_float(T* p, float v) {
  Bits* u = &p->bits;
  Bits old = __atomic_load_n(u, __ATOMIC_RELAXED);
  for (;;) {
    float cur = static_cast<float>(T::from_bits(old));
    Bits next = T(cur + v).bits;
    if (__atomic_compare_exchange_n(u, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return cur;
  }
}
inline float atomic_add(half_t* p, float v) { return atomic_add_small_float<half_t, uint16_t>(p, v); }
inline float atomic_add(bfloat16_t* p, float v) { return atomic_add_small_float<bfloat16_t, uint16_t>(p, v); }
inline float atomic_add(float8_e4m3_t* p, float v) { return atomic_add_small_float<float8_e4m3_t, uint8_t>(p, v); }
inline float atomic_add(float8_e5m2_t* p, float v) { return atomic_add_small_float<float8_e5m2_t, uint8_t>(p, v); }

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_ATOMIC_H_
