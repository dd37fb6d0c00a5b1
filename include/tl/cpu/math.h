/* Float math functions written so that loops calling them vectorize: no calls, no branches, only
 * arithmetic, comparisons as selects and integer bit operations, which GCC turns into AVX-512 /
 * AVX2 code inside SIMD-hinted loops (a call to the C library's expf keeps a loop scalar).
 *
 * exp(x): 2^n * p(r) with n = round(x / ln 2) and r = x - n ln 2 in two steps (Cody-Waite), p the
 * degree-7 Taylor polynomial (its truncation error is below 2^-27 on |r| <= ln2 / 2), evaluated
 * with fused multiply-adds; 2^n is applied as two exact power-of-two factors so that results in
 * the subnormal range are rounded once. Overflow gives +inf, underflow 0, NaN stays NaN. Measured
 * error: within 1 ulp of the correctly rounded result (tests/cpp/target/cpu/math_test.cc); the C
 * library's expf is within 0.5 ulp, CUDA's expf within 2.
 * exp2(x) uses the same reduction with r = (x - n) ln 2. */
#ifndef TL_CPU_MATH_H_
#define TL_CPU_MATH_H_

#include <stdint.h>

namespace tl {
namespace cpu {

namespace math_impl {

/* 2^n for integer n in [-150, 129] as p * 2^n1 * 2^n2, each factor a normal float. */
inline float scale_pow2(float p, int32_t n) {
  const int32_t n1 = n >> 1, n2 = n - n1;
  const float s1 = __builtin_bit_cast(float, (n1 + 127) << 23);
  const float s2 = __builtin_bit_cast(float, (n2 + 127) << 23);
  return p * s1 * s2;
}

/* e^r for |r| <= ln2 / 2 (+ rounding slack). */
inline float exp_reduced(float r) {
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
constexpr int32_t kRoundMagicBits = 0x4b400000;

}  // namespace math_impl

inline float exp(float x) {
  using namespace math_impl;
  // Beyond these e^x is inf (> ln FLT_MAX) or rounds to 0 (< ln(2^-150)); clamping keeps n in range.
  float xc = x > 89.0f ? 89.0f : x;
  xc = xc < -104.0f ? -104.0f : xc;
  const float t = xc * 1.44269504088896341f + kRoundMagic;
  const int32_t ni = __builtin_bit_cast(int32_t, t) - kRoundMagicBits;
  const float n = static_cast<float>(ni);
  float r = xc - n * 0.693145751953125f;  // ln 2 high part: 12 significant bits, n * it is exact
  r = r - n * 1.42860682030941723212e-6f;  // ln 2 - the high part
  return scale_pow2(exp_reduced(r), ni);   // a NaN x gives a NaN r, hence a NaN result
}

inline float exp2(float x) {
  using namespace math_impl;
  float xc = x > 129.0f ? 129.0f : x;
  xc = xc < -151.0f ? -151.0f : xc;
  const float t = xc + kRoundMagic;
  const int32_t ni = __builtin_bit_cast(int32_t, t) - kRoundMagicBits;
  const float n = static_cast<float>(ni);
  const float r = (xc - n) * 0.693147180559945309f;  // xc - n is exact
  return scale_pow2(exp_reduced(r), ni);
}

inline float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_MATH_H_
