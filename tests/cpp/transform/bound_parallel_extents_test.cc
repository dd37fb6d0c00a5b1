// bound_parallel_extents: a run-time T.Parallel extent with a constant bound becomes the bound
// plus a guard; an unbounded one is left alone.
#include "pass_test_util.h"

namespace tl {
namespace {

TEST(BoundParallelExtents, MinWithConstantBecomesBoundAndGuard) {
  testing::expect_pass("bound_parallel_extents", R"(
func @main(A: global float32[512], B: global float32[512], n: int32) {
  kernel(grid=[1], blocks=[bx: int32], threads=[256], thread_vars=[tx: int32]) {
    let span: int32 = min(n, 512)
    for i: int32 in parallel(0, span) {
      B[i] = A[i] - 1.0f32
    }
  }
})", R"(
func @main(A: global float32[512], B: global float32[512], n: int32) {
  kernel(grid=[1], blocks=[bx: int32], threads=[256], thread_vars=[tx: int32]) {
    let span: int32 = min(n, 512)
    for i: int32 in parallel(0, 512) {
      if (i < span) {
        B[i] = A[i] - 1.0f32
      }
    }
  }
})", "cuda");
}

TEST(BoundParallelExtents, UnboundedExtentIsUnchanged) {
  const char* src = R"(
func @main(A: global float32[512], B: global float32[512], n: int32) {
  kernel(grid=[1], blocks=[bx: int32], threads=[256], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, n) {
      B[i] = A[i] - 1.0f32
    }
  }
})";
  testing::expect_pass("bound_parallel_extents", src, src, "cuda");
}

}  // namespace
}  // namespace tl
