// The 16/8-bit float conversions of include/tl/common/float_formats.h, through the cpu storage types
// of include/tl/cpu/types.h, checked against references built by enumerating every value of the
// format and picking the nearest with ties to even (float_reference.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tl/cpu/cast.h"
#include "tl/cpu/types.h"
#include "float_reference.h"

namespace tl {
namespace {

using test::decode;
using test::Format;
using test::reference_round;
using test::same;
using test::sample_floats;

TEST(CpuTypes, HalfDecodeAllCodes) {
  for (uint32_t code = 0; code < 0x10000; ++code) {
    float got = tl::cpu::half_bits_to_float(static_cast<uint16_t>(code));
    uint32_t e = (code >> 10) & 0x1f;
    if (e == 0x1f) {
      EXPECT_TRUE((code & 0x3ff) ? std::isnan(got) : std::isinf(got)) << code;
      continue;
    }
    ASSERT_EQ(double(got), decode(code, 5, 10, 15)) << code;
  }
}

TEST(CpuTypes, HalfRoundToNearestEven) {
  Format f{5, 10, 15, 0x7bff, INFINITY};
  auto xs = sample_floats(1, 100, 145);  // subnormals of half .. overflow
  // Exact ties, boundaries and specials.
  for (float x : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e-8f, 2.98023224e-8f, 2.98023253e-8f,
                  5.96046448e-8f, 6.1035156e-5f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, INFINITY, -INFINITY})
    xs.push_back(x);
  for (float x : xs) {
    double got = double(tl::cpu::half_bits_to_float(tl::cpu::float_to_half_bits(x)));
    ASSERT_TRUE(same(got, reference_round(x, f))) << "x=" << x << " got " << got;
  }
  EXPECT_TRUE(std::isnan(float(tl::cpu::half_t(NAN))));
}

TEST(CpuTypes, BFloat16RoundToNearestEven) {
  Format f{8, 7, 127, 0x7f7f, INFINITY};
  auto xs = sample_floats(2, 1, 254);
  for (float x : {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 3.3895314e38f, 3.40282347e38f}) xs.push_back(x);
  for (float x : xs) {
    double got = double(float(tl::cpu::bfloat16_t(x)));
    ASSERT_TRUE(same(got, reference_round(x, f))) << "x=" << x << " got " << got;
  }
  for (uint32_t code = 0; code < 0x10000; ++code) {
    if (((code >> 7) & 0xff) == 0xff) continue;
    ASSERT_EQ(double(tl::cpu::bfloat16_bits_to_float(static_cast<uint16_t>(code))), decode(code, 8, 7, 127));
  }
}

TEST(CpuTypes, Float8RoundToNearestEven) {
  // e4m3fn: max 448 (0x7e), overflow -> NaN; e5m2: max 57344 (0x7b), overflow -> inf.
  Format e4m3{4, 3, 7, 0x7e, NAN}, e5m2{5, 2, 15, 0x7b, INFINITY};
  auto xs = sample_floats(3, 100, 150);
  for (float x : {448.0f, 464.0f, 465.0f, 480.0f, 57344.0f, 61440.0f, 61439.0f, 0.0009765625f, 0.001953125f})
    xs.push_back(x);
  for (float x : xs) {
    ASSERT_TRUE(same(double(float(tl::cpu::float8_e4m3_t(x))), reference_round(x, e4m3))) << "e4m3 x=" << x;
    ASSERT_TRUE(same(double(float(tl::cpu::float8_e5m2_t(x))), reference_round(x, e5m2))) << "e5m2 x=" << x;
  }
  for (uint32_t code = 0; code < 256; ++code) {
    float a = float(tl::cpu::float8_e4m3_t::from_bits(static_cast<uint8_t>(code)));
    if ((code & 0x7f) == 0x7f) EXPECT_TRUE(std::isnan(a));
    else ASSERT_EQ(double(a), decode(code, 4, 3, 7)) << code;
    float b = float(tl::cpu::float8_e5m2_t::from_bits(static_cast<uint8_t>(code)));
    if (((code >> 2) & 0x1f) == 0x1f) EXPECT_TRUE(std::isnan(b) || std::isinf(b));
    else ASSERT_EQ(double(b), decode(code, 5, 2, 15)) << code;
  }
}

TEST(CpuTypes, DoubleInputRoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above a half tie: a direct double->half rounds up, while rounding
  // through float first (to 1 + 2^-11, a tie) would round down to 1.
  double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(float(tl::cpu::half_t(x)), 1.0f + 1.0f / 1024);
  EXPECT_EQ(float(tl::cpu::half_t(static_cast<float>(x))), 1.0f);
}

TEST(CpuTypes, SaturatingCastAndFloorDiv) {
  EXPECT_EQ(tl::cpu::saturating_cast<int32_t>(3e10f), INT32_MAX);
  EXPECT_EQ(tl::cpu::saturating_cast<int32_t>(-3e10f), INT32_MIN);
  EXPECT_EQ(tl::cpu::saturating_cast<int32_t>(NAN), 0);
  EXPECT_EQ(tl::cpu::saturating_cast<uint8_t>(-4.0f), 0);
  EXPECT_EQ(tl::cpu::saturating_cast<uint8_t>(300.0f), 255);
  EXPECT_EQ(tl::cpu::saturating_cast<int8_t>(-7.9f), -7);
  EXPECT_EQ(tl::cpu::floordiv<int32_t>(-7, 2), -4);
  EXPECT_EQ(tl::cpu::floormod<int32_t>(-7, 2), 1);
  EXPECT_EQ(tl::cpu::floormod<int32_t>(7, -2), -1);
  EXPECT_EQ(tl::cpu::fmax(NAN, 1.0f), 1.0f);
  EXPECT_EQ(tl::cpu::fmax(1.0f, NAN), 1.0f);
  EXPECT_EQ(tl::cpu::fmin(-2.0f, 3.0f), -2.0f);
}

}  // namespace
}  // namespace tl
