// inject_pipeline: buffers allocated inside a T.Pipelined body (TileLang's gemv example allocates
// its tiles there) are allocated around the pipelined loop, multi-versioned when the pipeline
// versions them (the prologue's copies would otherwise use them outside their allocation).
#include "transform/inject_pipeline.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(InjectPipeline, AllocationsInTheBodyMoveAroundTheLoop) {
  tl::testing::expect_pass("inject_pipeline", R"(
func @f(A: global float16[64, 256], W: global float16[256, 64], C: global float32[64, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc acc: fragment float32[64, 64]
    for k: int32 in pipelined(0, 4) {num_stages = 2, cross_interval = 1} {
      alloc a: shared float16[64, 64]
      alloc w: shared float16[64, 64]
      copy(A[0 :+ 64, k * 64 :+ 64], a[0 :+ 64, 0 :+ 64])
      copy(W[k * 64 :+ 64, 0 :+ 64], w[0 :+ 64, 0 :+ 64])
      gemm(a[0 :+ 64, 0 :+ 64], w[0 :+ 64, 0 :+ 64], acc[0 :+ 64, 0 :+ 64]) {clear_accum = e:(false), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    }
    copy(acc[0 :+ 64, 0 :+ 64], C[0 :+ 64, 0 :+ 64])
  }
})", R"(
func @f(A: global float16[64, 256], W: global float16[256, 64], C: global float32[64, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc acc: fragment float32[64, 64]
    alloc a: shared float16[2, 64, 64] {
      alloc w: shared float16[2, 64, 64]
      copy(A[0 :+ 64, 0 :+ 64], a[0 :+ 1, 0 :+ 64, 0 :+ 64]) {async = true}
      copy(W[0 :+ 64, 0 :+ 64], w[0 :+ 1, 0 :+ 64, 0 :+ 64]) {async = true}
      evaluate cuda.cp_async_commit()
      for k: int32 in serial(0, 4) {
        evaluate cuda.cp_async_wait<void>(0)
        evaluate tl.sync_threads()
        if (k + 1 < 4) {
          copy(A[0 :+ 64, (k + 1) * 64 :+ 64], a[floormod(k + 1, 2) :+ 1, 0 :+ 64, 0 :+ 64]) {async = true}
          copy(W[(k + 1) * 64 :+ 64, 0 :+ 64], w[floormod(k + 1, 2) :+ 1, 0 :+ 64, 0 :+ 64]) {async = true}
        }
        evaluate cuda.cp_async_commit()
        gemm(a[floormod(k, 2) :+ 1, 0 :+ 64, 0 :+ 64], w[floormod(k, 2) :+ 1, 0 :+ 64, 0 :+ 64], acc[0 :+ 64, 0 :+ 64]) {clear_accum = e:(false), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
      }
      evaluate cuda.cp_async_wait<void>(0)
    }
    copy(acc[0 :+ 64, 0 :+ 64], C[0 :+ 64, 0 :+ 64])
  }
})", "cuda");
}

}  // namespace
}  // namespace tl
