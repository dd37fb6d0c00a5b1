#include "transform/flatten_buffer_access.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(FlattenBufferAccess, RowMajorOffsets) {
  tl::testing::expect_pass("flatten_buffer_access", R"(
func @f(A: global float32[64, 32]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: shared float32[4, 8, 32]
    for i: int32 in serial(0, 32) {
      S[1, 2, i] = A[bx * 32 + i, 3]
      A[i, 0] = S[0, 0, i] + S[5]
    }
  }
})", R"(
func @f(A: global float32[64, 32]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: shared float32[4, 8, 32]
    for i: int32 in serial(0, 32) {
      S[320 + i] = A[(bx * 32 + i) * 32 + 3]
      A[i * 32] = S[i] + S[5]
    }
  }
})");
}

TEST(FlattenBufferAccess, DynamicAndStridedGlobalsUseInt64) {
  tl::testing::expect_pass("flatten_buffer_access", R"(
func @f dyn[m: int32, s: int32](A: global float16[m, 64], B: global float16[16, 8] strides[s, 1]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 8) {
      A[i, 1] = B[2, i]
    }
  }
})", R"(
func @f dyn[m: int32, s: int32](A: global float16[m, 64], B: global float16[16, 8] strides[s, 1]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 8) {
      A[cast<int64>(i) * 64i64 + 1i64] = B[2i64 * cast<int64>(s) + cast<int64>(i)]
    }
  }
})");
}

TEST(FlattenBufferAccess, IndexBitwidth64WidensEveryGlobalOffset) {
  tl::testing::expect_pass("flatten_buffer_access", R"(
func @f(A: global float32[4, 4]) {
  A[1, 2] = 0.0f32
})", R"(
func @f(A: global float32[4, 4]) {
  A[6i64] = 0.0f32
})", "cpu", {{"tl.config_index_bitwidth", Attr(int64_t(64))}});
}

TEST(FlattenBufferAccess, RejectsUnloweredTileOps) {
  tl::testing::expect_pass_error<Error>("flatten_buffer_access", R"(
func @f(A: global float32[4]) {
  fill(A[0 :+ 4], 0.0f32)
})", "run lower_tile_ops first");
}

}  // namespace
}  // namespace tl
