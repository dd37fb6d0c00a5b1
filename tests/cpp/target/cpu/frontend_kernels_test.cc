// Kernels as the Python frontend prints them (tests/cpp/target/cpu/kernels/*.tir, produced from
// tests/python/frontend/test_frontend_kernels.py), compiled for cpu: every one lowers, emits and
// builds; the numerics of some are checked against references in double precision.
#include <cmath>
#include <filesystem>
#include <fstream>

#include "ir/parser.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;

std::string kernels_dir() { return std::string(TL_TEST_SOURCE_DIR) + "/tests/cpp/target/cpu/kernels"; }

PrimFunc load_kernel(const std::string& name) {
  std::string path = kernels_dir() + "/" + name + ".tir";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_func(text, path);
}

class FrontendKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(FrontendKernel, LowersEmitsAndBuilds) {
  CpuKernel k;
  k.build(load_kernel(GetParam()));
  EXPECT_TRUE(k.ok());
}

INSTANTIATE_TEST_SUITE_P(Cpu, FrontendKernel,
                         ::testing::Values("add1d", "add2d", "gemm", "gemm_dyn", "softmax", "rms", "layernorm", "flash",
                                           "persistent"));

std::vector<tl::cpu::half_t> random_halves(size_t n, uint32_t seed, std::vector<double>* values, float scale = 1.0f) {
  std::vector<tl::cpu::half_t> out;
  for (float x : random_floats(n, seed)) {
    out.push_back(tl::cpu::half_t(x * scale));
    values->push_back(float(out.back()));
  }
  return out;
}

TEST(FrontendKernelNumerics, CausalFlashAttention) {
  // Q, K, V, Output: [batch 2, seq 256, heads 4, dim 64] float16; softmax scale 1/sqrt(64).
  const int64_t Bn = 2, S = 256, H = 4, D = 64;
  CpuKernel k;
  k.build(load_kernel("flash"));
  ASSERT_TRUE(k.ok());
  std::vector<double> q, kk, v;
  auto qh = random_halves(Bn * S * H * D, 1, &q), kh = random_halves(Bn * S * H * D, 2, &kk),
       vh = random_halves(Bn * S * H * D, 3, &v);
  std::vector<tl::cpu::half_t> out(Bn * S * H * D);
  TestRuntime rt(2);
  ASSERT_EQ(k.run({ptr_arg(qh.data()), ptr_arg(kh.data()), ptr_arg(vh.data()), ptr_arg(out.data())}, rt), 0);
  auto at = [&](int64_t b, int64_t s, int64_t h, int64_t d) { return ((b * S + s) * H + h) * D + d; };
  double max_err = 0;
  for (int64_t b = 0; b < Bn; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; s += 7) {  // a sample of query rows
        std::vector<double> p(s + 1);
        double mx = -INFINITY, sum = 0;
        for (int64_t t = 0; t <= s; ++t) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += q[at(b, s, h, d)] * kk[at(b, t, h, d)];
          p[t] = dot / 8.0;
          mx = std::max(mx, p[t]);
        }
        for (auto& x : p) sum += (x = std::exp(x - mx));
        for (int64_t d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t t = 0; t <= s; ++t) o += p[t] / sum * v[at(b, t, h, d)];
          max_err = std::max(max_err, std::abs(o - double(float(out[at(b, s, h, d)]))));
        }
      }
  // P is rounded to float16 before the second GEMM (acc_s_cast), as on GPUs.
  EXPECT_LT(max_err, 5e-3);
}

TEST(FrontendKernelNumerics, LayerNorm) {
  const int64_t M = 256, N = 512;
  CpuKernel k;
  k.build(load_kernel("layernorm"));
  ASSERT_TRUE(k.ok());
  std::vector<double> x, g, bta;
  auto xh = random_halves(M * N, 4, &x, 3.0f), gh = random_halves(N, 5, &g), bh = random_halves(N, 6, &bta);
  std::vector<tl::cpu::half_t> y(M * N);
  TestRuntime rt(2);
  ASSERT_EQ(k.run({ptr_arg(xh.data()), ptr_arg(gh.data()), ptr_arg(bh.data()), ptr_arg(y.data())}, rt), 0);
  for (int64_t r = 0; r < M; ++r) {
    double mean = 0, var = 0;
    for (int64_t c2 = 0; c2 < N; ++c2) mean += x[r * N + c2];
    mean /= N;
    for (int64_t c2 = 0; c2 < N; ++c2) var += (x[r * N + c2] - mean) * (x[r * N + c2] - mean);
    var /= N;
    for (int64_t c2 = 0; c2 < N; ++c2) {
      double want = (x[r * N + c2] - mean) / std::sqrt(var + 1e-5) * g[c2] + bta[c2];
      ASSERT_NEAR(double(float(y[r * N + c2])), want, 2e-3 * (1 + std::abs(want))) << r << "," << c2;
    }
  }
}

TEST(FrontendKernelNumerics, PersistentGemm) {
  // C[512, 512] = A[512, 256] * B[256, 512] in float16 with a float32 accumulator; 8 workers walk
  // the 16 tiles in two waves with grouped rasterization.
  const int64_t M = 512, N = 512, K = 256;
  CpuKernel k;
  k.build(load_kernel("persistent"));
  ASSERT_TRUE(k.ok());
  std::vector<double> a, b;
  auto ah = random_halves(M * K, 7, &a), bh = random_halves(K * N, 8, &b);
  std::vector<tl::cpu::half_t> c(M * N, tl::cpu::half_t(-99.0f));
  TestRuntime rt(4);
  ASSERT_EQ(k.run({ptr_arg(ah.data()), ptr_arg(bh.data()), ptr_arg(c.data())}, rt), 0);
  for (int64_t m = 0; m < M; m += 3)
    for (int64_t n = 0; n < N; ++n) {
      double ref = 0;
      for (int64_t t = 0; t < K; ++t) ref += a[m * K + t] * b[t * N + n];
      ASSERT_NEAR(double(float(c[m * N + n])), ref, 2e-3 * (1 + std::abs(ref))) << m << "," << n;
    }
}

}  // namespace
}  // namespace tl
