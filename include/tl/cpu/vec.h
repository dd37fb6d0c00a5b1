/* Fixed-width vectors for the cpu tile routines (gemm.h, reduce.h), written with GCC's vector
 * extension instead of <immintrin.h> (whose parsing alone costs a cold compile 0.2-0.3 s): the
 * compiler maps a 64-byte vector to one zmm register under AVX-512, a 32-byte one to ymm under
 * AVX2 and a 16-byte one to xmm (SSE2, or NEON on other machines). Loads and stores go through
 * memcpy, so no pointer needs more alignment than its element type. */
#ifndef TL_CPU_VEC_H_
#define TL_CPU_VEC_H_

#include <stdint.h>

#include "tl/cpu/isa.h"

namespace tl {
namespace cpu {

/* VB bytes of T. */
template <typename T, int VB> struct vec {
  typedef T type __attribute__((vector_size(VB)));
  static constexpr int kLanes = VB / static_cast<int>(sizeof(T));
};

template <typename V, typename T> __attribute__((always_inline)) inline V vload(const T* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <typename V, typename T> __attribute__((always_inline)) inline void vstore(T* p, const V& v) {
  __builtin_memcpy(p, &v, sizeof v);
}
/* The first n (0 < n <= lanes) elements; the other lanes are 0 (loads) or left alone (stores). */
template <typename V, typename T> __attribute__((always_inline)) inline V vload_n(const T* p, int n) {
  V v = {};
  __builtin_memcpy(&v, p, sizeof(T) * static_cast<unsigned>(n));
  return v;
}
template <typename V, typename T> __attribute__((always_inline)) inline void vstore_n(T* p, const V& v, int n) {
  __builtin_memcpy(p, &v, sizeof(T) * static_cast<unsigned>(n));
}
template <typename V, typename T> __attribute__((always_inline)) inline V vsplat(T x) {
  V v = {};
  return v + x;  // a scalar operand is broadcast to every lane
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_VEC_H_
