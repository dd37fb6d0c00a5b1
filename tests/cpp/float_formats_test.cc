// Every C++ consumer of the 16/8-bit float formats goes through tl/common/float_formats.h: the
// compiler's constant folding (ir/eval.h round_float), the cuda emulator's rounding and memory
// (target/cuda/emulator_values.h) and the Ascend simulator's scalar memory (sim/tile_exec.h). Each is
// checked here on random inputs against the enumeration reference of float_reference.h, so a
// consumer that drifts to its own conversion (or a semantics change in the shared one) shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "float_reference.h"
#include "tl/common/float_formats.h"
#include "ir/eval.h"
#include "sim/tile_exec.h"
#include "target/cuda/emulator_values.h"

namespace tl {
namespace {

using test::decode;
using test::Format;
using test::reference_round;
using test::same;

const Format kHalf{5, 10, 15, 0x7bff, INFINITY};
const Format kBf16{8, 7, 127, 0x7f7f, INFINITY};
const Format kE4m3{4, 3, 7, 0x7e, NAN};
const Format kE5m2{5, 2, 15, 0x7b, INFINITY};

// Random doubles spread over binary exponents [lo, hi], both signs, with bits below float's
// precision (so that a double that goes through float first would show double rounding), plus
// specials and exact ties.
std::vector<double> sample_doubles(uint32_t seed, int lo, int hi) {
  std::mt19937_64 g(seed);
  std::vector<double> out;
  for (int i = 0; i < 3000; ++i) {
    double m = 1.0 + std::ldexp(static_cast<double>(g() >> 11), -53);
    double v = std::ldexp(m, lo + static_cast<int>(g() % (hi - lo + 1)));
    out.push_back(g() & 1 ? -v : v);
  }
  for (double v : {0.0, -0.0, 1.0 + std::ldexp(1.0, -11), 1.0 + std::ldexp(3.0, -11), 65504.0, 65520.0, 448.0,
                   464.0, 57344.0, 61440.0, static_cast<double>(INFINITY), -static_cast<double>(INFINITY)})
    out.push_back(v);
  return out;
}

TEST(FloatFormats, ConstantFoldingRoundsOnceFromDouble) {
  struct Case {
    DataType t;
    Format f;
    int lo, hi;
  } cases[] = {{DataType::Float(16), kHalf, -27, 17},
               {DataType::BFloat16(), kBf16, -135, 128},
               {DataType::F8E4M3(), kE4m3, -12, 10},
               {DataType::F8E5M2(), kE5m2, -19, 17}};
  for (auto& c : cases)
    for (double x : sample_doubles(11, c.lo, c.hi))
      ASSERT_TRUE(same(round_float(x, c.t), reference_round(x, c.f))) << c.t.str() << " x=" << x;
  EXPECT_TRUE(std::isnan(round_float(NAN, DataType::Float(16))));
}

// The cuda emulator rounds a result to float first (device registers are float), then to the format;
// float8 saturates to the largest finite value (PTX .satfinite), infinities included.
double emulator_reference(double x, DataType t, const Format& f) {
  double r = reference_round(static_cast<float>(x), f);
  if (t.is_fp8() && !std::isnan(x) && (std::isinf(r) || std::isnan(r))) {
    double maxv = decode(f.max_finite_code, f.exp_bits, f.man, f.bias);
    return x > 0 ? maxv : -maxv;
  }
  return r;
}

TEST(FloatFormats, CudaEmulatorRoundingAndMemory) {
  struct Case {
    DataType t;
    Format f;
    int lo, hi, bytes;
  } cases[] = {{DataType::Float(16), kHalf, -27, 17, 2},
               {DataType::BFloat16(), kBf16, -130, 127, 2},
               {DataType::F8E4M3(), kE4m3, -12, 10, 1},
               {DataType::F8E5M2(), kE5m2, -19, 17, 1}};
  for (auto& c : cases) {
    for (double x : sample_doubles(12, c.lo, c.hi)) {
      double want = emulator_reference(x, c.t, c.f);
      ASSERT_TRUE(same(cuda_emu::round_to(c.t, x), want)) << c.t.str() << " x=" << x;
      uint8_t mem[2] = {0, 0};
      cuda_emu::Val v;
      v.f = x;
      cuda_emu::encode(c.t, v, mem);
      ASSERT_TRUE(same(cuda_emu::decode(c.t, mem).f, want)) << c.t.str() << " stored x=" << x;
    }
    // Every finite code decodes to its value.
    const uint32_t codes = 1u << (8 * c.bytes);
    for (uint32_t code = 0; code < codes; ++code) {
      uint32_t e = (code >> c.f.man) & ((1u << c.f.exp_bits) - 1);
      uint32_t mag = code & ((codes >> 1) - 1);
      bool special = c.t == DataType::F8E4M3() ? mag == 0x7f : e == (1u << c.f.exp_bits) - 1;
      if (special) continue;
      uint8_t mem[2] = {static_cast<uint8_t>(code), static_cast<uint8_t>(code >> 8)};
      ASSERT_EQ(cuda_emu::decode(c.t, mem).f, decode(code, c.f.exp_bits, c.f.man, c.f.bias)) << c.t.str() << code;
    }
  }
}

TEST(FloatFormats, SimulatorScalarMemory) {
  for (auto [t, f, lo, hi] : {std::tuple{DataType::Float(16), kHalf, -27, 17},
                              std::tuple{DataType::BFloat16(), kBf16, -130, 127}}) {
    for (double x : sample_doubles(13, lo, hi)) {
      uint8_t mem[2];
      sim::store_scalar(mem, t, x);
      ASSERT_TRUE(same(sim::load_scalar(mem, t), reference_round(static_cast<float>(x), f))) << t.str() << " x=" << x;
    }
    for (uint32_t code = 0; code < 0x10000; ++code) {
      if (((code >> f.man) & ((1u << f.exp_bits) - 1)) == (1u << f.exp_bits) - 1) continue;
      uint8_t mem[2] = {static_cast<uint8_t>(code), static_cast<uint8_t>(code >> 8)};
      ASSERT_EQ(sim::load_scalar(mem, t), decode(code, f.exp_bits, f.man, f.bias)) << t.str() << code;
    }
  }
}

// The float -> fp8 conversion itself (branch-free, so that cpu kernels vectorize it), on a strided
// walk over all 2^32 float bit patterns plus every fp8 midpoint and its float neighbours, against the
// enumeration reference.
TEST(FloatFormats, Float8FromEveryKindOfFloat) {
  auto check = [](auto convert, auto to_float, const Format& f, const char* name) {
    std::vector<float> xs;
    for (uint64_t u = 0; u <= 0xffffffffull; u += 65521) xs.push_back(ff::bits_float(static_cast<uint32_t>(u)));
    for (uint32_t c = 0; c < f.max_finite_code; ++c) {
      float mid = static_cast<float>((decode(c, f.exp_bits, f.man, f.bias) + decode(c + 1, f.exp_bits, f.man, f.bias)) / 2);
      for (float m : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
        xs.push_back(m);
        xs.push_back(-m);
      }
    }
    for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 1e38f, -1e38f}) xs.push_back(v);
    for (float x : xs) {
      double got = to_float(convert(x));
      ASSERT_TRUE(same(got, reference_round(x, f))) << name << " x=" << x << " bits=" << ff::float_bits(x);
    }
  };
  check([](float x) { return ff::float_to_fp8_bits<4, 3, 7, false>(x); },
        [](uint8_t b) { return static_cast<double>(ff::fp8_bits_to_float<4, 3, 7, false>(b)); }, kE4m3, "e4m3");
  check([](float x) { return ff::float_to_fp8_bits<5, 2, 15, true>(x); },
        [](uint8_t b) { return static_cast<double>(ff::fp8_bits_to_float<5, 2, 15, true>(b)); }, kE5m2, "e5m2");
}

// float8_e8m0fnu: 2^(c - 127); a float goes to the nearest power of two in the significand, 1.5 up;
// a float subnormal above 2^-127 to 2^-126, one at or below to 2^-127; zero, negatives, inf, NaN and
// overflow give NaN (0xFF): ml_dtypes' conversion (checked against it in tests/compat).
uint8_t e8m0_reference(double x) {
  if (!(x > 0) || std::isinf(x)) return 0xff;
  if (x < std::ldexp(1.0, -126)) return x > std::ldexp(1.0, -127) ? 1 : 0;
  int e;
  double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1)
  int p = e - 1 + (m >= 0.75 ? 1 : 0);
  if (p < -127) p = -127;
  return p > 127 ? 0xff : static_cast<uint8_t>(p + 127);
}

TEST(FloatFormats, Float8E8M0) {
  for (uint32_t c = 0; c < 256; ++c) {
    float v = ff::e8m0_bits_to_float(static_cast<uint8_t>(c));
    if (c == 255) ASSERT_TRUE(std::isnan(v));
    else ASSERT_EQ(static_cast<double>(v), std::ldexp(1.0, static_cast<int>(c) - 127)) << c;
  }
  std::vector<float> xs;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 65521) xs.push_back(ff::bits_float(static_cast<uint32_t>(u)));
  for (int p = -128; p <= 128; ++p)
    for (double k : {1.0, 1.5, 0.75}) {
      float v = static_cast<float>(std::ldexp(k, p));
      for (float m : {v, std::nextafter(v, 0.0f), std::nextafter(v, INFINITY)}) xs.push_back(m);
    }
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1.0f}) xs.push_back(x);
  for (float x : xs) ASSERT_EQ(ff::float_to_e8m0_bits(x), e8m0_reference(x)) << "x=" << x;
  // Constant folding and the cuda emulator agree with it (a double through float, as ml_dtypes).
  for (double x : {1.5, 1.4999999999, 3.0, 0.7, 1e-40, 2.5e38, 1.7e38, -2.0, 0.0}) {
    float want = ff::e8m0_bits_to_float(e8m0_reference(static_cast<float>(x)));
    ASSERT_TRUE(same(round_float(x, DataType::F8E8M0()), want)) << x;
    ASSERT_TRUE(same(cuda_emu::round_to(DataType::F8E8M0(), x), want)) << x;
  }
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {

// float4_e2m1fn: magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6; the nearest code, ties to the even code;
// beyond 6 (infinities too) +-6; NaN gives a zero of the opposite sign (ml_dtypes' conversion,
// checked against it in tests/compat/test_lang_float4_e2m1.py).
uint8_t e2m1_reference(float x) {
  static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  const uint8_t sign = std::signbit(x) ? 8 : 0;
  if (std::isnan(x)) return sign ^ 8;
  const double a = std::min(std::fabs(static_cast<double>(x)), 6.0);  // saturation (and exact distances)
  int best = 0;
  for (int c = 1; c < 8; ++c) {
    const double d = std::fabs(mag[c] - a), db = std::fabs(mag[best] - a);
    if (d < db || (d == db && c % 2 == 0)) best = c;
  }
  return static_cast<uint8_t>(sign | best);
}

TEST(FloatFormats, Float4E2M1) {
  const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t c = 0; c < 16; ++c) {
    float v = ff::e2m1_bits_to_float(static_cast<uint8_t>(c));
    ASSERT_EQ(static_cast<double>(v), (c & 8u) ? -mag[c & 7u] : mag[c & 7u]) << c;
    ASSERT_EQ(std::signbit(v), (c & 8u) != 0) << c;
  }
  std::vector<float> xs;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 65521) xs.push_back(ff::bits_float(static_cast<uint32_t>(u)));
  for (double m : {0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0})
    for (float s : {1.0f, -1.0f}) {
      float v = s * static_cast<float>(m);
      for (float x : {v, std::nextafter(v, 0.0f), std::nextafter(v, s * INFINITY)}) xs.push_back(x);
    }
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f, 1e30f}) xs.push_back(x);
  for (float x : xs) ASSERT_EQ(ff::float_to_e2m1_bits(x), e2m1_reference(x)) << "x=" << x;
  // Constant folding and the cuda emulator agree with it (a double through float, as ml_dtypes).
  for (double x : {0.25, 0.2500000001, 0.75, 2.5, 5.0, 5.0000000001, 6.9, 1e10, -0.3, -5.5, 0.0}) {
    float want = ff::e2m1_bits_to_float(e2m1_reference(static_cast<float>(x)));
    ASSERT_TRUE(same(round_float(x, DataType::F4E2M1()), want)) << x;
    ASSERT_TRUE(same(cuda_emu::round_to(DataType::F4E2M1(), x), want)) << x;
  }
}

}  // namespace
}  // namespace tl
