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

/* Max / min: a compare-and-swap loop on the value (NaN handling as fmax/fmin for floats). */
template <typename T, typename C>
inline T atomic_update(T* p, C combine) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  for (;;) {
    T next = combine(old);
    if (__builtin_memcmp(&next, &old, sizeof(T)) == 0) return old;
    if (__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return old;
  }
}
template <typename T>
inline T max_of(T a, T b) { return a < b ? b : a; }
template <typename T>
inline T min_of(T a, T b) { return b < a ? b : a; }
inline float max_of(float a, float b) { return __builtin_fmaxf(a, b); }
inline float min_of(float a, float b) { return __builtin_fminf(a, b); }
inline double max_of(double a, double b) { return __builtin_fmax(a, b); }
inline double min_of(double a, double b) { return __builtin_fmin(a, b); }

template <typename T>
inline T atomic_max(T* p, T v) { return atomic_update(p, [v](T cur) { return max_of(cur, v); }); }
template <typename T>
inline T atomic_min(T* p, T v) { return atomic_update(p, [v](T cur) { return min_of(cur, v); }); }
/* 16/8-bit floats: compared in float, the result stored as is (max/min never round). */
#define TL_CPU_SMALL_FLOAT_MINMAX(T)                                                                   \
  inline float atomic_max(T* p, float v) {                                                             \
    return static_cast<float>(atomic_update(p, [v](T cur) {                                          \
      return __builtin_fmaxf(static_cast<float>(cur), v) == static_cast<float>(cur) ? cur : T(v);   \
    }));                                                                                               \
  }                                                                                                    \
  inline float atomic_min(T* p, float v) {                                                             \
    return static_cast<float>(atomic_update(p, [v](T cur) {                                          \
      return __builtin_fminf(static_cast<float>(cur), v) == static_cast<float>(cur) ? cur : T(v);   \
    }));                                                                                               \
  }
TL_CPU_SMALL_FLOAT_MINMAX(half_t)
TL_CPU_SMALL_FLOAT_MINMAX(bfloat16_t)
TL_CPU_SMALL_FLOAT_MINMAX(float8_e4m3_t)
TL_CPU_SMALL_FLOAT_MINMAX(float8_e5m2_t)
#undef TL_CPU_SMALL_FLOAT_MINMAX

/* T.atomic_or / T.atomic_and / T.atomic_xor: integer elements only (the frontend rejects others);
 * the hardware fetch-op, relaxed like the adds above. */
template <typename T>
inline T atomic_or(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
template <typename T>
inline T atomic_and(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
template <typename T>
inline T atomic_xor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }

/* T.atomic_load / T.atomic_store: Order is the C++ memory order number, which GCC's __ATOMIC_*
 * constants equal (0 relaxed, 1 consume, 2 acquire, 3 release, 4 acq_rel, 5 seq_cst). */
template <int Order, typename T>
inline T atomic_load(const T* p) {
  T v;
  __atomic_load(const_cast<T*>(p), &v, Order);
  return v;
}
template <int Order, typename T>
inline void atomic_store(T* p, T v) {
  __atomic_store(p, &v, Order);
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_ATOMIC_H_
