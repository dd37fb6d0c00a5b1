// Numeric storage types of the tile IR on the device: float16 (half_t), bfloat16 (bfloat16_t),
// float8 e4m3 / e5m2 (fp8_e4m3_t, fp8_e5m2_t), and fixed-size vectors for 4/8/16-byte accesses.
//
// Conversions go through PTX `cvt` (round to nearest even). Arithmetic between two half_t or two
// bfloat16_t values is one correctly rounded instruction (`add.f16`, `fma.rn.bf16`, ...), so a
// kernel computes exactly what its IR types say. Mixed arithmetic with float promotes to float
// through the implicit conversion; the opposite direction is explicit, as in the IR.
// fp8 conversions saturate to the largest finite value (PTX `.satfinite`); NaN stays NaN.
#pragma once

#include "tl/cuda/common.h"

namespace tl {

// ---------------------------------------------------------------------------------------------
// Scalar conversions (bit level).
TL_DEVICE uint16_t f32_to_f16_bits(float f) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
TL_DEVICE float f16_bits_to_f32(uint16_t h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
TL_DEVICE uint16_t f64_to_f16_bits(double d) {
  uint16_t h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d));
  return h;
}
TL_DEVICE uint16_t f32_to_bf16_bits(float f) {
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
TL_DEVICE float bf16_bits_to_f32(uint16_t h) { return __uint_as_float(static_cast<uint32_t>(h) << 16); }

// float -> 8-bit float with round-to-nearest-even and saturation to the largest finite value;
// NaN -> NaN. kMan mantissa bits, kBias exponent bias, kMaxBits the largest finite encoding,
// kNanBits the canonical NaN. Used where the hardware has no fp8 conversion (before sm_89).
template <int kMan, int kBias, uint32_t kMaxBits, uint32_t kNanBits>
TL_DEVICE uint8_t f32_to_f8_soft(float f) {
  uint32_t u = __float_as_uint(f);
  uint32_t sign = (u >> 24) & 0x80u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(sign | kNanBits);
  // Smallest normal of the 8-bit format: 2^(1 - bias).
  const uint32_t min_normal = static_cast<uint32_t>(127 + 1 - kBias) << 23;
  uint32_t r;
  if (a < min_normal) {
    // Subnormal range: an integer count of the spacing 2^(1 - bias - kMan), rounded to even.
    float scaled = __uint_as_float(a) * __uint_as_float(static_cast<uint32_t>(127 - 1 + kBias + kMan) << 23);
    r = static_cast<uint32_t>(__float2uint_rn(scaled));  // reaching 1 << kMan is the smallest normal
  } else {
    uint32_t drop = 23 - kMan;
    uint32_t lsb = (a >> drop) & 1u;
    uint32_t rounded = a + ((1u << (drop - 1)) - 1u) + lsb;
    if (rounded >= 0x7f800000u) return static_cast<uint8_t>(sign | kMaxBits);
    r = (rounded >> drop) - (static_cast<uint32_t>(127 - kBias) << kMan);
  }
  if (r > kMaxBits) r = kMaxBits;
  return static_cast<uint8_t>(sign | r);
}

// 8-bit float -> float (exact). kHasInf: e5m2 encodes infinities like IEEE; e4m3fn does not.
template <int kMan, int kBias, bool kHasInf>
TL_DEVICE float f8_to_f32_soft(uint8_t b) {
  uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  uint32_t e = (b & 0x7fu) >> kMan;
  uint32_t m = b & ((1u << kMan) - 1u);
  const uint32_t emax = (1u << (7 - kMan)) - 1u;
  if (e == emax) {
    if (kHasInf) return __uint_as_float(sign | 0x7f800000u | (m << (23 - kMan)) | (m ? 0x400000u : 0u));
    if (m == (1u << kMan) - 1u) return __uint_as_float(sign | 0x7fc00000u);
  }
  if (e == 0) {
    // m * 2^(1 - bias - kMan), exact in float.
    float v = static_cast<float>(m) * __uint_as_float(static_cast<uint32_t>(127 + 1 - kBias - kMan) << 23);
    return sign ? -v : v;
  }
  return __uint_as_float(sign | ((e + 127 - kBias) << 23) | (m << (23 - kMan)));
}

TL_DEVICE uint8_t f32_to_e4m3_bits(float f) {
#if TL_ARCH >= 890
  uint16_t pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  return static_cast<uint8_t>(pair & 0xffu);
#else
  return f32_to_f8_soft<3, 7, 0x7eu, 0x7fu>(f);
#endif
}
TL_DEVICE uint8_t f32_to_e5m2_bits(float f) {
#if TL_ARCH >= 890
  uint16_t pair;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  return static_cast<uint8_t>(pair & 0xffu);
#else
  return f32_to_f8_soft<2, 15, 0x7bu, 0x7fu>(f);
#endif
}
TL_DEVICE float e4m3_bits_to_f32(uint8_t b) {
#if TL_ARCH >= 890
  uint32_t h2;
  uint16_t in = b;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(in));
  return f16_bits_to_f32(static_cast<uint16_t>(h2 & 0xffffu));
#else
  return f8_to_f32_soft<3, 7, false>(b);
#endif
}
TL_DEVICE float e5m2_bits_to_f32(uint8_t b) {
  // e5m2 is the upper byte of an IEEE half: the conversion is exact through f16.
  return f16_bits_to_f32(static_cast<uint16_t>(static_cast<uint16_t>(b) << 8));
}

// ---------------------------------------------------------------------------------------------
// Storage types. Default construction is trivial so they can live in __shared__ arrays.
#define TL_FLOAT_STORAGE_CTORS(Name, Bits, FROM_F32, FROM_F64)                         \
  Name() = default;                                                                       \
  TL_DEVICE explicit Name(float f) : bits(FROM_F32(f)) {}                                 \
  TL_DEVICE explicit Name(double d) : bits(FROM_F64(d)) {}                                \
  TL_DEVICE explicit Name(int v) : bits(FROM_F32(static_cast<float>(v))) {}               \
  TL_DEVICE explicit Name(unsigned v) : bits(FROM_F32(static_cast<float>(v))) {}          \
  TL_DEVICE explicit Name(long long v) : bits(FROM_F64(static_cast<double>(v))) {}        \
  TL_DEVICE explicit Name(unsigned long long v) : bits(FROM_F64(static_cast<double>(v))) {} \
  TL_DEVICE explicit Name(long v) : bits(FROM_F64(static_cast<double>(v))) {}             \
  TL_DEVICE explicit Name(unsigned long v) : bits(FROM_F64(static_cast<double>(v))) {}    \
  TL_DEVICE explicit Name(bool v) : bits(FROM_F32(v ? 1.0f : 0.0f)) {}                    \
  TL_DEVICE static Name from_bits(Bits b) {                                               \
    Name r;                                                                               \
    r.bits = b;                                                                           \
    return r;                                                                             \
  }

// double -> narrow float. Rounding to float first and then to the narrow type can round twice the
// wrong way; rounding to float *to odd* (truncate, then set the last bit when inexact) keeps enough
// information that the second, nearest-even rounding is the correct one (float has more than
// two bits beyond any narrow format).
TL_DEVICE float f64_to_f32_round_odd(double d) {
  float f = __double2float_rz(d);
  if (static_cast<double>(f) != d && !isnan(d) && !isinf(f)) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}
TL_DEVICE uint16_t f64_to_bf16_bits(double d) {
#if TL_ARCH >= 900
  uint16_t h;
  asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(h) : "d"(d));
  return h;
#else
  return f32_to_bf16_bits(f64_to_f32_round_odd(d));
#endif
}
TL_DEVICE uint8_t f64_to_e4m3_bits(double d) { return f32_to_e4m3_bits(f64_to_f32_round_odd(d)); }
TL_DEVICE uint8_t f64_to_e5m2_bits(double d) { return f32_to_e5m2_bits(f64_to_f32_round_odd(d)); }

struct bfloat16_t;
struct fp8_e4m3_t;
struct fp8_e5m2_t;

struct alignas(2) half_t {
  uint16_t bits;
  TL_FLOAT_STORAGE_CTORS(half_t, uint16_t, f32_to_f16_bits, f64_to_f16_bits)
  TL_DEVICE explicit half_t(bfloat16_t v);
  TL_DEVICE explicit half_t(fp8_e4m3_t v);
  TL_DEVICE explicit half_t(fp8_e5m2_t v);
  TL_DEVICE operator float() const { return f16_bits_to_f32(bits); }
};

struct alignas(2) bfloat16_t {
  uint16_t bits;
  TL_FLOAT_STORAGE_CTORS(bfloat16_t, uint16_t, f32_to_bf16_bits, f64_to_bf16_bits)
  TL_DEVICE explicit bfloat16_t(half_t v) : bits(f32_to_bf16_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit bfloat16_t(fp8_e4m3_t v);
  TL_DEVICE explicit bfloat16_t(fp8_e5m2_t v);
  TL_DEVICE operator float() const { return bf16_bits_to_f32(bits); }
};

struct alignas(1) fp8_e4m3_t {
  uint8_t bits;
  TL_FLOAT_STORAGE_CTORS(fp8_e4m3_t, uint8_t, f32_to_e4m3_bits, f64_to_e4m3_bits)
  TL_DEVICE explicit fp8_e4m3_t(half_t v) : bits(f32_to_e4m3_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp8_e4m3_t(bfloat16_t v) : bits(f32_to_e4m3_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp8_e4m3_t(fp8_e5m2_t v);
  TL_DEVICE operator float() const { return e4m3_bits_to_f32(bits); }
};

struct alignas(1) fp8_e5m2_t {
  uint8_t bits;
  TL_FLOAT_STORAGE_CTORS(fp8_e5m2_t, uint8_t, f32_to_e5m2_bits, f64_to_e5m2_bits)
  TL_DEVICE explicit fp8_e5m2_t(half_t v) : bits(f32_to_e5m2_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp8_e5m2_t(bfloat16_t v) : bits(f32_to_e5m2_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp8_e5m2_t(fp8_e4m3_t v) : bits(f32_to_e5m2_bits(static_cast<float>(v))) {}
  TL_DEVICE operator float() const { return e5m2_bits_to_f32(bits); }
};

// float8_e8m0fnu (MX scale factors): code c in [0, 254] is 2^(c - 127), 0xFF is NaN. The conversion
// is the cpu target's (include/tl/common/float_formats.h: ml_dtypes' rounding, to the nearest power
// of two with a significand of 1.5 or more going up; zero, negatives, inf, NaN and overflow give
// NaN), not __nv_fp8_e8m0(float)'s round-toward-+inf.
TL_DEVICE uint8_t f32_to_e8m0_bits(float f) {
  const uint32_t x = __float_as_uint(f);
  if ((x >> 31) != 0u || x == 0u || (x & 0x7fffffffu) >= 0x7f800000u) return 0xffu;
  const uint32_t field = x >> 23, man = x & 0x7fffffu;
  if (field == 0u) return man > 0x400000u ? 1u : 0u;  // float subnormals, as ml_dtypes
  const uint32_t code = field + (man >= 0x400000u ? 1u : 0u);
  return code >= 0xffu ? static_cast<uint8_t>(0xffu) : static_cast<uint8_t>(code);
}
TL_DEVICE uint8_t f64_to_e8m0_bits(double d) { return f32_to_e8m0_bits(__double2float_rn(d)); }  // as ml_dtypes
TL_DEVICE float e8m0_bits_to_f32(uint8_t b) {
  if (b == 0xffu) return __uint_as_float(0x7fc00000u);
  return __uint_as_float(b == 0u ? 0x00400000u : static_cast<uint32_t>(b) << 23);
}
struct alignas(1) fp8_e8_t {
  uint8_t bits;
  TL_FLOAT_STORAGE_CTORS(fp8_e8_t, uint8_t, f32_to_e8m0_bits, f64_to_e8m0_bits)
  TL_DEVICE explicit fp8_e8_t(half_t v) : bits(f32_to_e8m0_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp8_e8_t(bfloat16_t v) : bits(f32_to_e8m0_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp8_e8_t(fp8_e4m3_t v) : bits(f32_to_e8m0_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp8_e8_t(fp8_e5m2_t v) : bits(f32_to_e8m0_bits(static_cast<float>(v))) {}
  TL_DEVICE operator float() const { return e8m0_bits_to_f32(bits); }
};

// float4_e2m1fn: code s.ee.m (bias 1), magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6; no inf, no NaN. The
// conversion is the cpu target's (include/tl/common/float_formats.h: ml_dtypes' rounding, nearest
// with ties to the even code, saturating to +-6; NaN gives a zero signed opposite to the NaN).
// On chip one element a byte (fp4_e2_t); global tensors hold two a byte (fp4_e2x2_t, element 2k
// in the low nibble of byte k) and are read and written through fp4_packed_load / _store.
TL_DEVICE uint8_t f32_to_e2m1_bits(float f) {
  const uint32_t x = __float_as_uint(f);
  const float a = __uint_as_float(x & 0x7fffffffu);
  const uint32_t code = static_cast<uint32_t>(a > 0.25f) + static_cast<uint32_t>(a >= 0.75f) +
                        static_cast<uint32_t>(a > 1.25f) + static_cast<uint32_t>(a >= 1.75f) +
                        static_cast<uint32_t>(a > 2.5f) + static_cast<uint32_t>(a >= 3.5f) +
                        static_cast<uint32_t>(a > 5.0f);
  const uint32_t sign = (x >> 28) & 8u;
  return static_cast<uint8_t>((x & 0x7fffffffu) > 0x7f800000u ? (sign ^ 8u) : (sign | code));
}
TL_DEVICE uint8_t f64_to_e2m1_bits(double d) { return f32_to_e2m1_bits(__double2float_rn(d)); }  // as ml_dtypes
TL_DEVICE float e2m1_bits_to_f32(uint8_t b) {
  // magnitude 2^(e-1) * (1 + m/2) for e > 0, m/2 for e == 0: exact in float from the 3 bits
  const uint32_t e = (b >> 1) & 3u, m = b & 1u;
  const float mag = e == 0u ? 0.5f * static_cast<float>(m) : __uint_as_float((e + 126u) << 23) * (1.0f + 0.5f * static_cast<float>(m));
  return (b & 8u) ? -mag : mag;
}
struct alignas(1) fp4_e2_t {
  uint8_t bits;
  TL_FLOAT_STORAGE_CTORS(fp4_e2_t, uint8_t, f32_to_e2m1_bits, f64_to_e2m1_bits)
  // A float16 NaN takes its sign from its own bits: the GPU's half -> float conversion returns the
  // canonical (positive) NaN, which would flip the zero ml_dtypes gives for a negative NaN.
  TL_DEVICE explicit fp4_e2_t(half_t v)
      : bits((v.bits & 0x7fffu) > 0x7c00u ? static_cast<uint8_t>(((v.bits >> 12) & 8u) ^ 8u)
                                           : f32_to_e2m1_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp4_e2_t(bfloat16_t v) : bits(f32_to_e2m1_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp4_e2_t(fp8_e4m3_t v) : bits(f32_to_e2m1_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp4_e2_t(fp8_e5m2_t v) : bits(f32_to_e2m1_bits(static_cast<float>(v))) {}
  TL_DEVICE explicit fp4_e2_t(fp8_e8_t v) : bits(f32_to_e2m1_bits(static_cast<float>(v))) {}
  TL_DEVICE operator float() const { return e2m1_bits_to_f32(bits); }
};
struct alignas(1) fp4_e2x2_t {
  uint8_t bits;
};
TL_DEVICE fp4_e2_t fp4_packed_load(const fp4_e2x2_t* p, long long i) {
  return fp4_e2_t::from_bits(static_cast<uint8_t>((p[i >> 1].bits >> ((i & 1) * 4)) & 0xfu));
}
// Replaces one nibble atomically (two threads may write the two halves of one byte): and/or on
// the aligned 32-bit word holding the byte touch only this element's bits.
TL_DEVICE void fp4_packed_store(fp4_e2x2_t* p, long long i, fp4_e2_t v) {
  const unsigned long long a = reinterpret_cast<unsigned long long>(p) + static_cast<unsigned long long>(i >> 1);
  unsigned int* w = reinterpret_cast<unsigned int*>(a & ~3ull);
  const unsigned int sh = static_cast<unsigned int>((a & 3ull) * 8ull + static_cast<unsigned long long>(i & 1) * 4ull);
  atomicAnd(w, ~(0xfu << sh));
  atomicOr(w, (static_cast<unsigned int>(v.bits) & 0xfu) << sh);
}
#undef TL_FLOAT_STORAGE_CTORS

// fp8 -> half and bf16 are exact through float (every fp8 value is representable).
TL_DEVICE half_t::half_t(bfloat16_t v) : bits(f32_to_f16_bits(static_cast<float>(v))) {}
TL_DEVICE half_t::half_t(fp8_e4m3_t v) : bits(f32_to_f16_bits(static_cast<float>(v))) {}
TL_DEVICE half_t::half_t(fp8_e5m2_t v) : bits(static_cast<uint16_t>(static_cast<uint16_t>(v.bits) << 8)) {}
TL_DEVICE bfloat16_t::bfloat16_t(fp8_e4m3_t v) : bits(f32_to_bf16_bits(static_cast<float>(v))) {}
TL_DEVICE bfloat16_t::bfloat16_t(fp8_e5m2_t v) : bits(f32_to_bf16_bits(static_cast<float>(v))) {}
TL_DEVICE fp8_e4m3_t::fp8_e4m3_t(fp8_e5m2_t v) : bits(f32_to_e4m3_bits(static_cast<float>(v))) {}

// ---------------------------------------------------------------------------------------------
// half_t arithmetic: one f16 instruction each (round to nearest even).
TL_DEVICE half_t operator+(half_t a, half_t b) {
  half_t r;
  asm("add.f16 %0, %1, %2;" : "=h"(r.bits) : "h"(a.bits), "h"(b.bits));
  return r;
}
TL_DEVICE half_t operator-(half_t a, half_t b) {
  half_t r;
  asm("sub.f16 %0, %1, %2;" : "=h"(r.bits) : "h"(a.bits), "h"(b.bits));
  return r;
}
TL_DEVICE half_t operator*(half_t a, half_t b) {
  half_t r;
  asm("mul.f16 %0, %1, %2;" : "=h"(r.bits) : "h"(a.bits), "h"(b.bits));
  return r;
}
// f16 division has no PTX instruction; the float quotient rounded once to f16 is correctly
// rounded because float carries more than twice f16's precision.
TL_DEVICE half_t operator/(half_t a, half_t b) {
  return half_t(__fdiv_rn(static_cast<float>(a), static_cast<float>(b)));
}
TL_DEVICE half_t operator-(half_t a) { return half_t::from_bits(static_cast<uint16_t>(a.bits ^ 0x8000u)); }
TL_DEVICE half_t fma(half_t a, half_t b, half_t c) {
  half_t r;
  asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r.bits) : "h"(a.bits), "h"(b.bits), "h"(c.bits));
  return r;
}

// bfloat16 add/sub/mul as one fused multiply-add with an exact 1.0 / -0.0 operand: a single
// rounding on every architecture from sm_80 (add.bf16 itself needs sm_90).
TL_DEVICE bfloat16_t fma(bfloat16_t a, bfloat16_t b, bfloat16_t c) {
  bfloat16_t r;
  asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r.bits) : "h"(a.bits), "h"(b.bits), "h"(c.bits));
  return r;
}
TL_DEVICE bfloat16_t operator+(bfloat16_t a, bfloat16_t b) { return fma(a, bfloat16_t::from_bits(0x3f80u), b); }
TL_DEVICE bfloat16_t operator-(bfloat16_t a) { return bfloat16_t::from_bits(static_cast<uint16_t>(a.bits ^ 0x8000u)); }
TL_DEVICE bfloat16_t operator-(bfloat16_t a, bfloat16_t b) { return fma(a, bfloat16_t::from_bits(0x3f80u), -b); }
TL_DEVICE bfloat16_t operator*(bfloat16_t a, bfloat16_t b) { return fma(a, b, bfloat16_t::from_bits(0x8000u)); }
TL_DEVICE bfloat16_t operator/(bfloat16_t a, bfloat16_t b) {
  return bfloat16_t(__fdiv_rn(static_cast<float>(a), static_cast<float>(b)));
}

// fp8 arithmetic happens in float and rounds back once.
#define TL_FP8_BINOP(T, OP)                                                         \
  TL_DEVICE T operator OP(T a, T b) { return T(static_cast<float>(a) OP static_cast<float>(b)); }
TL_FP8_BINOP(fp8_e4m3_t, +)
TL_FP8_BINOP(fp8_e4m3_t, -)
TL_FP8_BINOP(fp8_e4m3_t, *)
TL_FP8_BINOP(fp8_e4m3_t, /)
TL_FP8_BINOP(fp8_e5m2_t, +)
TL_FP8_BINOP(fp8_e5m2_t, -)
TL_FP8_BINOP(fp8_e5m2_t, *)
TL_FP8_BINOP(fp8_e5m2_t, /)
TL_FP8_BINOP(fp8_e8_t, +)
TL_FP8_BINOP(fp8_e8_t, -)
TL_FP8_BINOP(fp8_e8_t, *)
TL_FP8_BINOP(fp8_e8_t, /)
TL_FP8_BINOP(fp4_e2_t, +)
TL_FP8_BINOP(fp4_e2_t, -)
TL_FP8_BINOP(fp4_e2_t, *)
TL_FP8_BINOP(fp4_e2_t, /)
#undef TL_FP8_BINOP
TL_DEVICE fp8_e4m3_t operator-(fp8_e4m3_t a) { return fp8_e4m3_t::from_bits(static_cast<uint8_t>(a.bits ^ 0x80u)); }
TL_DEVICE fp8_e5m2_t operator-(fp8_e5m2_t a) { return fp8_e5m2_t::from_bits(static_cast<uint8_t>(a.bits ^ 0x80u)); }

// Compound assignment for every storage type, with a value of the same type or any arithmetic
// type (computed in float, rounded once).
#define TL_COMPOUND_OPS(T)                                                                     \
  TL_DEVICE T& operator+=(T& a, T b) { return a = a + b; }                                     \
  TL_DEVICE T& operator-=(T& a, T b) { return a = a - b; }                                     \
  TL_DEVICE T& operator*=(T& a, T b) { return a = a * b; }                                     \
  TL_DEVICE T& operator/=(T& a, T b) { return a = a / b; }                                     \
  TL_DEVICE T& operator+=(T& a, float b) { return a = T(static_cast<float>(a) + b); }          \
  TL_DEVICE T& operator-=(T& a, float b) { return a = T(static_cast<float>(a) - b); }          \
  TL_DEVICE T& operator*=(T& a, float b) { return a = T(static_cast<float>(a) * b); }          \
  TL_DEVICE T& operator/=(T& a, float b) { return a = T(static_cast<float>(a) / b); }
TL_COMPOUND_OPS(half_t)
TL_COMPOUND_OPS(bfloat16_t)
TL_COMPOUND_OPS(fp8_e4m3_t)
TL_COMPOUND_OPS(fp8_e5m2_t)
TL_COMPOUND_OPS(fp8_e8_t)
TL_COMPOUND_OPS(fp4_e2_t)
#undef TL_COMPOUND_OPS

// ---------------------------------------------------------------------------------------------
// Packed pairs (the register format of mma operands and of f16x2 instructions).
TL_DEVICE uint32_t pack2(half_t lo, half_t hi) {
  return static_cast<uint32_t>(lo.bits) | (static_cast<uint32_t>(hi.bits) << 16);
}
TL_DEVICE uint32_t pack2(bfloat16_t lo, bfloat16_t hi) {
  return static_cast<uint32_t>(lo.bits) | (static_cast<uint32_t>(hi.bits) << 16);
}
// Two floats to a packed f16x2 / bf16x2 in one instruction.
TL_DEVICE uint32_t f32x2_to_f16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
TL_DEVICE uint32_t f32x2_to_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// float -> tf32 (round to nearest, ties away: what the tensor cores expect from cvt.rna).
TL_DEVICE uint32_t f32_to_tf32(float f) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
  return r;
}

// ---------------------------------------------------------------------------------------------
// A fixed-size vector of N elements, aligned to its full size so a 4/8/16-byte access is one
// instruction. sizeof(T) * N must be a power of two.
template <typename T, int N>
struct alignas(sizeof(T) * N) vec_t {
  T v[N];
  TL_DEVICE T& operator[](int i) { return v[i]; }
  TL_DEVICE const T& operator[](int i) const { return v[i]; }
};

// Raw storage of `kBytes` bytes as a single access unit.
template <int kBytes>
struct storage_of;
template <>
struct storage_of<1> {
  typedef uint8_t type;
};
template <>
struct storage_of<2> {
  typedef uint16_t type;
};
template <>
struct storage_of<4> {
  typedef uint32_t type;
};
template <>
struct storage_of<8> {
  typedef uint2 type;
};
template <>
struct storage_of<16> {
  typedef uint4 type;
};

// Copies N elements as one access (dst and src aligned to sizeof(T) * N).
template <typename T, int N>
TL_DEVICE void copy_vec(T* dst, const T* src) {
  typedef typename storage_of<sizeof(T) * N>::type S;
  *reinterpret_cast<S*>(dst) = *reinterpret_cast<const S*>(src);
}

}  // namespace tl
