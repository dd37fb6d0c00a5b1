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

}  // namespace ff
}  // namespace tl

#endif  // TL_COMMON_FLOAT_FORMATS_H_
