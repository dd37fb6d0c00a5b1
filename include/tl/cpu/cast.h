/* Conversions with an explicit rounding mode (T.tile.cast(dst, src, mode)), cpu target.
 *
 * Modes (the Ascend names): CAST_NONE and CAST_RINT round to nearest even; CAST_FLOOR toward -inf;
 * CAST_CEIL toward +inf; CAST_ROUND to nearest, ties away from zero; CAST_TRUNC toward zero;
 * CAST_ODD to odd (the neighbour whose last significand bit is 1 when inexact). For an integer
 * destination the mode picks the integer; for a narrower float destination it picks between the
 * two representable neighbours of the exact value. Out-of-range integers saturate, NaN -> 0. */
#ifndef TL_CPU_CAST_H_
#define TL_CPU_CAST_H_

#include <stdint.h>

#include "tl/cpu/types.h"

namespace tl {
namespace cpu {

enum CastMode { kCastNone = 0, kCastRint, kCastFloor, kCastCeil, kCastRound, kCastTrunc, kCastOdd };

template <typename T> struct is_small_float { static constexpr bool value = false; };
template <> struct is_small_float<half_t> { static constexpr bool value = true; };
template <> struct is_small_float<bfloat16_t> { static constexpr bool value = true; };
template <> struct is_small_float<float8_e4m3_t> { static constexpr bool value = true; };
template <> struct is_small_float<float8_e5m2_t> { static constexpr bool value = true; };
template <> struct is_small_float<float8_e8m0_t> { static constexpr bool value = true; };
template <> struct is_small_float<float4_e2m1_t> { static constexpr bool value = true; };

template <typename T> struct is_float_type { static constexpr bool value = is_small_float<T>::value; };
template <> struct is_float_type<float> { static constexpr bool value = true; };
template <> struct is_float_type<double> { static constexpr bool value = true; };

/* The next representable value toward +inf (up) or -inf (down) of a sign-magnitude bit pattern. */
template <typename Bits> inline Bits step_bits(Bits b, bool up, int sign_shift) {
  const Bits sign = static_cast<Bits>(Bits(1) << sign_shift);
  const Bits mag = static_cast<Bits>(b & ~sign);
  if (mag == 0) return up ? Bits(1) : static_cast<Bits>(sign | 1);  // from +-0
  bool negative = (b & sign) != 0;
  return (up != negative) ? static_cast<Bits>(b + 1) : static_cast<Bits>(b - 1);
}

template <typename T> struct float_format;
template <> struct float_format<half_t> {
  static half_t round(double x) { return half_t(x); }
  static double value(half_t v) { return static_cast<float>(v); }
  static half_t step(half_t v, bool up) { return half_t::from_bits(step_bits<uint16_t>(v.bits, up, 15)); }
  static bool odd(half_t v) { return v.bits & 1u; }
};
template <> struct float_format<bfloat16_t> {
  static bfloat16_t round(double x) { return bfloat16_t(x); }
  static double value(bfloat16_t v) { return static_cast<float>(v); }
  static bfloat16_t step(bfloat16_t v, bool up) { return bfloat16_t::from_bits(step_bits<uint16_t>(v.bits, up, 15)); }
  static bool odd(bfloat16_t v) { return v.bits & 1u; }
};
template <> struct float_format<float8_e4m3_t> {
  static float8_e4m3_t round(double x) { return float8_e4m3_t(x); }
  static double value(float8_e4m3_t v) { return static_cast<float>(v); }
  static float8_e4m3_t step(float8_e4m3_t v, bool up) { return float8_e4m3_t::from_bits(step_bits<uint8_t>(v.bits, up, 7)); }
  static bool odd(float8_e4m3_t v) { return v.bits & 1u; }
};
template <> struct float_format<float8_e5m2_t> {
  static float8_e5m2_t round(double x) { return float8_e5m2_t(x); }
  static double value(float8_e5m2_t v) { return static_cast<float>(v); }
  static float8_e5m2_t step(float8_e5m2_t v, bool up) { return float8_e5m2_t::from_bits(step_bits<uint8_t>(v.bits, up, 7)); }
  static bool odd(float8_e5m2_t v) { return v.bits & 1u; }
};
/* e8m0 codes are unsigned and ordered: the neighbours are code +- 1 (0 and 254 are the ends). */
template <> struct float_format<float8_e8m0_t> {
  static float8_e8m0_t round(double x) { return float8_e8m0_t(x); }
  static double value(float8_e8m0_t v) { return static_cast<float>(v); }
  static float8_e8m0_t step(float8_e8m0_t v, bool up) {
    if (v.bits == 0xffu) return v;
    return float8_e8m0_t::from_bits(static_cast<uint8_t>(up ? (v.bits < 254 ? v.bits + 1 : 0xff) : (v.bits > 0 ? v.bits - 1 : 0)));
  }
  static bool odd(float8_e8m0_t v) { return v.bits & 1u; }
};
template <> struct float_format<float4_e2m1_t> {
  static float4_e2m1_t round(double x) { return float4_e2m1_t(x); }
  static double value(float4_e2m1_t v) { return static_cast<float>(v); }
  static float4_e2m1_t step(float4_e2m1_t v, bool up) {  // sign-magnitude; +-6 are the ends
    const uint8_t mag = v.bits & 7u;
    if ((v.bits & 8u) == 0u ? (up && mag == 7u) : (!up && mag == 7u)) return v;
    return float4_e2m1_t::from_bits(step_bits<uint8_t>(v.bits, up, 3));
  }
  static bool odd(float4_e2m1_t v) { return v.bits & 1u; }
};
template <> struct float_format<float> {
  static float round(double x) { return static_cast<float>(x); }
  static double value(float v) { return v; }
  static float step(float v, bool up) { return bits_float(step_bits<uint32_t>(float_bits(v), up, 31)); }
  static bool odd(float v) { return float_bits(v) & 1u; }
};

/* Rounds x to the float format T with the given mode. */
template <typename T> inline T round_float_mode(double x, int mode) {
  typedef float_format<T> F;
  T r = F::round(x);
  double rv = F::value(r);
  if (mode == kCastNone || mode == kCastRint || rv == x || x != x) return r;
  T lo, hi;
  if (rv < x) {
    lo = r;
    hi = F::step(r, true);
  } else {
    hi = r;
    lo = F::step(r, false);
  }
  switch (mode) {
    case kCastFloor: return lo;
    case kCastCeil: return hi;
    case kCastTrunc: return x > 0 ? lo : hi;
    case kCastOdd: return F::odd(lo) ? lo : hi;
    case kCastRound: {
      double dl = x - F::value(lo), dh = F::value(hi) - x;
      if (dl < dh) return lo;
      if (dh < dl) return hi;
      return x > 0 ? hi : lo;
    }
    default: return r;
  }
}

inline double round_integral_mode(double x, int mode) {
  switch (mode) {
    case kCastFloor: return __builtin_floor(x);
    case kCastCeil: return __builtin_ceil(x);
    case kCastRound: return __builtin_round(x);
    case kCastTrunc: return __builtin_trunc(x);
    case kCastOdd: {
      double t = __builtin_trunc(x);
      if (t == x) return t;
      /* the integer neighbour that is odd */
      double other = x > 0 ? t + 1 : t - 1;
      return __builtin_fmod(t, 2.0) != 0 ? t : other;
    }
    default: return __builtin_rint(x);  // the default rounding mode: nearest even
  }
}

/* Dst(src) under `mode`, returned as a value of Dst's compute type. Src is given in its compute
 * type (a 16/8-bit float arrives as float). */
template <typename Dst, int MODE, typename Src>
inline typename compute_type<Dst>::type cast_mode(Src v) {
  typedef typename compute_type<Dst>::type Out;
  if constexpr (same_type<Dst, bool>::value) {
    return v != Src(0);
  } else if constexpr (is_float_type<Src>::value && !is_float_type<Dst>::value) {
    return saturating_cast<Dst>(round_integral_mode(static_cast<double>(v), MODE));
  } else if constexpr (is_small_float<Dst>::value || same_type<Dst, float>::value) {
    return static_cast<Out>(round_float_mode<Dst>(static_cast<double>(v), MODE));
  } else {
    return static_cast<Out>(v);
  }
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_CAST_H_
