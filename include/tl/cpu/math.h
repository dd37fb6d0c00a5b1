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
 * exp2(x): 2^n * q(r) with n = round(x), r = x - n (exact) and q a degree-7 polynomial fitted to 2^r
 * on |r| <= 1/2 (relative error 4e-11; no multiplication by ln 2, one multiply-add fewer than the
 * Taylor form): 0.85 ulp at worst with FMA, 1.08 without (the Taylor form in (x - n) ln 2 had
 * 0.93 / 1.23 on a sweep of every 13th float).
 *
 * Both clamp x to the range where n stays small on x's bits (two integer minimums, see
 * clamp_bits): a float comparison-and-select pair vectorizes into four compares and blends (GCC
 * keeps IEEE semantics for NaN), which made the clamp a quarter of exp2's instructions. The
 * exp2 pass of the fp32 flash-attention step (a 64 x 64 tile, Zen 4) runs 1.22x faster.
 *
 * Correct under -ffast-math (TL_ENABLE_FAST_MATH) too: n = round(x / ln 2) is taken from the bits of
 * x / ln 2 + 1.5 * 2^23 (an integer conversion, which no floating-point reassociation can touch);
 * computing it as (x / ln 2 + 1.5 * 2^23) - 1.5 * 2^23 was reassociated to x / ln 2 and made
 * e^x wrong by up to a factor sqrt(2). */
#ifndef TL_CPU_MATH_H_
#define TL_CPU_MATH_H_

#include <stdint.h>

#include "tl/cpu/vec.h"

namespace tl {
namespace cpu {

namespace math_impl {

/* p * 2^n for p in [0.5, 2) and integer n in [-151, 129]: adding n1 = n / 2 to p's exponent field is
 * exact (the exponent stays in the normal range), then one multiplication by the normal 2^(n - n1)
 * rounds once in the subnormal range and overflows to inf. A single floating-point operation, so
 * -ffast-math has nothing to reassociate (p * 2^n1 * 2^n2 was turned into p * (2^n1 * 2^n2), which
 * overflows for results near FLT_MAX). Unsigned arithmetic: no overflow for out-of-range n (NaN x).
 * `zero`: x lay at or below the clamp's lower bound, where the result rounds to 0; the factor is then
 * 0, so the product is 0 without underflowing. An underflowing multiplication costs a microcode
 * assist on Intel cores (about 240 cycles per 16 lanes on an Emerald Rapids core: e^x of a 128 x 128
 * block of -inf took 124 us against 7), and masked attention scores are -inf. */
inline float scale_pow2(float p, int32_t n, bool zero) {
  const int32_t n1 = n >> 1, n2 = n - n1;
  const float q = __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, p) + (static_cast<uint32_t>(n1) << 23));
  const uint32_t f = (static_cast<uint32_t>(n2) + 127u) << 23;
  return q * __builtin_bit_cast(float, zero ? 0u : f);
}

/* a - n * c with one rounding when the target has FMA; the two-constant (Cody-Waite) reduction
 * below relies on it not being reassociated, which an FMA call cannot be. */
inline float sub_mul(float a, float n, float c) {
#if defined(__FMA__) || defined(__aarch64__)
  return __builtin_fmaf(-n, c, a);
#else
  return a - n * c;
#endif
}

/* e^r for |r| <= ln2 / 2 (+ rounding slack); T is float or a vector of floats (f32x16 below). */
template <typename T> __attribute__((always_inline)) inline T exp_reduced(T r) {
  T p = T{} + 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  return p * r + 1.0f;
}

/* 2^r for |r| <= 1/2: fitted (near-minimax relative error 4e-11). */
template <typename T> __attribute__((always_inline)) inline T exp2_reduced(T r) {
  T p = T{} + 1.520192109e-05f;
  p = p * r + 1.546929125e-04f;
  p = p * r + 1.333392225e-03f;
  p = p * r + 9.618027136e-03f;
  p = p * r + 5.550410226e-02f;
  p = p * r + 2.402265072e-01f;
  p = p * r + 6.931471825e-01f;
  return p * r + 1.0f;
}

/* x clamped to [lo, hi] (lo < 0 < hi) through its bits: as signed integers the negative floats are
 * negative, so a signed minimum with hi's bits bounds the positive values (+inf and positive NaNs
 * too) and leaves the negative ones; as unsigned integers the negative floats lie above the
 * positive ones and grow with their magnitude, so an unsigned minimum with lo's bits then bounds
 * them (-inf too). Two integer min instructions in a vectorized loop. A NaN becomes a bound: the
 * caller returns NaN for a NaN x itself. */
inline float clamp_bits(float x, uint32_t hi_bits, uint32_t lo_bits) {
  int32_t b = __builtin_bit_cast(int32_t, x);
  b = b < static_cast<int32_t>(hi_bits) ? b : static_cast<int32_t>(hi_bits);
  uint32_t u = static_cast<uint32_t>(b);
  u = u < lo_bits ? u : lo_bits;
  return __builtin_bit_cast(float, u);
}

constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
constexpr int32_t kRoundMagicBits = 0x4b400000;

}  // namespace math_impl

inline float exp(float x) {
  using namespace math_impl;
  // Beyond these e^x is inf (> ln FLT_MAX) or rounds to 0 (< ln(2^-150)); clamping keeps n in range.
  const float xc = clamp_bits(x, 0x42b20000u, 0xc2d00000u);  // [-104, 89]; e^-104 rounds to 0
  const float t = xc * 1.44269504088896341f + kRoundMagic;
  const int32_t ni = __builtin_bit_cast(int32_t, t) - kRoundMagicBits;
  const float n = static_cast<float>(ni);
  float r = sub_mul(xc, n, 0.693145751953125f);  // ln 2 high part: 12 significant bits, n * it is exact
  r = sub_mul(r, n, 1.42860682030941723212e-6f);   // ln 2 - the high part
  const float y = scale_pow2(exp_reduced(r), ni, __builtin_bit_cast(uint32_t, xc) == 0xc2d00000u);
  return x != x ? x : y;  // NaN in, NaN out (the exponent arithmetic would not carry it)
}

inline float exp2(float x) {
  using namespace math_impl;
  // Beyond these 2^x is inf (>= 128) or rounds to 0 (< -150); clamping keeps n in range.
  const float xc = clamp_bits(x, 0x43010000u, 0xc3170000u);  // [-151, 129]
  const float t = xc + kRoundMagic;
  const int32_t ni = __builtin_bit_cast(int32_t, t) - kRoundMagicBits;
  const float r = xc - static_cast<float>(ni);  // exact, |r| <= 1/2
  const float y = scale_pow2(exp2_reduced(r), ni, __builtin_bit_cast(uint32_t, xc) == 0xc3170000u);
  return x != x ? x : y;
}

/* ---- 16 floats at a time ------------------------------------------------------------------------
 * vexp2 / vexp: the functions above on a 64-byte vector, for the element-wise loops that the
 * vectorize_math_loops pass marks (src/target/cpu/vectorize_math_loops.h); each lane's result is bit
 * for bit the scalar function's. With AVX-512, n is rounded by one vrndscaleps (exp2) and p * 2^n is
 * one vscalefps, which rounds once in the subnormal range and overflows to inf as scale_pow2 does:
 * about 15 vector operations per 16 results against 24 for GCC's vectorization of the scalar code
 * (which has no pattern for vscalefps). Elsewhere the same integer steps as the scalar code, on
 * register-wide parts of the vector (below). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // 64-byte vectors by value without AVX-512: inlined, no ABI crossed
#if TL_CPU_COMPILED_AVX512
typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x16 __attribute__((vector_size(64)));
typedef uint32_t u32x16 __attribute__((vector_size(64)));
#else
/* Without AVX-512, 16 floats as register-wide parts (two of 8 lanes with AVX2, else four of 4) with
 * the operators the vector loops use (+ - * / with vectors and scalars, a lane by index). GCC 12
 * keeps a 64-byte vector_size type in memory on these targets and lowers a comparison, a `?:` or a
 * lane shuffle on it one lane at a time (scalar compares and branches: the vector exp2 took about 11
 * cycles per element on a Zen 3 core, the fp32 flash-attention step's exp2 pass 38% of its time);
 * a struct of register-wide vectors stays in registers, and each part's operations are the
 * register's own. */
namespace math_impl {
constexpr int kPartLanes = TL_CPU_COMPILED_AVX2 ? 8 : 4, kParts = 16 / kPartLanes;
typedef float fpart __attribute__((vector_size(4 * kPartLanes)));
typedef int32_t ipart __attribute__((vector_size(4 * kPartLanes)));
typedef uint32_t upart __attribute__((vector_size(4 * kPartLanes)));
}  // namespace math_impl
struct f32x16 {
  math_impl::fpart p[math_impl::kParts];
  __attribute__((always_inline)) float operator[](int i) const { return p[i / math_impl::kPartLanes][i % math_impl::kPartLanes]; }
  template <typename F> __attribute__((always_inline)) static f32x16 map(const f32x16& a, F f) {
    f32x16 r;
#pragma GCC unroll 4
    for (int q = 0; q < math_impl::kParts; ++q) r.p[q] = f(a.p[q], q);
    return r;
  }
};
#define TL_F32X16_OP(op)                                                                                         \
  __attribute__((always_inline)) inline f32x16 operator op(const f32x16& a, const f32x16& b) {                   \
    return f32x16::map(a, [&](math_impl::fpart x, int q) { return x op b.p[q]; });                               \
  }                                                                                                              \
  __attribute__((always_inline)) inline f32x16 operator op(const f32x16& a, float s) {                           \
    return f32x16::map(a, [&](math_impl::fpart x, int) { return x op s; });                                      \
  }                                                                                                              \
  __attribute__((always_inline)) inline f32x16 operator op(float s, const f32x16& a) {                           \
    return f32x16::map(a, [&](math_impl::fpart x, int) { return s op x; });                                      \
  }
TL_F32X16_OP(+)
TL_F32X16_OP(-)
TL_F32X16_OP(*)
TL_F32X16_OP(/)
#undef TL_F32X16_OP
/* Whole-vector loads and stores part by part (a memcpy of the struct went through the stack). */
template <> __attribute__((always_inline)) inline f32x16 vload<f32x16, float>(const float* p) {
  f32x16 v;
#pragma GCC unroll 4
  for (int q = 0; q < math_impl::kParts; ++q) __builtin_memcpy(&v.p[q], p + q * math_impl::kPartLanes, sizeof v.p[q]);
  return v;
}
template <> __attribute__((always_inline)) inline void vstore<f32x16, float>(float* p, const f32x16& v) {
#pragma GCC unroll 4
  for (int q = 0; q < math_impl::kParts; ++q) __builtin_memcpy(p + q * math_impl::kPartLanes, &v.p[q], sizeof v.p[q]);
}
#endif

namespace math_impl {
#if TL_CPU_COMPILED_AVX512
/* The steps of vexp2 / vexp on the 64-byte vector (one zmm register). */
__attribute__((always_inline)) inline f32x16 vclamp_bits(f32x16 x, uint32_t hi_bits, uint32_t lo_bits) {
  const i32x16 z = {};
#if !defined(__clang__)  // GCC 12 turns the selects below into compares and blends
  const i32x16 b = __builtin_ia32_pminsd512_mask((i32x16)x, z + static_cast<int32_t>(hi_bits), z, 0xffff);
  return (f32x16)__builtin_ia32_pminud512_mask(b, z + static_cast<int32_t>(lo_bits), z, 0xffff);
#else
  i32x16 b = (i32x16)x;
  b = b < z + static_cast<int32_t>(hi_bits) ? b : z + static_cast<int32_t>(hi_bits);
  u32x16 u = (u32x16)b;
  u = u < (u32x16)(z + static_cast<int32_t>(lo_bits)) ? u : (u32x16)(z + static_cast<int32_t>(lo_bits));
  return (f32x16)u;
#endif
}
/* x rounded to the nearest integer, ties to even (as the magic add): one vrndscaleps; *ni unused. */
__attribute__((always_inline)) inline f32x16 vround_even(f32x16 x, i32x16* ni) {
  *ni = i32x16{};
  return __builtin_ia32_rndscaleps_mask(x, 0, x, 0xffff, 4);
}
/* p * 2^n, n integral (nf) in [-151, 129], 0 in the lanes where xc has the bits lo (the clamp's lower
 * bound), as scale_pow2: those lanes are left out of the vscalefps (zero-masked), which then has no
 * underflowing lane and so no microcode assist on Intel cores. */
__attribute__((always_inline)) inline f32x16 vscale_pow2(f32x16 p, f32x16 nf, i32x16, f32x16 xc, uint32_t lo) {
  const i32x16 z = {};
  const unsigned short keep = __builtin_ia32_cmpd512_mask((i32x16)xc, z + static_cast<int32_t>(lo), 4, 0xffff);  // 4: !=
  return __builtin_ia32_scalefps512_mask(p, nf, f32x16{}, keep, 4);  // 4: the current rounding mode
}
/* a - n * c rounded once (see sub_mul). */
__attribute__((always_inline)) inline f32x16 vsub_mul(f32x16 a, f32x16 n, float c) {
  return __builtin_ia32_vfmaddps512_mask(-n, f32x16{} + c, a, 0xffff, 4);
}
/* x where x is NaN, else y */
__attribute__((always_inline)) inline f32x16 vkeep_nan(f32x16 x, f32x16 y) { return x != x ? x : y; }
typedef i32x16 vint;  // the integer vector of the type the steps take
#else
/* The same steps on one register-wide part (8 lanes with AVX2, else 4): as the scalar functions. */
/* a where m is all ones, else b (m: a comparison's result) */
__attribute__((always_inline)) inline upart pselect(ipart m, upart a, upart b) { return (a & (upart)m) | (b & ~(upart)m); }
/* x clamped to [lo, hi] on its bits, as clamp_bits: a signed, then an unsigned minimum */
__attribute__((always_inline)) inline fpart vclamp_bits(fpart x, uint32_t hi_bits, uint32_t lo_bits) {
  const ipart z = {}, b = (ipart)x, hi = z + static_cast<int32_t>(hi_bits);
#if TL_CPU_COMPILED_AVX2 && !defined(__clang__)
  /* vpminsd, vpminud: GCC 12 kept the selects below as compare-and-mask sequences around the minimum
   * (ten instructions per part instead of two) */
  const ipart sb = __builtin_ia32_pminsd256(b, hi);
  return (fpart)__builtin_ia32_pminud256(sb, z + static_cast<int32_t>(lo_bits));
#else
  const upart sb = pselect(b < hi, (upart)b, (upart)hi), lo = (upart)(z + static_cast<int32_t>(lo_bits));
  return (fpart)pselect(sb < lo, sb, lo);
#endif
}
/* x rounded to the nearest integer through the magic add, as exp2 does; also as integers in *ni */
__attribute__((always_inline)) inline fpart vround_even(fpart x, ipart* ni) {
  *ni = (ipart)(x + kRoundMagic) - kRoundMagicBits;
  return __builtin_convertvector(*ni, fpart);
}
/* p * 2^n (n also as integers ni), 0 where xc has the clamp's lower bound lo: as scale_pow2 */
__attribute__((always_inline)) inline fpart vscale_pow2(fpart p, fpart, ipart ni, fpart xc, uint32_t lo) {
  const ipart z = {}, n1 = ni >> 1, n2 = ni - n1;
  const fpart q = (fpart)((upart)p + ((upart)n1 << 23));
  const upart f = ((upart)n2 + 127u) << 23;
  return q * (fpart)(f & ~(upart)((ipart)xc == z + static_cast<int32_t>(lo)));
}
/* a - n * c rounded once (see sub_mul) */
__attribute__((always_inline)) inline fpart vsub_mul(fpart a, fpart n, float c) {
#if TL_CPU_COMPILED_AVX2 && !defined(__clang__)
  return __builtin_ia32_vfmaddps256(-n, fpart{} + c, a);
#else
  fpart r;
  for (int l = 0; l < kPartLanes; ++l) r[l] = sub_mul(a[l], n[l], c);
  return r;
#endif
}
/* x where x is NaN, else y */
__attribute__((always_inline)) inline fpart vkeep_nan(fpart x, fpart y) {
#if TL_CPU_COMPILED_AVX2 && !defined(__clang__)
  return __builtin_ia32_blendvps256(y, x, (fpart)(x != x));  // vblendvps: x in the NaN lanes
#else
  return (fpart)pselect(x != x, (upart)x, (upart)y);
#endif
}
typedef ipart vint;
#endif

/* 2^x and e^x on one vector V (the zmm f32x16 or a register-wide part), through the steps above. */
template <typename V> __attribute__((always_inline)) inline V vexp2_steps(V x) {
  const V xc = vclamp_bits(x, 0x43010000u, 0xc3170000u);  // [-151, 129], as exp2
  vint ni;
  const V nf = vround_even(xc, &ni);
  return vkeep_nan(x, vscale_pow2(exp2_reduced(xc - nf), nf, ni, xc, 0xc3170000u));
}
template <typename V> __attribute__((always_inline)) inline V vexp_steps(V x) {
  const V xc = vclamp_bits(x, 0x42b20000u, 0xc2d00000u);  // [-104, 89], as exp
  const vint ni = (vint)(xc * 1.44269504088896341f + kRoundMagic) - kRoundMagicBits;
  const V nf = __builtin_convertvector(ni, V);
  V r = vsub_mul(xc, nf, 0.693145751953125f);
  r = vsub_mul(r, nf, 1.42860682030941723212e-6f);
  return vkeep_nan(x, vscale_pow2(exp_reduced(r), nf, ni, xc, 0xc2d00000u));
}
}  // namespace math_impl

/* p as a value the compiler cannot see through: a product passed through it is not contracted into a
 * fused multiply-add with a later addition (codegen_vector.cc emits a * c - b * c this way, so that
 * a == b gives exactly 0, as the source says). No instruction. */
__attribute__((always_inline)) inline f32x16 vrounded(f32x16 p) {
#if TL_CPU_COMPILED_AVX512
  __asm__("" : "+v"(p));
#elif defined(__x86_64__) || defined(__i386__)
  for (int q = 0; q < math_impl::kParts; ++q) __asm__("" : "+x"(p.p[q]));  // each part in its register
#elif defined(__aarch64__)
  for (int q = 0; q < math_impl::kParts; ++q) __asm__("" : "+w"(p.p[q]));
#else
  __asm__("" : "+m"(p));
#endif
  return p;
}

#if TL_CPU_COMPILED_AVX512
__attribute__((always_inline)) inline f32x16 vexp2(f32x16 x) { return math_impl::vexp2_steps(x); }
__attribute__((always_inline)) inline f32x16 vexp(f32x16 x) { return math_impl::vexp_steps(x); }
#else
__attribute__((always_inline)) inline f32x16 vexp2(f32x16 x) {
  return f32x16::map(x, [](math_impl::fpart v, int) { return math_impl::vexp2_steps(v); });
}
__attribute__((always_inline)) inline f32x16 vexp(f32x16 x) {
  return f32x16::map(x, [](math_impl::fpart v, int) { return math_impl::vexp_steps(v); });
}
#endif

#pragma GCC diagnostic pop

/* 1 / (1 + e^-x) through e = e^-|x| <= 1: no infinite intermediate (1 / (1 + e^200) is 0 in IEEE
 * arithmetic but NaN under -ffast-math, which assumes finite values). */
inline float sigmoid(float x) {
  const float e = exp(-__builtin_fabsf(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;  // a NaN x fails the test: e * s is NaN
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_MATH_H_
