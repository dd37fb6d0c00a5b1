/* Scalar types and helpers for kernels emitted for the cpu target (and for the compiler itself,
 * which uses the same conversions to round constants).
 *
 * float16 / bfloat16 / float8 values are *stored* in 16/8-bit types and *computed* in float32:
 * a load converts to float, a store or an explicit cast rounds (round-to-nearest-even, the IEEE
 * default). fp16 conversions are branch-free integer/float code that vectorizes (identical results
 * to the reference *_portable functions and to F16C; the GEMM packs fp16 tiles with vcvtph2ps). float8_e4m3 is the "fn" variant (no infinities, NaN = S.1111.111, max 448); values
 * beyond the range become NaN (e4m3) or inf (e5m2), as ml_dtypes does.
 *
 * Lean on purpose: only <stdint.h>, so that a cold compile stays fast. */
#ifndef TL_CPU_TYPES_H_
#define TL_CPU_TYPES_H_

#include <stdint.h>

namespace tl {
namespace cpu {

inline uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
inline float bits_float(uint32_t u) { return __builtin_bit_cast(float, u); }
inline uint64_t double_bits(double d) { return __builtin_bit_cast(uint64_t, d); }

/* double -> float rounding to odd: converting the result to any format with at most 22
 * significand bits then rounds exactly as a direct double -> format conversion would. */
inline float double_to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  uint32_t u = float_bits(f);
  if (static_cast<double>(f) != d && d == d && (u & 1u) == 0) {
    bool too_small = static_cast<double>(f) < d;
    bool negative = (u >> 31) != 0;
    u = (too_small != negative) ? u + 1 : u - 1;
  }
  return bits_float(u);
}

template <typename A, typename B> struct same_type { static constexpr bool value = false; };
template <typename A> struct same_type<A, A> { static constexpr bool value = true; };

/* ---- float16 ------------------------------------------------------------------------------ */

inline uint16_t float_to_half_bits_portable(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN (NaN stays quiet, keeps its top payload bits)
    return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0u));
  }
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {                                                // below 2^-14: subnormal or 0
    if (ax <= 0x33000000u) return static_cast<uint16_t>(sign);           // <= 2^-25 (a tie) -> 0
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;  // units of 2^-24
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t r = (ax >> 13) - (112u << 10);
  uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // a carry moves into the exponent: right
  return static_cast<uint16_t>(sign | r);
}

inline float half_bits_to_float_portable(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) return bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

/* The conversions kernels use: the same results as the reference functions above (bit for bit,
 * NaNs keep their sign and top payload bits and become quiet), but without branches, so that loops
 * converting arrays vectorize (GCC 12 keeps F16C's _Float16 conversions scalar, one element per
 * instruction, which made every float16 element-wise loop scalar). */
inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = static_cast<uint32_t>(h & 0x7fffu) << 13;  // exponent and mantissa, float position
  const uint32_t exp = em & 0x0f800000u;
  const uint32_t normal = em + (112u << 23);                      // rebias 15 -> 127
  const uint32_t special = em + (224u << 23);                     // exponent 31 -> 255 (inf, NaN)
  // Subnormals: 2^-14 * (1 + m / 1024) - 2^-14, exact, and no subnormal float operand on the way.
  const uint32_t sub = float_bits(bits_float(normal + (1u << 23)) - bits_float(113u << 23));
  const uint32_t mag = exp == 0x0f800000u ? special : exp == 0 ? sub : normal;
  return bits_float(sign | mag);
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t x = float_bits(f);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  // |f| >= 65536 (or inf, NaN): inf, or a quiet NaN with the top payload bits.
  const uint32_t big = x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u;
  // |f| < 2^-14: adding 0.5 lines the float's last place up with 2^-24 (half's subnormal step), so
  // the float addition rounds to nearest even exactly as wanted; the low bits are the half.
  const uint32_t small = float_bits(bits_float(x) + 0.5f) - (126u << 23);
  // Otherwise rebias and round the 13 dropped bits to nearest even (a carry may reach inf: right).
  const uint32_t normal = (x + ((15u - 127u) << 23) + 0xfffu + ((x >> 13) & 1u)) >> 13;
  const uint32_t mag = x >= (143u << 23) ? big : x < (113u << 23) ? small : normal;
  return static_cast<uint16_t>((sign >> 16) | mag);
}

/* ---- bfloat16 ----------------------------------------------------------------------------- */

inline uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
inline float bfloat16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

/* ---- float8 ------------------------------------------------------------------------------- */

/* Round-to-nearest-even conversion of a float to an 8-bit float with EXP exponent bits, MAN
 * mantissa bits and bias BIAS. IEEE_SPECIALS: the top exponent is inf/NaN (e5m2); otherwise only
 * S.1111.111 is NaN (e4m3fn) and overflow gives NaN. */
template <int EXP, int MAN, int BIAS, bool IEEE_SPECIALS>
inline uint8_t float_to_fp8_bits(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 24) & 0x80u;
  uint32_t ax = x & 0x7fffffffu;
  const uint32_t nan = 0x7fu;
  const uint32_t overflow = IEEE_SPECIALS ? ((1u << EXP) - 1u) << MAN : 0x7fu;
  if (ax > 0x7f800000u) return static_cast<uint8_t>(sign | nan);
  if (ax == 0x7f800000u) return static_cast<uint8_t>(sign | overflow);
  if (ax < 0x00800000u) return static_cast<uint8_t>(sign);  // float subnormals are far below fp8's range
  int e = static_cast<int>(ax >> 23) - 127;
  uint32_t m = (ax & 0x7fffffu) | 0x800000u;
  int te = e < 1 - BIAS ? 1 - BIAS : e;  // the target exponent (subnormals share the minimum one)
  int shift = 23 - MAN + (te - e);
  uint32_t q;
  if (shift >= 25) {
    q = 0;  // below half of the smallest subnormal
  } else {
    q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
  }
  if (q == (2u << MAN)) {  // rounding carried into the next binade
    q >>= 1;
    ++te;
  }
  uint32_t code;
  if (q < (1u << MAN)) {
    code = q;  // subnormal (or zero)
  } else {
    int field = te + BIAS;
    uint32_t man = q - (1u << MAN);
    if (IEEE_SPECIALS) {
      if (field >= (1 << EXP) - 1) return static_cast<uint8_t>(sign | overflow);
    } else if (field > (1 << EXP) - 1 || (field == (1 << EXP) - 1 && man == (1u << MAN) - 1u)) {
      return static_cast<uint8_t>(sign | overflow);
    }
    code = (static_cast<uint32_t>(field) << MAN) | man;
  }
  return static_cast<uint8_t>(sign | code);
}

template <int EXP, int MAN, int BIAS, bool IEEE_SPECIALS>
inline float fp8_bits_to_float(uint8_t v) {
  uint32_t sign = static_cast<uint32_t>(v & 0x80u) << 24;
  uint32_t field = (v >> MAN) & ((1u << EXP) - 1u);
  uint32_t man = v & ((1u << MAN) - 1u);
  if (IEEE_SPECIALS && field == (1u << EXP) - 1u) return bits_float(sign | 0x7f800000u | (man << (23 - MAN)));
  if (!IEEE_SPECIALS && field == (1u << EXP) - 1u && man == (1u << MAN) - 1u) return bits_float(sign | 0x7fc00000u);
  if (field == 0) {
    /* man * 2^(1 - BIAS - MAN), exact in float */
    float v = static_cast<float>(man) * bits_float(static_cast<uint32_t>(127 + 1 - BIAS - MAN) << 23);
    return sign ? -v : v;
  }
  return bits_float(sign | ((field - BIAS + 127u) << 23) | (man << (23 - MAN)));
}

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

/* The value a storage type computes in: float for the 16/8-bit floats, the type itself otherwise. */
template <typename T> struct compute_type { typedef T type; };
template <> struct compute_type<half_t> { typedef float type; };
template <> struct compute_type<bfloat16_t> { typedef float type; };
template <> struct compute_type<float8_e4m3_t> { typedef float type; };
template <> struct compute_type<float8_e5m2_t> { typedef float type; };

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
