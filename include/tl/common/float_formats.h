/* The 16- and 8-bit float formats in software: float16 (IEEE binary16), bfloat16, float8 e4m3fn and
 * e5m2 <-> float conversions, round to nearest even. The one implementation of these conversions in
 * the project: the cpu kernels' storage types (tl/cpu/types.h), the compiler's constant folding
 * (src/ir/eval.cc), the Ascend simulator (src/sim) and the cuda emulator (src/target/cuda/emulator*)
 * all call these functions. (cuda device code converts with PTX `cvt` instead, tl/cuda/types.h; the
 * Python side uses ml_dtypes, whose results these match bit for bit except for NaN payloads.)
 *
 * Semantics: overflow gives inf (float16, bfloat16, e5m2) or NaN (e4m3fn, which has no infinity,
 * max 448); NaN stays a quiet NaN. A double converts through double_to_float_round_odd, so that the
 * two roundings (double -> float -> format) give the directly rounded result.
 *
 * float16 comes in two spellings with identical results: the *_portable reference functions (plain
 * branches, easy to check) and the branch-free ones kernels use, which vectorize (GCC 12 keeps F16C's
 * _Float16 conversions scalar). tests/cpp/target/cpu/types_test.cc compares them on every input.
 *
 * Lean on purpose: only <stdint.h>, so that a cold kernel compile stays fast. Needs the default
 * floating-point environment (round to nearest, no flush-to-zero), as IEEE code does. */
#ifndef TL_COMMON_FLOAT_FORMATS_H_
#define TL_COMMON_FLOAT_FORMATS_H_

#include <stdint.h>

namespace tl {
namespace ff {

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
 * S.1111.111 is NaN (e4m3fn) and overflow gives NaN.
 * Branch-free (selects only), so that a loop of conversions vectorizes (a per-token fp8 cast is
 * bound by it): normal results round the float's significand in the integer domain (adding half
 * an fp8 ulp minus one plus the kept lsb: ties to even; a carry moves into the exponent); results
 * below the smallest normal come from one float add of a power of two that puts the fp8 subnormal
 * grid at the float's last significand bit (the add rounds to nearest even); what rounds past the
 * top code saturates to the overflow code; NaN stays NaN. Float subnormal inputs give +-0 (also
 * when the process flushes them to zero). Checked bit for bit against the branchy reference
 * formulation for all 2^32 floats, both formats (tests/cpp/common/float_formats_test.cc samples). */
template <int EXP, int MAN, int BIAS, bool IEEE_SPECIALS>
inline uint8_t float_to_fp8_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 24) & 0x80u;
  const uint32_t ax = x & 0x7fffffffu;
  const uint32_t rounded = ax + ((1u << (22 - MAN)) - 1u) + ((ax >> (23 - MAN)) & 1u);
  const uint32_t normal = (rounded >> (23 - MAN)) - (static_cast<uint32_t>(127 - BIAS) << MAN);
  const float magic = bits_float(static_cast<uint32_t>((127 - BIAS) + (23 - MAN) + 1) << 23);
  const uint32_t subnormal = float_bits(bits_float(ax) + magic) - float_bits(magic);
  uint32_t code = ax < (static_cast<uint32_t>(127 + 1 - BIAS) << 23) ? subnormal : normal;
  const uint32_t overflow = IEEE_SPECIALS ? ((1u << EXP) - 1u) << MAN : 0x7fu;  // inf (e5m2) / NaN (e4m3fn)
  code = code > overflow ? overflow : code;
  code = ax > 0x7f800000u ? 0x7fu : code;
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


/* ---- float8_e8m0fnu (MX scale factors) ----------------------------------------------------
 * Unsigned, exponent only: code c in [0, 254] is 2^(c - 127); 0xFF is NaN. No zero, no sign, no
 * infinity. float -> e8m0 as ml_dtypes (and PyTorch) convert: a normal float rounds to the nearest
 * power of two in its significand, halfway cases up (a significand of 1.5 or more goes to the next
 * power); a float subnormal above 2^-127 gives 2^-126, one at or below it 2^-127; zero, negative
 * values, infinities, NaN and what rounds past 2^127 give NaN (PyTorch differs there: it maps zero
 * to 2^-127 and ignores the sign). A double converts through float (round to nearest), as both do.
 * (CUDA's __nv_fp8_e8m0(float) constructor rounds toward +inf instead: docs/COMPATIBILITY.md.) */
inline uint8_t float_to_e8m0_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x >> 31) != 0u || x == 0u || (x & 0x7fffffffu) >= 0x7f800000u) return 0xffu;
  const uint32_t field = x >> 23, man = x & 0x7fffffu;
  if (field == 0u) return man > 0x400000u ? 1u : 0u;  // float subnormal: 2^-127 is man 0x400000
  const uint32_t code = field + (man >= 0x400000u ? 1u : 0u);
  return code >= 0xffu ? static_cast<uint8_t>(0xffu) : static_cast<uint8_t>(code);
}
inline float e8m0_bits_to_float(uint8_t v) {
  if (v == 0xffu) return bits_float(0x7fc00000u);
  if (v == 0u) return bits_float(0x00400000u);  // 2^-127, a float subnormal
  return bits_float(static_cast<uint32_t>(v) << 23);
}

/* ---- float4_e2m1fn (FP4 E2M1, NVFP4/MXFP4 elements) ---------------------------------------
 * Code s.ee.m (bias 1): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 for codes 0..7, code | 8 negative.
 * No infinity, no NaN. float -> e2m1 as ml_dtypes converts: round to nearest, ties to the even
 * code; what is larger than 6 (infinities included) saturates to +-6; NaN gives a zero whose sign
 * is the NaN's sign inverted (ml_dtypes: +NaN -> 0x8, -NaN -> 0x0). A double converts through
 * float (round to nearest), as ml_dtypes does. Branch-free: the magnitude code is the number of
 * rounding thresholds the magnitude passes (a tie goes to the even code: > at odd codes, >= at
 * even ones). */
inline uint8_t float_to_e2m1_bits(float f) {
  const uint32_t x = float_bits(f);
  const float a = bits_float(x & 0x7fffffffu);
  const uint32_t code = static_cast<uint32_t>(a > 0.25f) + static_cast<uint32_t>(a >= 0.75f) +
                        static_cast<uint32_t>(a > 1.25f) + static_cast<uint32_t>(a >= 1.75f) +
                        static_cast<uint32_t>(a > 2.5f) + static_cast<uint32_t>(a >= 3.5f) +
                        static_cast<uint32_t>(a > 5.0f);
  const uint32_t sign = (x >> 28) & 8u;
  const bool nan = (x & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint8_t>(nan ? (sign ^ 8u) : (sign | code));
}
inline float e2m1_bits_to_float(uint8_t v) {
  static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = mag[v & 7u];
  return (v & 8u) ? -m : m;
}

}  // namespace ff
}  // namespace tl

#endif  // TL_COMMON_FLOAT_FORMATS_H_
