#include "transform/reroll_loops.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(RerollLoops, FragmentClearBecomesOneUnrolledLoop) {
  tl::testing::expect_pass("reroll_loops", R"(
func @f(A: global float32[8]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    alloc C: local float32[6]
    C[0] = 0.0f32
    C[1] = 0.0f32
    C[2] = 0.0f32
    C[3] = 0.0f32
    C[4] = 0.0f32
    C[5] = 0.0f32
    A[tx] = C[5]
  }
})", R"(
func @f(A: global float32[8]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    alloc C: local float32[6]
    for u: int32 in unrolled(0, 6) {
      C[u] = 0.0f32
    }
    A[tx] = C[5]
  }
})", "cuda");
}

TEST(RerollLoops, AffineConstantsAndPeriodTwo) {
  // Groups of two statements; the first group's `+ 0` was folded away when it was built.
  tl::testing::expect_pass("reroll_loops", R"(
func @f(A: global float32[256], B: global float32[256]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    A[tx] = B[tx * 2]
    A[tx + 128] = B[tx * 2 + 1]
    A[tx + 32] = B[tx * 2 + 2]
    A[tx + 160] = B[tx * 2 + 3]
    A[tx + 64] = B[tx * 2 + 4]
    A[tx + 192] = B[tx * 2 + 5]
    A[tx + 96] = B[tx * 2 + 6]
    A[tx + 224] = B[tx * 2 + 7]
  }
})", R"(
func @f(A: global float32[256], B: global float32[256]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    for u: int32 in unrolled(0, 4) {
      A[tx + 32 * u] = B[tx * 2 + 2 * u]
      A[tx + (128 + 32 * u)] = B[tx * 2 + (1 + 2 * u)]
    }
  }
})", "cuda");
}

TEST(RerollLoops, PermutedRegistersStaySpelledOut) {
  // Register numbers that are not affine in the group index (a layout's permutation).
  const char* src = R"(
func @f(A: global float32[8]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    alloc C: local float32[8]
    A[0] = C[0]
    A[1] = C[4]
    A[2] = C[1]
    A[3] = C[5]
    A[4] = C[3]
    A[5] = C[7]
  }
})";
  tl::testing::expect_pass("reroll_loops", src, src, "cuda");
}

TEST(RerollLoops, ShortRunsStaySpelledOut) {
  const char* src = R"(
func @f(A: global float32[8]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    A[0] = 1.0f32
    A[1] = 1.0f32
    A[2] = 1.0f32
  }
})";
  tl::testing::expect_pass("reroll_loops", src, src, "cuda");
}

TEST(RerollLoops, BindingsInsideGroupsAndNestedRuns) {
  // Each group binds the same variable and contains its own run (rerolled first, inner loops with
  // distinct variables that correspond by position).
  tl::testing::expect_pass("reroll_loops", R"(
func @f(A: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    let o: int32 = bx * 16 {
      A[o] = 0.0f32
      A[o + 1] = 0.0f32
      A[o + 2] = 0.0f32
      A[o + 3] = 0.0f32
    }
    let o: int32 = bx * 16 + 4 {
      A[o] = 0.0f32
      A[o + 1] = 0.0f32
      A[o + 2] = 0.0f32
      A[o + 3] = 0.0f32
    }
    let o: int32 = bx * 16 + 8 {
      A[o] = 0.0f32
      A[o + 1] = 0.0f32
      A[o + 2] = 0.0f32
      A[o + 3] = 0.0f32
    }
    let o: int32 = bx * 16 + 12 {
      A[o] = 0.0f32
      A[o + 1] = 0.0f32
      A[o + 2] = 0.0f32
      A[o + 3] = 0.0f32
    }
  }
})", R"(
func @f(A: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[32], thread_vars=[tx: int32]) {
    for u: int32 in unrolled(0, 4) {
      let o: int32 = bx * 16 + 4 * u
      for v: int32 in unrolled(0, 4) {
        A[o + v] = 0.0f32
      }
    }
  }
})", "cuda");
}

}  // namespace
}  // namespace tl
