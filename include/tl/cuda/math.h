// Math functions of the tile IR for every device scalar type, in namespace tl so generated code
// calls tl::exp(x) whatever x's type is.
//
// Default numerics are the CUDA math library's (expf, logf, ...; no approximate intrinsics), so
// results do not depend on a fast-math flag unless the kernel asks: tl::fast_exp / fast_log /
// fast_sin / fast_cos (T.__exp, ...) are the approximate hardware instructions, and the pass
// config TL_ENABLE_FAST_MATH compiles the whole kernel with --use_fast_math. 16-bit and 8-bit
// floats are computed in float and rounded once to their type. One exception: float exp2 flushes
// subnormal results to zero (exp2_f32 below).
// tl::round rounds half to even (like numpy.round and torch.round).
#pragma once

#include "tl/cuda/types.h"

namespace tl {

// exp2 of a float: the hardware's ex2 (MUFU.EX2, 2 ulp like exp2f) with results below 2^-126
// flushed to zero. exp2f itself keeps subnormal results, which costs three more instructions per
// call on every architecture (a compare and two predicated multiplies around MUFU.EX2: a third of
// the softmax work in attention loops, docs/PERFORMANCE.md). Inputs below -126 give +0 instead of
// a subnormal (absolute difference < 2^-126); everything else, -inf, inf and NaN included, is as
// exp2f. The pass config TL_DISABLE_EXP2_FTZ (tl.disable_exp2_ftz) defines TL_EXP2_SUBNORMAL and
// keeps exp2f.
TL_DEVICE float exp2_f32(float x) {
#if defined(TL_EXP2_SUBNORMAL)
  return exp2f(x);
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

#define TL_UNARY_F(NAME, FLOAT_EXPR, DOUBLE_EXPR)                                    \
  TL_DEVICE float NAME(float x) { return FLOAT_EXPR; }                              \
  TL_DEVICE double NAME(double x) { return DOUBLE_EXPR; }                           \
  TL_DEVICE half_t NAME(half_t x) { return half_t(NAME(static_cast<float>(x))); }   \
  TL_DEVICE bfloat16_t NAME(bfloat16_t x) { return bfloat16_t(NAME(static_cast<float>(x))); } \
  TL_DEVICE fp8_e4m3_t NAME(fp8_e4m3_t x) { return fp8_e4m3_t(NAME(static_cast<float>(x))); } \
  TL_DEVICE fp8_e5m2_t NAME(fp8_e5m2_t x) { return fp8_e5m2_t(NAME(static_cast<float>(x))); }

TL_UNARY_F(exp, expf(x), ::exp(x))
TL_UNARY_F(exp2, exp2_f32(x), ::exp2(x))
TL_UNARY_F(log, logf(x), ::log(x))
TL_UNARY_F(log2, log2f(x), ::log2(x))
TL_UNARY_F(log10, log10f(x), ::log10(x))
TL_UNARY_F(sqrt, sqrtf(x), ::sqrt(x))
TL_UNARY_F(rsqrt, rsqrtf(x), ::rsqrt(x))
TL_UNARY_F(tanh, tanhf(x), ::tanh(x))
TL_UNARY_F(sin, sinf(x), ::sin(x))
TL_UNARY_F(cos, cosf(x), ::cos(x))
TL_UNARY_F(tan, tanf(x), ::tan(x))
TL_UNARY_F(erf, erff(x), ::erf(x))
TL_UNARY_F(floor, floorf(x), ::floor(x))
TL_UNARY_F(ceil, ceilf(x), ::ceil(x))
TL_UNARY_F(trunc, truncf(x), ::trunc(x))
TL_UNARY_F(round, rintf(x), ::rint(x))
// sigmoid through e = exp(-|x|) <= 1: no infinite intermediate, which --use_fast_math's division
// (__fdividef) turns into NaN or 0 (1 / (1 + exp(200))).
TL_UNARY_F(sigmoid, x >= 0.0f ? 1.0f / (1.0f + expf(-fabsf(x))) : expf(-fabsf(x)) / (1.0f + expf(-fabsf(x))),
           x >= 0.0 ? 1.0 / (1.0 + ::exp(-fabs(x))) : ::exp(-fabs(x)) / (1.0 + ::exp(-fabs(x))))
TL_UNARY_F(reciprocal, 1.0f / x, 1.0 / x)
TL_UNARY_F(relu, x > 0.0f ? x : 0.0f, x > 0.0 ? x : 0.0)
TL_UNARY_F(silu, x * sigmoid(x), x * sigmoid(x))
// Approximate hardware versions (T.__exp, T.__log, T.__sin, T.__cos).
TL_UNARY_F(fast_exp, __expf(x), ::exp(x))
TL_UNARY_F(fast_log, __logf(x), ::log(x))
TL_UNARY_F(fast_sin, __sinf(x), ::sin(x))
TL_UNARY_F(fast_cos, __cosf(x), ::cos(x))
#undef TL_UNARY_F

// abs: exact sign-bit clear for floats.
TL_DEVICE float abs(float x) { return fabsf(x); }
TL_DEVICE double abs(double x) { return fabs(x); }
TL_DEVICE half_t abs(half_t x) { return half_t::from_bits(static_cast<uint16_t>(x.bits & 0x7fffu)); }
TL_DEVICE bfloat16_t abs(bfloat16_t x) { return bfloat16_t::from_bits(static_cast<uint16_t>(x.bits & 0x7fffu)); }
TL_DEVICE fp8_e4m3_t abs(fp8_e4m3_t x) { return fp8_e4m3_t::from_bits(static_cast<uint8_t>(x.bits & 0x7fu)); }
TL_DEVICE fp8_e5m2_t abs(fp8_e5m2_t x) { return fp8_e5m2_t::from_bits(static_cast<uint8_t>(x.bits & 0x7fu)); }
TL_DEVICE int32_t abs(int32_t x) { return x < 0 ? -x : x; }
TL_DEVICE int64_t abs(int64_t x) { return x < 0 ? -x : x; }
TL_DEVICE int16_t abs(int16_t x) { return static_cast<int16_t>(x < 0 ? -x : x); }
TL_DEVICE int8_t abs(int8_t x) { return static_cast<int8_t>(x < 0 ? -x : x); }
TL_DEVICE uint8_t abs(uint8_t x) { return x; }
TL_DEVICE uint16_t abs(uint16_t x) { return x; }
TL_DEVICE uint32_t abs(uint32_t x) { return x; }
TL_DEVICE uint64_t abs(uint64_t x) { return x; }

#define TL_BINARY_F(NAME, FLOAT_EXPR, DOUBLE_EXPR)                                                        \
  TL_DEVICE float NAME(float a, float b) { return FLOAT_EXPR; }                                           \
  TL_DEVICE double NAME(double a, double b) { return DOUBLE_EXPR; }                                       \
  TL_DEVICE half_t NAME(half_t a, half_t b) { return half_t(NAME(static_cast<float>(a), static_cast<float>(b))); } \
  TL_DEVICE bfloat16_t NAME(bfloat16_t a, bfloat16_t b) {                                                 \
    return bfloat16_t(NAME(static_cast<float>(a), static_cast<float>(b)));                                \
  }                                                                                                       \
  TL_DEVICE fp8_e4m3_t NAME(fp8_e4m3_t a, fp8_e4m3_t b) {                                                 \
    return fp8_e4m3_t(NAME(static_cast<float>(a), static_cast<float>(b)));                                \
  }                                                                                                       \
  TL_DEVICE fp8_e5m2_t NAME(fp8_e5m2_t a, fp8_e5m2_t b) {                                                 \
    return fp8_e5m2_t(NAME(static_cast<float>(a), static_cast<float>(b)));                                \
  }
TL_BINARY_F(pow, powf(a, b), ::pow(a, b))
TL_BINARY_F(fmod, fmodf(a, b), ::fmod(a, b))
TL_BINARY_F(atan2, atan2f(a, b), ::atan2(a, b))
// max/min ignore a NaN operand (fmaxf semantics), as the reductions do.
TL_BINARY_F(max, fmaxf(a, b), fmax(a, b))
TL_BINARY_F(min, fminf(a, b), fmin(a, b))
#undef TL_BINARY_F

#define TL_INT_MINMAX(T)                                        \
  TL_DEVICE T max(T a, T b) { return a < b ? b : a; }           \
  TL_DEVICE T min(T a, T b) { return b < a ? b : a; }
TL_INT_MINMAX(int8_t)
TL_INT_MINMAX(uint8_t)
TL_INT_MINMAX(int16_t)
TL_INT_MINMAX(uint16_t)
TL_INT_MINMAX(int32_t)
TL_INT_MINMAX(uint32_t)
TL_INT_MINMAX(int64_t)
TL_INT_MINMAX(uint64_t)
#undef TL_INT_MINMAX

TL_DEVICE float fma(float a, float b, float c) { return fmaf(a, b, c); }
TL_DEVICE double fma(double a, double b, double c) { return ::fma(a, b, c); }

// T.ieee_* with an explicit rounding mode: 0 = rn (nearest even), 1 = rz, 2 = ru (up), 3 = rd.
template <int kMode>
TL_DEVICE float ieee_add(float a, float b) {
  if constexpr (kMode == 0) return __fadd_rn(a, b);
  else if constexpr (kMode == 1) return __fadd_rz(a, b);
  else if constexpr (kMode == 2) return __fadd_ru(a, b);
  else return __fadd_rd(a, b);
}
template <int kMode>
TL_DEVICE float ieee_mul(float a, float b) {
  if constexpr (kMode == 0) return __fmul_rn(a, b);
  else if constexpr (kMode == 1) return __fmul_rz(a, b);
  else if constexpr (kMode == 2) return __fmul_ru(a, b);
  else return __fmul_rd(a, b);
}
template <int kMode>
TL_DEVICE float ieee_fmaf(float a, float b, float c) {
  if constexpr (kMode == 0) return __fmaf_rn(a, b, c);
  else if constexpr (kMode == 1) return __fmaf_rz(a, b, c);
  else if constexpr (kMode == 2) return __fmaf_ru(a, b, c);
  else return __fmaf_rd(a, b, c);
}
template <int kMode>
TL_DEVICE float ieee_fdiv(float a, float b) {
  if constexpr (kMode == 0) return __fdiv_rn(a, b);
  else if constexpr (kMode == 1) return __fdiv_rz(a, b);
  else if constexpr (kMode == 2) return __fdiv_ru(a, b);
  else return __fdiv_rd(a, b);
}
template <int kMode>
TL_DEVICE float ieee_fsqrt(float a) {
  if constexpr (kMode == 0) return __fsqrt_rn(a);
  else if constexpr (kMode == 1) return __fsqrt_rz(a);
  else if constexpr (kMode == 2) return __fsqrt_ru(a);
  else return __fsqrt_rd(a);
}

// Special values (T.infinity, T.max_value, T.min_value) by type.
template <typename T>
struct numeric_limits;
template <>
struct numeric_limits<float> {
  TL_DEVICE static float infinity() { return __uint_as_float(0x7f800000u); }
  TL_DEVICE static float max() { return __uint_as_float(0x7f7fffffu); }
  TL_DEVICE static float lowest() { return __uint_as_float(0xff7fffffu); }
};
template <>
struct numeric_limits<double> {
  TL_DEVICE static double infinity() { return __longlong_as_double(0x7ff0000000000000ll); }
  TL_DEVICE static double max() { return __longlong_as_double(0x7fefffffffffffffll); }
  TL_DEVICE static double lowest() { return __longlong_as_double(static_cast<long long>(0xffefffffffffffffull)); }
};
template <>
struct numeric_limits<half_t> {
  TL_DEVICE static half_t infinity() { return half_t::from_bits(0x7c00u); }
  TL_DEVICE static half_t max() { return half_t::from_bits(0x7bffu); }
  TL_DEVICE static half_t lowest() { return half_t::from_bits(0xfbffu); }
};
template <>
struct numeric_limits<bfloat16_t> {
  TL_DEVICE static bfloat16_t infinity() { return bfloat16_t::from_bits(0x7f80u); }
  TL_DEVICE static bfloat16_t max() { return bfloat16_t::from_bits(0x7f7fu); }
  TL_DEVICE static bfloat16_t lowest() { return bfloat16_t::from_bits(0xff7fu); }
};
// e4m3fn has no infinity: its "infinity" is the largest finite value, as T.infinity gives there.
template <>
struct numeric_limits<fp8_e4m3_t> {
  TL_DEVICE static fp8_e4m3_t infinity() { return fp8_e4m3_t::from_bits(0x7eu); }
  TL_DEVICE static fp8_e4m3_t max() { return fp8_e4m3_t::from_bits(0x7eu); }
  TL_DEVICE static fp8_e4m3_t lowest() { return fp8_e4m3_t::from_bits(0xfeu); }
};
template <>
struct numeric_limits<fp8_e5m2_t> {
  TL_DEVICE static fp8_e5m2_t infinity() { return fp8_e5m2_t::from_bits(0x7cu); }
  TL_DEVICE static fp8_e5m2_t max() { return fp8_e5m2_t::from_bits(0x7bu); }
  TL_DEVICE static fp8_e5m2_t lowest() { return fp8_e5m2_t::from_bits(0xfbu); }
};

}  // namespace tl
