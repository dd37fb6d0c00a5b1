// The vectorizable exp / exp2 / sigmoid of include/tl/cpu/math.h against the float64 C library:
// within 1 ulp of the correctly rounded result over a sweep of every 1021st float in the range
// where the result is finite and non-zero, plus overflow, underflow (subnormal results), infinities
// and NaN. This binary is built without FMA (1.2 ulp at worst); built with the kernels' flags
// (-march=native: FMA contraction), the functions are within 1 ulp and a SIMD-hinted loop calling
// them is vector code.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "target/cpu/jit_util.h"
#include "tl/cpu/math.h"

namespace tl {
namespace {

// |got - ref| in units of the last place of the float nearest to ref.
double ulp_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e9;
  float rf = static_cast<float>(ref);
  if (std::isinf(rf)) return got == rf ? 0 : 1e9;
  double ulp = rf == 0 ? std::ldexp(1.0, -149) : std::nextafter(std::fabs(rf), INFINITY) - std::fabs(rf);
  if (std::fabs(rf) < std::ldexp(1.0, -126)) ulp = std::ldexp(1.0, -149);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

template <typename F, typename R> double worst_ulp(F f, R ref, float lo, float hi, float* where) {
  double worst = 0;
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 1021) {
    for (float sign : {1.0f, -1.0f}) {
      float x;
      std::memcpy(&x, &bits, 4);
      x *= sign;
      if (x < lo || x > hi) continue;
      double e = ulp_error(f(x), ref(static_cast<double>(x)));
      if (e > worst) worst = e, *where = x;
    }
  }
  return worst;
}

TEST(CpuMath, ExpWithoutFmaWithin1Point2Ulp) {
  float at = 0;
  double e = worst_ulp([](float x) { return cpu::exp(x); }, [](double x) { return std::exp(x); }, -103.0f, 88.7f, &at);
  EXPECT_LE(e, 1.2) << "worst at x=" << at;
  double e2 =
      worst_ulp([](float x) { return cpu::exp2(x); }, [](double x) { return std::exp2(x); }, -149.0f, 127.9f, &at);
  EXPECT_LE(e2, 1.2) << "worst at x=" << at;
}

TEST(CpuMath, KernelFlagsWithinOneUlpAndVectorized) {
  const char* source = R"(#include "tl/cpu/kernel.h"
extern "C" __attribute__((visibility("default"))) void exp_rows(const float* x, float* y, float* y2, int64_t n) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) y[i] = tl::cpu::exp(x[i]);
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) y2[i] = tl::cpu::exp2(x[i]);
}
)";
  std::string so = test::build_shared_object(source);
  ASSERT_FALSE(so.empty());
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto fn = reinterpret_cast<void (*)(const float*, float*, float*, int64_t)>(dlsym(h, "exp_rows"));
  ASSERT_NE(fn, nullptr);
  std::vector<float> x;
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 1021) {
    float v;
    std::memcpy(&v, &bits, 4);
    for (float s : {v, -v})
      if (s >= -149.0f && s <= 88.7f) x.push_back(s);
  }
  std::vector<float> y(x.size()), y2(x.size());
  fn(x.data(), y.data(), y2.data(), static_cast<int64_t>(x.size()));
  double worst = 0, worst2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] >= -103.0f) worst = std::max(worst, ulp_error(y[i], std::exp(static_cast<double>(x[i]))));
    worst2 = std::max(worst2, ulp_error(y2[i], std::exp2(static_cast<double>(x[i]))));
  }
  EXPECT_LE(worst, 1.0);
  EXPECT_LE(worst2, 1.0);
  std::printf("kernel-flag build: exp within %.3f ulp, exp2 within %.3f ulp\n", worst, worst2);
  dlclose(h);
  __builtin_cpu_init();
  if (test::has_objdump() && __builtin_cpu_supports("avx2")) {
    std::string text = test::objdump_function(so, "exp_rows");
    EXPECT_GT(test::wide_vector_instructions(text), 10) << text;  // the loops run on ymm/zmm registers
  }
}

// Builds `source` (which exports int64_t mismatches(int)) with the kernel flags and returns
// mismatches(w) for each w; empty (and a failure recorded) when it does not build or load.
std::vector<int64_t> mismatches_of(const char* source, std::initializer_list<int> which) {
  std::vector<int64_t> out;
  const std::string so = test::build_shared_object(source);
  if (so.empty()) {
    ADD_FAILURE() << "the test source did not build";
    return out;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    ADD_FAILURE() << dlerror();
    return out;
  }
  auto fn = reinterpret_cast<int64_t (*)(int)>(dlsym(h, "mismatches"));
  if (fn) for (int w : which) out.push_back(fn(w));
  else ADD_FAILURE() << "mismatches not exported";
  dlclose(h);
  return out;
}

// tl::cpu::vexp2 / vexp (16 lanes; vrndscaleps and vscalefps with AVX-512), built with the kernel
// flags: each lane bit for bit the scalar function's value (NaN for NaN), on every 61st float
// pattern (infinities, NaNs, subnormals and out-of-range values included).
TEST(CpuMath, VectorExpMatchesTheScalarFunctionsBitForBit) {
  const char* source = R"(#include "tl/cpu/kernel.h"
#include <string.h>
extern "C" __attribute__((visibility("default"))) int64_t mismatches(int which) {
  int64_t bad = 0;
  for (uint64_t b0 = 0; b0 < (1ull << 32); b0 += 61 * 16) {
    float x[16], s[16];
    for (int l = 0; l < 16; ++l) {
      const uint32_t b = uint32_t(b0 + 61u * l);
      memcpy(&x[l], &b, 4);
      s[l] = which ? tl::cpu::exp(x[l]) : tl::cpu::exp2(x[l]);
    }
    const tl::cpu::f32x16 v = which ? tl::cpu::vexp(tl::cpu::vload<tl::cpu::f32x16>(x))
                                    : tl::cpu::vexp2(tl::cpu::vload<tl::cpu::f32x16>(x));
    for (int l = 0; l < 16; ++l) {
      const float vl = v[l];
      uint32_t a, c;
      memcpy(&a, &s[l], 4);
      memcpy(&c, &vl, 4);
      bad += a != c && !(s[l] != s[l] && vl != vl);
    }
  }
  return bad;
}
)";
  const std::vector<int64_t> bad = mismatches_of(source, {0, 1});
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0], 0) << "vexp2";
  EXPECT_EQ(bad[1], 0) << "vexp";
}

// vexp2 / vexp built with the kernel flags for this host stay vector code: without AVX-512, a 64-byte
// vector_size type made GCC 12 compare and select one lane at a time (a scalar ucomiss and cmov per
// lane: about 11 cycles per element on a Zen 3 core, 38% of the fp32 flash-attention step).
TEST(CpuMath, VectorExpIsVectorCodeWithoutLaneByLaneSelects) {
  __builtin_cpu_init();
  if (!test::has_objdump() || !__builtin_cpu_supports("avx2")) GTEST_SKIP() << "needs objdump and an AVX2 host";
  const char* source = R"(#include "tl/cpu/kernel.h"
extern "C" __attribute__((visibility("default"))) void exp_block(const float* x, float* y, float* y2, float m) {
  for (int i = 0; i < 256; i += 16) {
    tl::cpu::vstore(y + i, tl::cpu::vexp2(tl::cpu::vload<tl::cpu::f32x16>(x + i) * 0.5f - m));
    tl::cpu::vstore(y2 + i, tl::cpu::vexp(tl::cpu::vload<tl::cpu::f32x16>(x + i) - m));
  }
}
)";
  std::string so = test::build_shared_object(source);
  ASSERT_FALSE(so.empty());
  const std::string text = test::objdump_function(so, "exp_block");
  int lane_ops = 0;
  for (const char* op : {"ucomiss", "comiss", "cmov", "vpextrd", "vextractps", "vpinsrd"})
    for (size_t at = text.find(op); at != std::string::npos; at = text.find(op, at + 1)) ++lane_ops;
  EXPECT_EQ(lane_ops, 0) << text;
  EXPECT_GT(test::wide_vector_instructions(text), 40) << text;
  // and the values: each lane the scalar function's
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto fn = reinterpret_cast<void (*)(const float*, float*, float*, float)>(dlsym(h, "exp_block"));
  ASSERT_NE(fn, nullptr);
  std::vector<float> x(256), y(256), y2(256);
  for (int i = 0; i < 256; ++i) x[i] = -40.0f + 0.37f * static_cast<float>(i);
  fn(x.data(), y.data(), y2.data(), 3.0f);
  for (int i = 0; i < 256; ++i) {
    EXPECT_LE(ulp_error(y[i], std::exp2(static_cast<double>(x[i] * 0.5f - 3.0f))), 1.0) << x[i];
    EXPECT_LE(ulp_error(y2[i], std::exp(static_cast<double>(x[i] - 3.0f))), 1.0) << x[i];
  }
  dlclose(h);
}

// Inputs at or below the clamp's lower bound (masked attention scores are -inf) give +0 without an
// underflowing multiplication: Intel cores take a microcode assist for each one (the exp2 of a
// 128 x 128 block of -inf ran 17x slower than of finite scores on an Emerald Rapids core), and the
// underflow flag is what marks it. Scalar functions in a vectorized loop and vexp2 / vexp, kernel flags.
TEST(CpuMath, ExpOfMinusInfinityDoesNotUnderflow) {
  const char* source = R"(#include "tl/cpu/kernel.h"
#include <fenv.h>
extern "C" __attribute__((visibility("default"))) int underflows(int which, const float* x, float* y, int64_t n) {
  feclearexcept(FE_ALL_EXCEPT);
  if (which == 0) {
#pragma GCC ivdep
    for (int64_t i = 0; i < n; ++i) y[i] = tl::cpu::exp2(x[i]);
  } else if (which == 1) {
#pragma GCC ivdep
    for (int64_t i = 0; i < n; ++i) y[i] = tl::cpu::exp(x[i]);
  } else {
    for (int64_t i = 0; i + 16 <= n; i += 16) {
      const tl::cpu::f32x16 v = tl::cpu::vload<tl::cpu::f32x16>(x + i);
      tl::cpu::vstore(y + i, which == 2 ? tl::cpu::vexp2(v) : tl::cpu::vexp(v));
    }
  }
  __asm__ volatile("" ::: "memory");
  return fetestexcept(FE_UNDERFLOW) != 0;
}
)";
  std::string so = test::build_shared_object(source);
  ASSERT_FALSE(so.empty());
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto fn = reinterpret_cast<int (*)(int, const float*, float*, int64_t)>(dlsym(h, "underflows"));
  ASSERT_NE(fn, nullptr);
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? -INFINITY : -1000.0f - static_cast<float>(i);
  x[5] = -151.0f;  // exp2's bound itself (exp's below)
  std::vector<float> y(x.size(), 1.0f);
  const char* names[] = {"exp2", "exp", "vexp2", "vexp"};
  for (int which = 0; which < 4; ++which) {
    std::vector<float> xs = x;
    if (which % 2 == 1) xs[5] = -104.0f;  // exp's bound
    EXPECT_EQ(fn(which, xs.data(), y.data(), static_cast<int64_t>(xs.size())), 0) << names[which];
    for (size_t i = 0; i < y.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &y[i], 4);
      EXPECT_EQ(bits, 0u) << names[which] << " of " << xs[i];
    }
    // a finite argument whose result is subnormal still underflows (the check can fail)
    std::vector<float> sub(16, which % 2 ? -100.0f : -140.3f);  // inexact subnormal results
    EXPECT_EQ(fn(which, sub.data(), y.data(), 16), 1) << names[which];
  }
  dlclose(h);
}

TEST(CpuMath, ExpSpecialValues) {
  EXPECT_EQ(cpu::exp(0.0f), 1.0f);
  EXPECT_EQ(cpu::exp(-0.0f), 1.0f);
  EXPECT_EQ(cpu::exp(1.0f), static_cast<float>(std::exp(1.0)));
  EXPECT_EQ(cpu::exp(88.73f), INFINITY);
  EXPECT_EQ(cpu::exp(1000.0f), INFINITY);
  EXPECT_EQ(cpu::exp(INFINITY), INFINITY);
  EXPECT_EQ(cpu::exp(-INFINITY), 0.0f);
  EXPECT_EQ(cpu::exp(-1000.0f), 0.0f);
  EXPECT_EQ(cpu::exp(-104.0f), 0.0f);
  EXPECT_TRUE(std::isnan(cpu::exp(NAN)));
  EXPECT_LE(ulp_error(cpu::exp(-100.0f), std::exp(-100.0)), 1.2);  // a subnormal result
  EXPECT_LE(ulp_error(cpu::exp(88.72f), std::exp(static_cast<double>(88.72f))), 1.2);  // just below overflow
  EXPECT_EQ(cpu::exp2(128.0f), INFINITY);
  EXPECT_EQ(cpu::exp2(-149.0f), std::ldexp(1.0f, -149));
  EXPECT_EQ(cpu::exp2(-151.0f), 0.0f);
  EXPECT_EQ(cpu::exp2(10.0f), 1024.0f);
  EXPECT_TRUE(std::isnan(cpu::exp2(NAN)));
  EXPECT_EQ(cpu::sigmoid(-INFINITY), 0.0f);
  EXPECT_EQ(cpu::sigmoid(INFINITY), 1.0f);
  EXPECT_NEAR(cpu::sigmoid(0.3f), 1.0 / (1.0 + std::exp(-0.3)), 1e-7);
}

// tl::cpu::convert_bf16 (flash attention's P rows; vcvtne2ps2bf16 with AVX512-BF16, the integer
// rounding in explicit 8-lane vectors with AVX2), built with the kernel flags: bit for bit
// bfloat16_t(float) (to nearest even, NaN quieted) on every 7th float pattern, with lengths that leave
// tails of 0..4 elements.
TEST(CpuConvert, ConvertBf16MatchesTheScalarRoundingBitForBit) {
  const char* source = R"(#include "tl/cpu/kernel.h"
#include <string.h>
extern "C" __attribute__((visibility("default"))) int64_t mismatches(int) {
  static float x[4096];
  static tl::cpu::bfloat16_t d[4096];
  int64_t bad = 0;
  for (uint64_t b0 = 0; b0 < (1ull << 32); b0 += 4096ull * 7) {
    for (int l = 0; l < 4096; ++l) {
      const uint32_t b = uint32_t(b0 + 7u * l);
      memcpy(&x[l], &b, 4);
    }
    const int n = 4096 - int(b0 % 5);
    tl::cpu::convert_bf16(d, x, n);
    for (int l = 0; l < n; ++l) {
      const tl::cpu::bfloat16_t r(x[l]);
      bad += memcmp(&r, &d[l], 2) != 0;
    }
  }
  return bad;
}
)";
  const std::vector<int64_t> bad = mismatches_of(source, {0});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], 0);
}

}  // namespace
}  // namespace tl
