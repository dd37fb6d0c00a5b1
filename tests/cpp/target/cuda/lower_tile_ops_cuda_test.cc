// cuda.lower_tile_ops: Before/Expected IR. Fragments become per-thread local buffers through layout
// inference; copies, fills, T.Parallel and reductions are spread over the threads (cuda.group marks
// each op's statements for insert_thread_sync).
#include "pass_test_util.h"

namespace tl {
namespace {

// 128 elements over 128 threads: one per thread, f becomes local[1].
TEST(CudaLowerTileOps, CopyFillParallelOverOneElementPerThread) {
  testing::expect_pass("cuda.lower_tile_ops", R"(
func @main(A: global float32[256], B: global float32[256]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc s: shared float32[128]
    alloc f: fragment float32[128]
    copy(A[bx * 128 :+ 128], s[0 :+ 128])
    fill(f[0 :+ 128], 1.0)
    for i: int32 in parallel(0, 128) {
      f[i] = f[i] + s[i]
    }
    copy(f[0 :+ 128], B[bx * 128 :+ 128])
  }
})", R"(
func @main(A: global float32[256], B: global float32[256]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc s: shared float32[128]
    alloc f: local float32[1]
    attr "cuda.group" = 0 {
      s[floormod(tx, 128)] = A[bx * 128 + floormod(tx, 128)]
    }
    attr "cuda.group" = 1 {
      f[0] = 1.0f32
    }
    attr "cuda.group" = 2 {
      f[0] = f[0] + s[floormod(tx, 128)]
    }
    attr "cuda.group" = 3 {
      B[bx * 128 + floormod(tx, 128)] = f[0]
    }
  }
})", "cuda");
}

// f[4, 256] over 128 threads: each thread holds 4 consecutive columns of rows (tx / 64) % 2 and
// that + 2 (16-byte vector copies); the row sums all-reduce over the 64 threads sharing a row, and
// the thread at column 0 of each row stores the result.
TEST(CudaLowerTileOps, VectorCopyAndRowReduction) {
  testing::expect_pass("cuda.lower_tile_ops", R"(
func @main(A: global float32[4, 256], B: global float32[4]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc f: fragment float32[4, 256]
    alloc r: fragment float32[4]
    copy(A[0 :+ 4, 0 :+ 256], f[0 :+ 4, 0 :+ 256])
    reduce(f[0 :+ 4, 0 :+ 256], r[0 :+ 4]) {clear = true, dim = 1, type = "sum"}
    copy(r[0 :+ 4], B[0 :+ 4])
  }
})", R"(
func @main(A: global float32[4, 256], B: global float32[4]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc red_buf_1: shared float32[128]
    alloc f: local float32[8]
    alloc r: local float32[2]
    attr "cuda.group" = 0 {
      evaluate cuda.copy_vec<void>(cuda.address_of<handle>(f[0], 2), cuda.address_of<handle>(A[floormod(floordiv(tx, 64), 2), floormod(tx, 64) * 4], 1), 16)
      evaluate cuda.copy_vec<void>(cuda.address_of<handle>(f[4], 2), cuda.address_of<handle>(A[floormod(floordiv(tx, 64), 2) + 2, floormod(tx, 64) * 4], 1), 16)
    }
    attr "cuda.group" = 1 {
      alloc red_0: local float32[2]
      red_0[0] = f[0] + f[1] + f[2] + f[3]
      red_0[1] = f[4] + f[5] + f[6] + f[7]
      red_0[0] = cuda.call_sync<float32>("tl::allreduce<tl::SumOp, 64, 1, 128>", red_0[0], tx, cuda.address_of<handle>(red_buf_1[0], 3))
      red_0[1] = cuda.call_sync<float32>("tl::allreduce<tl::SumOp, 64, 1, 128>", red_0[1], tx, cuda.address_of<handle>(red_buf_1[0], 3))
      r[0] = red_0[0]
      r[1] = red_0[1]
    }
    attr "cuda.group" = 2 {
      if (floormod(tx, 64) == 0) {
        B[floormod(floordiv(tx, 64), 2)] = r[0]
      }
      if (floormod(tx, 64) == 0) {
        B[floormod(floordiv(tx, 64), 2) + 2] = r[1]
      }
    }
  }
})", "cuda");
}
}  // namespace
}  // namespace tl
