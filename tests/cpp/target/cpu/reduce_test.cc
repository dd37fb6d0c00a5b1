// The row routines of include/tl/cpu/reduce.h against float64 references: every reduction kind
// and source dtype, every length from 0 past several vector-accumulator rounds (main loop, whole
// vector tail, element tail), NaN handling of max/min, and cumsum in both directions, in place.
// Built into this binary with its baseline flags (16-byte vectors); the cpu kernel tests
// (codegen_test.cc, CpuReduce / CpuCumsum) run the same code at the kernels' -march=native width.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tl/cpu/reduce.h"

namespace tl {
namespace {

using cpu::bfloat16_t;
using cpu::half_t;

template <typename T> std::vector<T> values(int64_t n, uint32_t seed, std::vector<double>* exact) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<T> out;
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(T(u(g)));
    exact->push_back(static_cast<double>(static_cast<float>(out.back())));
  }
  return out;
}
template <> std::vector<double> values<double>(int64_t n, uint32_t seed, std::vector<double>* exact) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(u(g));
  *exact = out;
  return out;
}
template <> std::vector<float> values<float>(int64_t n, uint32_t seed, std::vector<double>* exact) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(u(g));
  exact->assign(out.begin(), out.end());
  return out;
}

template <int KIND> double reference(const std::vector<double>& x, double init) {
  double acc = init;
  for (double v : x) {
    if (KIND == cpu::kReduceSum) acc += v;
    else if (KIND == cpu::kReduceAbsSum) acc += std::abs(v);
    else if (KIND == cpu::kReduceMax) acc = std::max(acc, v);
    else if (KIND == cpu::kReduceMin) acc = std::min(acc, v);
    else acc = std::max(acc, std::abs(v));
  }
  return acc;
}

template <int KIND, typename T, typename Acc> void check_kind(const char* what) {
  for (int64_t n = 0; n <= 140; n += (n < 70 ? 1 : 7)) {
    std::vector<double> exact;
    std::vector<T> x = values<T>(n, static_cast<uint32_t>(n * 31 + KIND), &exact);
    for (double& e : exact) e = static_cast<double>(static_cast<Acc>(e));  // what the accumulator sees
    for (double init : {0.0, 1.5}) {
      if (KIND == cpu::kReduceMax && init == 0.0) init = -INFINITY;
      if (KIND == cpu::kReduceMin && init == 0.0) init = INFINITY;
      Acc got = cpu::reduce_row<KIND>(x.data(), n, static_cast<Acc>(init));
      double ref = reference<KIND>(exact, init);
      double eps = sizeof(Acc) == 4 ? 1.2e-7 : 2.3e-16;
      double tol = (KIND == cpu::kReduceSum || KIND == cpu::kReduceAbsSum) ? eps * (n + 2) * (2.0 * n + std::abs(init)) : 0;
      if (static_cast<double>(got) == ref) continue;  // also the infinities of empty max/min rows
      ASSERT_NEAR(static_cast<double>(got), ref, tol) << what << " kind " << KIND << " n=" << n << " init=" << init;
    }
  }
}

template <typename T, typename Acc> void check_all_kinds(const char* what) {
  check_kind<cpu::kReduceSum, T, Acc>(what);
  check_kind<cpu::kReduceMax, T, Acc>(what);
  check_kind<cpu::kReduceMin, T, Acc>(what);
  check_kind<cpu::kReduceAbsSum, T, Acc>(what);
  check_kind<cpu::kReduceAbsMax, T, Acc>(what);
}

TEST(CpuReduceRow, EveryKindDtypeAndLength) {
  check_all_kinds<float, float>("float");
  check_all_kinds<double, double>("double");
  check_all_kinds<half_t, float>("half");
  check_all_kinds<bfloat16_t, float>("bfloat16");
  check_all_kinds<double, float>("double->float");
}

TEST(CpuReduceRow, MaxAndMinIgnoreNaN) {
  for (int64_t n : {1, 5, 16, 33, 70, 129}) {
    for (int64_t pos = 0; pos < n; pos += 3) {
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7) % 11) - 5.0f;
      x[pos] = NAN;
      float mx = -INFINITY, mn = INFINITY;
      for (int64_t i = 0; i < n; ++i)
        if (i != pos) mx = std::max(mx, x[i]), mn = std::min(mn, x[i]);
      EXPECT_EQ(cpu::reduce_row<cpu::kReduceMax>(x.data(), n, -INFINITY), mx) << n << " " << pos;
      EXPECT_EQ(cpu::reduce_row<cpu::kReduceMin>(x.data(), n, static_cast<float>(INFINITY)), mn) << n << " " << pos;
    }
  }
  volatile int64_t forty = 40;  // not a constant: GCC would warn about the tail loop's bounds otherwise
  std::vector<float> nans(forty, NAN);
  EXPECT_EQ(cpu::reduce_row<cpu::kReduceMax>(nans.data(), forty, -INFINITY), -INFINITY);  // as fmaxf(-inf, NaN)
  EXPECT_TRUE(std::isnan(cpu::reduce_row<cpu::kReduceSum>(nans.data(), forty, 0.0f)));
}

// reduce_rows: every row's result bit for bit that of reduce_row with the same init (the rows
// fold reorders no combine), for row counts around the vector width (whole blocks of rows and the
// rows left over), lengths that are and are not whole vectors, rows apart by more than their
// length, clear or not, with NaNs and negative zeros in the data; and against float64.
template <int KIND, typename T, typename Acc> void check_rows(const char* what) {
  std::mt19937 g(KIND * 7 + sizeof(T));
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int64_t n : {1, 4, 8, 12, 16, 24, 64, 96}) {
    for (int64_t rows : {0, 1, 3, 4, 5, 8, 16, 17, 35, 64}) {
      for (bool clear : {true, false}) {
        const int64_t ld = n + 5;
        std::vector<T> x(static_cast<size_t>(rows * ld + 1));
        for (auto& v : x) v = T(u(g));
        if (rows > 2 && n > 3) x[2 * ld + 3] = T(NAN), x[ld] = T(-0.0f);
        std::vector<Acc> init(static_cast<size_t>(rows) + 1), got(init.size()), want(init.size());
        for (auto& v : init) v = static_cast<Acc>(u(g));
        got = init;
        cpu::reduce_rows<KIND>(x.data(), ld, n, rows, got.data(), clear);
        for (int64_t r = 0; r < rows; ++r) {
          Acc i0 = clear ? cpu::reduce_impl::identity<KIND, Acc>() : init[r];
          want[r] = cpu::reduce_row<KIND>(x.data() + r * ld, n, i0);
          ASSERT_EQ(std::memcmp(&got[r], &want[r], sizeof(Acc)), 0)
              << what << " kind " << KIND << " n=" << n << " rows=" << rows << " clear=" << clear << " row " << r
              << ": " << got[r] << " vs " << want[r];
          if (r == 2 && n > 3) continue;  // the NaN row: reduce_row's NaN rules, checked above
          double ref = clear ? static_cast<double>(i0) : static_cast<double>(init[r]);
          std::vector<double> row;
          for (int64_t i = 0; i < n; ++i) row.push_back(static_cast<double>(static_cast<Acc>(x[r * ld + i])));
          ref = reference<KIND>(row, ref);
          double tol = (KIND == cpu::kReduceSum || KIND == cpu::kReduceAbsSum) ? 1.2e-7 * (n + 2) * (2.0 * n + 2) : 0;
          ASSERT_NEAR(static_cast<double>(got[r]), ref, tol) << what << " kind " << KIND << " n=" << n << " row " << r;
        }
        ASSERT_EQ(got[rows], init[rows]) << "reduce_rows wrote past its rows";
      }
    }
  }
}

TEST(CpuReduceRow, RowsBitForBitAsRowByRow) {
  check_rows<cpu::kReduceSum, float, float>("float");
  check_rows<cpu::kReduceMax, float, float>("float");
  check_rows<cpu::kReduceMin, float, float>("float");
  check_rows<cpu::kReduceAbsSum, float, float>("float");
  check_rows<cpu::kReduceAbsMax, float, float>("float");
  check_rows<cpu::kReduceSum, double, double>("double");
  check_rows<cpu::kReduceMax, double, double>("double");
  check_rows<cpu::kReduceSum, bfloat16_t, float>("bfloat16");
  check_rows<cpu::kReduceMax, half_t, float>("half");
}

template <typename TS, typename TD> void check_cumsum(const char* what) {
  for (int64_t n = 0; n <= 100; ++n) {
    for (bool reverse : {false, true}) {
      for (bool in_place : {false, true}) {
        if (in_place && !cpu::same_type<TS, TD>::value) continue;
        std::vector<double> exact;
        std::vector<TS> x = values<TS>(n, static_cast<uint32_t>(n + 1000 * reverse), &exact);
        std::vector<TD> y(n, TD(-7.0f));
        TD* dst = y.data();
        if constexpr (cpu::same_type<TS, TD>::value) {
          if (in_place) dst = x.data();
        }
        cpu::cumsum_row(x.data(), dst, n, reverse);
        double run = 0;
        for (int64_t s = 0; s < n; ++s) {
          int64_t i = reverse ? n - 1 - s : s;
          run += exact[i];
          double got = static_cast<float>(dst[i]);
          double tol = 2.4e-7 * (s + 2) * 2.0 * (s + 1) + (sizeof(TD) == 2 ? std::ldexp(std::abs(run), -7) : 0.0);
          ASSERT_NEAR(got, run, tol) << what << " n=" << n << " reverse=" << reverse << " in_place=" << in_place
                                     << " at " << i;
        }
      }
    }
  }
}

TEST(CpuCumsumRow, BothDirectionsInPlaceAndTails) {
  check_cumsum<float, float>("float");
  check_cumsum<half_t, float>("half->float");
  check_cumsum<bfloat16_t, bfloat16_t>("bfloat16");
  check_cumsum<float, half_t>("float->half");
}

}  // namespace
}  // namespace tl
