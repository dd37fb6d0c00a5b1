// cuda.expand_tile_ops: Before/Expected IR. Tile ops without a cuda lowering of their own become
// their T.Parallel loop form; the ones cuda lowers (copy, tile.exp, ...) stay; every op is checked.
#include "pass_test_util.h"

namespace tl {
namespace {

TEST(CudaExpandTileOps, TransposeBecomesParallelLoops) {
  testing::expect_pass("cuda.expand_tile_ops", R"(
func @main(A: global float32[16, 32], B: global float32[32, 16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc a: shared float32[16, 32]
    alloc b: shared float32[32, 16]
    copy(A[0 :+ 16, 0 :+ 32], a[0 :+ 16, 0 :+ 32])
    tile.transpose(b[0 :+ 32, 0 :+ 16], a[0 :+ 16, 0 :+ 32])
    copy(b[0 :+ 32, 0 :+ 16], B[0 :+ 32, 0 :+ 16])
  }
})", R"(
func @main(A: global float32[16, 32], B: global float32[32, 16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc a: shared float32[16, 32]
    alloc b: shared float32[32, 16]
    copy(A[0 :+ 16, 0 :+ 32], a[0 :+ 16, 0 :+ 32])
    for i0: int32 in parallel(0, 32) {
      for i1: int32 in parallel(0, 16) {
        b[i0, i1] = a[i1, i0]
      }
    }
    copy(b[0 :+ 32, 0 :+ 16], B[0 :+ 32, 0 :+ 16])
  }
})", "cuda");
}

TEST(CudaExpandTileOps, BroadcastExpandsElementwiseStays) {
  testing::expect_pass("cuda.expand_tile_ops", R"(
func @main(A: global float32[16], B: global float32[16, 32]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc a: shared float32[16]
    alloc b: fragment float32[16, 32]
    copy(A[0 :+ 16], a[0 :+ 16])
    tile.exp(a[0 :+ 16], a[0 :+ 16])
    tile.broadcast(b[0 :+ 16, 0 :+ 32], a[0 :+ 16])
    copy(b[0 :+ 16, 0 :+ 32], B[0 :+ 16, 0 :+ 32])
  }
})", R"(
func @main(A: global float32[16], B: global float32[16, 32]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc a: shared float32[16]
    alloc b: fragment float32[16, 32]
    copy(A[0 :+ 16], a[0 :+ 16])
    tile.exp(a[0 :+ 16], a[0 :+ 16])
    for i0: int32 in parallel(0, 16) {
      for i1: int32 in parallel(0, 32) {
        b[i0, i1] = a[i0]
      }
    }
    copy(b[0 :+ 16, 0 :+ 32], B[0 :+ 16, 0 :+ 32])
  }
})", "cuda");
}

TEST(CudaExpandTileOps, MalformedOpIsRejected) {
  testing::expect_pass_error<Error>("cuda.expand_tile_ops", R"(
func @main(A: global float32[16, 32]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc a: shared float32[16, 32]
    copy(A[0 :+ 16, 0 :+ 32], a[0 :+ 16, 0 :+ 16])
  }
})", "have different shapes [16, 32] and [16, 16]", "cuda");
}

}  // namespace
}  // namespace tl
