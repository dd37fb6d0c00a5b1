#include "transform/check_cpu_constructs.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(CheckCpuConstructs, AcceptsBlockLevelCode) {
  const char* ok = R"(
func @f(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[128]
    for i: int32 in parallel(0, 128) {
      S[i] = A[i]
    }
  }
})";
  tl::testing::expect_pass("check_cpu_constructs", ok, ok);
}

TEST(CheckCpuConstructs, RejectsAscendScopesMemoriesAndBuiltins) {
  tl::testing::expect_pass_error<NotImplemented>("check_cpu_constructs", R"(
func @f(A: global float16[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: L1 float16[128]
    L[0] = A[0]
  }
})", "buffer 'L' in memory scope L1 on target cpu");
  tl::testing::expect_pass_error<NotImplemented>("check_cpu_constructs", R"(
func @f(A: global float16[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    attr "scope" = "C" {
      A[0] = 0.0f16
    }
  }
})", "T.Scope");
  tl::testing::expect_pass_error<NotImplemented>("check_cpu_constructs", R"(
func @f() {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    evaluate ascend.pipe_barrier<void>("v")
  }
})", "T.pipe_barrier (Ascend synchronisation) on target cpu");
}

}  // namespace
}  // namespace tl
