/* Scalar types and helpers for kernels emitted for the cpu target.
 *
 * float16 / bfloat16 / float8 values are *stored* in 16/8-bit types and *computed* in float32:
 * a load converts to float, a store or an explicit cast rounds (round-to-nearest-even, the IEEE
 * default). The conversions are tl/common/float_formats.h (the project's one implementation, also
 * used by the compiler to round constants, by the Ascend simulator and by the cuda emulator); fp16
 * ones are branch-free code that vectorizes (the GEMM packs fp16 tiles with vcvtph2ps). float8_e4m3
 * is the "fn" variant (no infinities, NaN = S.1111.111, max 448); values beyond the range become
 * NaN (e4m3) or inf (e5m2), as ml_dtypes does.
 *
 * Lean on purpose: only <stdint.h>, so that a cold compile stays fast. */
#ifndef TL_CPU_TYPES_H_
#define TL_CPU_TYPES_H_

#include <stdint.h>

#include "tl/common/float_formats.h"

namespace tl {
namespace cpu {

template <typename A, typename B> struct same_type { static constexpr bool value = false; };
template <typename A> struct same_type<A, A> { static constexpr bool value = true; };

/* The conversions themselves live in tl/common/float_formats.h (shared with the compiler, the
 * simulator and the cuda emulator); kernels and these headers name them as tl::cpu::... */
using ff::bfloat16_bits_to_float;
using ff::bits_float;
using ff::double_bits;
using ff::double_to_float_round_odd;
using ff::float_bits;
using ff::float_to_bfloat16_bits;
using ff::float_to_fp8_bits;
using ff::float_to_half_bits;
using ff::float_to_half_bits_portable;
using ff::fp8_bits_to_float;
using ff::half_bits_to_float;
using ff::half_bits_to_float_portable;

/* ---- storage types ------------------------------------------------------------------------ */

struct half_t {
  uint16_t bits;
  half_t() = default;
  explicit half_t(float f) : bits(float_to_half_bits(f)) {}
  explicit half_t(double d) : bits(float_to_half_bits(double_to_float_round_odd(d))) {}
  explicit operator float() const { return half_bits_to_float(bits); }
  static half_t from_bits(uint16_t b) { half_t h; h.bits = b; return h; }
};

struct bfloat16_t {
  uint16_t bits;
  bfloat16_t() = default;
  explicit bfloat16_t(float f) : bits(float_to_bfloat16_bits(f)) {}
  explicit bfloat16_t(double d) : bits(float_to_bfloat16_bits(double_to_float_round_odd(d))) {}
  explicit operator float() const { return bfloat16_bits_to_float(bits); }
  static bfloat16_t from_bits(uint16_t b) { bfloat16_t h; h.bits = b; return h; }
};

struct float8_e4m3_t {
  uint8_t bits;
  float8_e4m3_t() = default;
  explicit float8_e4m3_t(float f) : bits(float_to_fp8_bits<4, 3, 7, false>(f)) {}
  explicit float8_e4m3_t(double d) : bits(float_to_fp8_bits<4, 3, 7, false>(double_to_float_round_odd(d))) {}
  explicit operator float() const { return fp8_bits_to_float<4, 3, 7, false>(bits); }
  static float8_e4m3_t from_bits(uint8_t b) { float8_e4m3_t h; h.bits = b; return h; }
};

struct float8_e5m2_t {
  uint8_t bits;
  float8_e5m2_t() = default;
  explicit float8_e5m2_t(float f) : bits(float_to_fp8_bits<5, 2, 15, true>(f)) {}
  explicit float8_e5m2_t(double d) : bits(float_to_fp8_bits<5, 2, 15, true>(double_to_float_round_odd(d))) {}
  explicit operator float() const { return fp8_bits_to_float<5, 2, 15, true>(bits); }
  static float8_e5m2_t from_bits(uint8_t b) { float8_e5m2_t h; h.bits = b; return h; }
};

/* float8_e8m0fnu: 2^(bits - 127), 0xFF NaN; conversions in tl/common/float_formats.h. */
struct float8_e8m0_t {
  uint8_t bits;
  float8_e8m0_t() = default;
  explicit float8_e8m0_t(float f) : bits(ff::float_to_e8m0_bits(f)) {}
  explicit float8_e8m0_t(double d) : bits(ff::float_to_e8m0_bits(static_cast<float>(d))) {}  // through float, as ml_dtypes
  explicit operator float() const { return ff::e8m0_bits_to_float(bits); }
  static float8_e8m0_t from_bits(uint8_t b) { float8_e8m0_t h; h.bits = b; return h; }
};

/* float4_e2m1fn, one element a byte (the code in the low 4 bits): on-chip (local/shared/fragment)
 * buffers. Global (kernel-parameter) buffers are packed two a byte: float4_e2m1_packed below.
 * Conversions in tl/common/float_formats.h (ml_dtypes' rounding; docs/FLOAT4.md). */
struct float4_e2m1_t {
  uint8_t bits;
  float4_e2m1_t() = default;
  explicit float4_e2m1_t(float f) : bits(ff::float_to_e2m1_bits(f)) {}
  explicit float4_e2m1_t(double d) : bits(ff::float_to_e2m1_bits(static_cast<float>(d))) {}  // through float, as ml_dtypes
  explicit operator float() const { return ff::e2m1_bits_to_float(bits); }
  static float4_e2m1_t from_bits(uint8_t b) { float4_e2m1_t h; h.bits = static_cast<uint8_t>(b & 0xfu); return h; }
};

/* A global float4_e2m1fn buffer: elements packed two a byte, element 2k in the low nibble of byte k
 * (TileLang's and torch.float4_e2m1fn_x2's layout). p[i] is a proxy that reads the nibble (its
 * `bits`) and, assigned, replaces it atomically (blocks run on several threads and may share a
 * byte at a block edge). */
struct float4_e2m1_packed {
  uint8_t* p;
  struct ref {
    uint8_t* byte;
    int shift;
    uint8_t bits;
    operator float4_e2m1_t() const { return float4_e2m1_t::from_bits(bits); }
    explicit operator float() const { return ff::e2m1_bits_to_float(bits); }
    const ref& operator=(float4_e2m1_t v) const {
      uint8_t old = __atomic_load_n(byte, __ATOMIC_RELAXED), want;
      do {
        want = static_cast<uint8_t>((old & ~(0xfu << shift)) | ((v.bits & 0xfu) << shift));
      } while (!__atomic_compare_exchange_n(byte, &old, want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
      return *this;
    }
    const ref& operator=(const ref& o) const { return *this = float4_e2m1_t::from_bits(o.bits); }
  };
  float4_e2m1_packed() = default;
  explicit float4_e2m1_packed(void* ptr) : p(static_cast<uint8_t*>(ptr)) {}
  ref operator[](int64_t i) const {
    uint8_t* b = p + (i >> 1);
    const int sh = static_cast<int>(i & 1) * 4;
    return ref{b, sh, static_cast<uint8_t>((*b >> sh) & 0xfu)};
  }
};

/* The value a storage type computes in: float for the 16/8-bit floats, the type itself otherwise. */
template <typename T> struct compute_type { typedef T type; };
template <> struct compute_type<half_t> { typedef float type; };
template <> struct compute_type<bfloat16_t> { typedef float type; };
template <> struct compute_type<float8_e4m3_t> { typedef float type; };
template <> struct compute_type<float8_e5m2_t> { typedef float type; };
template <> struct compute_type<float8_e8m0_t> { typedef float type; };
template <> struct compute_type<float4_e2m1_t> { typedef float type; };

/* Rounds a value to the precision of T and returns it in T's compute type (an explicit cast). */
template <typename T, typename V>
inline typename compute_type<T>::type round_to(V v) {
  return static_cast<typename compute_type<T>::type>(T(v));
}

/* ---- arithmetic helpers ------------------------------------------------------------------- */

/* Integer division faults: x86 traps on a zero divisor and on MIN / -1, which would end the
 * calling process. The helpers below return 0 instead and set this per-thread flag; the block's
 * task reports it as a kernel error after the block (a Python exception, the process survives).
 * With a constant divisor the compiler folds the checks away. */
inline thread_local int int_div_fault = 0;
template <typename T> inline bool div_faults(T a, T b) {
  if (__builtin_expect(b == 0, 0)) return true;
  if (T(-1) < T(0) && __builtin_expect(b == T(-1), 0) && a == T(T(1) << (sizeof(T) * 8 - 1))) return true;
  return false;
}
/* C-style / and % on integers (truncating). */
template <typename T> inline T tdiv(T a, T b) {
  if (div_faults(a, b)) { int_div_fault = 1; return T(0); }
  return a / b;
}
template <typename T> inline T tmod(T a, T b) {
  if (div_faults(a, b)) { int_div_fault = 1; return T(0); }
  return a % b;
}
/* Python-style // and % on integers (round toward minus infinity). */
template <typename T> inline T floordiv(T a, T b) {
  if (div_faults(a, b)) { int_div_fault = 1; return T(0); }
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T> inline T floormod(T a, T b) {
  if (div_faults(a, b)) { int_div_fault = 1; return T(0); }
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
template <typename T> inline T min(T a, T b) { return a < b ? a : b; }
template <typename T> inline T max(T a, T b) { return a > b ? a : b; }
template <typename T> inline T iabs(T a) { return a < 0 ? -a : a; }
/* IEEE maxNum/minNum (as fmaxf/fminf: a NaN operand yields the other one), written as a select
 * so that loops using it vectorize. */
inline float fmax(float a, float b) { return (a > b || b != b) ? a : b; }
inline float fmin(float a, float b) { return (a < b || b != b) ? a : b; }
inline double fmax(double a, double b) { return (a > b || b != b) ? a : b; }
inline double fmin(double a, double b) { return (a < b || b != b) ? a : b; }

/* Operations with one IEEE rounding each (T.ieee_add / ieee_mul / ieee_fdiv): the empty asm keeps
 * the compiler from contracting them with neighbouring operations into a fused multiply-add. */
template <typename T> inline T opaque(T v) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(v));
#else
  volatile T keep = v;
  v = keep;
#endif
  return v;
}
template <typename T> inline T ieee_add(T a, T b) { return opaque(opaque(a) + opaque(b)); }
template <typename T> inline T ieee_mul(T a, T b) { return opaque(opaque(a) * opaque(b)); }
template <typename T> inline T ieee_div(T a, T b) { return opaque(opaque(a) / opaque(b)); }
/* T.ieee_fsqrt: correctly rounded. Under -ffast-math GCC computes sqrt through an approximate
 * reciprocal square root (up to 3 ulp off); there the exact one is a separate function compiled
 * without fast math (a call per element, the price of exactness in a fast-math kernel). */
#if defined(__FAST_MATH__)
#pragma GCC push_options
#pragma GCC optimize("no-fast-math")
__attribute__((noinline)) inline float ieee_sqrt(float x) { return __builtin_sqrtf(x); }
__attribute__((noinline)) inline double ieee_sqrt(double x) { return __builtin_sqrt(x); }
#pragma GCC pop_options
#else
inline float ieee_sqrt(float x) { return __builtin_sqrtf(x); }
inline double ieee_sqrt(double x) { return __builtin_sqrt(x); }
#endif

/* sigmoid(float) is in tl/cpu/math.h (vectorizable exp). */
inline double sigmoid(double x) {
  const double e = __builtin_exp(-__builtin_fabs(x));
  const double s = 1.0 / (1.0 + e);
  return x >= 0.0 ? s : e * s;
}

template <typename I> constexpr I int_max() {
  return I(~I(0)) < I(0) ? I(~(I(1) << (sizeof(I) * 8 - 1))) : I(~I(0));
}
template <typename I> constexpr I int_min() { return I(~I(0)) < I(0) ? I(I(1) << (sizeof(I) * 8 - 1)) : I(0); }

/* Float -> integer conversion (truncating) that saturates and maps NaN to 0, as GPUs do, instead
 * of being undefined behaviour. */
template <typename I, typename F> inline I saturating_cast(F v) {
  if (v != v) return I(0);
  if (v <= static_cast<F>(int_min<I>())) return int_min<I>();
  if (v >= static_cast<F>(int_max<I>())) return int_max<I>();
  return static_cast<I>(v);
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_TYPES_H_
