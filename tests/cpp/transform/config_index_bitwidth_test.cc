#include "transform/config_index_bitwidth.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(ConfigIndexBitwidth, SmallKernelsKeepInt32) {
  const char* src = R"(
func @f(A: global int8[4096], C: global int8[4096]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, 1024) {
      C[bx * 1024 + i] = A[bx * 1024 + i]
    }
  }
})";
  tl::testing::expect_pass("config_index_bitwidth", src, src);
}

TEST(ConfigIndexBitwidth, IndicesPast2To31AreComputedInInt64) {
  // 2^31 + 2048 elements: bx * 1024 + i reaches 2^31 + 2047.
  tl::testing::expect_pass("config_index_bitwidth", R"(
func @f(A: global int8[2147485696i64], C: global int8[2147485696i64]) {
  kernel(grid=[2097154i64], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, 1024) {
      let o: int32 = bx * 1024 + i
      C[o] = A[o] + A[i]
    }
  }
})", R"(
func @f(A: global int8[2147485696i64], C: global int8[2147485696i64]) {
  kernel(grid=[2097154i64], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, 1024) {
      let o: int64 = cast<int64>(bx) * 1024i64 + cast<int64>(i)
      C[o] = A[o] + A[i]
    }
  }
})");
}

TEST(ConfigIndexBitwidth, LoopWhoseEndPasses2To31GetsAnInt64Variable) {
  tl::testing::expect_pass("config_index_bitwidth", R"(
func @f(A: global float32[2147484000i64]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[1], thread_vars=[tx: int32]) {
    for k: int32 in serial(bx * 2147483400, 512) {
      A[k] = 1.0f32
    }
  }
})", R"(
func @f(A: global float32[2147484000i64]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[1], thread_vars=[tx: int32]) {
    for k: int64 in serial(cast<int64>(bx * 2147483400), 512i64) {
      A[k] = 1.0f32
    }
  }
})");
}

TEST(ConfigIndexBitwidth, DataArithmeticKeepsItsType) {
  // The stored value wraps as written (int32); only indices widen.
  const char* src = R"(
func @f(A: global int32[16]) {
  kernel(grid=[65536], blocks=[bx: int32], threads=[1], thread_vars=[tx: int32]) {
    A[bx % 16] = bx * 65536
  }
})";
  tl::testing::expect_pass("config_index_bitwidth", src, src);
}

TEST(ConfigIndexBitwidth, ConfigWidensEveryIndexExpression) {
  tl::testing::expect_pass("config_index_bitwidth", R"(
func @f(A: global float32[4096]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, 1024) {
      A[bx * 1024 + i] = 0.0f32
    }
  }
})", R"(
func @f(A: global float32[4096]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, 1024) {
      A[cast<int64>(bx) * 1024i64 + cast<int64>(i)] = 0.0f32
    }
  }
})", "cpu", {{"tl.config_index_bitwidth", Attr(int64_t(64))}});
}

TEST(ConfigIndexBitwidth, DynamicExtentsAreLimitedAtTheCall) {
  PrimFunc f = parse_func(R"(
func @f dyn[n: int32](A: global float32[n]) {
  kernel(grid=[floordiv(n + 1023, 1024)], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, 1024) {
      if (bx * 1024 + i < n) {
        A[bx * 1024 + i] = 0.0f32
      }
    }
  }
})", "<test>");
  IndexWidthPlan plan = plan_index_width(f, {});
  // n up to 2^31 - 1 would let bx * 1024 + i pass int32: n is limited to 2^30 - 1 instead of
  // computing in 64 bits.
  EXPECT_FALSE(plan.widens);
  EXPECT_EQ(plan.runtime_limit, (int64_t(1) << 30) - 1);
  ASSERT_EQ(plan.limited.size(), 1u);
  EXPECT_EQ(plan.limited[0].name(), "n");
  AttrMap wide;
  wide["tl.config_index_bitwidth"] = Attr(int64_t(64));
  EXPECT_EQ(plan_index_width(f, wide).runtime_limit, 0);
}

}  // namespace
}  // namespace tl
